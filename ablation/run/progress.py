"""Progress reporting: the protocol the engine calls, and a rich progress bar.

The engine only knows :class:`ProgressReporter`; rich is imported lazily by
:class:`RichProgress`, so running a campaign without a terminal never loads it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ablation.schema import TaskResult

__all__ = ["NullProgress", "ProgressReporter", "RichProgress", "default_progress"]


@runtime_checkable
class ProgressReporter(Protocol):
    """Receives progress events from the engine. Calls come from the event-loop thread."""

    def start(self, total: int, *, arms: Sequence[str]) -> None:
        """Called once with the number of trials about to run."""

    def advance(self, result: TaskResult) -> None:
        """Called after each finished trial."""

    def finish(self) -> None:
        """Called once when the run ends (also on error or interrupt)."""


class NullProgress:
    """A reporter that does nothing."""

    def start(self, total: int, *, arms: Sequence[str]) -> None:
        """Ignore the start event."""

    def advance(self, result: TaskResult) -> None:
        """Ignore a finished trial."""

    def finish(self) -> None:
        """Ignore the end event."""


class RichProgress:
    """A rich progress bar with per-arm pass/error counts and an ETA.

    Redraws are throttled (``refresh_per_second``) so the bar costs the engine nothing
    measurable: ``advance`` only updates counters and asks rich to redraw at most a few times per
    second.

    Args:
        console: A ``rich.console.Console``; defaults to one on stderr.
        refresh_per_second: Redraw rate.
    """

    def __init__(self, console: Any = None, *, refresh_per_second: float = 4.0) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._console = console or Console(stderr=True)
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self._console,
            refresh_per_second=refresh_per_second,
            transient=False,
        )
        self._interval = 1.0 / refresh_per_second
        self._last = 0.0
        self._done = 0
        self._task_id: Any = None
        self._counts: dict[str, list[int]] = {}

    def start(self, total: int, *, arms: Sequence[str]) -> None:
        """Show the bar."""
        self._counts = {arm: [0, 0, 0] for arm in arms}  # passed, failed, errors
        self._progress.start()
        self._task_id = self._progress.add_task("trials", total=total, counts=self._text())

    def _text(self) -> str:
        return "  ".join(
            f"{arm}: {p} pass {f} fail {e} err" for arm, (p, f, e) in self._counts.items()
        )

    def advance(self, result: TaskResult) -> None:
        """Count a finished trial; redraw at most ``refresh_per_second`` times a second."""
        counts = self._counts.setdefault(result.arm, [0, 0, 0])
        if result.status != "completed":
            counts[2] += 1
        elif result.passed:
            counts[0] += 1
        else:
            counts[1] += 1
        self._done += 1
        now = time.monotonic()
        if now - self._last >= self._interval:
            self._last = now
            self._progress.update(self._task_id, completed=self._done, counts=self._text())

    def finish(self) -> None:
        """Draw the final state and stop the bar."""
        if self._task_id is not None:
            self._progress.update(self._task_id, completed=self._done, counts=self._text())
        self._progress.stop()


def default_progress(enabled: bool | None = None) -> ProgressReporter:
    """A rich bar when stderr is a terminal (or ``enabled`` is True), else :class:`NullProgress`."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    return RichProgress() if enabled else NullProgress()
