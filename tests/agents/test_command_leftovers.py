"""CommandAgent with processes the command leaves running that still hold its pipes (real bash).

A command that answers and exits while a background child inherited its stdout, stderr or stdin
must be recorded from what it wrote, promptly (well before its ``timeout_s``), and the leftovers in
its process group must be dead afterwards. Assumes Linux (``/proc``) and bash.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ablation.agents import AgentProcessError, CommandAgent

#: Each command's own limit: far above the bounded wait after its exit, so a call that waits for
#: the leftover instead fails with AgentTimeoutError.
TIMEOUT_S = 3.0
#: What "promptly" means here: the grace after the exit, twice, plus bash's start, on a busy machine.
PROMPT_S = 2.5


def script(tmp_path: Path, body: str) -> list[str]:
    """A bash command agent running ``body``; ``$DIR`` is ``tmp_path``."""
    path = tmp_path / "agent.sh"
    path.write_text(f"#!/bin/bash\nDIR={str(tmp_path)!r}\n{body}\n")
    path.chmod(0o755)
    return [str(path)]


def run_timed(agent: CommandAgent, payload: Any) -> tuple[Any, float]:
    """The agent's answer to ``payload`` and the seconds the call took."""
    start = time.monotonic()
    result = asyncio.run(agent.run(payload))
    return result, time.monotonic() - start


def read_pid(path: Path) -> int:
    return int(path.read_text().strip())


def dead(pid: int, within_s: float = 5.0) -> bool:
    """True once ``pid`` no longer runs (gone, or a zombie waiting for init to reap it)."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def test_background_child_holding_stdout_does_not_hold_the_answer(tmp_path: Path) -> None:
    argv = script(tmp_path, 'cat >/dev/null\nsleep 300 &\necho $! > "$DIR/bg"\necho \'"x"\'')
    result, elapsed = run_timed(CommandAgent(argv, timeout_s=TIMEOUT_S), {"n": 1})
    assert result == "x"
    assert elapsed < PROMPT_S
    assert dead(read_pid(tmp_path / "bg")), "the background sleep outlived the call"


def test_background_child_holding_only_stdin_does_not_hold_the_answer(tmp_path: Path) -> None:
    """The command exits without reading its input; a leftover holds stdin and never reads it."""
    argv = script(tmp_path, 'sleep 300 <&0 >/dev/null 2>&1 &\necho $! > "$DIR/bg"\necho 7')
    result, elapsed = run_timed(CommandAgent(argv, timeout_s=TIMEOUT_S), "y" * (4 << 20))
    assert result == 7
    assert elapsed < PROMPT_S
    assert dead(read_pid(tmp_path / "bg"))


def test_failure_is_reported_with_the_stderr_tail_while_a_child_holds_stderr(
    tmp_path: Path,
) -> None:
    argv = script(
        tmp_path,
        'cat >/dev/null\nsleep 300 &\necho $! > "$DIR/bg"\n'
        'for i in $(seq 1 3000); do echo "log line $i" >&2; done\n'
        "echo 'fatal: model not found' >&2\nexit 3",
    )
    start = time.monotonic()
    with pytest.raises(AgentProcessError) as info:
        asyncio.run(CommandAgent(argv, timeout_s=TIMEOUT_S).run({}))
    assert time.monotonic() - start < PROMPT_S
    assert info.value.returncode == 3
    assert info.value.stderr is not None
    assert info.value.stderr.endswith("fatal: model not found")
    assert "log line 1\n" not in info.value.stderr  # only the tail is kept
    assert dead(read_pid(tmp_path / "bg"))


def test_a_leftover_still_writing_is_part_of_stdout_and_is_killed(tmp_path: Path) -> None:
    """Whatever the group printed until it was ended is the answer: here, not one JSON document."""
    argv = script(
        tmp_path,
        'cat >/dev/null\n(while :; do echo noise; sleep 0.02; done) &\necho $! > "$DIR/bg"\n'
        "sleep 0.05\necho '\"x\"'",
    )
    start = time.monotonic()
    with pytest.raises(AgentProcessError, match="invalid JSON") as info:
        asyncio.run(CommandAgent(argv, timeout_s=TIMEOUT_S).run({}))
    assert time.monotonic() - start < PROMPT_S
    assert "a process it left running held its output open" in str(info.value)
    assert "noise" in str(info.value)
    assert dead(read_pid(tmp_path / "bg"))


def test_a_leftover_flooding_stdout_hits_the_cap(tmp_path: Path) -> None:
    argv = script(tmp_path, 'cat >/dev/null\necho \'"x"\'\n(echo $BASHPID > "$DIR/bg"; exec yes) &')
    start = time.monotonic()
    with pytest.raises(AgentProcessError, match="max_output_bytes=100000"):
        asyncio.run(CommandAgent(argv, timeout_s=TIMEOUT_S, max_output_bytes=100_000).run({}))
    assert time.monotonic() - start < PROMPT_S
    assert dead(read_pid(tmp_path / "bg"))


@pytest.mark.parametrize("writes", [False, True], ids=["sleeping", "writing"])
def test_a_setsid_grandchild_holding_the_pipes_does_not_hold_the_answer(
    tmp_path: Path, writes: bool
) -> None:
    """A grandchild that left the group keeps the pipes open: the call still ends promptly.

    CommandAgent does not kill it (it is in no group of the command's); the call closes its ends
    of the pipes instead, so a grandchild that goes on writing to them fails and ends, while one
    that only sleeps lives on. ``ablation run`` kills such descendants when it ends; here the test
    does.
    """
    escapee = (
        "import os, sys, time\nos.setsid()\n"
        "open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid()))\n"
        "os.replace(sys.argv[1] + '.tmp', sys.argv[1])\n"
        + (
            "while True:\n    print('log', file=sys.stderr, flush=True)\n    time.sleep(0.02)\n"
            if writes
            else "time.sleep(300)\n"
        )
    )
    (tmp_path / "escapee.py").write_text(escapee)
    argv = script(
        tmp_path,
        f'cat >/dev/null\n{sys.executable!r} "$DIR/escapee.py" "$DIR/escaped" &\n'
        'while [ ! -s "$DIR/escaped" ]; do sleep 0.01; done\necho \'"x"\'',
    )
    try:
        result, elapsed = run_timed(CommandAgent(argv, timeout_s=TIMEOUT_S), {})
        assert result == "x"
        assert elapsed < PROMPT_S
        escaped = read_pid(tmp_path / "escaped")
        assert os.getsid(escaped) == escaped  # it did leave the command's session and group
        if writes:
            assert dead(escaped), "a grandchild writing to the closed pipes lived on"
        else:
            assert not dead(escaped, within_s=0)  # the stated limit: not killed by the call
    finally:
        if (tmp_path / "escaped").exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(read_pid(tmp_path / "escaped"), signal.SIGKILL)
