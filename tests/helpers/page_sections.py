"""A rendered report cut at its section headings, so that each section is compared on its own.

The terminal and Markdown renderers write the same sections in the same order (headline, regressions,
improvements, paired outcomes, ... provenance, drill-down), each opened by one heading line: a rich
rule ``Title ─────`` in the terminal, ``### Title`` in Markdown (the provenance footer there is the
``<sub>`` block, the drill-down a ``<details>`` block). :func:`page_sections` names each section by
its title up to the first `` (`` (counts and qualifiers stay in the section's text), and cuts the
drill-down once more at each task, named ``Drill-down: <task id>`` (up to its first space, HTML
entities of the Markdown decoded, so both renderings give the same names).

Assumptions: no line of a section's body looks like a heading (the fixtures' task ids and outputs
do not: Markdown escapes ``#`` in cells and keeps outputs in ``<pre>``; a rule is a title followed by
at least three ``─``); a title occurs once per page. Both are checked: a repeated name raises, and
the sections joined give back the page byte for byte.
"""

from __future__ import annotations

import html
import re
from typing import Literal

__all__ = ["page_sections"]

_RULE = re.compile(r"^(?P<title>\S.*?) ─{3,}$")
_MARKDOWN_HEADING = re.compile(r"^### (?P<title>.+)$")
_MARKDOWN_DRILLDOWN = re.compile(r"^<details><summary>(?P<title>Drill-down): ")
_TASK = re.compile(
    r"^(?:<details><summary>)?(?:CRITICAL REGRESSION|REGRESSION|IMPROVEMENT): (?P<task>\S+)"
)


def _title(line: str, kind: Literal["markdown", "terminal"], in_drilldown: bool) -> str | None:
    """The name of the section this line opens, or ``None`` for a line inside a section."""
    if in_drilldown:
        task = _TASK.match(line)
        if task is None:
            return None
        name = html.unescape(task["task"]) if kind == "markdown" else task["task"]
        return f"Drill-down: {name}"
    if kind == "terminal":
        found = _RULE.match(line)
    else:
        if line.startswith("<sub>"):
            return "Provenance"
        found = _MARKDOWN_HEADING.match(line) or _MARKDOWN_DRILLDOWN.match(line)
    return found["title"].split(" (")[0] if found else None


def page_sections(text: str, kind: Literal["markdown", "terminal"]) -> dict[str, str]:
    """``{section name: its text}`` in page order; the first section (before any heading) is
    ``headline``.

    Args:
        text: A whole rendering by ``render(report, kind, ...)``.
        kind: Which renderer wrote ``text``.

    Returns:
        The sections, each with its heading line and its lines' endings, so that
        ``"".join(result.values()) == text``.

    Raises:
        ValueError: If two sections would have the same name.
    """
    sections: dict[str, list[str]] = {"headline": []}
    current = sections["headline"]
    in_drilldown = False
    for line in text.splitlines(keepends=True):
        name = _title(line.rstrip("\n"), kind, in_drilldown)
        if name is not None:
            if name in sections:
                raise ValueError(f"two sections named {name!r}")
            current = sections[name] = []
            in_drilldown = in_drilldown or name == "Drill-down"
        current.append(line)
    result = {name: "".join(lines) for name, lines in sections.items()}
    if "".join(result.values()) != text:  # pragma: no cover - splitlines keeps every character
        raise ValueError("the sections do not add up to the page")
    return result
