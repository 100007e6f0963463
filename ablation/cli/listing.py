"""``ablation list [STORE] [--store STORE] [--limit N]``: the campaigns of a run store, newest first.

One row per campaign: its id, when it was created (UTC), its status (``interrupted`` for one
stored as ``running`` that no live process runs: killed, it is resumable), the suite (the first 12
hex digits of its fingerprint and its task count: two campaigns on the same suite show the same
fingerprint, which is what ``--reuse-baseline`` needs), the baseline and candidate agents, the
verdict its report gave when it completed (``-`` while it is running or after an interruption or
abort, and for campaigns stored before verdicts were kept: ``CampaignRecord.verdict``) and the
number of stored trials. Agent names are user text: the table shows them as every report does,
on one line, control and bidi characters as escapes, and no line of it is a CI workflow command
(:mod:`ablation.render._ci_safe`). ``--format json`` prints the same rows as a JSON array of objects. A
reader that closes the output early (``| head``) ends it quietly, the exit code unchanged.

The table shows the newest :data:`TABLE_LIMIT` campaigns unless ``--limit N`` says otherwise (0:
all), and ends with a line saying how many older ones it leaves out and how to see them. The
JSON array, read by programs, holds every campaign unless ``--limit`` is given: an explicit limit
is the caller's own cut, so it holds exactly the newest N, with nothing else in the document. Only
the campaigns shown are read (:meth:`~ablation.store.summaries.CampaignSummaries.campaign_summaries`:
their task counts in SQL, not their digests); a damaged one among them is an error line.

The store is ``STORE`` or ``--store STORE`` (the spelling of ``report`` and ``run``); both given
naming different files is a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ablation.errors import StoreError

__all__ = ["TABLE_LIMIT", "campaign_rows", "cmd_list", "listed_campaigns"]

#: Campaigns the table shows by default: a screenful.
TABLE_LIMIT = 20

_COLUMNS = ("campaign", "created", "status", "suite", "baseline", "candidate", "verdict", "trials")


def campaign_rows(path: Path, damaged: list[StoreError] | None = None) -> list[dict[str, Any]]:
    """The campaigns stored in ``path``, newest first, as plain rows; ``damaged`` receives the
    error of each campaign that does not decode, left out (without it, the first one raises).

    Raises:
        ConfigError: when there is no store at ``path``.
    """
    return listed_campaigns(path, None, damaged)[0]


def listed_campaigns(
    path: Path, limit: int | None, damaged: list[StoreError] | None = None
) -> tuple[list[dict[str, Any]], int]:
    """The newest ``limit`` campaigns of ``path`` (every one when ``None``) as plain rows, and
    how many campaigns the store holds; ``damaged`` as in :func:`campaign_rows`.

    Raises:
        ConfigError: when there is no store at ``path``.
    """
    from ablation.errors import ConfigError
    from ablation.store.run_store import RunStore

    if not path.exists():
        raise ConfigError(f"{path}: no run store here (run a campaign first, or pass STORE)")
    with RunStore(path, read_only=True) as store:
        found = store.campaign_summaries(limit=limit, damaged=damaged)
        total = store.count_campaigns() if limit is not None else len(found) + len(damaged or ())
        rows = [{
            "campaign_id": r.campaign_id, "created_at": r.created_at,
            "status": r.status, "suite_fingerprint": r.suite_fingerprint,
            "n_tasks": r.n_tasks, "baseline_agent": r.baseline_agent,
            "candidate_agent": r.candidate_agent, "verdict": r.verdict, "n_trials": r.n_trials,
        } for r in found]  # fmt: skip
    return rows, total


def _cells(r: dict[str, Any]) -> tuple[str, ...]:
    """One table row: the JSON row shortened for reading, each cell on one line, escaped."""
    from ablation.render._format import single_line

    suite = f"{r['suite_fingerprint'][:12]} ({r['n_tasks']} tasks)"
    created = r["created_at"][:19].replace("T", " ")
    cells = (r["campaign_id"], created, r["status"], suite, r["baseline_agent"],
             r["candidate_agent"], r["verdict"] or "-", str(r["n_trials"]))  # fmt: skip
    return tuple(single_line(c) for c in cells)


def _table(rows: list[dict[str, Any]]) -> str:
    from ablation.render._ci_safe import no_workflow_commands

    cells = [_cells(r) for r in rows]
    widths = [max(len(c) for c in column) for column in zip(_COLUMNS, *cells, strict=True)]
    return no_workflow_commands("\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in (_COLUMNS, *cells)
    ), markup=False)


def cmd_list(args: argparse.Namespace) -> int:
    """Print the campaigns of the store (``STORE`` or ``--store``, ``[tool.ablation] store`` or
    the default), the newest ``--limit`` of them; a campaign that does not decode is an error line
    on stderr and exit 1, the others listed."""
    from ablation.cli.options import store_path

    path = store_path(args, "list", settings=True)
    limit = args.limit if args.limit is not None else None if args.format == "json" else TABLE_LIMIT
    damaged: list[StoreError] = []
    rows, total = listed_campaigns(path, limit or None, damaged)
    out = sys.stdout  # a closed pipe ends it quietly (cli.main)
    if args.format == "json":
        out.write(json.dumps(rows, indent=2) + "\n")
    elif rows:
        out.write(_table(rows) + "\n")
        left = total - len(rows) - len(damaged)
        if left > 0:
            out.write(f"... {left} older campaign{'s' * (left != 1)} not shown "
                      f"(--limit 0 lists all {total})\n")  # fmt: skip
    elif not damaged:
        out.write(f"no campaigns in {path}\n")
    out.flush()
    for exc in damaged:  # the readable campaigns are listed; each damaged one is an error
        print(f"ablation: error: {exc}", file=sys.stderr)
    return 1 if damaged else 0
