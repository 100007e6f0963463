"""Run a whole campaign: engine -> store -> analysis -> gates -> :class:`AblationReport`.

:func:`run_ablation_campaign` and :func:`run_ablation_campaign_async` share one implementation
and one :class:`~ablation.config.CampaignConfig`, so their behaviour cannot drift.
"""

from __future__ import annotations

import asyncio
import functools
import os
import queue
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ParamSpec, TypeVar

from ablation.agents.callables import as_agent
from ablation.analysis.build import report_from_results
from ablation.config import CampaignConfig, Provenance
from ablation.errors import CampaignAborted, ConfigError
from ablation.evaluate.quality import scorer_name
from ablation.report import AblationReport
from ablation.run.engine import AblationEngine
from ablation.run.progress import ProgressReporter
from ablation.schema import (
    AblationTask,
    TaskResult,
    suite_fingerprint,
    task_digests,
    validate_suite,
)
from ablation.store.run_store import CampaignRecord, RunStore

P = ParamSpec("P")
T = TypeVar("T")

__all__ = [
    "CampaignRun",
    "StoreSink",
    "StoredTrials",
    "report_from_store",
    "report_stored_campaign",
    "run_ablation_campaign",
    "run_ablation_campaign_async",
]


@dataclass
class CampaignRun:
    """Bookkeeping of one call, for callers that want more than the report.

    Attributes:
        campaign_id: The store's id of the campaign (``None`` without a store).
        executed: Trials run by this call, per arm.
        reused: Trials taken from the store (resume) or from a reused baseline, per arm.
    """

    campaign_id: str | None = None
    executed: dict[str, int] = field(default_factory=lambda: {"baseline": 0, "candidate": 0})
    reused: dict[str, int] = field(default_factory=lambda: {"baseline": 0, "candidate": 0})


class StoredTrials(Mapping[tuple[str, str], TaskResult]):
    """A lazy ``(task_id, arm) -> first-run TaskResult`` view of a stored campaign.

    The analysis streams light rows from the store and asks this view only for the few trials
    its drill-downs show, so a report over a million stored trials never loads them all.
    """

    def __init__(self, store: RunStore, campaign_id: str) -> None:
        self._store = store
        self._campaign_id = campaign_id

    def __getitem__(self, key: tuple[str, str]) -> TaskResult:
        task_id, arm = key
        found = self._store.results(self._campaign_id, arm=arm, task_ids=[task_id])
        if not found:
            raise KeyError(key)
        return min(found, key=lambda r: r.run)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(())

    def __len__(self) -> int:
        return self._store.count(self._campaign_id)

    def __bool__(self) -> bool:
        return True  # truth-testing must not count the store's trials (a full COUNT each time)


def report_from_store(
    store: RunStore,
    campaign_id: str,
    *,
    config: CampaignConfig,
    provenance: Provenance,
    tasks: Sequence[AblationTask] | None = None,
    expected_ids: Iterable[str] | None = None,
) -> AblationReport:
    """Build a stored campaign's report in bounded memory (streamed rows, lazy drill-downs)."""
    return report_from_results(
        store.trial_rows(campaign_id),
        config=config,
        tasks=tasks,
        expected_ids=expected_ids,
        provenance=provenance,
        trial_lookup=StoredTrials(store, campaign_id),
    )


def report_stored_campaign(
    store: RunStore,
    campaign_id: str | None = None,
    *,
    config_update: Mapping[str, Any] | None = None,
) -> tuple[AblationReport, CampaignRecord]:
    """Rebuild the report of a stored campaign (the newest when ``campaign_id`` is ``None``).

    The campaign's own configuration is used, with the fields in ``config_update`` replaced
    (e.g. another alpha or gate policy). Every task the campaign was started with is expected:
    tasks of an interrupted campaign that have no trials yet are listed as missing, never
    silently left out.

    Raises:
        ConfigError: when the store holds no campaign.
        StoreError: for an unknown campaign id.
    """
    record = store.latest_campaign() if campaign_id is None else store.get_campaign(campaign_id)
    if record is None:
        raise ConfigError(f"{store.path}: the store holds no campaign")
    config = record.config.model_copy(update=dict(config_update or {}))
    provenance = Provenance(
        suite_fingerprint=record.suite_fingerprint,
        baseline_agent=record.baseline_agent,
        candidate_agent=record.candidate_agent,
        campaign_id=record.campaign_id,
        started_at=record.provenance.get("started_at") or record.created_at,
        finished_at=record.updated_at,
        baseline_reused_from=record.provenance.get("baseline_reused_from"),
        baseline_ran_at=record.provenance.get("baseline_ran_at"),
    )
    report = report_from_store(
        store, record.campaign_id, config=config, provenance=provenance,
        expected_ids=list(record.task_digests) or None,
    )
    return report, record


class StoreSink:
    """Store sink: a writer thread commits finished trials as soon as it gets them.

    The event loop only hands each finished trial over (a queue put), so SQLite's work runs
    beside the agents instead of between them; the writer commits whatever has arrived in one
    transaction (one trial when the campaign is slow, a few when it is fast). A crash loses at
    most the trials handed over but not yet committed - microseconds of work, which a resume
    runs again exactly like trials still in flight; nothing is ever stored twice. A store error
    is raised from the next call or from :meth:`close`, never lost.

    Args:
        store: The run store.
        campaign_id: The campaign the trials belong to.
        max_batch: Most trials in one transaction.
        linger_s: How long the writer waits after the first trial of a batch for others to join
            it (a trial is committed at most this long after it finished, plus the write).
    """

    _STOP = object()

    def __init__(
        self, store: RunStore, campaign_id: str, *, max_batch: int = 1000, linger_s: float = 0.002
    ) -> None:
        self._store = store
        self._linger_s = linger_s
        self._campaign_id = campaign_id
        self._max_batch = max_batch
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._write, name="ablation-store", daemon=True)
        self._thread.start()

    def __call__(self, result: TaskResult) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put(result)

    def _write(self) -> None:
        stop = False
        while not stop:
            batch = [self._queue.get()]
            # Linger a moment so a fast campaign's trials share a commit: fewer wake-ups of this
            # thread, less contention with the agents for the interpreter lock.
            time.sleep(self._linger_s)
            while len(batch) < self._max_batch:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            if batch[-1] is self._STOP:
                stop = True
                batch.pop()
            if batch and self._error is None:
                try:
                    self._store.append_many(self._campaign_id, batch)
                except BaseException as exc:  # raised again by __call__ or close()
                    self._error = exc

    def close(self) -> None:
        """Commit everything handed over, stop the writer, raise a store error met on the way."""
        if self._thread.is_alive():
            self._queue.put(self._STOP)
            self._thread.join()
        if self._error is not None:
            raise self._error


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _open_store(store: RunStore | str | os.PathLike[str] | None) -> tuple[RunStore | None, bool]:
    if store is None or isinstance(store, RunStore):
        return store, False
    return RunStore(store), True


async def run_ablation_campaign_async(
    baseline_agent: Any,
    candidate_agent: Any,
    tasks: Sequence[AblationTask],
    *,
    config: CampaignConfig | None = None,
    quality_scorers: Sequence[Any] = (),
    store: RunStore | str | os.PathLike[str] | None = None,
    progress: ProgressReporter | None = None,
    executor: Executor | None = None,
    resume: bool | str = False,
    reuse_baseline: str | None = None,
    run_info: CampaignRun | None = None,
) -> AblationReport:
    """Run a paired campaign and return its gated report.

    Args:
        baseline_agent: The baseline (any supported agent form). Ignored when the baseline is
            reused from a stored campaign.
        candidate_agent: The candidate.
        tasks: The suite.
        config: Campaign configuration.
        quality_scorers: Scorers applied to every completed output.
        store: A :class:`~ablation.store.RunStore` or a path to one; every finished trial is
            committed there at once. ``None`` keeps results in memory only.
        progress: Progress reporter.
        executor: Where sync agents run (thread pool by default).
        resume: ``True`` resumes the newest campaign in the store, or give its id; only the
            missing trials run. A suite, agent or config that differs is refused.
        reuse_baseline: Id of a stored campaign on the same suite whose baseline trials are
            reused: the baseline agent is not called at all.
        run_info: Filled with the campaign id and trial counts when given.

    Returns:
        The :class:`~ablation.report.AblationReport`.

    Raises:
        ConfigError: on an invalid suite or option combination.
        ResumeMismatchError: when a resume or a reused baseline does not match.
        CampaignAborted: with ``on_error="abort"`` at the first error or timeout.
    """
    config = config or CampaignConfig()
    suite = validate_suite(tasks)
    info = run_info if run_info is not None else CampaignRun()
    scorer_names = [scorer_name(s) for s in quality_scorers]
    fingerprint = suite_fingerprint(suite, scorer_names)
    digests = task_digests(suite)
    candidate = as_agent(candidate_agent)
    if (resume or reuse_baseline) and store is None:
        raise ConfigError("resume and baseline reuse need a store")
    if resume and reuse_baseline:
        raise ConfigError("resume and reuse_baseline cannot be combined")
    run_store, owned = _open_store(store)
    try:
        prior: list[TaskResult] = []
        baseline_name: str
        provenance_extra: dict[str, Any] = {}
        arms: tuple[Any, ...] = ("baseline", "candidate")
        baseline = None
        if reuse_baseline is not None:
            assert run_store is not None
            source = run_store.get_campaign(reuse_baseline)
            if source.suite_fingerprint != fingerprint:
                from ablation.errors import ResumeMismatchError

                changed = sorted(
                    tid for tid in set(digests) | set(source.task_digests)
                    if digests.get(tid) != source.task_digests.get(tid)
                )
                raise ResumeMismatchError(
                    f"cannot reuse the baseline of campaign {reuse_baseline!r}: the suite differs"
                    + (f" (tasks {', '.join(repr(t) for t in changed[:10])})" if changed else
                       " (quality scorers differ)")
                )
            if source.config.runs != config.runs:
                raise ConfigError(
                    f"cannot reuse the baseline of campaign {reuse_baseline!r}: it ran "
                    f"{source.config.runs} runs per task, this campaign asks for {config.runs}"
                )
            prior = run_store.results(reuse_baseline, arm="baseline")
            baseline_name = source.baseline_agent
            arms = ("candidate",)
            provenance_extra = {
                "baseline_reused_from": reuse_baseline,
                "baseline_ran_at": source.created_at,
            }
        else:
            baseline = as_agent(baseline_agent)
            baseline_name = baseline.name
        campaign_id: str | None = None
        skip: set[tuple[str, str, int]] = set()
        started = _now()
        if run_store is not None and resume:
            record = (
                run_store.get_campaign(resume) if isinstance(resume, str) else run_store.latest_campaign()
            )
            if record is None:
                raise ConfigError(f"nothing to resume: the store {run_store.path} holds no campaign")
            run_store.check_resume(
                record.campaign_id,
                suite_fingerprint=fingerprint,
                task_digests=digests,
                baseline_agent=baseline_name,
                candidate_agent=candidate.name,
                config=config,
            )
            campaign_id = record.campaign_id
            skip = run_store.completed_keys(campaign_id)
            started = str(record.provenance.get("started_at") or record.created_at)
            provenance_extra = {
                k: record.provenance[k]
                for k in ("baseline_reused_from", "baseline_ran_at")
                if record.provenance.get(k)
            }
            if provenance_extra:
                arms = ("candidate",)
            run_store.set_status(campaign_id, "running")
        elif run_store is not None:
            campaign_id = run_store.create_campaign(
                config=config,
                suite_fingerprint=fingerprint,
                task_digests=digests,
                baseline_agent=baseline_name,
                candidate_agent=candidate.name,
                provenance={"started_at": started, **provenance_extra},
            )
            if prior:
                run_store.append_many(campaign_id, prior)
        info.campaign_id = campaign_id
        for r in prior:
            info.reused[r.arm] += 1
        for _, arm, _ in skip:
            info.reused[arm] += 1

        sink = None
        if run_store is not None and campaign_id is not None:
            sink = StoreSink(run_store, campaign_id)

        engine = AblationEngine(
            config, quality_scorers=quality_scorers, executor=executor, progress=progress, sink=sink
        )
        try:
            new = await engine.run_async(baseline, candidate, suite, skip=skip, arms=arms)
            if sink is not None:
                sink.close()
        except BaseException as exc:
            if run_store is not None and campaign_id is not None:
                try:
                    if sink is not None:
                        sink.close()
                finally:
                    status = "aborted" if isinstance(exc, CampaignAborted) else "interrupted"
                    run_store.set_status(campaign_id, status)
            raise
        for r in new:
            info.executed[r.arm] += 1
        provenance = Provenance(
            suite_fingerprint=fingerprint,
            baseline_agent=baseline_name,
            candidate_agent=candidate.name,
            started_at=started,
            finished_at=_now(),
            campaign_id=campaign_id,
            **provenance_extra,
        )
        if run_store is not None and campaign_id is not None:
            run_store.set_status(campaign_id, "complete")
            return report_from_store(
                run_store, campaign_id, config=config, provenance=provenance, tasks=suite
            )
        return report_from_results([*prior, *new], config=config, tasks=suite, provenance=provenance)
    finally:
        if owned and run_store is not None:
            run_store.close()


def _synchronous(fn: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The blocking twin of a coroutine function, with exactly its parameters."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        return asyncio.run(fn(*args, **kwargs))

    return run


run_ablation_campaign = _synchronous(run_ablation_campaign_async)
run_ablation_campaign.__name__ = run_ablation_campaign.__qualname__ = "run_ablation_campaign"
run_ablation_campaign.__doc__ = """Run a paired campaign and return its gated report (blocking).

The synchronous twin of :func:`run_ablation_campaign_async`: the same parameters (it is built
from that function, so the two cannot drift) and the same result. It starts its own event loop,
so call the async function from code that already runs one.
"""
