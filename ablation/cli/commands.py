"""The commands: ``run``, ``report``, ``init`` and ``schema`` (wiring only); ``compare``, ``plan``,
``list`` and ``view`` live in modules of their own."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from ablation.cli import user_code
from ablation.cli.options import campaign_config, merged_settings
from ablation.cli.output import (
    EXIT_ERROR,
    EXIT_OK,
    Named,
    check_output,
    config_inputs,
    emit,
    say_sandbox_unavailable,
    spec_inputs,
    store_inputs,
)
from ablation.cli.parser import UsageError
from ablation.cli.user_io import stdin_for_user_code, user_output_to_stderr

__all__ = ["COMMANDS"]


def _cmd_run(args: argparse.Namespace) -> int:
    """``ablation run``: the suite, agents and scorers run with their stdout sent to stderr, so
    stdout holds the report alone, and with ``/dev/null`` as stdin unless it is a terminal
    (:mod:`ablation.cli.user_io`). Processes its agents started and left running are killed at
    the end (:mod:`ablation.cli.descendants`)."""
    from ablation.cli.descendants import descendants_killed

    with user_output_to_stderr() as stream, stdin_for_user_code(), descendants_killed():
        return _run(args, stream)


def _run(args: argparse.Namespace, stream: TextIO) -> int:
    from ablation.run.campaign import CampaignRun, run_ablation_campaign
    from ablation.run.failfast import BrokenArm
    from ablation.run.progress import NullProgress, default_progress
    from ablation.sources.suites import open_suite

    s = _run_settings(args)
    config = campaign_config(s)
    tasks = open_suite(args.suite)  # a JSONL suite is streamed, pass by pass
    # Agents are named by their spec, so a resume from the same command line matches.
    baseline, *candidates = user_code.load_agents([args.baseline, *args.candidate], s, config.timeout_s)
    scorers = user_code.scorers(s.get("quality") or [], s)
    if s.get("no_store") and (args.resume or args.reuse_baseline):
        raise UsageError("--resume and --reuse-baseline need a store (drop --no-store)")
    from ablation.store.run_store import RunStore

    # --no-store: one private in-memory store, shared by the candidates' campaigns; no file
    memory = RunStore(":memory:") if s.get("no_store") else None
    store = s["store"]
    reports: list[Any] = []
    names: list[str] = []
    info, current = CampaignRun(), 0
    family = None if memory is not None else _Family(store, len(args.candidate), bool(args.resume))
    try:
        with user_code.executor(s) as executor:
            for i, (spec, candidate) in enumerate(zip(args.candidate, candidates, strict=True)):
                progress = NullProgress() if s.get("no_progress") else default_progress()
                info, current = _joined(family), i
                report = run_ablation_campaign(
                    baseline, candidate, tasks, config=config, quality_scorers=scorers,
                    store=store if memory is None else memory, progress=progress, executor=executor,
                    resume=args.resume if i == 0 else False,
                    reuse_baseline=args.reuse_baseline if i == 0 else reports[0].provenance.campaign_id,
                    run_info=info, fail_fast=_fail_fast(s),
                    allow_changed_agent=bool(getattr(args, "allow_changed_agent", False)),
                )
                reports.append(report)
                names.append(spec)
    except BrokenArm as exc:
        from ablation.cli.resume_hint import resume_hint

        resume = resume_hint(args, current, store, info, memory is not None)
        hint = (
            f"; the stored campaign is marked aborted; after fixing the agent, resume with: {resume}"
            if resume else ""
        )
        print(f"ablation: error: {exc.summary}{hint}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        from ablation.cli.resume_hint import interrupted_line

        print(interrupted_line(args, current, store, info, memory is not None), file=sys.stderr)
        return EXIT_ERROR
    finally:
        if memory is not None:
            memory.close()
    say_sandbox_unavailable(reports)
    return emit(reports if family is None else family.claims(reports), names, s, stream)


class _Family:
    """The stored family of a ``run``'s candidates (``ablation.store.campaigns.CampaignFamily``).

    Each campaign joins it once created (:func:`_joined`), so an interrupted run's campaigns are
    tied too: the first with its own id and the number of candidates given, unless it is a
    resumed campaign, which keeps the family it was started in (its resume command names fewer
    candidates). The run's reports are written Holm-adjusted across the whole family, as
    ``ablation report`` reports each campaign.
    """

    def __init__(self, store: Path, size: int, resumed: bool) -> None:
        self.store, self.size, self.resumed = store, size, resumed
        self.family: Any = None  # the CampaignFamily, once known

    def join(self, campaign_id: str) -> None:
        from ablation.store.campaigns import CampaignFamily
        from ablation.store.run_store import RunStore

        if self.family is None and self.size < 2 and not self.resumed:
            return  # one candidate, not resumed: no family
        new = CampaignFamily(family_id=campaign_id, size=self.size) if self.size > 1 else None
        with RunStore(self.store) as run_store:
            self.family = run_store.join_family(campaign_id, self.family or new)

    def claims(self, reports: list[Any]) -> list[Any]:
        """``reports`` with their claims of improvement Holm-adjusted across the family."""
        from ablation.analysis.stored import family_claims
        from ablation.store.run_store import RunStore

        if self.family is None:
            return reports
        with RunStore(self.store, read_only=True) as run_store:
            return family_claims(run_store, self.family, reports)


def _joined(family: _Family | None) -> Any:
    """A ``CampaignRun`` that puts its campaign in ``family`` once the campaign has its id."""
    from ablation.run.campaign import CampaignRun

    class Joining(CampaignRun):
        def __setattr__(self, name: str, value: Any) -> None:
            super().__setattr__(name, value)
            if name == "campaign_id" and value is not None and family is not None:
                family.join(value)

    return Joining()


def _run_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings of ``run``, with the store and ``--output`` as absolute paths.

    They are fixed before any user code runs: an agent sharing the process may change the
    working directory (a coding agent that cds into a checkout), which must not move the files
    the run reopens or writes.
    """
    from ablation.store.run_store import DEFAULT_STORE_PATH

    s = merged_settings(args)
    s["n_candidates"] = len(args.candidate)
    s["store"] = Path(s.get("store") or DEFAULT_STORE_PATH).absolute()
    if s.get("output") is not None:
        s["output"] = Path(s["output"]).absolute()
    check_output(s, _run_inputs(args, s))  # before any user code runs or agent call is spent
    if args.resume and s.get("sequential") and not s.get("no_store"):
        s["n_candidates"] = _stored_candidates(s["store"], args.resume) or s["n_candidates"]
    return s


def _run_inputs(args: argparse.Namespace, s: dict[str, Any]) -> list[Named]:
    """The files ``run`` reads: the suite, agent and scorer files, the store and the configuration."""
    named = [*spec_inputs("the suite", args.suite), *spec_inputs("the baseline agent", args.baseline)]
    for spec in args.candidate:
        named += spec_inputs("a candidate agent", spec)
    for spec in s.get("quality") or []:
        named += spec_inputs("a --quality scorer", spec)
    if not s.get("no_store"):
        named += store_inputs(s["store"])
    return [*named, *config_inputs()]


def _fail_fast(s: dict[str, Any]) -> int:
    from ablation.run.failfast import DEFAULT_FAIL_FAST

    value = s.get("fail_fast")
    if value is None:
        return DEFAULT_FAIL_FAST
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UsageError(f"--fail-fast needs a whole number >= 0 (0 disables), got {value!r}")
    return value


def _stored_candidates(store: Path, resume: bool | str) -> int | None:
    """How many candidates a stored sequential campaign split alpha over (a resume keeps it).

    The resume hint of a several-candidate run leaves out the candidates already done, so the
    command line alone would count fewer candidates than the campaign was started with.
    """
    from ablation.store.run_store import RunStore

    if not store.exists():
        return None
    with RunStore(store) as run_store:
        record = (
            run_store.get_campaign(resume) if isinstance(resume, str) else run_store.latest_campaign()
        )
    policy = record.config.sequential if record is not None else None
    return policy.candidates if policy is not None else None


def _cmd_report(args: argparse.Namespace) -> int:
    from ablation.analysis.stored import report_stored_campaign
    from ablation.cli.options import setting_names
    from ablation.errors import ConfigError
    from ablation.store.run_store import DEFAULT_STORE_PATH, RunStore

    s = merged_settings(args)
    for key in ("sequential", "stop_when_inconclusive_after", "suite_claim"):
        s.pop(key, None)  # [tool.ablation] keys of `run`: a report replays the stored policy
    path = Path(s.get("store") or DEFAULT_STORE_PATH)
    check_output(s, [*store_inputs(path), *config_inputs()])
    if not path.exists():
        raise ConfigError(f"{path}: no run store here (run a campaign first, or pass --store)")
    overrides = campaign_config(s)  # only the options given on the command line change the stored ones
    with RunStore(path, read_only=True) as store:  # reading needs no write access
        campaign = None if args.campaign == "latest" else args.campaign
        stored = store.latest_campaign() if campaign is None else store.get_campaign(campaign)
        changed, note = _report_update(stored, overrides, s)
        report, record = report_stored_campaign(store, campaign, config_update=changed, names=setting_names(s))
        if note:
            print(note, file=sys.stderr)
        if args.export_jsonl:
            _export(store, record.campaign_id, args.export_jsonl)
        status = store.status_now(record)  # as `ablation list` shows it: a killed run is interrupted
        if status != "complete":
            print(
                f"ablation: campaign {record.campaign_id} is {status}: "
                f"{record.n_trials} trial(s) stored; tasks without results are listed as missing",
                file=sys.stderr,
            )
    return emit([report], [record.candidate_agent], s)


def _report_update(
    record: Any, overrides: Any, s: dict[str, Any]
) -> tuple[dict[str, Any], str | None]:
    """The fields of a stored campaign's configuration that ``ablation report`` replaces, and
    the note to print once the report is built (or ``None``).

    Only the options given change their stored values: a gate option its own field of the stored
    gate policy, not the whole policy. A sequential campaign's stop was decided with the settings
    of :data:`~ablation.analysis.sequential.STOP_SETTINGS`: a flag that changes one is passed on,
    for :func:`~ablation.analysis.stored.report_stored_campaign` to refuse (naming the flag and
    the stored value); such a value from ``[tool.ablation]`` is left unused, with the note.
    ``record`` is ``None`` when the store holds no such campaign (the report then says so).
    """
    from ablation.analysis.stop_settings import keep_stop_settings_from_file
    from ablation.cli.options import paths_from_file, setting_names

    changed = {k: getattr(overrides, k) for k in overrides.model_fields_set - {"labels", "sequential"}}
    if record is None:
        return changed, None
    stored = record.config
    if "gates" in changed:
        given = overrides.gates
        changed["gates"] = stored.gates.model_copy(
            update={name: getattr(given, name) for name in given.model_fields_set}
        )
    return keep_stop_settings_from_file(record.campaign_id, stored, changed, paths_from_file(s), setting_names(s))


def _export(store: Any, campaign_id: str, path: Path) -> None:
    """``--export-jsonl``: the campaign's trials as JSONL; a failed write names the flag."""
    from ablation.errors import StoreError

    try:
        store.export_jsonl(campaign_id, path)
    except StoreError as exc:
        cause = exc.__cause__
        if not isinstance(cause, OSError):
            raise
        reason = cause.strerror or str(cause)
        raise UsageError(f"argument --export-jsonl: cannot write the trials to {path}: {reason}") from None


def _cmd_init(args: argparse.Namespace) -> int:
    from ablation.cli.scaffold import install_source, scaffold

    created, command = scaffold(args.directory, force=args.force)
    for path in created:
        print(f"created {path}")
    _, origin = install_source()
    if origin is not None:
        print(
            f"note: the workflow's install: is empty: this ablation came from {origin}, which CI "
            "cannot reach; set it before the workflow can run",
            file=sys.stderr,
        )
    print(f"\nrun it with:\n  {command}")
    return EXIT_OK


def _cmd_schema(args: argparse.Namespace) -> int:
    from ablation.cli.json_schema import json_schema

    print(json.dumps(json_schema(), indent=2))
    return 0


def _elsewhere(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """A command whose code lives in ``module`` (imported when the command runs)."""

    def command(args: argparse.Namespace) -> int:
        return int(getattr(importlib.import_module(module), name)(args))

    return command


COMMANDS = {
    "run": _cmd_run, "compare": _elsewhere("ablation.cli.compare_command", "cmd_compare"),
    "report": _cmd_report,
    "plan": _elsewhere("ablation.cli.plan_command", "cmd_plan"),
    "init": _cmd_init, "schema": _cmd_schema,
    "list": _elsewhere("ablation.cli.listing", "cmd_list"),
    "view": _elsewhere("ablation.cli.view_command", "run_view"),
}
