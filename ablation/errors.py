"""Exception hierarchy of ``ablation``.

Every error the library raises on purpose derives from :class:`AblationError`, so a caller can
catch the family at once. Input errors also derive from :class:`ValueError` (or :class:`TypeError`)
so that generic handlers keep working.
"""

from __future__ import annotations

__all__ = [
    "AblationError",
    "AgentSpecError",
    "CampaignAborted",
    "ConfigError",
    "EventLoopBlocked",
    "InputError",
    "ResumeMismatchError",
    "StopCampaign",
    "StoreError",
]


class AblationError(Exception):
    """Base class of every error raised by ``ablation`` on purpose."""


class ConfigError(AblationError, ValueError):
    """A suite, configuration or option is invalid (duplicate ids, empty suite, bad value)."""


class InputError(AblationError, ValueError):
    """A result or suite file cannot be read; the message names the file, line and task id."""


class AgentSpecError(AblationError, TypeError):
    """Something given as an agent is not a supported agent form."""


class StoreError(AblationError):
    """The run store cannot be opened, read or written."""


class ResumeMismatchError(StoreError, ValueError):
    """A resume was refused because the suite or an agent differs from the stored campaign."""


class CampaignAborted(AblationError):
    """A campaign stopped early (``on_error="abort"`` or an interrupt); finished trials are kept."""


class StopCampaign(Exception):
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
