"""The asyncio engine: runs every trial of a campaign and streams results to a sink.

Semantics (DESIGN.md section 5):

- Async agents run on the event loop; sync agents run in a thread pool sized to the
  concurrency, or in a user-supplied :class:`concurrent.futures.Executor` (e.g. a Dask client's).
  At most ``config.concurrency`` trials are in flight; trials are generated lazily, so memory is
  bounded by the concurrency and the results kept, not by the suite size.
- Every attempt gets a deep copy of the task input.
- Within a pair, which arm is scheduled first is drawn from ``config.seed``.
- ``timeout_s`` bounds a whole trial (all attempts and the verifier); a timed-out trial is
  recorded with ``status="timeout"`` and the campaign goes on. A sync agent that overruns keeps
  its worker thread until it returns (Python threads cannot be killed); its result is discarded.
- Retries (tenacity) wrap the agent call only, for the exception types in
  ``config.retry.retry_on``. ``latency_s`` is the successful attempt's own duration, measured
  with an injectable clock (``time.perf_counter`` by default); ``wall_s`` includes retries.
- Exceptions in agents, verifiers, scorers and hooks become recorded data on the trial.
  ``on_error="abort"`` stops the campaign at the first error or timeout (finished trials are
  kept by the sink).

The engine imports no renderer and no analysis: it hands each finished
:class:`~ablation.schema.TaskResult` to a sink (the store) and to a progress reporter.
"""

from __future__ import annotations

import asyncio
import copy
import random
import threading
import time
import traceback
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)

from ablation.agents.callables import Agent, as_agent
from ablation.config import CampaignConfig
from ablation.errors import CampaignAborted
from ablation.evaluate.quality import run_scorer, scorer_name
from ablation.evaluate.verifiers import check_verdict, collect_notes, default_verifier, run_verifier
from ablation.run.progress import NullProgress, ProgressReporter
from ablation.schema import (
    ARMS,
    AblationTask,
    AgentOutput,
    Arm,
    TaskResult,
    callable_name,
    is_async_callable,
    validate_suite,
)

__all__ = ["AblationEngine", "RateLimiter", "ResultSink", "TrialKey", "trial_plan"]

TrialKey = tuple[str, str, int]
ResultSink = Callable[[TaskResult], None]
Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class _Trial:
    task: AblationTask
    arm: Arm
    run: int


class RateLimiter:
    """Spaces calls so that at most ``rate`` start per second, shared by every worker.

    Args:
        rate: Calls per second (``None`` or ``<= 0``: no limit).
        clock: Monotonic clock in seconds.
    """

    def __init__(self, rate: float | None, *, clock: Clock = time.monotonic) -> None:
        self._interval = 1.0 / rate if rate and rate > 0 else 0.0
        self._next = 0.0
        self._clock = clock

    @property
    def active(self) -> bool:
        """False when there is no limit (callers may then skip :meth:`acquire`)."""
        return self._interval > 0

    async def acquire(self) -> None:
        """Wait for the next free slot."""
        if not self._interval:
            return
        now = self._clock()
        slot = max(now, self._next)
        self._next = slot + self._interval
        if slot > now:
            await asyncio.sleep(slot - now)


def trial_plan(
    tasks: Sequence[AblationTask], *, runs: int, seed: int, arms: Sequence[Arm] = ARMS
) -> Iterator[_Trial]:
    """The campaign's trials in schedule order.

    Pairs follow the suite order, run by run; within each pair the arm that goes first is drawn
    from ``random.Random(seed)``. The plan depends only on the suite, ``runs`` and ``seed``, so a
    resumed campaign sees the same order.
    """
    rng = random.Random(seed)
    for run in range(runs):
        for task in tasks:
            first = rng.random() < 0.5
            order = ARMS if first else ARMS[::-1]
            for arm in order:
                if arm in arms:
                    yield _Trial(task, arm, run)


def _error_fields(exc: BaseException, stage: str) -> dict[str, Any]:
    return {
        "error_stage": stage,
        "error_type": type(exc).__name__,
        "error_message": str(exc),
        "error_traceback": "".join(traceback.format_exception(exc)),
    }


async def _maybe_await(value: Any) -> Any:
    if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
        return await value
    return value


class AblationEngine:
    """Runs baseline and candidate agents on every task and yields :class:`TaskResult` s.

    Args:
        config: Campaign configuration (defaults to ``CampaignConfig()``).
        quality_scorers: Scorers applied to every completed output.
        executor: Where sync agents run (default: a thread pool of ``config.concurrency``).
        progress: Progress reporter (default: none).
        sink: Called with each finished trial on the event-loop thread (e.g. ``store.append``).
        clock: Clock for latency (``time.perf_counter`` by default; injectable for tests).
    """

    def __init__(
        self,
        config: CampaignConfig | None = None,
        *,
        quality_scorers: Sequence[Any] = (),
        executor: Executor | None = None,
        progress: ProgressReporter | None = None,
        sink: ResultSink | None = None,
        clock: Clock = time.perf_counter,
    ) -> None:
        self.config = config or CampaignConfig()
        self.quality_scorers = tuple(quality_scorers)
        names = [scorer_name(s) for s in self.quality_scorers]
        if len(set(names)) != len(names):
            from ablation.errors import ConfigError

            raise ConfigError(f"quality scorers need distinct names, got {names}")
        self.executor = executor
        self.progress = progress or NullProgress()
        self.sink = sink
        self.clock = clock
        self._pool: Executor | None = None
        self._limiters: dict[str, RateLimiter] = {}

    # ------------------------------------------------------------------ public API
    def run(
        self,
        baseline: Any,
        candidate: Any,
        tasks: Sequence[AblationTask],
        *,
        skip: Collection[TrialKey] = frozenset(),
        arms: Sequence[Arm] = ARMS,
    ) -> list[TaskResult]:
        """Synchronous wrapper of :meth:`run_async` (starts its own event loop)."""
        return asyncio.run(self.run_async(baseline, candidate, tasks, skip=skip, arms=arms))

    async def run_async(
        self,
        baseline: Any,
        candidate: Any,
        tasks: Sequence[AblationTask],
        *,
        skip: Collection[TrialKey] = frozenset(),
        arms: Sequence[Arm] = ARMS,
    ) -> list[TaskResult]:
        """Run every trial not in ``skip`` and return the new results.

        Args:
            baseline: The baseline agent (any supported form; ignored if not in ``arms``).
            candidate: The candidate agent (likewise).
            tasks: The suite.
            skip: ``(task_id, arm, run)`` keys already done (resume).
            arms: Which arms to run (e.g. only the candidate when the baseline is reused).

        Returns:
            The new results, in schedule order.

        Raises:
            CampaignAborted: with ``on_error="abort"``, at the first error or timeout.
        """
        suite = validate_suite(tasks)
        agents: dict[str, Agent] = {}
        if "baseline" in arms:
            agents["baseline"] = as_agent(baseline)
        if "candidate" in arms:
            agents["candidate"] = as_agent(candidate)
        skip_set = set(skip)
        plan = [
            t
            for t in trial_plan(suite, runs=self.config.runs, seed=self.config.seed, arms=arms)
            if (t.task.task_id, t.arm, t.run) not in skip_set
        ]
        self._limiters = {arm: RateLimiter(self.config.rate_limit_per_s) for arm in agents}
        own_pool = None
        if self.executor is None and any(not a.is_async for a in agents.values()):
            own_pool = ThreadPoolExecutor(
                max_workers=self.config.concurrency, thread_name_prefix="ablation-agent"
            )
        self._pool = self.executor or own_pool
        results: list[TaskResult | None] = [None] * len(plan)
        self.progress.start(len(plan), arms=list(agents))
        abort = threading.Event()
        try:
            await self._drive(plan, agents, results, abort)
        finally:
            self.progress.finish()
            if own_pool is not None:
                own_pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
        return [r for r in results if r is not None]

    # ------------------------------------------------------------------ scheduling
    async def _drive(
        self,
        plan: list[_Trial],
        agents: dict[str, Agent],
        results: list[TaskResult | None],
        abort: threading.Event,
    ) -> None:
        position = iter(range(len(plan)))
        aborted: list[TaskResult] = []

        async def worker() -> None:
            for i in position:
                if aborted:
                    return
                trial = plan[i]
                result = await self._run_trial(trial, agents[trial.arm])
                results[i] = result
                if self.sink is not None:
                    self.sink(result)
                self.progress.advance(result)
                if self.config.on_error == "abort" and result.status != "completed":
                    aborted.append(result)
                    return

        n_workers = min(self.config.concurrency, len(plan))
        workers = [asyncio.ensure_future(worker()) for _ in range(n_workers)]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
        if aborted:
            first = aborted[0]
            raise CampaignAborted(
                f"campaign aborted (on_error='abort'): task {first.task_id!r} ({first.arm}, "
                f"run {first.run}) ended with {first.status}: {first.error}"
            )

    # ------------------------------------------------------------------ one trial
    async def _call_agent(self, agent: Agent, task: AblationTask, arm: str) -> Any:
        limiter = self._limiters[arm]
        if limiter.active:
            await limiter.acquire()
        input_copy = copy.deepcopy(task.input_data)
        if agent.is_async:
            return await agent.call_async(input_copy)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, agent.call_sync, input_copy)

    async def _attempts(
        self, agent: Agent, task: AblationTask, arm: str, record: dict[str, Any]
    ) -> Any:
        """Call the agent with retries and return its raw output.

        ``record`` receives ``attempts``, ``attempt_errors`` (each failed attempt's
        ``"Type: message"``) and ``latency_s`` (the successful attempt's own duration), so they
        are known even when the last attempt fails.
        """
        policy = self.config.retry
        errors: list[str] = []
        record.update(attempts=0, attempt_errors=())

        async def once() -> Any:
            record["attempts"] += 1
            start = self.clock()
            try:
                raw = await self._call_agent(agent, task, arm)
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
                record["attempt_errors"] = tuple(errors)
                raise
            record["latency_s"] = self.clock() - start
            return raw

        if policy.max_attempts == 1:
            return await once()
        retrying = AsyncRetrying(
            stop=stop_after_attempt(policy.max_attempts),
            wait=wait_exponential(multiplier=policy.initial_wait_s, max=policy.max_wait_s)
            + wait_random(0, policy.jitter_s),
            retry=retry_if_exception_type(policy.retry_on),
            reraise=True,
        )
        return await retrying(once)

    async def _score(self, output: Any, task: AblationTask) -> tuple[dict[str, float], dict[str, str]]:
        scores: dict[str, float] = {}
        errors: dict[str, str] = {}
        for scorer in self.quality_scorers:
            name = scorer_name(scorer)
            try:
                scores[name] = await run_scorer(self._offload(scorer), output, task)
            except Exception as exc:
                errors[name] = f"{type(exc).__name__}: {exc}"
        return scores, errors

    def _offload(self, fn: Any) -> Any:
        """Run a sync verifier or scorer in a thread unless it declares itself cheap (``inline``)."""
        if getattr(fn, "inline", False) or is_async_callable(fn):
            return fn

        async def threaded(output: Any, task: AblationTask) -> Any:
            return await asyncio.to_thread(fn, output, task)

        threaded.name = scorer_name(fn)  # type: ignore[attr-defined]
        return threaded

    async def _run_trial(self, trial: _Trial, agent: Agent) -> TaskResult:
        task, arm, run = trial.task, trial.arm, trial.run
        fields: dict[str, Any] = {
            "task_id": task.task_id,
            "arm": arm,
            "run": run,
            "category": task.category,
            "critical": task.critical,
            "started_at": time.time(),
        }
        wall_start = self.clock()
        stage = "setup"
        output: Any = None
        completed = False
        try:
            async with asyncio.timeout(self.config.timeout_s) as scope:
                try:
                    if task.setup is not None:
                        await _maybe_await(task.setup(task))
                    stage = "agent"
                    raw = await self._attempts(agent, task, arm, fields)
                    if isinstance(raw, AgentOutput):
                        output = raw.output
                        fields.update(cost=raw.cost, tokens=raw.tokens, metrics=dict(raw.metrics))
                    else:
                        output = raw
                    fields["output"] = output
                    stage = "verifier"
                    verifier = task.verifier or default_verifier
                    notes = collect_notes()
                    if getattr(verifier, "inline", False):  # cheap and sync: no coroutine needed
                        verdict = check_verdict(verifier(output, task), callable_name(verifier))
                    else:
                        verdict = await run_verifier(self._offload(verifier), output, task)
                    fields["passed"] = verdict
                    fields["verifier_note"] = "; ".join(notes) or None
                    completed = True
                except TimeoutError as exc:  # the agent's own TimeoutError, not our scope's
                    if scope.expired():
                        raise
                    raise _Failure(stage, exc) from None
                except Exception as exc:
                    raise _Failure(stage, exc) from None
        except TimeoutError:
            fields.update(
                status="timeout",
                passed=False,
                error_stage="timeout",
                error_type="Timeout",
                error_message=f"trial exceeded timeout_s={self.config.timeout_s} during {stage}",
            )
        except _Failure as failure:
            assert failure.exc is not None
            fields.update(status="error", passed=False, **_error_fields(failure.exc, failure.stage))
        if completed and self.quality_scorers:
            fields["quality"], fields["quality_errors"] = await self._score(output, task)
        if task.teardown is not None:
            try:
                await _maybe_await(task.teardown(task))
            except Exception as exc:
                if completed:
                    fields.update(status="error", passed=False, **_error_fields(exc, "teardown"))
        fields["wall_s"] = self.clock() - wall_start
        return TaskResult(**fields)


class _Failure(Exception):
    """Internal: an exception from one stage of a trial, carried out of the timeout scope."""

    def __init__(self, stage: str, exc: BaseException) -> None:
        super().__init__(stage)
        self.stage = stage
        self.exc = exc
