"""One trial: set-up, the agent call (with retries), the verifier, quality scorers, tear-down.

Everything a trial's user code raises becomes data on its :class:`~ablation.schema.TaskResult`
(``status``, ``error_stage``, ``error_type``, message and traceback); ``timeout_s`` bounds the
whole trial (set-up, every attempt and the verifier) and a timed-out trial has ``status="timeout"``.
Each quality scorer call then has ``timeout_s`` of its own: one that overruns it is that scorer's
error (in ``quality_errors``), abandoned like a timed-out verifier, and the verdict stands. The
tear-down hook has ``timeout_s`` of its own too; one that overruns it makes the trial a timeout.
Sync hooks run in daemon threads, as sync verifiers and scorers do, never on the event loop.
User code's awaitables are awaited through :func:`~ablation.eventloop.await_or_abandon`: one that
swallows its cancellation is abandoned, named in the trial's error, never waited for forever.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import ValidationError

from ablation.agents.callables import Agent
from ablation.agents.pricing import priced, served_by
from ablation.agents.sdk import sdk_output
from ablation.config import CampaignConfig
from ablation.errors import AblationError, EventLoopBlocked, validation_line
from ablation.evaluate.quality import run_scorer, scorer_name
from ablation.evaluate.sandbox_confinement import use_confinement
from ablation.evaluate.verifiers import check_verdict, collect_notes, default_verifier, run_verifier
from ablation.eventloop import await_or_abandon, is_awaitable, resolved
from ablation.run.attempts import call_with_retries
from ablation.run.deadlines import Deadlines, bounded, paused
from ablation.run.limits import Clock
from ablation.run.output_caps import exception_texts, jsonable_extras, jsonable_output
from ablation.run.plan import Trial
from ablation.run.spans import SpanCollector, TrialCatch, open_collector, usage_from_spans
from ablation.run.threads import run_in_daemon_thread
from ablation.run.transient import note_error
from ablation.run.watchdog import LoopStalled
from ablation.schema import (
    AblationTask,
    AgentOutput,
    TaskResult,
    callable_name,
    is_async_callable,
)

__all__ = ["AgentCall", "Terminated", "TrialRunner", "error_fields", "is_cancellation"]

#: Makes one agent call: ``(agent, task, arm) -> raw output``.
AgentCall = Callable[[Agent, AblationTask, str], Awaitable[Any]]


def error_fields(exc: BaseException, stage: str) -> dict[str, Any]:
    """The error columns of a trial that failed at ``stage`` with ``exc`` (texts bounded).

    A transient error (:mod:`ablation.run.transient`) has its class name noted for fail-fast.
    """
    note_error(exc)
    message, trace = exception_texts(exc)
    return {
        "error_stage": stage,
        "error_type": type(exc).__name__,
        "error_message": message,
        "error_traceback": trace,
    }


class Terminated(KeyboardInterrupt):
    """A stopping signal raised where the main thread is (``cli/signals.py``, when no asyncio
    handler takes it): it stops the campaign even when it lands inside user code running on that
    thread (an inline verifier, an async agent), never that trial's error."""


def is_cancellation(exc: BaseException) -> bool:
    """True when ``exc`` is the engine cancelling this task (timeout, stop), not user code raising.

    Anything else an agent, verifier, scorer or hook raises, ``BaseException`` included
    (``SystemExit``, ``KeyboardInterrupt``, ``GeneratorExit``, a custom subclass), is that trial's
    error: only a real signal to the ablation process interrupts a campaign (``asyncio.run`` turns
    SIGINT into a cancellation of the main task, never into an exception inside a trial).
    """
    kind = type(exc)  # not isinstance: that asks a user exception's __class__, which may raise
    if issubclass(kind, LoopStalled | Terminated):
        return True
    if not issubclass(kind, asyncio.CancelledError):
        return False
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _abandoned(fields: dict[str, Any], what: Callable[[], str]) -> Callable[[], None]:
    """Notes in ``fields["_abandoned"]`` the call ``what()`` names, when it is abandoned."""
    return lambda: fields.setdefault("_abandoned", []).append(what())


def _abandoned_note(fields: dict[str, Any]) -> str:
    """What an error says of the calls abandoned (:func:`_abandoned`; empty when none)."""
    end = (
        "did not end when cancelled and was abandoned (it may run on, or stay suspended, until "
        "the process exits)"
    )
    return "".join(f"; {what} {end}" for what in fields.get("_abandoned", ()))


async def _hook(hook: Callable[[AblationTask], Any], task: AblationTask, on_abandon: Callable[[], None]) -> None:
    """Run a set-up or tear-down hook: an async one on the loop, a sync one in a daemon thread,
    as a sync verifier runs, so a hook that blocks (a container to start, a sleep) holds neither
    the event loop nor the other trials in flight, and its trial's deadline can end the wait
    (``on_abandon``: see :func:`~ablation.eventloop.await_or_abandon`)."""
    if is_async_callable(hook):
        await await_or_abandon(hook(task), on_abandon)
    else:  # an awaitable it returned is awaited on the loop
        await await_or_abandon(resolved(await run_in_daemon_thread(hook, task)), on_abandon)


def offload(fn: Any) -> Any:
    """Run a sync verifier or scorer in a thread unless it declares itself cheap (``inline``)."""
    if getattr(fn, "inline", False) or is_async_callable(fn):
        return fn

    async def threaded(output: Any, task: AblationTask) -> Any:
        return await run_in_daemon_thread(fn, output, task)

    threaded.name = scorer_name(fn)  # type: ignore[attr-defined]
    return threaded


class _Failure(AblationError):
    """Internal: an exception from one stage of a trial, carried out of the timeout scope."""

    def __init__(self, stage: str, exc: BaseException) -> None:
        super().__init__(stage)
        self.stage = stage
        self.exc = exc


class TrialRunner:
    """Runs single trials for the engine.

    Args:
        config: The campaign configuration (timeout, retries).
        quality_scorers: Scorers applied to every completed output.
        call_agent: Makes one agent call (the engine's, with its executor).
        clock: Measures latency and wall time.
        turn: Waits for an arm's turn to call (the engine's rate limit, a worker process ready)
            before each attempt: neither the attempt's latency nor the trial's time
            (``Deadlines.paused``).
    """

    def __init__(
        self,
        config: CampaignConfig,
        quality_scorers: Sequence[Any],
        call_agent: AgentCall,
        clock: Clock,
        turn: Callable[[str], Awaitable[None]],
    ) -> None:
        self.config = config
        self.quality_scorers = tuple(quality_scorers)
        self.call_agent = call_agent
        self.clock = clock
        self.turn = turn
        #: Sets every trial's deadline (one timer for all; ``None`` when there is no timeout).
        self.deadlines = None if config.timeout_s is None else Deadlines(config.timeout_s)
        #: Collects each trial's OpenTelemetry spans (``None``: not collected).
        self.spans: SpanCollector | None = open_collector(config.traces)

    async def _score(self, output: Any, task: AblationTask) -> tuple[dict[str, float], dict[str, str]]:
        """Every scorer's value, or its error, each call bounded by :func:`~ablation.run.deadlines.bounded`."""
        scores: dict[str, float] = {}
        errors: dict[str, str] = {}
        for scorer in self.quality_scorers:
            name = scorer_name(scorer)
            left: dict[str, Any] = {}
            call = await_or_abandon(run_scorer(offload(scorer), output, task), _abandoned(left, lambda: "it"))
            try:
                value = await bounded(self.deadlines, call)
            except BaseException as exc:
                if is_cancellation(exc):
                    raise
                errors[name] = f"{type(exc).__name__}: {exception_texts(exc)[0]}"
                continue
            if value is None:
                errors[name] = f"Timeout: scorer {name!r} exceeded timeout_s={self.config.timeout_s}" + _abandoned_note(left)
            else:
                scores[name] = value
        return scores, errors

    async def _teardown(self, task: AblationTask, fields: dict[str, Any], *, completed: bool) -> None:
        """Run the task's tear-down hook, its call bounded as a scorer's (:func:`~ablation.run.deadlines.bounded`); one
        that raises or overruns ``timeout_s`` makes a completed trial an error or a timeout at
        that stage (a trial that already failed keeps its own error)."""

        async def call() -> float:
            await _hook(task.teardown, task, _abandoned(fields, lambda: "the teardown hook"))  # type: ignore[arg-type]
            return 0.0

        try:
            ended = await bounded(self.deadlines, call())
        except BaseException as exc:
            if is_cancellation(exc):
                raise
            if completed:
                fields.update(status="error", passed=False, **error_fields(exc, "teardown"))
            return
        if ended is None and completed:
            fields.update(
                status="timeout", passed=False, error_stage="timeout", error_type="Timeout",
                error_message=f"trial exceeded timeout_s={self.config.timeout_s} during teardown"
                + _abandoned_note(fields),
            )  # fmt: skip

    async def _verify(self, output: Any, task: AblationTask, fields: dict[str, Any]) -> None:
        verifier = task.verifier or default_verifier
        notes = collect_notes()
        use_confinement(self.config.sandbox)
        left = _abandoned(fields, lambda: f"the verifier {callable_name(verifier)!r}")
        if getattr(verifier, "inline", False):  # cheap and sync: called here, no task needed
            result = verifier(output, task)
            if is_awaitable(result):  # awaited, as run_verifier awaits what a sync verifier returns
                result = await await_or_abandon(resolved(result), left)
            verdict = check_verdict(result, callable_name(verifier))
        else:
            verdict = await await_or_abandon(run_verifier(offload(verifier), output, task), left)
        fields["passed"] = verdict
        fields["verifier_note"] = "; ".join(notes) or None

    async def _stages(
        self, trial: Trial, agent: Agent, fields: dict[str, Any], scope: asyncio.Timeout
    ) -> Any:
        """Set-up, agent, verifier; ``fields["_stage"]`` tracks where a failure happened."""
        task = trial.task
        if task.setup is not None:
            await _hook(task.setup, task, _abandoned(fields, lambda: "the setup hook"))
        fields["_stage"] = "agent"
        left = _abandoned(fields, lambda: f"the agent {agent.name!r}")

        def call() -> Awaitable[Any]:  # a sync agent's future ends at once when cancelled
            made = self.call_agent(agent, task, trial.arm)
            return await_or_abandon(made, left) if agent.is_async else made

        async def turn() -> None:
            with paused(self.deadlines, scope):
                await self.turn(trial.arm)

        raw = await self._attempts(trial, call, fields, turn)
        if not isinstance(raw, AgentOutput):
            raw = sdk_output(raw)  # an SDK's response object, when its package is loaded
        if isinstance(raw, AgentOutput):
            output = raw.output
            fields.update(
                tokens=raw.tokens, metrics=dict(raw.metrics), usage=raw.usage,
                trace=jsonable_extras(raw, self.config.max_output_bytes),  # bounded as the output
                **priced(raw, self.config.prices),
            )
        else:
            output = raw
        # Still the agent's stage: an output that cannot be represented, or is larger than the
        # cap, is this trial's error.
        fields["output"] = jsonable_output(output, self.config.max_output_bytes)
        fields["_stage"] = "verifier"
        await self._verify(output, task, fields)
        return output

    async def _attempts(
        self, trial: Trial, call: Callable[[], Awaitable[Any]], fields: dict[str, Any], turn: Callable[[], Awaitable[None]]
    ) -> Any:
        """The agent's attempts (:func:`~ablation.run.attempts.call_with_retries`), under the
        trial's own trace when spans are collected (its catch kept in ``fields["_catch"]``): the
        spans a trial keeps, and the usage they give, are its agent's, never those of its setup
        hook or its verifier (a model-judged verifier's calls are not the agent's tokens)."""
        if self.spans is None:
            return await call_with_retries(call, self.config.retry, self.clock, fields, turn)
        with self.spans.trial(trial.task.task_id, trial.arm, trial.run) as catch:
            fields["_catch"] = catch
            return await call_with_retries(call, self.config.retry, self.clock, fields, turn)

    async def _guarded(self, trial: Trial, agent: Agent, fields: dict[str, Any]) -> tuple[bool, Any]:
        """The stages under the trial's deadline; ``(completed, output)``, failures into ``fields``."""
        deadlines = self.deadlines
        try:
            async with asyncio.timeout(None) as scope:  # its deadline is set by ``deadlines``
                if deadlines is not None:
                    deadlines.add(scope)
                try:
                    output = await self._stages(trial, agent, fields, scope)
                    # A thread holding the GIL past the deadline can finish before the loop
                    # runs the expiry: the trial still overran, and is a timeout.
                    overran = deadlines is not None and deadlines.overdue(scope)
                except BaseException as exc:
                    if is_cancellation(exc) or (issubclass(type(exc), TimeoutError) and scope.expired()):
                        raise
                    # The same rule for a failure: one that came past the deadline, before the
                    # loop ran the expiry (an agent's own limit equal to the trial's, a socket
                    # timeout of an HTTP agent), is the trial overrunning, not the agent's error.
                    if deadlines is not None and deadlines.overdue(scope):
                        raise TimeoutError from None
                    raise _Failure(fields["_stage"], exc) from None
                finally:
                    if deadlines is not None:
                        deadlines.discard(scope)
            if not overran:
                return True, output
            if (fields.get("latency_s") or 0.0) >= (self.config.timeout_s or 0.0):
                fields["_stage"] = "agent"
            raise TimeoutError
        except LoopStalled:
            raise EventLoopBlocked(
                f"async agent {agent.name!r} blocked the event loop for more than "
                f"timeout_s={self.config.timeout_s} on task {trial.task.task_id!r} ({trial.arm}, "
                f"run {trial.run}); run it as a sync agent or with --isolation process"
            ) from None
        except TimeoutError:
            fields.update(
                status="timeout", passed=False, error_stage="timeout", error_type="Timeout",
                error_message=(
                    f"trial exceeded timeout_s={self.config.timeout_s} during {fields['_stage']}"
                    + _abandoned_note(fields)
                ),
            )
        except _Failure as failure:
            fields.update(status="error", passed=False, **error_fields(failure.exc, failure.stage))
        return False, None

    def _keep_spans(self, fields: dict[str, Any]) -> None:
        """The spans the agent's attempts ended (:meth:`_attempts`) into ``fields``, and the usage
        they record (priced when the agent reported no cost) when the agent reported none, or
        one whose tokens are unknown while the spans state them."""
        catch: TrialCatch | None = fields.pop("_catch", None)
        spans = None if catch is None else catch.spans()
        if catch is None or spans is None:
            return
        fields["spans"] = spans
        reported = fields.get("usage")
        if reported is None or not reported.tokens_known:
            usage = usage_from_spans(catch.summary(), served_by)
            if usage is not None and (reported is None or usage.tokens_known):
                fields["usage"] = usage
                if fields.get("cost") is None:  # priced as an agent's usage
                    fields.update(priced(AgentOutput(usage=usage), self.config.prices))

    async def run(self, trial: Trial, agent: Agent) -> TaskResult:
        """Run one trial and return its result (never raises for the user code's errors)."""
        task = trial.task
        fields: dict[str, Any] = {
            "task_id": task.task_id, "arm": trial.arm, "run": trial.run,
            "category": task.category, "critical": task.critical, "started_at": time.time(),
            "_stage": "setup",
        }
        wall_start = self.clock()
        completed, output = await self._guarded(trial, agent, fields)
        self._keep_spans(fields)
        if completed and self.quality_scorers:
            fields["quality"], fields["quality_errors"] = await self._score(output, task)
        if task.teardown is not None:
            await self._teardown(task, fields, completed=completed)
        fields["wall_s"] = self.clock() - wall_start
        del fields["_stage"]
        fields.pop("_abandoned", None)
        try:
            return TaskResult.model_validate(fields)  # validated like TaskResult(**fields), faster
        except ValidationError as exc:
            return _unrecordable(fields, exc)


#: What a trial keeps when what its code reported is no valid ``TaskResult``: who and when.
_KEPT = ("task_id", "arm", "run", "category", "critical", "started_at", "latency_s", "wall_s", "attempts")


def _unrecordable(fields: dict[str, Any], exc: ValidationError) -> TaskResult:
    """The trial as an error when its agent's, verifier's or scorer's numbers are no valid
    ``TaskResult`` (e.g. input and output tokens summing past the count limit): the campaign
    goes on and the trial says which value was refused (stage ``agent``)."""
    kept = {k: fields[k] for k in _KEPT if k in fields}
    return TaskResult.model_validate(
        kept
        | {
            "status": "error", "passed": False, "error_stage": "agent",
            "error_type": "UnrecordableResult",
            "error_message": f"the trial's result could not be recorded: {validation_line(exc)}",
        }
    )  # fmt: skip
