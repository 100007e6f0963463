"""A command agent's input is one whole line on stdin, so that a shell agent can ``read`` it.

The JSON document was written without a line end: the shell's ``read -r line`` then sets the
line but returns 1 at the end of input, so ``read -r line && ...`` (or ``set -e``) failed every
call with "printed nothing on stdout". A real shell, no mocks.
"""

from __future__ import annotations

import asyncio
import shutil

import pytest

from ablation.agents.command import CommandAgent


@pytest.mark.parametrize("value", [{"expression": "2 + 3", "note": "two\nlines"}, "plain", 14, None])
def test_a_shell_agent_reads_its_input_as_one_line(value: object) -> None:
    sh = shutil.which("sh")
    assert sh is not None
    agent = CommandAgent([sh, "-c", 'IFS= read -r line && printf \'{"output": %s}\' "$line"'])
    assert asyncio.run(agent.run(value)).output == value
