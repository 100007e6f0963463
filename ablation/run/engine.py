"""The asyncio engine: runs every trial of a campaign and streams results to a sink.

Semantics (DESIGN.md section 5; one trial is run by :mod:`ablation.run.trial`, retries by
:mod:`ablation.run.attempts`, the schedule comes from :mod:`ablation.run.plan`):

- With ``config.isolation="process"``, Python agents (sync and async) run in worker processes
  (:mod:`ablation.run.isolation`): a crash, ``os._exit`` or a timeout costs that trial and its
  worker, never the campaign. Otherwise async agents run on the event loop; sync agents run in daemon threads
  (:class:`~ablation.run.threads.DaemonExecutor`: a call that never returns cannot hold the
  process at exit; awaited through :class:`~ablation.run.threads.LoopCaller`), or in a
  user-supplied :class:`concurrent.futures.Executor` (e.g. a Dask client's; awaited through
  :func:`~ablation.run.threads.await_future`).
  At most ``config.concurrency`` trials are in flight; trials are generated lazily, so memory is
  bounded by the concurrency and the results kept, not by the suite size.
- Every attempt gets a deep copy of the task input.
- ``config.rate_limit_per_s`` spaces each arm's agent calls; the wait for a slot (and, with
  process isolation, for a worker to start and load the agent) is neither an attempt's latency
  nor part of its trial's ``timeout_s``.
- Within a pair, which arm is scheduled first is drawn from ``config.seed``.
- ``timeout_s`` bounds a whole trial (all attempts and the verifier; every trial's deadline is
  kept on one shared timer, :mod:`ablation.run.deadlines`); a timed-out trial is
  recorded with ``status="timeout"`` and the campaign goes on. A sync agent that overruns keeps
  its daemon thread until it returns (Python threads cannot be killed); its result is discarded.
- An async agent that blocks the event loop for longer than ``timeout_s`` stops the campaign with
  :class:`~ablation.errors.EventLoopBlocked` naming the agent and task (:mod:`ablation.run.watchdog`).
- Retries (tenacity) wrap the agent call only, for the exception types in
  ``config.retry.retry_on``. ``latency_s`` is the successful attempt's own duration, measured
  with an injectable clock (``time.perf_counter`` by default); ``wall_s`` includes retries.
- Exceptions (``BaseException`` included: ``SystemExit``, ``KeyboardInterrupt``) in agents, verifiers, scorers and hooks become recorded data on the trial.
  ``on_error="abort"`` stops the campaign at the first error or timeout (finished trials are
  kept by the sink).

The engine imports no renderer and no analysis: it hands each finished
:class:`~ablation.schema.TaskResult` to a sink (the store) and to a progress reporter.
"""

from __future__ import annotations

import asyncio
import copy
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import Executor
from typing import Any

from ablation.agents.callables import Agent, as_agent, stopping_handlers
from ablation.config import CampaignConfig, config_or_default
from ablation.errors import CampaignAborted, ConfigError, EventLoopBlocked, StopCampaign
from ablation.evaluate.quality import scorer_name
from ablation.eventloop import refuse_running_loop, run_coroutine
from ablation.run.isolation import ProcessIsolation, open_isolation
from ablation.run.limits import Clock, RateLimiter
from ablation.run.plan import Trial, TrialKey, planned_count, trial_plan
from ablation.run.progress import NullProgress, ProgressReporter
from ablation.run.suite_source import TaskSource
from ablation.run.threads import DaemonExecutor, LoopCaller, RefusingStop, await_future
from ablation.run.trial import TrialRunner
from ablation.run.watchdog import LoopStalled, LoopWatchdog
from ablation.schema import ARMS, AblationTask, Arm, TaskResult, validate_suite

__all__ = ["AblationEngine", "RateLimiter", "ResultSink", "TrialKey", "trial_plan"]

ResultSink = Callable[[TaskResult], None]


class AblationEngine:
    """Runs baseline and candidate agents on every task and yields :class:`TaskResult` s.

    Args:
        config: Campaign configuration (defaults to ``CampaignConfig()``).
        quality_scorers: Scorers applied to every completed output.
        executor: Where sync agents run (default: a thread pool of ``config.concurrency``).
        progress: Progress reporter (default: none).
        sink: Called with each finished trial on the event-loop thread (e.g. ``store.append``).
        clock: Clock for latency (``time.perf_counter`` by default; injectable for tests).
        keep_results: ``False``: keep no finished trial (the sink takes them) and return an
            empty list, so memory stays bounded by the concurrency whatever the suite's size.
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
        keep_results: bool = True,
    ) -> None:
        self.config = config_or_default(config)
        self.quality_scorers = tuple(quality_scorers)
        names = [scorer_name(s) for s in self.quality_scorers]
        if len(set(names)) != len(names):
            raise ConfigError(f"quality scorers need distinct names, got {names}")
        self.executor = executor
        self.progress = progress or NullProgress()
        self.sink = sink
        self.clock = clock
        self.keep_results = keep_results
        #: Trials finished by the last run, per arm (counted whether or not they are kept).
        self.finished: dict[str, int] = {}
        self._pool: Executor | None = None
        self._caller: LoopCaller | None = None
        self._isolation: ProcessIsolation | None = None
        self._limiters: dict[str, RateLimiter] = {}
        self._handlers: tuple[Any, ...] | None = None
        #: Why the last run ended early on purpose (a sink raised :class:`StopCampaign`), or None.
        self.stopped: str | None = None
        self._trials = TrialRunner(self.config, self.quality_scorers, self._call_agent, clock, self._turn)

    # ------------------------------------------------------------------ public API
    def run(
        self,
        baseline: Any,
        candidate: Any,
        tasks: Iterable[AblationTask],
        *,
        skip: Collection[TrialKey] = frozenset(),
        arms: Sequence[Arm] = ARMS,
    ) -> list[TaskResult]:
        """Synchronous wrapper of :meth:`run_async` (starts its own event loop).

        Raises:
            ConfigError: when called inside a running event loop (await :meth:`run_async` there).
        """
        refuse_running_loop("AblationEngine.run", "AblationEngine.run_async")
        return run_coroutine(self.run_async(baseline, candidate, tasks, skip=skip, arms=arms))

    async def run_async(
        self,
        baseline: Any,
        candidate: Any,
        tasks: Iterable[AblationTask],
        *,
        skip: Collection[TrialKey] = frozenset(),
        arms: Sequence[Arm] = ARMS,
    ) -> list[TaskResult]:
        """Run every trial not in ``skip`` and return the new results.

        Args:
            baseline: The baseline agent (any supported form; ignored if not in ``arms``).
            candidate: The candidate agent (likewise).
            tasks: The suite (any iterable; a
                :class:`~ablation.run.suite_source.TaskSource` is read lazily, pass by pass,
                and not checked again).
            skip: ``(task_id, arm, run)`` keys already done (resume).
            arms: Which arms to run (e.g. only the candidate when the baseline is reused).

        Returns:
            The new results, in schedule order (empty when ``keep_results`` is ``False``).

        Raises:
            CampaignAborted: with ``on_error="abort"``, at the first error or timeout.
        """
        suite = tasks if isinstance(tasks, TaskSource) else validate_suite(tasks)
        agents: dict[str, Agent] = {}
        if "baseline" in arms:
            agents["baseline"] = as_agent(baseline)
        if "candidate" in arms:
            agents["candidate"] = as_agent(candidate)
        skip_set = skip if isinstance(skip, (set, frozenset)) else set(skip)
        plan = (
            t
            for t in trial_plan(
                suite, runs=self.config.runs, seed=self.config.seed, arms=arms,
                by_task=self.config.sequential is not None,
            )
            if (t.task.task_id, t.arm, t.run) not in skip_set
        )
        n_trials = planned_count(suite, self.config.runs, arms, skip_set)
        self._limiters = {arm: RateLimiter(self.config.rate_limit_per_s) for arm in agents}
        self._handlers = stopping_handlers()  # what an async agent must leave in place
        self._pool = self.executor or DaemonExecutor()
        if isinstance(self._pool, DaemonExecutor):
            self._caller = LoopCaller(self._pool, asyncio.get_running_loop())
        self._isolation = open_isolation(self.config, agents, self.executor)
        results: dict[int, TaskResult] | None = {} if self.keep_results else None
        self.finished = dict.fromkeys(agents, 0)
        self.progress.start(n_trials, arms=list(agents))
        abort = threading.Event()
        watchdog = self._watchdog(agents)
        try:
            await self._drive(plan, n_trials, agents, results, abort)
        except LoopStalled:
            raise EventLoopBlocked(
                f"the event loop was blocked for more than timeout_s={self.config.timeout_s}"
            ) from None
        finally:
            if watchdog is not None:
                watchdog.stop()
            self.progress.finish()
            self._pool = self._caller = None
            if self._isolation is not None:
                self._isolation.close()
        return [] if results is None else [results[i] for i in sorted(results)]

    def _watchdog(self, agents: dict[str, Agent]) -> LoopWatchdog | None:
        """Watch the loop when an async agent could block it and a timeout bounds trials."""
        if self.config.timeout_s is None or not any(a.is_async for a in agents.values()):
            return None
        watchdog = LoopWatchdog(self.config.timeout_s)
        watchdog.start()
        return watchdog

    # ------------------------------------------------------------------ scheduling
    async def _drive(
        self,
        plan: Iterator[Trial],
        n_trials: int,
        agents: dict[str, Agent],
        results: dict[int, TaskResult] | None,
        abort: threading.Event,
    ) -> None:
        position = enumerate(plan)
        aborted: list[TaskResult] = []
        stop: list[StopCampaign] = []
        interrupted: list[bool] = []

        async def worker() -> None:
            for i, trial in position:
                if aborted or stop or interrupted:
                    return
                result = await self._trials.run(trial, agents[trial.arm])
                if stop:  # finished after the decision: not recorded, like a cancelled trial
                    return
                self.finished[trial.arm] += 1
                if results is not None:
                    results[i] = result
                try:
                    if self.sink is not None:
                        self.sink(result)
                except StopCampaign as signal:
                    stop.append(signal)
                    for w in workers:
                        if w is not asyncio.current_task():
                            w.cancel()
                self.progress.advance(result)
                if self.config.on_error == "abort" and result.status != "completed":
                    aborted.append(result)
                    return

        n_workers = min(self.config.concurrency, n_trials)
        workers: list[asyncio.Future[None]] = []
        workers.extend(asyncio.ensure_future(worker()) for _ in range(n_workers))
        try:
            await asyncio.gather(*workers)
        except asyncio.CancelledError:
            # The cancelled gather cancelled every worker; wait for their cleanup (a ``cmd:``
            # agent's process group killed and its exit reaped) before the cancellation goes on,
            # or asyncio.run cancels it midway and closes the loop while children still run. A
            # worker whose agent swallowed the cancellation starts no further trial.
            interrupted.append(True)
            await asyncio.gather(*workers, return_exceptions=True)
            if not stop:
                raise
        except BaseException:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
        if stop:
            self.stopped = stop[0].reason
        if aborted:
            first = aborted[0]
            raise CampaignAborted(
                f"campaign aborted (on_error='abort'): task {first.task_id!r} ({first.arm}, "
                f"run {first.run}) ended with {first.status}: {first.error}"
            )

    # ------------------------------------------------------------------ one agent call
    async def _turn(self, arm: str) -> None:
        """Wait for ``arm``'s next rate-limit slot and, with process isolation, a worker that has
        loaded its agent (the trial's clock stopped meanwhile)."""
        limiter = self._limiters[arm]
        if limiter.active:
            await limiter.acquire()
        if self._isolation is not None:
            await self._isolation.ready(arm, self.config.timeout_s)

    async def _call_agent(self, agent: Agent, task: AblationTask, arm: str) -> Any:
        if self._isolation is not None and self._isolation.handles(arm):  # isolation="process"
            return await self._isolation.call(arm, task.input_data, task.task_id)
        input_copy = copy.deepcopy(task.input_data)
        if agent.is_async:
            return await agent.call_async(input_copy, self._handlers)
        if self._caller is not None:
            spans = self._trials.spans  # a sync agent's spans belong to the trial's trace
            call = agent.call_sync if spans is None else spans.bind(agent.call_sync)
            return await self._caller.call(call, input_copy)
        assert self._pool is not None  # set for the length of run_async
        return await await_future(self._pool.submit(RefusingStop(agent.call_sync), input_copy))
