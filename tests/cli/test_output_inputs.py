"""A file a command writes is never one it reads, and a failed write names the flag and the path.

Through the real ``ablation`` command: ``--output``, ``report --export-jsonl``, the HTML pages of
several candidates and ``$GITHUB_STEP_SUMMARY`` are refused, one line and exit 1, when they name
a result file, the ``--expected-ids`` file, the suite, an agent's file, the run store or one of
its SQLite side files, ``pyproject.toml``, or another output: by the path itself, a symbolic link
or a hard link. Nothing is read, run or written then: the input keeps its bytes. ``-`` (standard
input or output) is never such a file. A report that cannot be written (``/dev/full``) is one
line naming ``--output`` and the path.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import LAUNCH, cli_env
from helpers.cli_shared import run_here

#: one worker builds the module's campaign (``project_template``) once
pytestmark = pytest.mark.xdist_group("output-inputs")

SUITE = """\
from ablation import AblationTask

tasks = [AblationTask(task_id=f"t{i}", input_data=i, expected_output=i) for i in range(4)]
"""
AGENTS = """\
import os


def echo(x):
    with open(os.environ["CALLS_FILE"], "a") as fh:
        fh.write("call\\n")
    return x
"""


def _results(path: Path, verdicts: list[bool]) -> Path:
    path.write_text("".join(json.dumps({"id": f"t{i}", "passed": v}) + "\n" for i, v in enumerate(verdicts)))
    return path


def _error(done: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused command says, after checking it is the only one and exit 1."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1 and done.stdout == "", done
    return lines[0]


def _refusal(flag: str, given: Path | str, what: str) -> str:
    return f"ablation: error: {flag} {given} is also an input ({what}): refusing to overwrite it"


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every regular file under ``folder`` (links followed) with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# --------------------------------------------------------------------------------------- compare


def _link(kind: str, path: Path, target: Path) -> None:
    """Make ``path`` name ``target`` by a relative symbolic link or a hard link (``same path``:
    ``path`` is ``target``); the target of a symbolic link need not exist."""
    if kind == "symlink":
        path.symlink_to(os.path.relpath(target, path.parent))
    elif kind == "hardlink":
        os.link(target, path)


@pytest.mark.parametrize("kind", ["same path", "symlink", "hardlink"])
@pytest.mark.parametrize(
    ("input_name", "what"),
    [
        ("before.jsonl", "the BEFORE results"),
        ("after.jsonl", "the AFTER results"),
        ("ids.txt", "the --expected-ids file"),
        ("pyproject.toml", "the configuration file"),
    ],
)
def test_compare_refuses_an_output_that_is_one_of_its_inputs(
    tmp_path: Path, kind: str, input_name: str, what: str
) -> None:
    _results(tmp_path / "before.jsonl", [True, False, True, True])
    _results(tmp_path / "after.jsonl", [True, True, True, False])
    (tmp_path / "ids.txt").write_text("t0\nt1\nt2\nt3\n")
    (tmp_path / "pyproject.toml").write_text("[tool.ablation]\nresamples = 200\n")
    target = tmp_path / input_name
    output = target if kind == "same path" else tmp_path / f"report-{kind}.md"
    _link(kind, output, target)
    kept = _snapshot(tmp_path)
    args = ["compare", "before.jsonl", "after.jsonl", "--expected-ids", "ids.txt"]
    done = run_here([*args, "--format", "markdown", "--output", output.name], cwd=tmp_path)
    # the configuration file is named by where it was found: its full path
    shown = str(target) if input_name == "pyproject.toml" else input_name
    named = what if shown == output.name else f"{what}, {shown}"
    assert _error(done) == _refusal("--output", output.name, named)
    assert _snapshot(tmp_path) == kept
    # the same command with a new file writes its report there
    assert run_here([*args, "--output", "fresh.md"], cwd=tmp_path).returncode == 0
    assert (tmp_path / "fresh.md").stat().st_size > 0


def test_compare_refuses_an_html_page_or_step_summary_that_is_an_input(tmp_path: Path) -> None:
    before = _results(tmp_path / "before.jsonl", [True, False, True, True])
    page = _results(tmp_path / "r.candidate-1.html", [True, True, True, False])
    after = _results(tmp_path / "after.jsonl", [False, True, True, True])
    summary = tmp_path / "summary.md"
    _link("symlink", summary, before)
    kept = _snapshot(tmp_path)
    done = run_here(["compare", before.name, page.name, after.name, "--format", "html", "--output",
                     "r.html"], cwd=tmp_path)  # fmt: skip
    assert _error(done) == _refusal("the --output page", page.name, "the AFTER results")
    done = run_here(["compare", before.name, after.name, "--quiet"], {"GITHUB_STEP_SUMMARY": str(summary)},
                    cwd=tmp_path)  # fmt: skip
    assert _error(done) == _refusal("$GITHUB_STEP_SUMMARY", summary, f"the BEFORE results, {before.name}")
    assert _snapshot(tmp_path) == kept


def test_standard_streams_are_no_clash(tmp_path: Path) -> None:
    """``-`` as BEFORE (standard input: here a pipe holding the file, in this process) and as
    ``--output`` is accepted."""
    before = _results(tmp_path / "before.jsonl", [True, False, True, True])
    after = _results(tmp_path / "after.jsonl", [True, True, True, False])
    kept = before.read_bytes()
    read, write = os.pipe()
    os.write(write, kept)  # four lines: within the pipe's buffer
    os.close(write)
    saved = sys.stdin
    with open(read, "rb") as raw, io.TextIOWrapper(raw) as sys.stdin:
        try:
            done = run_here(["compare", "-", after.name, "--output", "-", "--quiet"], cwd=tmp_path)
        finally:
            sys.stdin = saved
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "-").stat().st_size > 0 and before.read_bytes() == kept


@pytest.mark.parametrize("extra", [[], ["--field", "score"]], ids=["verdicts", "numeric"])
def test_a_report_that_cannot_be_written_names_the_flag_and_path(tmp_path: Path, extra: list[str]) -> None:
    """A full disk at the write (``/dev/full``): one line naming ``--output`` and the path, exit 1,
    through the installed command's entry point in a subprocess."""
    rows = [(1, 0.5), (0, 0.25), (1, 0.75), (1, 0.5)]
    for name, shift in (("a.jsonl", 0.0), ("b.jsonl", 0.125)):
        (tmp_path / name).write_text("".join(
            json.dumps({"id": f"t{i}", "passed": bool(v), "score": s + shift}) + "\n"
            for i, (v, s) in enumerate(rows)
        ))  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH, "compare", "a.jsonl", "b.jsonl", *extra, "--output", "/dev/full"],
        cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert _error(done) == (
        f"ablation: error: argument --output: cannot write the report to /dev/full: {os.strerror(28)}"
    )


# ------------------------------------------------------------------------------- report and run


@pytest.fixture(scope="module")
def project_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a suite, agents that count their calls, and a store of one campaign (built
    once a module; each test works on a copy of it)."""
    folder = tmp_path_factory.mktemp("project")
    (folder / "suite.py").write_text(SUITE)
    (folder / "agents.py").write_text(AGENTS)
    (folder / "st").mkdir()
    done = run_here(_run_args("st/runs.db"), {"CALLS_FILE": str(folder / "calls.txt")}, cwd=folder)
    assert done.returncode == 0, done.stderr
    (folder / "calls.txt").unlink()
    return folder


@pytest.fixture
def project(tmp_path: Path, project_template: Path) -> Path:
    """A copy of :func:`project_template` of this test's own (the store file included)."""
    folder = tmp_path / "project"
    shutil.copytree(project_template, folder)
    return folder


def _run_args(store: str, *extra: str) -> list[str]:
    return ["run", "suite.py", "--baseline", "agents.py:echo", "--candidate", "agents.py:echo",
            "--store", store, "--no-progress", "--quiet", "--resamples", "200", *extra]  # fmt: skip


@pytest.mark.parametrize(
    ("flag", "kind", "name", "what"),
    [
        ("--export-jsonl", "same path", "st/runs.db", "the run store"),
        ("--output", "same path", "st/runs.db", "the run store"),
        ("--output", "symlink", "st/runs.db", "the run store, st/runs.db"),
        ("--export-jsonl", "hardlink", "st/runs.db", "the run store, st/runs.db"),
        ("--output", "same path", "st/runs.db-wal", "the run store's -wal file"),
        ("--export-jsonl", "symlink", "st/runs.db-journal", "the run store's -journal file, st/runs.db-journal"),
    ],
)
def test_report_refuses_to_write_over_the_run_store(
    project: Path, flag: str, kind: str, name: str, what: str
) -> None:
    given = name if kind == "same path" else f"{kind}.db"
    _link(kind, project / given, project / name)
    kept = _snapshot(project)
    done = run_here(["report", "--store", "st/runs.db", "--quiet", flag, given], cwd=project)
    assert _error(done) == _refusal(flag, given, what)
    assert _snapshot(project) == kept
    assert run_here(["list", "st/runs.db"], cwd=project).returncode == 0


def test_report_refuses_two_outputs_naming_one_file_and_an_export_over_a_pipe(project: Path) -> None:
    (project / "r.json").write_text("the last report\n")
    os.link(project / "r.json", project / "same.json")
    done = run_here(["report", "--store", "st/runs.db", "--format", "json", "--output", "r.json",
                     "--export-jsonl", "same.json"], cwd=project)  # fmt: skip
    assert _error(done) == (
        "ablation: error: --export-jsonl same.json is also the file of --output r.json: "
        "refusing to write two outputs to one file"
    )
    assert (project / "r.json").read_text() == "the last report\n"
    os.mkfifo(project / "pipe")
    done = run_here(["report", "--store", "st/runs.db", "--quiet", "--export-jsonl", "pipe"], cwd=project)
    assert _error(done) == (
        "ablation: error: argument --export-jsonl: cannot write the trials to pipe: it is not a "
        "regular file (the export would replace it, not write to it)"
    )
    assert (project / "pipe").is_fifo()


@pytest.mark.parametrize(
    ("kind", "name", "what"),
    [
        ("same path", "suite.py", "the suite, suite.py"),
        ("symlink", "suite.py", "the suite, suite.py"),
        ("hardlink", "agents.py", "the baseline agent, agents.py"),
        ("same path", "st/runs.db", "the run store"),
        ("symlink", "st/new.db", "the run store, {project}/st/new.db"),
    ],
)
def test_run_refuses_an_output_that_is_one_of_its_inputs_before_any_agent_call(
    project: Path, kind: str, name: str, what: str
) -> None:
    """The last case is a store not created yet, named through a link that points nowhere yet."""
    output = project / (name if kind == "same path" else f"{kind}.out")
    _link(kind, output, project / name)
    kept = _snapshot(project)
    store = name if name.startswith("st/") else "st/runs.db"
    done = run_here(_run_args(store, "--output", str(output)), {"CALLS_FILE": str(project / "calls.txt")},
                    cwd=project)  # fmt: skip
    assert _error(done) == _refusal("--output", output, what.format(project=project))
    assert _snapshot(project) == kept
    assert not (project / "calls.txt").exists() and not (project / "st/new.db").exists()


def test_a_failed_export_or_report_write_names_the_flag_and_path(project: Path) -> None:
    """Files limited to 1 KiB (``RLIMIT_FSIZE``; Python ignores ``SIGXFSZ``, so the write fails with
    ``EFBIG``): the export and the report each end in one line naming their flag and path."""
    import resource

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    cases = [("--export-jsonl", "trials.jsonl", "the trials", ["--quiet"]),
             ("--output", "report.md", "the report", ["--format", "markdown"])]  # fmt: skip
    for flag, name, what, extra in cases:
        done = subprocess.run(
            [sys.executable, "-c", LAUNCH, "report", "--store", "st/runs.db", *extra, flag, name],
            cwd=project, env=cli_env(), capture_output=True, text=True, timeout=60, check=False,
            preexec_fn=small_files,
        )  # fmt: skip
        assert _error(done) == f"ablation: error: argument {flag}: cannot write {what} to {name}: {os.strerror(27)}"
