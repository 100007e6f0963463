"""A command that exits without reading all of its input leaves nothing for asyncio to report:
the broken stdin pipe is the call's own business (under Python 3.11.2, Debian 12's, asyncio logged
"Future exception was never retrieved ... BrokenPipeError" on stderr for each such call; later
3.11 releases do not, so the test fails on the old code only there)."""

from __future__ import annotations

import asyncio
import gc
import sys
from typing import Any

from ablation.agents.command import CommandAgent

#: Closes its stdin at once, then answers: the rest of a large input cannot be written.
SKIPS_ITS_INPUT = "import os; os.close(0); print('{\"output\": 1}')"


def test_an_unread_input_is_reported_to_nobody() -> None:
    reported: list[dict[str, Any]] = []

    async def main() -> list[Any]:
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: reported.append(context))
        agent = CommandAgent([sys.executable, "-c", SKIPS_ITS_INPUT])
        outputs = [await agent.run("x" * (1 << 20)) for _ in range(3)]
        await asyncio.sleep(0)  # the done callbacks of the calls' futures
        gc.collect()
        return outputs

    assert [o.output for o in asyncio.run(main())] == [1, 1, 1]
    assert [c.get("message") for c in reported] == []
