"""``ablation init`` on a project that already has files: its pyproject.toml, its .gitignore, its name.

References: ``tomllib`` (the standard library's TOML parser, which ``ablation run`` reads
``[tool.ablation]`` with) decides whether a pyproject.toml holds ``tool.ablation`` and whether the
file still parses after ``init``, and supplies the line/column of a file that does not; ``bash``
runs the printed next command as a user pastes it (an ``ablation`` on ``PATH`` records the folder
and the arguments bash gave it, and the command line runs them there, in this process); ``shlex``
is not used to check its own output.
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from ablation.cli.scaffold import SETTINGS
from tests.helpers.cli_shared import run_here

DEFAULTS = tomllib.loads(SETTINGS)["tool"]["ablation"]


def _files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes (keyed by the path relative to ``root``)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    "text",
    [
        "[tool]\nablation = { seed = 3 }\n",
        "tool.ablation.seed = 3\n",
        "[project]\nname = 'x'\n\n[tool.ablation]\nseed = 3\n",
        '[tool]\n"ablation" = {}\n',
    ],
)
def test_an_existing_tool_ablation_in_any_form_is_left_as_it_is_and_said_so(tmp_path: Path, text: str) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    pyproject = project / "pyproject.toml"
    pyproject.write_text(text, encoding="utf-8")
    assert "ablation" in tomllib.loads(text)["tool"]
    result = run_here(["init", "proj"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert pyproject.read_text(encoding="utf-8") == text
    lines = result.stdout.splitlines()
    assert f"left {Path('proj') / 'pyproject.toml'} as it is: it already sets tool.ablation" in lines
    assert not any(line.endswith("pyproject.toml") for line in lines if not line.startswith("left "))


@pytest.mark.parametrize(
    "text",
    [
        "# the defaults go in [tool.ablation]\n[project]\nname = 'x'\n",
        "[tool.black]\nline-length = 100",  # no final newline
        "[tool]\nblack = { line-length = 100 }\n",
    ],
)
def test_a_file_without_the_section_gets_the_defaults_appended_and_still_parses(tmp_path: Path, text: str) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(text, encoding="utf-8")
    before = tomllib.loads(text)
    result = run_here(["init"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    after = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    assert after["tool"]["ablation"] == DEFAULTS
    del after["tool"]["ablation"]
    if "tool" not in before:
        assert after.pop("tool") == {}
    assert after == before
    assert f"appended to {pyproject.relative_to(tmp_path)}" in result.stdout.splitlines()
    assert f"created {pyproject.relative_to(tmp_path)}" not in result.stdout.splitlines()


@pytest.mark.parametrize(
    "text",
    [
        "[project\nname = 'x'\n",
        "[tool.ablation]\nseed = = 3\n",
        "a = 1\na = 2\n",
    ],
)
def test_invalid_toml_is_refused_with_tomllib_line_and_column_and_nothing_is_written(tmp_path: Path, text: str) -> None:
    with pytest.raises(tomllib.TOMLDecodeError) as parsed:
        tomllib.loads(text)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text(text, encoding="utf-8")
    (project / ".gitignore").write_text("build/\n", encoding="utf-8")
    before = _files(tmp_path)
    result = run_here(["init", "proj"], cwd=tmp_path)
    assert result.returncode == 1
    assert _files(tmp_path) == before
    assert not (project / "tasks").exists() and not (project / ".github").exists()
    (line,) = result.stderr.strip().splitlines()
    assert str(Path("proj") / "pyproject.toml") in line and str(parsed.value) in line
    assert "(at line " in line and ", column " in line


@pytest.mark.parametrize(
    "text",
    [
        "tool = 3\n",
        "tool = { black = { line-length = 100 } }\n",  # an inline table cannot be extended
        "[[tool]]\nname = 'x'\n",
    ],
)
def test_a_tool_key_the_section_cannot_be_added_to_is_refused_and_nothing_is_written(tmp_path: Path, text: str) -> None:
    tomllib.loads(text)  # valid TOML, which the appended section breaks or does not land in
    try:
        merged = tomllib.loads(text + SETTINGS)
    except tomllib.TOMLDecodeError:
        pass
    else:
        assert not isinstance(merged["tool"], dict)
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    before = _files(tmp_path)
    result = run_here(["init"], cwd=tmp_path)
    assert result.returncode == 1
    assert _files(tmp_path) == before
    (line,) = result.stderr.strip().splitlines()
    assert "pyproject.toml" in line and "[tool.ablation]" in line


def test_files_that_existed_are_said_to_be_appended_to_or_overwritten(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    (project / ".gitignore").write_text("build/", encoding="utf-8")
    result = run_here(["init", "proj"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    rel = Path("proj")
    assert f"appended to {rel / 'pyproject.toml'}" in lines and f"appended to {rel / '.gitignore'}" in lines
    assert f"created {rel / 'pyproject.toml'}" not in lines and f"created {rel / '.gitignore'}" not in lines
    assert f"created {rel / 'tasks' / 'example.py'}" in lines
    assert (project / ".gitignore").read_text(encoding="utf-8").splitlines()[0] == "build/"

    again = run_here(["init", "proj", "--force"], cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    lines = again.stdout.splitlines()
    assert f"overwrote {rel / 'tasks' / 'example.py'}" in lines
    assert f"created {rel / 'tasks' / 'example.py'}" not in lines
    assert f"left {rel / 'pyproject.toml'} as it is: it already sets tool.ablation" in lines
    assert not any(".gitignore" in line for line in lines)  # already ignores the store: untouched


def test_a_new_project_says_created_for_every_file(tmp_path: Path) -> None:
    result = run_here(["init", "fresh"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    created = {line.removeprefix("created ") for line in result.stdout.splitlines() if line.startswith("created ")}
    assert created == {str(Path("fresh") / p) for p in _files(tmp_path / "fresh")}
    assert not any(line.startswith(("appended", "left", "overwrote")) for line in result.stdout.splitlines())


#: An ``ablation`` that writes the folder it was started in and its arguments, NUL-separated.
RECORDER = """#!/bin/sh
printf '%s\\0' "$(pwd)" "$@" > "$ABLATION_ARGV"
"""


@pytest.mark.parametrize("name", ["my evals", "it's $HOME; `x` & y", "-dash it"])
def test_the_printed_command_runs_in_bash_from_the_parent_directory(tmp_path: Path, name: str) -> None:
    result = run_here(["init", "--", name], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    command = result.stdout.strip().splitlines()[-1].strip()
    bin_dir, argv = tmp_path / "bin", tmp_path / "argv"
    bin_dir.mkdir()
    (bin_dir / "ablation").write_text(RECORDER)
    (bin_dir / "ablation").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "ABLATION_ARGV": str(argv)}
    proc = subprocess.run(
        ["bash", "-c", f"{command} --format json --no-progress"], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    folder, *args = argv.read_text().split("\0")[:-1]
    assert Path(folder) == tmp_path / name  # bash started it in the project
    done = run_here(args, cwd=Path(folder))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["regressions"] and report["n_paired"] == 10
    assert (tmp_path / name / ".ablation").is_dir()  # the run happened inside the project
