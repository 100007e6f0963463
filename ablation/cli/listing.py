"""``ablation list [STORE]``: the campaigns of a run store, newest first.

One row per campaign: its id, when it was created (UTC), its status (``interrupted`` for one
stored as ``running`` that no live process runs: killed, it is resumable), the suite (the first 12
hex digits of its fingerprint and its task count: two campaigns on the same suite show the same
fingerprint, which is what ``--reuse-baseline`` needs), the baseline and candidate agents, the
verdict its report gave when it completed (``-`` while it is running or after an interruption or
abort, and for campaigns stored before verdicts were kept: ``CampaignRecord.verdict``) and the
number of stored trials. ``--format json`` prints the same rows as a JSON array of objects. A
reader that closes the output early (``| head``) ends it quietly, the exit code unchanged.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ablation.errors import StoreError

__all__ = ["campaign_rows", "cmd_list"]

_COLUMNS = ("campaign", "created", "status", "suite", "baseline", "candidate", "verdict", "trials")


def campaign_rows(path: Path, damaged: list[StoreError] | None = None) -> list[dict[str, Any]]:
    """The campaigns stored in ``path``, newest first, as plain rows; ``damaged`` receives the
    error of each campaign that does not decode, left out (without it, the first one raises).

    Raises:
        ConfigError: when there is no store at ``path``.
    """
    from ablation.errors import ConfigError, StoreError
    from ablation.store.run_store import RunStore

    if not path.exists():
        raise ConfigError(f"{path}: no run store here (run a campaign first, or pass STORE)")
    rows = []
    with RunStore(path, read_only=True) as store:
        for r in store.list_campaigns(damaged):
            try:
                n_tasks = len(r.task_digests)  # decoded here: they may be what is damaged
            except StoreError as exc:
                if damaged is None:
                    raise
                damaged.append(exc)
                continue
            rows.append({
                "campaign_id": r.campaign_id, "created_at": r.created_at,
                "status": store.status_now(r), "suite_fingerprint": r.suite_fingerprint,
                "n_tasks": n_tasks, "baseline_agent": r.baseline_agent,
                "candidate_agent": r.candidate_agent, "verdict": r.verdict, "n_trials": r.n_trials,
            })  # fmt: skip
    return rows


def _cells(r: dict[str, Any]) -> tuple[str, ...]:
    """One table row: the JSON row shortened for reading."""
    suite = f"{r['suite_fingerprint'][:12]} ({r['n_tasks']} tasks)"
    created = r["created_at"][:19].replace("T", " ")
    return (r["campaign_id"], created, r["status"], suite, r["baseline_agent"],
            r["candidate_agent"], r["verdict"] or "-", str(r["n_trials"]))  # fmt: skip


def _table(rows: list[dict[str, Any]]) -> str:
    cells = [_cells(r) for r in rows]
    widths = [max(len(c) for c in column) for column in zip(_COLUMNS, *cells, strict=True)]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in (_COLUMNS, *cells)
    )


def cmd_list(args: argparse.Namespace) -> int:
    """Print the campaigns of the store (``STORE``, ``[tool.ablation] store`` or the default);
    a campaign that does not decode is an error line on stderr and exit 1, the others listed."""
    from ablation.cli.options import merged_settings
    from ablation.store.run_store import DEFAULT_STORE_PATH

    s = merged_settings(args)
    path = Path(s.get("store") or DEFAULT_STORE_PATH)
    damaged: list[StoreError] = []
    rows = campaign_rows(path, damaged)
    out = sys.stdout  # a closed pipe ends it quietly (cli.main)
    if args.format == "json":
        out.write(json.dumps(rows, indent=2) + "\n")
    elif rows:
        out.write(_table(rows) + "\n")
    elif not damaged:
        out.write(f"no campaigns in {path}\n")
    out.flush()
    for exc in damaged:  # the readable campaigns are listed; each damaged one is an error
        print(f"ablation: error: {exc}", file=sys.stderr)
    return 1 if damaged else 0
