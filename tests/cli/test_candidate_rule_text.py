r"""Several candidates' terminal reports are headed by their file names as text, never markup.

``compare BEFORE AFTER1 AFTER2`` heads each candidate's report with a rule naming its file. The
name was handed to rich as markup and unescaped: a file ``d[red]x[\].jsonl`` lost its ``[red]``
(rich read it as a style), ``c[link=https:evil.example]click.jsonl`` became an OSC 8 hyperlink on
a terminal, and ``@evil\x1b[2J.jsonl`` wrote its raw ESC, which cleared the screen. The reference
is :func:`~ablation.render._format.printable`, the rule by which every report shows user text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers.cli import run_here

from ablation.render._format import printable

NAMES = ["d[red]x[\\].jsonl", "c[link=https:evil.example]click[bold red].jsonl", "@evil\x1b[2J.jsonl"]


def test_candidate_rules_show_file_names_as_written(tmp_path: Path) -> None:
    rows = [{"id": f"t{i}", "passed": i % 2 == 0} for i in range(6)]
    text = "".join(json.dumps(r) + "\n" for r in rows)
    before = tmp_path / "a.jsonl"
    before.write_text(text, encoding="utf-8")
    for name in NAMES:
        (tmp_path / name).write_text(text, encoding="utf-8")
    proc = run_here(["compare", "a.jsonl", *NAMES, "--format", "terminal"], cwd=tmp_path)
    assert proc.returncode in (0, 2), proc.stderr
    assert "\x1b" not in proc.stdout  # no colour on a pipe, and no ESC of a name
    rules = re.findall(r"^=+ candidate: (.*?) =+$", proc.stdout, re.M)
    assert rules == [printable(n) for n in NAMES]
