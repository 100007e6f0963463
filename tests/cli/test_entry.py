"""The console-script entry point: the exit code of ``main`` and a fast, complete exit."""

from __future__ import annotations

import importlib
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
