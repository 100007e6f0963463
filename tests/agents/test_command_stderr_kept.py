"""A command agent keeps only the tail of its stderr that an error shows, however much it logs.

Its stderr was kept up to ``max_output_bytes`` (8 MiB) per call while only its last 8000 bytes
are ever read (the error's tail): 64 concurrent calls of a command logging 12.5 MiB each held
~650 MiB (peak RSS 713 MiB against 66 MiB for quiet commands). A real command, no mocks.
"""

from __future__ import annotations

import asyncio
import sys

import pytest

from ablation.agents.command import CommandAgent
from ablation.agents.forms import STDERR_KEPT_BYTES, AgentProcessError, _tail

#: Logs 1 MiB on stderr, ending with a marker, then answers (or, with an argument, fails).
CHATTY = (
    "import os, sys\n"
    "os.write(2, b'e' * (1 << 20) + b' LAST LINE')\n"
    "sys.exit(3) if sys.argv[1:] else print('{\"output\": 1}')\n"
)


def test_only_the_tail_of_stderr_is_kept_while_the_command_runs() -> None:
    agent = CommandAgent([sys.executable, "-c", CHATTY])

    async def exchange() -> tuple[bytes, bytes, bool]:
        proc = await asyncio.create_subprocess_exec(
            *agent.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        return await agent._exchange(proc, b"1")

    stdout, stderr, held = asyncio.run(exchange())
    assert (stdout.strip(), held) == (b'{"output": 1}', False)
    assert len(stderr) == STDERR_KEPT_BYTES and stderr.endswith(b" LAST LINE")


def test_the_error_still_shows_the_cut_tail() -> None:
    agent = CommandAgent([sys.executable, "-c", CHATTY, "fail"])
    with pytest.raises(AgentProcessError) as caught:
        asyncio.run(agent.run(1))
    expected = _tail(b"e" * (1 << 20) + b" LAST LINE")
    assert expected.startswith("...") and caught.value.stderr == expected
    assert str(caught.value).endswith("exited with code 3; stderr: " + expected)
