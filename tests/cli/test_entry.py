"""The console-script entry point: the exit code of ``main`` and a fast, complete exit."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest

# the module (``ablation.cli.main`` as an attribute is the function it exports)
cli_main = importlib.import_module("ablation.cli.main")


@pytest.mark.parametrize("code", [0, 1, 2])
def test_main_entry_exits_with_the_code_of_main_after_freezing(
    monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(cli_main, "main", lambda: calls.append("main") or code)
    # this runs inside the test process, where another test may have left a daemon thread
    # (dask's offload thread): the command's exit without teardown would end the test process
    monkeypatch.setattr(cli_main, "_abandoned_threads", lambda: False)
    monkeypatch.setattr(cli_main.gc, "freeze", lambda: calls.append("freeze"))
    with pytest.raises(SystemExit) as exc:
        cli_main.main_entry()
    assert exc.value.code == code
    assert calls == ["main", "freeze"]  # frozen after the command ran, right before exiting


def test_atexit_handlers_and_open_files_still_run_at_exit(tmp_path) -> None:
    # the freeze must not skip what a process relies on at exit: atexit handlers and buffered
    # files left open still reach the disk
    left_open, marker = tmp_path / "open.txt", tmp_path / "atexit.txt"
    code = (
        "import atexit, sys\n"
        f"atexit.register(lambda: open({str(marker)!r}, 'w').write('ran'))\n"
        f"handle = open({str(left_open)!r}, 'w'); handle.write('x' * 10000)\n"
        "sys.argv = ['ablation', '--version']\n"
        "from ablation.cli import main_entry\n"
        "main_entry()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "ran"
    assert left_open.read_text() == "x" * 10000


def test_the_in_process_runner_gives_what_a_process_gives_and_restores_the_worker(tmp_path) -> None:
    """``helpers.cli.run_here`` stands in for a subprocess in many tests: for a report, a usage
    error and a pyproject read from the working directory it returns the exit code and both
    streams a real process returns, and it leaves this process's directory and environment as
    they were (the variables it was given included)."""
    from helpers.cli import REPO, cli_env, run_here

    rows = tmp_path / "r.jsonl"
    rows.write_text('{"id": "a", "passed": true}\n{"id": "b", "passed": false}\n')
    (tmp_path / "pyproject.toml").write_text('[tool.ablation]\nmargin = "0.02"\n')
    cases = [
        (["plan", "--discordance", "0.1", "--uplift", "0.03"], {}),
        (["compare", str(rows), str(rows), "--format", "json"], {"SOURCE_DATE_EPOCH": "1700000000"}),
        (["compare", str(rows), str(rows)], {}),  # the string margin of the pyproject: exit 1
        (["plan", "--discordance", "2"], {}),  # a usage error
    ]
    for i, (args, env) in enumerate(cases):
        cwd = tmp_path if i == 2 else None
        before_env, before_cwd = dict(os.environ), os.getcwd()
        here = run_here(args, env, **({"cwd": cwd} if cwd else {}))
        assert (dict(os.environ), os.getcwd()) == (before_env, before_cwd)
        real = subprocess.run(
            [sys.executable, "-c", "from ablation.cli import main_entry; main_entry()", *args],
            cwd=cwd or REPO, env=cli_env(**env), capture_output=True, text=True,
            timeout=60, check=False,
        )  # fmt: skip
        assert (here.returncode, here.stdout, here.stderr) == (real.returncode, real.stdout, real.stderr), args
