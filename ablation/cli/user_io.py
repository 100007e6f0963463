"""The command's standard streams: what user code sees of them, and a reader that goes away.

Agents, suites and scorers run in the command's own process with thread isolation (and are
loaded there with either isolation). Their prints must not land in the report on stdout
(:func:`user_output_to_stderr`), and their reads of stdin must not block the run
(:func:`stdin_for_user_code`). With process isolation the workers get the same treatment on
their own (:mod:`ablation.run.isolation_worker`). A report or listing read by a reader that
exits early (``ablation list | head -1``) ends quietly (:class:`ClosedPipeSafe`).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO

__all__ = ["ClosedPipeSafe", "stdin_for_user_code", "user_output_to_stderr"]


@contextlib.contextmanager
def user_output_to_stderr() -> Iterator[TextIO]:
    """Send what user code writes to stdout to stderr; yield the stream the report goes to.

    An agent, suite or scorer that prints (Python's ``print``, a write to file descriptor 1, a
    child process that inherits it) would otherwise mix its text into the report on stdout, and
    ``--format json`` output would no longer parse. Inside the block, file descriptor 1 is a
    copy of 2 when ``sys.stdout`` writes to it (the usual case), or else ``sys.stdout`` is
    ``sys.stderr`` (a caller that replaced ``sys.stdout``, e.g. a test's capture, or descriptors
    that cannot be copied); the yielded stream writes to the original stdout. Nothing is
    dropped: the text is on stderr. Both are restored when the block ends. An agent that writes
    to the terminal by other means (opening ``/dev/tty``) is not caught.
    """
    original = sys.stdout
    original.flush()
    saved = _stderr_on_fd1(original)
    if saved is None:
        sys.stdout = sys.stderr
        try:
            yield original
        finally:
            sys.stdout.flush()
            sys.stdout = original
        return
    encoding = getattr(original, "encoding", None) or "utf-8"
    report = open(  # noqa: SIM115  (closed below, after the block)
        saved, "w", encoding=encoding, errors=getattr(original, "errors", None), closefd=False
    )
    try:
        yield report
    finally:
        report.flush()
        report.close()
        with contextlib.suppress(ValueError, OSError):  # user code may have closed it
            original.flush()  # what user code left in the buffer goes to stderr
        os.dup2(saved, 1)
        os.close(saved)
        if original.closed:  # an agent closed sys.stdout: the command's own output goes on
            sys.stdout = open(  # noqa: SIM115  (the process's stdout, never closed here)
                1, "w", buffering=1, encoding=encoding, errors=getattr(original, "errors", None),
                closefd=False,
            )


def _stderr_on_fd1(stdout: Any) -> int | None:
    """When ``stdout`` writes to file descriptor 1: make fd 1 a copy of fd 2 and return a copy of
    the original fd 1. ``None`` when it does not (a caller replaced ``sys.stdout``) or when the
    descriptors cannot be copied (e.g. stderr closed); fd 1 is then left as it was."""
    try:
        if stdout.fileno() != 1:
            return None
        saved = os.dup(1)
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return None
    try:
        os.dup2(2, 1)
    except OSError:
        os.close(saved)
        return None
    return saved


@contextlib.contextmanager
def stdin_for_user_code() -> Iterator[None]:
    """Give user code ``/dev/null`` as stdin (file descriptor 0) unless stdin is a terminal.

    An agent that read stdin (``input()``) while the run's stdin was a pipe left open (``cmd |
    ablation run ...``, some CI runners) blocked there: its trial timed out, but the command
    then waited for the pipe to close and aborted at exit (exit code 134, its thread still
    holding stdin's lock). Reading ``/dev/null`` gives end-of-file at once (that trial's
    ``EOFError``), as in process isolation. A terminal is left alone, so a debugger
    (``breakpoint()``) still works with thread isolation. Restored when the block ends.
    """
    if os.isatty(0):  # also False when fd 0 is closed: then dup fails below
        yield
        return
    try:
        saved = os.dup(0)
    except OSError:
        yield
        return
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        yield
    finally:
        os.dup2(saved, 0)
        os.close(saved)


class ClosedPipeSafe:
    """A text stream that drops what it is given once its reader has gone (a closed pipe).

    Writing to a pipe whose reader exited (``| head -1``) raises :class:`BrokenPipeError`; a
    command would end on it as an error, and the text still buffered would fail again when the
    interpreter flushes the stream at exit. Here the first such error points the stream's file
    descriptor at ``/dev/null`` (so that flush succeeds, writing nothing) and every later write is
    dropped: the command ends as it would have, with its own exit code. Other attributes
    (``isatty``, ``encoding``, ``fileno``) are the wrapped stream's.

    Args:
        stream: Where the text goes.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.reader_gone = False

    def write(self, text: str) -> int:
        """Write ``text``, unless the reader has gone."""
        if not self.reader_gone:
            try:
                self._stream.write(text)
            except BrokenPipeError:
                self._gone()
        return len(text)

    def flush(self) -> None:
        """Flush the wrapped stream, unless the reader has gone."""
        if not self.reader_gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._gone()

    def _gone(self) -> None:
        self.reader_gone = True
        try:
            null = os.open(os.devnull, os.O_WRONLY)
        except OSError:
            return
        try:
            os.dup2(null, self._stream.fileno())
        except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is both
            pass
        finally:
            os.close(null)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
