r"""Report text that a CI runner cannot mistake for a command.

The GitHub Actions runner reads every line a step prints: a line that begins with ``::`` after
leading whitespace is a workflow command (``::error::``, ``::add-mask::``, ``::stop-commands::``),
and ``##[name]`` anywhere in a line is its older form. A report repeats text an agent controls
(outputs, errors, task ids, categories), which may hold newlines, and a renderer may wrap a long
line where such text starts. So every text format that can reach a CI log (terminal, Markdown,
HTML, JUnit) passes its finished text through :func:`no_workflow_commands`, and the coloured
terminal report goes through :class:`CommandSafeStream`:

- in a line whose first characters other than whitespace and ANSI colour codes are ``::``, the
  first colon is written as an escape (``\x3a`` in plain text, ``&#58;`` in HTML, Markdown and
  XML, which their readers show as ``:``);
- every ``##[`` becomes ``##\x5b`` (``##&#91;``).

Nothing else changes, so a reader still sees what the agent wrote. JSON output needs none of this:
its strings cannot hold a raw newline, and every line starts with whitespace and a bracket or a
quote.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

__all__ = ["CommandSafeStream", "no_workflow_commands"]

# A line starts after a newline or a carriage return; ``\s`` is a superset of what the runner
# trims (.NET ``Char.IsWhiteSpace``).
# ANSI colour codes between the characters count for nothing (the runner reads the text without them).
_ANSI = r"(?:\x1b\[[0-9;]*m)*"
_COMMAND_START = re.compile(rf"((?:^|\r)(?:\s|\x1b\[[0-9;]*m)*):({_ANSI}:)", re.M)
_OLD_FORM = re.compile(rf"(#{_ANSI}#{_ANSI})\[")


def no_workflow_commands(text: str, *, markup: bool) -> str:
    """``text`` with no line a CI runner reads as a workflow command (module docstring).

    Args:
        text: Finished report text, one or more lines.
        markup: True for HTML, Markdown and XML (character references), False for plain text.
    """
    if ":" not in text and "[" not in text:
        return text
    colon, bracket = ("&#58;", "&#91;") if markup else ("\\x3a", "\\x5b")
    text = _COMMAND_START.sub(lambda m: m.group(1) + colon + m.group(2), text)
    return _OLD_FORM.sub(lambda m: m.group(1) + bracket, text)


class CommandSafeStream:
    """A text stream that writes :func:`no_workflow_commands` of what it is given, line by line.

    Complete lines pass at once; the last, unfinished line waits for its end (a later write could
    turn ``:`` into ``::``) until :meth:`finish`. Other attributes (``isatty``, ``encoding``,
    ``fileno``) are the wrapped stream's, so a ``rich`` console sees the terminal it writes to.

    Args:
        stream: Where the text goes.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._pending = ""

    def write(self, text: str) -> int:
        """Queue ``text``; write every line it completes."""
        self._pending += text
        cut = self._pending.rfind("\n") + 1
        if cut:
            done, self._pending = self._pending[:cut], self._pending[cut:]
            self._stream.write(no_workflow_commands(done, markup=False))
        return len(text)

    def flush(self) -> None:
        """Flush the wrapped stream (an unfinished line stays queued)."""
        self._stream.flush()

    def finish(self) -> None:
        """Write the unfinished line too, and flush."""
        if self._pending:
            self._stream.write(no_workflow_commands(self._pending, markup=False))
            self._pending = ""
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
