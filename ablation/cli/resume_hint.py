"""The line an interrupted ``ablation run`` prints, and the command that resumes its campaign."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["interrupted_line", "resume_command", "resume_hint"]


def interrupted_line(args: argparse.Namespace, current: int, store: Path, info: Any, no_store: bool) -> str:
    """The one line of an interrupted ``run``: what is kept, and the command that resumes it.

    With ``--no-store`` nothing is kept. A campaign the store already holds as complete was
    stopped while its report was built (every trial ran): the resume writes the report.
    """
    from ablation.cli.option_table import flags_of

    if no_store:
        return f"ablation: interrupted; nothing was stored ({flags_of('no_store')[0]}), so the finished trials are lost"
    resume = resume_hint(args, current, store, info, no_store)
    if resume is None:
        return "ablation: interrupted before a campaign was stored: nothing to resume"
    from ablation.errors import AblationError
    from ablation.store.run_store import RunStore

    try:
        with RunStore(store, read_only=True) as run_store:
            complete = run_store.get_campaign(info.campaign_id).status == "complete"
    except AblationError:  # the store cannot say: the resume hint still holds
        complete = False
    kept = (
        f"campaign {info.campaign_id} had run every trial and its report was being built"
        if complete else "finished trials are saved"
    )  # fmt: skip
    typed = " (type the credentials shown as *** again)" if "***" in resume else ""
    return f"ablation: interrupted; {kept}. Resume with: {resume}{typed}"


def resume_hint(
    args: argparse.Namespace, current: int, store: Path, info: Any, no_store: bool
) -> str | None:
    """The command that resumes the interrupted campaign, or ``None`` when nothing is stored."""
    if not info.campaign_id or no_store:
        return None
    return resume_command(sys.argv[1:], args.candidate[:current], store, info.campaign_id)


def resume_command(argv: Sequence[str], done: Sequence[str], store: Path, campaign_id: str) -> str:
    """The shell command that resumes an interrupted ``run`` (``argv`` without the program name).

    Candidates whose campaigns already completed (``done``) are left out, so the first candidate
    of the command is the one whose campaign ``campaign_id`` was interrupted; ``--store``,
    ``--resume`` and ``--reuse-baseline`` are replaced by the store and campaign to resume. The
    flags are those of :data:`~ablation.cli.option_table.OPTIONS` (any alias is recognised, the
    first is written).
    """
    from ablation.cli.option_table import flags_of

    store_flags, resume_flags = flags_of("store"), flags_of("resume")
    candidate_flags = flags_of("candidate")
    with_value = {*store_flags, *flags_of("reuse_baseline")}
    skip_candidates = list(done)
    out: list[str] = []
    items = list(argv)
    i = 0
    while i < len(items):
        item = items[i]
        name, eq, value = item.partition("=")
        if name in candidate_flags and skip_candidates:
            candidate = value if eq else (items[i + 1] if i + 1 < len(items) else "")
            if candidate == skip_candidates[0]:
                skip_candidates.pop(0)
                i += 1 if eq else 2
                continue
        if name in with_value:
            i += 1 if eq else 2
            continue
        if name in resume_flags:
            has_value = not eq and i + 1 < len(items) and not items[i + 1].startswith("-")
            i += 2 if has_value else 1  # argparse takes the next word as the campaign id
            continue
        out.append(item)
        i += 1
    shown = [_no_credentials(item) for item in out]
    return shlex.join(["ablation", *shown, store_flags[0], str(store), resume_flags[0], campaign_id])


def _no_credentials(item: str) -> str:
    """An argument with the credentials of a URL agent in it (``http://user:pass@host/``, also as
    ``--candidate=URL``) shown as the agent's name shows them (``***``): the hint is printed, and
    CI logs keep it; the resume takes the same agent with its credentials typed again."""
    if "://" not in item or "@" not in item:
        return item
    from ablation.agents.http import shown_url

    flag, eq, value = item.partition("=") if item.startswith("-") else ("", "", item)
    return flag + eq + shown_url(value)
