"""No line of a report is a GitHub Actions workflow command, whatever an agent writes.

The runner executes a line of a step's output that begins with ``::`` after leading whitespace
(``::error::``, ``::add-mask::``, ``::stop-commands::``) and the older ``##[name]`` anywhere in a
line. A hostile suite and agent put such text, with newlines, in a task id, categories, an output
and an exception message; every text format that can reach a CI log is checked line by line.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from helpers.cli import cli_env, run
from helpers.cli_shared import run_here
from hypothesis import given
from hypothesis import strategies as st

from ablation.render._ci_safe import CommandSafeStream, no_workflow_commands

_SUITE = '''
from ablation import AblationTask

tasks = [
    AblationTask(task_id="::error::idx", input_data={"k": 0}, expected_output="a",
                 category="::notice::cat"),
    AblationTask(task_id="t2", input_data={"k": 1}, expected_output="a",
                 category="c2\\n::group::g"),
    AblationTask(task_id="t3", input_data={"k": 2}, expected_output="a\\r::warning::e"),
]


def baseline(x):
    return "a"


def candidate(x):
    if x["k"] == 0:
        return ("x\\n::error::out\\n ::add-mask::m\\n##[add-mask]z " + "word " * 30
                + "::warning::wrapped")
    if x["k"] == 1:
        raise RuntimeError("bad\\n\\t::stop-commands::tok")
    return "a"
'''

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _commands(text: str) -> list[str]:
    """Lines the runner would read as commands (split as .NET does, ANSI colours ignored)."""
    lines = re.split(r"\r\n|\r|\n", _ANSI.sub("", text))
    return [line for line in lines if line.strip().startswith("::") or "##[" in line]


@pytest.mark.parametrize(
    ("fmt", "env"),
    [
        ("markdown", {}),
        ("terminal", {"COLUMNS": "60"}),
        ("terminal", {"COLUMNS": "90", "FORCE_COLOR": "1", "TERM": "xterm-256color"}),
        ("junit", {}),
        ("html", {}),
    ],
    ids=["markdown", "terminal", "terminal-colour", "junit", "html"],
)
def test_no_report_line_is_a_workflow_command(
    tmp_path: Path, fmt: str, env: dict[str, str]
) -> None:
    suite = tmp_path / "suite.py"
    suite.write_text(_SUITE)
    args = ["run", str(suite), "--baseline", f"{suite}:baseline", "--candidate",
            f"{suite}:candidate", "--no-store", "--no-progress", "--details", "--format", fmt]
    # the coloured terminal, the one whose escapes and width depend most on the environment of a
    # fresh process, runs as one; the other formats run the same command in this process
    proc = run(args, cli_env(**env)) if "FORCE_COLOR" in env else run_here(args, env)
    assert proc.returncode == 2, proc.stderr
    assert _commands(proc.stdout) == []
    if fmt in ("markdown", "terminal"):
        # The agent's text is still shown, escaped, not dropped.
        for word in ("add-mask", "stop-commands", "group::g", "idx"):
            assert word in proc.stdout, word


_TEXT = st.lists(
    st.sampled_from([":", ":", "#", "[", " ", "\t", "\n", "\r", "\x1b[1m", "a", "\u3000"])
).map("".join)


@given(_TEXT)
def test_escaped_text_holds_no_command_and_reads_back_as_written(text: str) -> None:
    marked = no_workflow_commands(text, markup=True)
    assert _commands(marked) == []
    assert html.unescape(marked) == text
    plain = no_workflow_commands(text, markup=False)
    assert _commands(plain) == []
    assert plain.replace("\\x3a", ":").replace("\\x5b", "[") == text


@given(st.lists(_TEXT, max_size=8))
def test_the_stream_escapes_lines_split_across_writes(parts: list[str]) -> None:
    import io

    sink = io.StringIO()
    stream = CommandSafeStream(sink)
    for part in parts:
        stream.write(part)
    stream.finish()
    assert sink.getvalue() == no_workflow_commands("".join(parts), markup=False)
