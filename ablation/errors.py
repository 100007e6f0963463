"""Exception hierarchy of ``ablation``.

Every exception the library raises derives from :class:`AblationError`, so a caller can catch the
family at once. Each also derives from the built-in class a generic handler expects where there
is one (input errors from :class:`ValueError` or :class:`TypeError`; an agent's connection and
time-out errors from :class:`ConnectionError` and :class:`TimeoutError`, which the default
``retry_on`` retries). The classes defined elsewhere are named with their module; the public ones
are exported by :mod:`ablation`. The tree, with when each is raised::

    AblationError                         base of every exception ablation raises
      ConfigError (ValueError)            a suite, configuration or option is invalid, or a
                                          blocking call is made inside a running event loop
        WrongType (TypeError)             a public function was given a value of a type it does
                                          not take (results, expected_ids, a config)
      UsageError                          the command line was misused (exit 1, one line)
      InputError (ValueError)             a result or suite file cannot be read (file, line, id)
        NumericVerdict                    sources.readers.rows: internal, the verdict is a number
      RepeatedMember (ValueError)         strict_json: internal, a JSON object names a member twice
      NotFiniteNumber (ValueError)        strict_json: internal, JSON text holds NaN or an infinity
      AgentSpecError (TypeError)          something given as an agent is not an agent
      StoreError                          the run store cannot be opened, read or written
        ResumeMismatchError (ValueError)  a resume met a different suite or agent
      TooManyNames                        trials name more quality or metric names than their
                                          columns may hold (outputs.NAMED_CELLS_LIMIT)
      CampaignAborted                     a campaign stopped early; finished trials are kept
        BrokenArm                         run.failfast: an arm's first trials all failed alike
      StopCampaign                        a result sink ends a campaign on purpose
      EventLoopBlocked                    an async agent blocked the event loop past the timeout
      NoWorkerLeft (ConnectionError)      a Dask cluster has no worker left to run a trial
      WorkerDied (RuntimeError)           run.isolation: a worker process ended during a call
      UnsendableOutput (TypeError)        run.isolation: a value cannot be pickled across
      RemoteTraceback                     run.isolation: internal, a worker's traceback as cause
      OutputTooLarge                      run.output_caps: an output passed max_output_bytes
      UnrepresentableOutput (TypeError)   run.plain_output: an output has no JSON form
      AgentProcessError (RuntimeError)    agents.forms: a command agent gave no usable answer,
                                          or an SDK result a usage count that is no whole number
        AgentHttpError                    agents.forms: an HTTP agent answered 4xx or non-JSON
      AgentConnectionError (ConnectionError)  agents.forms: an HTTP agent unreachable, or 5xx
      AgentTimeoutError (TimeoutError)    agents.forms: a command agent passed its own timeout
      SignalHandlerChanged (RuntimeError)  agents.callables: an async agent replaced the handler
                                          of a stopping signal (restored)
      VerifierError                       evaluate.verifiers: a verifier could not judge
        SandboxError                      evaluate.code_tests: the sandbox could not judge
          SandboxUnavailable              evaluate.code_tests: the confinement cannot run here
      ScorerError                         evaluate.quality: a quality scorer failed
      SeccompUnavailable (OSError)        evaluate.seccomp: internal, libseccomp refused or missing
      ReportError                         view.catalog: internal, a stored campaign whose report
                                          cannot be built (the viewer's 422 page)
      _Overflow                           agents.command: internal, a stream passed its cap
      _TooLarge                           agents.http: internal, a body passed its cap
      _Failure                            run.trial: internal, one stage's error in transit
      _Refused                            sources.readers.engine_columns: internal, a cell the
                                          row path reads otherwise (the file is read row by row)

    Terminated (KeyboardInterrupt)        run.trial: internal, not an error; a stopping signal
                                          raised where the main thread is, never a trial's
    LoopStalled (BaseException)           run.watchdog: not an error; interrupts a blocked
                                          loop and must pass ``except Exception`` untouched

The errors of a trial (an agent's, a verifier's, a scorer's) are recorded in its result, by class
name, rather than raised to the caller.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "AblationError",
    "AgentSpecError",
    "CampaignAborted",
    "ConfigError",
    "EventLoopBlocked",
    "InputError",
    "NoWorkerLeft",
    "ResumeMismatchError",
    "StopCampaign",
    "StoreError",
    "TooManyNames",
    "UsageError",
    "WrongType",
    "exception_message",
    "validation_line",
]


class AblationError(Exception):
    """Base class of every error raised by ``ablation`` on purpose."""


class ConfigError(AblationError, ValueError):
    """A suite, configuration or option is invalid (duplicate ids, empty suite, bad value)."""


class WrongType(ConfigError, TypeError):
    """A public function was given a value of a type it does not take (a ``dict`` as its
    ``config``, a string as ``expected_ids``, a mapping as results): a :class:`ConfigError` and a
    :class:`TypeError`, as a generic handler of either expects."""


class UsageError(AblationError):
    """A command-line usage problem: a bad flag, a missing argument (exit 1, one line)."""


class InputError(AblationError, ValueError):
    """A result or suite file cannot be read; the message names the file, line and task id."""


class AgentSpecError(AblationError, TypeError):
    """Something given as an agent is not a supported agent form."""


class StoreError(AblationError):
    """The run store cannot be opened, read or written."""


class ResumeMismatchError(StoreError, ValueError):
    """A resume was refused because the suite or an agent differs from the stored campaign."""


class TooManyNames(AblationError):
    """Trials name more quality or metric names than their columns may hold: each name is a
    column with a value in every trial (:func:`ablation.outputs.named_cells_problem` says why)."""


class CampaignAborted(AblationError):
    """A campaign stopped early (``on_error="abort"`` or an interrupt); finished trials are kept."""


class StopCampaign(AblationError):
    """Raised by a result sink to end a campaign early on purpose (e.g. a sequential decision).

    The engine starts no further trial, cancels the trials in flight (they are not recorded) and
    returns normally; :attr:`AblationEngine.stopped <ablation.run.engine.AblationEngine.stopped>`
    holds :attr:`reason`.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class EventLoopBlocked(AblationError):
    """An async agent kept the event loop busy longer than the trial timeout.

    No other trial can make progress while the loop is blocked, so the campaign stops; the message
    names the agent and the task. Run such an agent as a sync callable (a thread) or with
    ``isolation="process"`` instead.
    """


class NoWorkerLeft(AblationError, ConnectionError):
    """A trial's agent call cannot run (or finish): the Dask cluster it went to has no worker left.

    Recorded as the trial's error instead of letting the trial wait for its timeout. It is an
    infrastructure error, not the agent's failure: retries (``retry_on`` holds
    :class:`ConnectionError` by default) and fail-fast treat it as a connection error. The
    message names why no worker will come.
    """


def exception_message(exc: BaseException) -> str:
    """``str(exc)``, or a note naming the exception when its own ``__str__`` raises (user code's
    exceptions are recorded, never allowed to break the recording)."""
    try:
        return str(exc)
    except Exception as inner:
        return f"<str() of the {type(exc).__name__} raised {type(inner).__name__}>"


def validation_line(exc: BaseException, known: Iterable[str] = ()) -> str:
    """One line for a pydantic ``ValidationError``: each unknown field (with the closest of the
    ``known`` field names, or all of them; nothing more when none are given), missing field, and field with its message and the
    value given, in pydantic's order. Any other exception: its text on one line.
    """
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return " ".join(str(exc).split())
    known = list(known)
    parts = []
    for error in errors():
        loc = ".".join(str(p) for p in error["loc"]) or "(record)"
        if error["type"] == "extra_forbidden":
            close = difflib.get_close_matches(loc, known, n=1)
            hint = f"did you mean {close[0]!r}?" if close else "known fields: " + ", ".join(known)
            parts.append(f"unknown field {loc!r}" + (f" ({hint})" if known else ""))
        elif error["type"] == "missing":
            parts.append(f"missing field {loc!r}")
        else:
            given = repr(error.get("input"))
            given = given if len(given) <= 60 else given[:57] + "..."
            parts.append(f"field {loc!r}: {error['msg']} (got {given})")
    return " ".join("; ".join(parts).split())
