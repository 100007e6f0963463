"""The steps of the GitHub Action (``action.yml``): ``python -m ablation.cli.github_action STEP``.

The action's YAML only wires inputs to environment variables and calls these steps, so that what
it does can be run and tested without a runner. Assumes the variables a GitHub Actions runner sets
(``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``, ``GITHUB_EVENT_PATH``, ``GITHUB_REPOSITORY``,
``GITHUB_API_URL``); each step reads its inputs from ``ABLATION_*`` variables.

- ``run``: runs ``ablation`` with ``ABLATION_COMMAND`` (``run ...`` or ``compare ...``, a
  ``compare`` of pass/fail verdicts or of a numeric ``--field``, of one AFTER file or several)
  once, as JSON, then writes ``ablation-report.md``, ``ablation-report.json`` and
  ``ablation-junit.xml`` in ``ABLATION_OUTPUT_DIR`` (default ``.``) and the outputs ``exit-code``,
  ``verdict`` (``pass``, ``fail`` or ``error``), ``report``, ``json`` and ``junit``. The Markdown
  and JUnit files are rendered from that JSON by the renderers of ``--format markdown`` and
  ``junit`` (the same documents ``ablation`` writes in those formats); ``verdict`` is the JSON's
  (every candidate's), ``exit-code`` ablation's, and a verdict that disagrees with the exit code
  (``pass`` with 0, ``fail`` with 2) is an error. ``ablation`` writes a pass/fail report to the
  job summary itself, and not a numeric comparison, whose Markdown this step writes there; it
  then adds the JUnit counts, or the error line (escaped for Markdown like any user text: it
  quotes task ids and file names) when there is no report. For ``run``, the store
  is ``ABLATION_STORE``; with ``ABLATION_REUSE_BASELINE=true`` the newest complete campaign of the
  same baseline agent in that store lends its baseline trials (a campaign on another suite is
  refused by ``ablation``, and the step then runs the baseline). Files of an earlier run are
  removed first; an exit code 0 or 2 with no readable JSON report counts as an error. The step
  itself exits 0, so the report is published whatever the verdict.
- ``comment``: creates, or updates in place, one pull-request comment marked
  :data:`MARKER` with the Markdown report (or the error), cut at a block boundary with a line
  saying so when it is longer than a comment holds (:func:`comment_text`). It skips, exiting 0 with a notice,
  outside a pull request, on a pull request from a fork (whose token is read-only), without a
  token, and when the API refuses the write.
- ``finish``: exits with the recorded ``exit-code``: 1 for an error; 2 for a failed gate unless
  ``ABLATION_FAIL_ON_GATE=false``; else 0.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ablation.cli.option_table import flags_of

__all__ = ["MARKER", "comment_text", "main", "step_comment", "step_finish", "step_run"]

#: Marks the action's own pull-request comment, so that later runs update it instead of adding one.
MARKER = "<!-- ablation-report -->"
_COMMENT_LIMIT = 65_000  # GitHub refuses comment bodies above 65,536 characters
_LAUNCH = "from ablation.cli import main_entry; main_entry()"
_JUNIT_COUNTS = ("tests", "failures", "errors", "skipped")
#: The exit code of each verdict: a report whose verdict disagrees with ablation's code is an error.
_VERDICT_CODES = {"pass": 0, "fail": 2}


def _env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def _append(variable: str, text: str) -> None:
    """Append ``text`` to the file named by the runner variable ``variable`` (if set)."""
    target = os.environ.get(variable)
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(text)


def _set_outputs(**values: str) -> None:
    _append("GITHUB_OUTPUT", "".join(f"{key.replace('_', '-')}={value}\n" for key, value in values.items()))


def _reused_campaign(store: Path, baseline: str | None) -> str | None:
    """The newest complete campaign in ``store`` whose baseline agent is ``baseline``."""
    from ablation.cli.listing import campaign_rows

    if baseline is None or not store.exists():
        return None
    rows = campaign_rows(store)
    return next((r["campaign_id"] for r in rows
                 if r["status"] == "complete" and r["baseline_agent"] == baseline), None)  # fmt: skip


def _option(args: Sequence[str], name: str) -> str | None:
    """The value of the option called ``name`` (its settings name in
    :data:`~ablation.cli.option_table.OPTIONS`) in ``args``, by any of its flags (``--flag VALUE``
    or ``--flag=VALUE``), if given."""
    flags = flags_of(name)
    for i, word in enumerate(args):
        if word in flags and i + 1 < len(args):
            return args[i + 1]
        if word.startswith(tuple(f + "=" for f in flags if f.startswith("--"))):
            return word.split("=", 1)[1]
    return None


def _flag(name: str) -> str:
    """The flag to write for the option called ``name`` (its first in the option table)."""
    return flags_of(name)[0]


def _command(out: Path) -> list[str]:
    """The ``ablation`` arguments of this run (the user's, then the store and the JSON output).

    Raises:
        ValueError: the command does not split as a shell line or names no supported command.
    """
    args = shlex.split(_env("ABLATION_COMMAND"))
    if not args or args[0] not in ("run", "compare"):
        raise ValueError(f"the action's command must start with run or compare, got {' '.join(args[:1])!r}")
    if args[0] == "run":
        store = Path(_env("ABLATION_STORE", ".ablation/runs.db"))
        args += [_flag("store"), str(store), _flag("no_progress")]
        reuse = _env("ABLATION_REUSE_BASELINE") == "true" and _option(args, "reuse_baseline") is None
        campaign = _reused_campaign(store, _option(args, "baseline")) if reuse else None
        if campaign is not None:
            args += [_flag("reuse_baseline"), campaign]
    return [*args, _flag("format"), "json", _flag("output"), str(out / "ablation-report.json")]


def _ablation(args: list[str]) -> tuple[int, str]:
    """Run ``ablation ARGS``; its stderr is passed on, with no line the runner would read as a
    workflow command (it quotes ids, file names, agents' messages), and its last line returned."""
    from ablation.render._ci_safe import no_workflow_commands

    done = subprocess.run([sys.executable, "-c", _LAUNCH, *args], stderr=subprocess.PIPE, text=True,
                          check=False)  # fmt: skip
    sys.stderr.write(no_workflow_commands(done.stderr, markup=False))
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return done.returncode, lines[-1] if lines else ""


class _Written(NamedTuple):
    """What the ``run`` step writes from ablation's JSON: the Markdown report, the JUnit document,
    the verdict, and whether ablation wrote no job summary of its own (a numeric comparison)."""

    markdown: str
    junit: str
    verdict: str
    numeric: bool


def _after_files(args: list[str]) -> list[str]:
    """The AFTER files of a ``compare`` command, as ablation's own parser reads them."""
    from ablation.cli.parser import build_parser

    return [str(p) for p in build_parser("compare").parse_args(args).after]


def _written(path: Path, args: list[str]) -> _Written | None:
    """The documents of ``ablation-report.json`` (a report, one per candidate, or a numeric
    comparison of one or several AFTER files), rendered by the renderers of ``--format markdown``
    and ``junit``; ``None`` when the file is missing or holds none of these."""
    from ablation.errors import UsageError
    from ablation.render import render
    from ablation.render.numeric_doc import numeric_json_document
    from ablation.report import AblationReport

    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
        if payload.get("document") in ("numeric", "numeric candidates"):
            names = _after_files(args)
            return _Written(numeric_json_document("markdown", payload, names),
                            numeric_json_document("junit", payload, names), str(payload["verdict"]), True)  # fmt: skip
        if "candidates" in payload:
            reports = [AblationReport.model_validate(c["report"]) for c in payload["candidates"]]
        else:
            reports = [AblationReport.model_validate(payload)]
    except (OSError, ValueError, KeyError, TypeError, AttributeError, UsageError):
        return None
    verdict = "pass" if all(r.verdict == "pass" for r in reports) else "fail"
    return _Written("\n\n".join(render(r, "markdown") for r in reports), _junit(reports), verdict, False)


def _junit(reports: list[Any]) -> str:
    """One JUnit document holding each report's test suite."""
    from ablation.render import render

    root = ET.Element("testsuites", name="ablation")
    for report in reports:
        root.extend(ET.fromstring(render(report, "junit")).findall("testsuite"))
    for key in _JUNIT_COUNTS:
        root.set(key, str(sum(int(s.get(key, "0")) for s in root)))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


def step_run() -> int:
    """The ``run`` step (module docstring); returns 0."""
    from ablation.render.markdown import md_cell  # the error line quotes ids and file names

    out = Path(_env("ABLATION_OUTPUT_DIR", "."))
    out.mkdir(parents=True, exist_ok=True)
    paths = {"report": out / "ablation-report.md", "json": out / "ablation-report.json",
             "junit": out / "ablation-junit.xml"}  # fmt: skip
    for path in paths.values():  # an earlier run's files must not pass for this run's
        path.unlink(missing_ok=True)
    try:
        args = _command(out)
    except ValueError as exc:
        args, (code, last) = [], (1, f"ablation: error: {exc}")
    else:
        code, last = _ablation(args)
    if code == 1 and "cannot reuse the baseline" in last and _flag("reuse_baseline") in args:
        at = args.index(_flag("reuse_baseline"))
        code, last = _ablation(args[:at] + args[at + 2:])  # another suite: run the baseline too
    written = _written(paths["json"], args) if code in (0, 2) else None
    if code in (0, 2) and written is None:
        last = f"the command exited {code} but {paths['json'].name} holds no report the action can read"
    elif written is not None and _VERDICT_CODES.get(written.verdict) != code:
        last, written = f"the report's verdict {written.verdict!r} disagrees with ablation's exit code {code}", None
    if written is not None:
        paths["report"].write_text(written.markdown + "\n", encoding="utf-8")
        paths["junit"].write_text(written.junit + "\n", encoding="utf-8")
        counts = {key: ET.fromstring(written.junit).get(key, "0") for key in _JUNIT_COUNTS}
        summary = written.markdown + "\n\n" if written.numeric else ""  # a report: ablation wrote it there
        _append("GITHUB_STEP_SUMMARY", f"{summary}JUnit ({paths['junit'].name}): {counts['tests']} test(s), "
                f"{counts['failures']} failure(s), {counts['errors']} error(s), {counts['skipped']} skipped.\n")  # fmt: skip
        verdict = written.verdict
    else:
        code, verdict = 1, "error"
        text = f"ablation could not produce a report (exit 1): {md_cell(last or 'no message')}\n"
        paths["report"].write_text(text, encoding="utf-8")
        _append("GITHUB_STEP_SUMMARY", text)
    _set_outputs(exit_code=str(code), verdict=verdict, **{k: str(p) for k, p in paths.items()})
    return 0


def _api(method: str, url: str, token: str, body: dict[str, Any] | None = None) -> Any:
    import urllib.request

    request = urllib.request.Request(
        url, method=method, data=None if body is None else json.dumps(body).encode("utf-8"),
        headers={"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
                 "Content-Type": "application/json", "User-Agent": "ablation-action"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b"null")


def _pull_request() -> tuple[dict[str, Any] | None, str]:
    """The event's pull request, or ``None`` and why there is none to comment on."""
    event_path = _env("GITHUB_EVENT_PATH")
    event = json.loads(Path(event_path).read_text(encoding="utf-8")) if event_path else {}
    pr = event.get("pull_request")
    if not pr:
        return None, "not a pull request"
    head = (pr.get("head") or {}).get("repo") or {}
    if head.get("full_name") and head.get("full_name") != _env("GITHUB_REPOSITORY"):
        return None, "a pull request from a fork (its token cannot write comments)"
    if not _env("ABLATION_TOKEN"):
        return None, "no token"
    return pr, ""


def step_comment() -> int:
    """The ``comment`` step (module docstring); returns 0 whatever happens."""
    import urllib.error

    pr, why = _pull_request()
    if pr is None:
        print(f"::notice::ablation: no pull-request comment: {why}; the report is in the job summary")
        return 0
    report = Path(_env("ABLATION_REPORT", "ablation-report.md"))
    text = report.read_text(encoding="utf-8") if report.exists() else "ablation produced no report.\n"
    body = f"{MARKER}\n{comment_text(text, _COMMENT_LIMIT)}"
    base = f"{_env('GITHUB_API_URL', 'https://api.github.com')}/repos/{_env('GITHUB_REPOSITORY')}"
    token = _env("ABLATION_TOKEN")
    try:
        existing = None
        for page in range(1, 51):
            comments = _api("GET", f"{base}/issues/{pr['number']}/comments?per_page=100&page={page}", token)
            existing = next((c for c in comments if str(c.get("body", "")).startswith(MARKER)), None)
            if existing is not None or len(comments) < 100:
                break
        if existing is not None:
            _api("PATCH", f"{base}/issues/comments/{existing['id']}", token, {"body": body})
        else:
            _api("POST", f"{base}/issues/{pr['number']}/comments", token, {"body": body})
    except (urllib.error.URLError, OSError, ValueError) as exc:
        print(f"::notice::ablation: no pull-request comment: the API refused it ({exc})")
    return 0


#: A ``<details>`` or ``<pre>`` tag, opening or closing (the blocks the Markdown report nests).
_BLOCK_TAG = re.compile(r"<(/?)(details|pre)\b", re.IGNORECASE)


def comment_text(text: str, limit: int) -> str:
    """``text``, or, past ``limit`` characters, its part up to the last blank line outside every
    ``<pre>`` block and within at most one ``<details>`` (between two tasks of the drill-down,
    whose section is one), that block closed, and a line saying where the whole report is.

    A cut anywhere else could end the comment inside an output's ``<pre>`` or halfway through a
    task's ``<details>``, with no word that anything is missing. Assumes the report's own
    Markdown, whose user text is HTML-escaped (:mod:`ablation.render.markdown`): every ``<`` of
    those tags is one.
    """
    if len(text) <= limit:
        return text
    note = (f"\n\n*The report is cut here to fit a comment (the first {{kept:,}} of {len(text):,} "
            "characters): the whole report is the workflow artifact's `ablation-report.md`.*\n")  # fmt: skip
    room = limit - len(note.format(kept=limit)) - len("</details>\n")
    stack: list[str] = []
    tags = iter(_BLOCK_TAG.finditer(text, 0, room))
    tag = next(tags, None)
    kept, closes = 0, 0
    for blank in re.finditer(r"\n\n", text[:room]):
        while tag is not None and tag.start() < blank.start():
            name = tag.group(2).lower()
            if not tag.group(1):
                stack.append(name)
            elif name in stack:  # its innermost open block of that name ends
                del stack[len(stack) - 1 - stack[::-1].index(name)]
            tag = next(tags, None)
        if "pre" not in stack and len(stack) <= 1:
            kept, closes = blank.start(), len(stack)
    return text[:kept] + "\n\n</details>" * closes + note.format(kept=kept)


def step_finish() -> int:
    """The ``finish`` step: the exit code the job should end with (module docstring)."""
    code = int(_env("ABLATION_EXIT_CODE") or "1")
    if code == 2 and _env("ABLATION_FAIL_ON_GATE", "true") == "false":
        return 0
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the step named by the first argument."""
    words = list(sys.argv[1:] if argv is None else argv)
    steps = {"run": step_run, "comment": step_comment, "finish": step_finish}
    if len(words) != 1 or words[0] not in steps:
        print(f"usage: python -m ablation.cli.github_action {{{','.join(steps)}}}", file=sys.stderr)
        return 1
    return steps[words[0]]()


if __name__ == "__main__":
    sys.exit(main())
