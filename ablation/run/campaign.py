"""Run a whole campaign: validate -> open the store -> plan (new, resumed, reused baseline) -> run
the engine -> report.

:func:`run_ablation_campaign` and :func:`run_ablation_campaign_async` share one implementation
and one :class:`~ablation.config.CampaignConfig`, so their behaviour cannot drift. Each step is a
named function below; a trial's path through them is described in docs/DESIGN.md section 4.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ParamSpec, TypeVar

from ablation.agents.callables import Agent, as_agent
from ablation.agents.fingerprint import agent_fingerprint
from ablation.analysis.background import REPORT_STATISTICS, preload
from ablation.analysis.stored import report_from_store
from ablation.config import CampaignConfig, Provenance, config_or_default
from ablation.errors import CampaignAborted, ConfigError, ResumeMismatchError
from ablation.evaluate.quality import scorer_name
from ablation.eventloop import blocking_twin
from ablation.process_hooks import memory_freed
from ablation.report import AblationReport
from ablation.run.engine import AblationEngine
from ablation.run.failfast import DEFAULT_FAIL_FAST, FailFastSink
from ablation.run.progress import ProgressReporter
from ablation.run.resume_checks import check_reused_baseline, refuse_unstable, warn_unchecked_agents
from ablation.run.scaleout import cluster_executor
from ablation.run.sinks import StoreSink
from ablation.run.suite_scan import SuiteScan, scan_suite
from ablation.run.trials_report import report_from_trials
from ablation.schema import AblationTask, Arm, TaskResult
from ablation.store.campaigns import new_campaign_id
from ablation.store.format import TRIAL_CONDITION_FIELDS, listing
from ablation.store.locks import CampaignLock
from ablation.store.resume import config_problems
from ablation.store.run_store import RunStore

P = ParamSpec("P")
T = TypeVar("T")

#: What a campaign accepts as its suite (see ``tasks`` of :func:`run_ablation_campaign_async`).
Suite = Iterable[AblationTask] | Callable[[], Iterable[AblationTask]]

__all__ = ["CampaignRun", "run_ablation_campaign", "run_ablation_campaign_async"]


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


@dataclass
class _Plan:
    """Step 3 (plan): what this call runs, what it takes from the store, and where it writes."""

    baseline: Agent | None
    baseline_name: str
    candidate: Agent
    arms: tuple[Arm, ...] = ("baseline", "candidate")
    prior: list[TaskResult] = field(default_factory=list)
    lock: CampaignLock | None = None
    skip: set[tuple[str, str, int]] = field(default_factory=set)
    campaign_id: str | None = None
    started: str = ""
    provenance_extra: dict[str, Any] = field(default_factory=dict)
    allow_changed_agent: bool = False

    def record_in(self, info: CampaignRun) -> None:
        """Fill ``info`` with the campaign's id and the trials this plan takes from the store."""
        info.campaign_id = self.campaign_id
        for _, arm, _ in {(r.task_id, r.arm, r.run) for r in self.prior} | self.skip:
            info.reused[arm] += 1  # a reused baseline's trials are in both, counted once

    def fingerprints(self) -> dict[str, str]:
        """``arm -> fingerprint`` of the agents this call runs (:mod:`ablation.agents.fingerprint`)."""
        agents = {"baseline": self.baseline, "candidate": self.candidate}
        return {arm: agent_fingerprint(a) for arm, a in agents.items() if a is not None}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _validate(tasks: Suite, quality_scorers: Sequence[Any]) -> SuiteScan:
    """Step 1: one pass over the suite (:mod:`ablation.run.suite_scan`); the tasks are not kept."""
    return scan_suite(tasks, [scorer_name(s) for s in quality_scorers])


def _open_store(store: RunStore | str | os.PathLike[str] | None) -> tuple[RunStore | None, bool]:
    if store is None or isinstance(store, RunStore):
        return store, False
    return RunStore(store), True


def _reused_baseline(
    run_store: RunStore, source_id: str, suite: SuiteScan, config: CampaignConfig, plan: _Plan,
    baseline_agent: Any = None,
) -> None:
    """Take the baseline trials of a stored campaign on the same suite (no baseline calls)."""
    source = run_store.get_campaign(source_id)
    if source.suite_fingerprint != suite.fingerprint:
        changed = sorted(
            tid for tid in set(suite.digests) | set(source.task_digests)
            if suite.digests.get(tid) != source.task_digests.get(tid)
        )
        raise ResumeMismatchError(
            f"cannot reuse the baseline of campaign {source_id!r}: the suite differs"
            + (f" (tasks {listing(changed)})" if changed else
               " (quality scorers differ)")
        )
    if problems := config_problems(json.loads(source.config.model_dump_json()), config, TRIAL_CONDITION_FIELDS):
        raise ConfigError(  # its trials ran otherwise than this campaign's would
            f"cannot reuse the baseline of campaign {source_id!r}: {'; '.join(problems)}"
        )
    if baseline_agent is not None:  # its trials stand for the baseline given: same agent, same code
        stored = (source.baseline_agent, run_store.agent_fingerprints(source_id).get("baseline"))
        given = (as_agent(baseline_agent).name, agent_fingerprint(baseline_agent))
        check_reused_baseline(source_id, stored, given, plan.allow_changed_agent)
    plan.prior = run_store.results(source_id, arm="baseline")
    plan.baseline, plan.baseline_name, plan.arms = None, source.baseline_agent, ("candidate",)
    plan.provenance_extra = {"baseline_reused_from": source_id, "baseline_ran_at": source.created_at}
    if baseline_agent is not None:
        # A source that stopped early (sequential), was interrupted or aborted, or is still
        # running holds no baseline trial for some tasks: the baseline runs there, only there.
        plan.baseline, plan.arms = as_agent(baseline_agent), ("baseline", "candidate")
        plan.skip = {(r.task_id, r.arm, r.run) for r in plan.prior}


def _resumed(
    run_store: RunStore, resume: bool | str, suite: SuiteScan, config: CampaignConfig, plan: _Plan
) -> None:
    """Continue a stored campaign: check it matches, then skip the trials it already holds."""
    record = run_store.get_campaign(resume) if isinstance(resume, str) else run_store.latest_campaign()
    if record is None:
        raise ConfigError(f"nothing to resume: the store {run_store.path} holds no campaign")
    checked = run_store.check_resume(
        record.campaign_id,
        suite_fingerprint=suite.fingerprint,
        task_digests=suite.digests,
        baseline_agent=plan.baseline_name,
        candidate_agent=plan.candidate.name,
        config=config,
        agent_fingerprints=plan.fingerprints(),
        allow_changed_agent=plan.allow_changed_agent,
    )
    if not checked:
        warn_unchecked_agents(record.campaign_id)
    plan.campaign_id = record.campaign_id
    plan.lock = _lock(run_store, record.campaign_id)  # before reading what is left to run
    plan.skip = run_store.completed_keys(record.campaign_id)
    plan.started = str(record.provenance.get("started_at") or record.created_at)
    plan.provenance_extra = {
        k: record.provenance[k]
        for k in ("baseline_reused_from", "baseline_ran_at")
        if record.provenance.get(k)
    }
    run_store.set_status(record.campaign_id, "running")


def _plan(
    baseline_agent: Any,
    candidate_agent: Any,
    suite: SuiteScan,
    config: CampaignConfig,
    run_store: RunStore | None,
    resume: bool | str,
    reuse_baseline: str | None,
    allow_changed_agent: bool = False,
) -> _Plan:
    """Step 3: a new campaign, a resumed one, or one that reuses a stored baseline."""
    if run_store is not None:
        refuse_unstable(suite.unstable)
    candidate = as_agent(candidate_agent)
    if reuse_baseline is not None:
        plan = _Plan(None, "", candidate, started=_now(), allow_changed_agent=allow_changed_agent)
        assert run_store is not None
        _reused_baseline(run_store, reuse_baseline, suite, config, plan, baseline_agent)
    else:
        baseline = as_agent(baseline_agent)
        plan = _Plan(baseline, baseline.name, candidate, started=_now(), allow_changed_agent=allow_changed_agent)
    try:
        if run_store is not None and resume:
            _resumed(run_store, resume, suite, config, plan)
        elif run_store is not None:
            chosen = new_campaign_id()  # locked before its row exists: no reader sees it unheld
            plan.lock = _lock(run_store, chosen)
            plan.campaign_id = run_store.create_campaign(  # with a reused baseline, all or nothing
                campaign_id=chosen, config=config, suite_fingerprint=suite.fingerprint, task_digests=suite.digests,
                baseline_agent=plan.baseline_name, candidate_agent=candidate.name,
                provenance={"started_at": plan.started, **plan.provenance_extra},
                agent_fingerprints=plan.fingerprints(), trials=plan.prior,
            )
    except BaseException:  # a full disk, a refused resume: the lock taken here guards nothing
        if plan.lock is not None:
            plan.lock.release()
        raise
    return plan


def _check_store_use(store: object, resume: bool | str, reuse_baseline: str | None) -> None:
    """Before step 1: a resume or a reused baseline needs a store, and not both at once (else
    :class:`~ablation.errors.ConfigError`)."""
    if (resume or reuse_baseline) and store is None:
        raise ConfigError("resume and baseline reuse need a store")
    if resume and reuse_baseline:
        raise ConfigError("resume and reuse_baseline cannot be combined")


def _lock(run_store: RunStore, campaign_id: str) -> CampaignLock | None:
    """One process at a time runs a campaign (a file store only; see :mod:`ablation.store.locks`)."""
    if str(run_store.path) == ":memory:":
        return None
    return CampaignLock(run_store.path, campaign_id)


async def _run(
    engine_args: dict[str, Any], plan: _Plan, suite: SuiteScan, run_store: RunStore | None,
    fail_fast: int = DEFAULT_FAIL_FAST,
) -> tuple[list[TaskResult], dict[str, int]]:
    """Step 4: run the missing trials; the store's status says how the run ended.

    Returns the new trials (none kept when the store takes them) and how many ran per arm.
    """
    sink: Any = StoreSink(run_store, plan.campaign_id) if run_store and plan.campaign_id else None
    tasks: Iterable[AblationTask] = suite.source
    config = engine_args["config"]
    if config.sequential is not None:  # seeded order; stop once the gates are decided
        from ablation.run.sequential import SequentialSink, sequential_tasks

        tasks = sequential_tasks(suite.tasks(), config.seed)
        stored = run_store.results(plan.campaign_id) if run_store and plan.campaign_id else None
        sink = SequentialSink(sink, config, tasks, stored if stored is not None else plan.prior)
        if sink.decided:  # decided before an interruption: nothing left to run
            sink.close()
            return [], {}
    planned: dict[str, int] = {
        arm: len(suite.ids) * config.runs - sum(1 for _, a, _ in plan.skip if a == arm)
        for arm in plan.arms
    }
    names = {"baseline": plan.baseline_name, "candidate": plan.candidate.name}
    sink = FailFastSink(
        sink, planned=planned, agents=names, limit=fail_fast, campaign_id=plan.campaign_id
    )
    stored_run = run_store is not None and plan.campaign_id is not None
    engine = AblationEngine(sink=sink, keep_results=not stored_run, **engine_args)
    try:
        new = await engine.run_async(
            plan.baseline, plan.candidate, tasks, skip=plan.skip, arms=plan.arms
        )
        if sink is not None:
            sink.close()
    except BaseException as exc:
        if run_store is not None and plan.campaign_id is not None:
            status = "aborted" if isinstance(exc, CampaignAborted) else "interrupted"
            for step in (sink.close, lambda: run_store.set_status(plan.campaign_id, status)):
                try:  # a store that failed the run (a full disk) fails these too: the first error is raised
                    step()
                except Exception as later:
                    if str(later) != str(exc):  # (a flush failing again as the run's write did)
                        exc.add_note(f"then {type(later).__name__}: {later}")
        raise
    return new, engine.finished


def _report(
    plan: _Plan, suite: SuiteScan, config: CampaignConfig, run_store: RunStore | None,
    new: list[TaskResult],
) -> AblationReport:
    """Step 5: the gated report, from the store when there is one (bounded memory)."""
    provenance = Provenance(
        suite_fingerprint=suite.fingerprint,
        baseline_agent=plan.baseline_name,
        candidate_agent=plan.candidate.name,
        started_at=plan.started,
        finished_at=_now(),
        campaign_id=plan.campaign_id,
        isolation=config.isolation,
        sandbox=config.sandbox,
        **plan.provenance_extra,
    )
    if run_store is not None and plan.campaign_id is not None:
        run_store.set_status(plan.campaign_id, "complete")
        report = report_from_store(
            run_store, plan.campaign_id, config=config, provenance=provenance,
            tasks=suite.report_tasks(),
        )
        run_store.update_provenance(plan.campaign_id, verdict=report.verdict)  # for `ablation list`
        return report
    return report_from_trials(
        [*plan.prior, *new], config=config, tasks=suite.report_tasks(), provenance=provenance
    )


async def run_ablation_campaign_async(
    baseline_agent: Any,
    candidate_agent: Any,
    tasks: Suite,
    *,
    config: CampaignConfig | None = None,
    quality_scorers: Sequence[Any] = (),
    store: RunStore | str | os.PathLike[str] | None = None,
    progress: ProgressReporter | None = None,
    executor: Executor | None = None,
    resume: bool | str = False,
    reuse_baseline: str | None = None,
    run_info: CampaignRun | None = None,
    fail_fast: int = DEFAULT_FAIL_FAST,
    allow_changed_agent: bool = False,
) -> AblationReport:
    """Run a paired campaign and return its gated report.

    Args:
        baseline_agent: The baseline (any supported agent form). Ignored when the baseline is
            reused from a stored campaign.
        candidate_agent: The candidate.
        tasks: The suite: a list or tuple of tasks, any iterable of them (a generator is read
            once and spooled to a temporary file), a zero-argument callable returning one (called
            once per pass), or a streamed JSONL suite (:func:`ablation.sources.suites.open_suite`).
            Only the sequence forms are held in memory; the others are read again for the plan.
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
        fail_fast: When the first ``fail_fast`` trials of one arm (all of them when fewer) end in
            the same infrastructure error, stop with :class:`~ablation.run.failfast.BrokenArm`
            (the stored campaign is marked aborted, resumable); 0 disables the check.
        allow_changed_agent: Resume even when an agent's code changed since the campaign was
            stored (its fingerprint differs); by default such a resume is refused.

    Returns:
        The :class:`~ablation.report.AblationReport`.

    Raises:
        ConfigError: on an invalid suite or option combination, or (with a store) when a task's
            input has no stable representation (a resume could not check it).
        ResumeMismatchError: when a resume or a reused baseline does not match.
        CampaignAborted: with ``on_error="abort"`` at the first error or timeout, or when an
            arm is broken (``fail_fast``).
    """
    config = config_or_default(config)
    info = run_info if run_info is not None else CampaignRun()
    _check_store_use(store, resume, reuse_baseline)
    suite = _validate(tasks, quality_scorers)
    run_store, owned = _open_store(store)
    plan: _Plan | None = None
    try:
        plan = _plan(baseline_agent, candidate_agent, suite, config, run_store, resume, reuse_baseline, allow_changed_agent)
        plan.record_in(info)
        suite.digests = {}  # only the plan's checks read them: free ~100 B a task for the run
        engine_args = {  # a Dask client's executor charges a dead worker to its own trial only
            "config": config, "quality_scorers": quality_scorers, "progress": progress,
            "executor": executor if executor is None else cluster_executor(executor),
        }
        preload(REPORT_STATISTICS)  # the report's imports, while the agents wait
        new, finished = await _run(engine_args, plan, suite, run_store, fail_fast)
        for arm, count in finished.items():
            info.executed[arm] += count
        if run_store is not None:  # the trials are in the store: the run's heap is garbage now
            memory_freed()
        return _report(plan, suite, config, run_store, new)
    finally:
        suite.close()
        if plan is not None and plan.lock is not None:
            plan.lock.release()
        if owned and run_store is not None:
            run_store.close()


run_ablation_campaign = blocking_twin(run_ablation_campaign_async)
run_ablation_campaign.__name__ = run_ablation_campaign.__qualname__ = "run_ablation_campaign"
run_ablation_campaign.__doc__ = """Run a paired campaign and return its gated report (blocking).

The synchronous twin of :func:`run_ablation_campaign_async`: the same parameters (it is built
from that function, so the two cannot drift) and the same result. It starts its own event loop,
so call the async function from code that already runs one.
"""
