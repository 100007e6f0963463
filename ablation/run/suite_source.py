"""A suite as a re-iterable source of tasks, so a campaign never needs the whole suite in memory.

A campaign reads its suite twice: once to check and fingerprint it (:mod:`ablation.run.suite_scan`)
and once per run for the plan. :class:`TaskSource` makes every form a user may give re-iterable:

- a sequence (list, tuple): iterated as it is, tasks fetched by index;
- a callable returning an iterable (e.g. a generator function): called again for each pass;
- another re-iterable (an object whose ``__iter__`` returns a fresh iterator each time, such as
  :class:`ablation.sources.suites.JsonlSuite`): iterated again for each pass;
- a one-shot iterator (a generator object): consumed once, each task pickled into a spool (a
  temporary file once it outgrows memory) and read back from there; a task that cannot be
  pickled (a lambda verifier) is held in memory instead.

Assumptions: a callable or a re-iterable yields the same tasks in the same order on every pass;
:meth:`TaskSource.checked` verifies the ids and the count of each later pass against the first
and raises :class:`~ablation.errors.ConfigError` when they differ.
"""

from __future__ import annotations

import pickle
import tempfile
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from ablation.errors import ConfigError
from ablation.schema import AblationTask, not_a_suite

__all__ = ["Spool", "TaskSource"]

#: Bytes a spool keeps in memory before it moves to a temporary file.
SPOOL_MEMORY = 32 << 20


class Spool:
    """Objects appended in order, pickled into a temporary file; read back in order or by index.

    An object that cannot be pickled is kept in memory (by index) instead.
    """

    def __init__(self) -> None:
        self._file = tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY)  # noqa: SIM115
        self._offsets = array("q", [0])
        self._held: dict[int, Any] = {}

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def append(self, obj: Any) -> None:
        """Add ``obj`` at the next index."""
        try:
            data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # unpicklable (a lambda, a lock...): keep the object itself
            self._held[len(self)] = obj
            data = b""
        self._file.seek(self._offsets[-1])
        self._file.write(data)
        self._offsets.append(self._offsets[-1] + len(data))

    def __getitem__(self, index: int) -> Any:
        if index in self._held:
            return self._held[index]
        start, end = self._offsets[index], self._offsets[index + 1]
        self._file.seek(start)
        return pickle.loads(self._file.read(end - start))

    def __iter__(self) -> Iterator[Any]:
        for index in range(len(self)):
            yield self[index]

    def close(self) -> None:
        """Delete the temporary file."""
        self._file.close()


class TaskSource:
    """A suite that can be iterated again (see the module docstring).

    Args:
        tasks: A sequence of tasks, an iterable, a one-shot iterator, or a zero-argument callable
            returning an iterable of tasks.

    Raises:
        WrongType: for a string, bytes or mapping (not a suite).
    """

    def __init__(self, tasks: Iterable[AblationTask] | Callable[[], Iterable[AblationTask]]) -> None:
        if isinstance(tasks, str | bytes | Mapping) or not (callable(tasks) or hasattr(tasks, "__iter__")):
            raise not_a_suite(tasks)
        self._tasks = tasks
        self._spool: Spool | None = None
        self._ids: Sequence[str] | None = None
        self.sequence: Sequence[AblationTask] | None = (
            tasks if isinstance(tasks, list | tuple) else None
        )
        #: Whether the first pass pickles every task so that later passes can replay it.
        self.one_shot = not callable(tasks) and iter(tasks) is tasks  # type: ignore[arg-type]

    def first_pass(self) -> Iterator[Any]:
        """Iterate the source once, spooling a one-shot iterator's items for later passes."""
        if self.sequence is not None:
            yield from self.sequence
            return
        if not self.one_shot:
            yield from self._fresh()
            return
        self._spool = Spool()
        for item in self._tasks:  # type: ignore[union-attr]
            self._spool.append(item)
            yield item

    def seal(self, ids: Sequence[str]) -> None:
        """Record the ids of the first pass: every later pass is checked against them."""
        self._ids = ids

    @property
    def task_ids(self) -> Sequence[str]:
        """The ids of the first pass, in suite order (empty before it)."""
        return self._ids if self._ids is not None else ()

    def __len__(self) -> int:
        if self._ids is None:
            raise TypeError("the source has not been read yet")
        return len(self._ids)

    def __iter__(self) -> Iterator[AblationTask]:
        """A later pass: the same tasks, checked against the first pass's ids."""
        if self.sequence is not None:
            return iter(self.sequence)
        if self._spool is not None:
            return iter(self._spool)
        return self.checked(self._fresh())

    def task(self, index: int) -> AblationTask:
        """The task at ``index`` (a sequence or a spool: direct; otherwise a new pass)."""
        if self.sequence is not None:
            return self.sequence[index]
        if self._spool is not None:
            item: AblationTask = self._spool[index]
            return item
        for i, item in enumerate(self._fresh()):
            if i == index:
                return item
        raise IndexError(index)

    def checked(self, items: Iterable[AblationTask]) -> Iterator[AblationTask]:
        """``items``, raising ConfigError as soon as they differ from the first pass's ids."""
        ids = self._ids if self._ids is not None else ()
        count = 0
        for count, item in enumerate(items, start=1):
            if count > len(ids) or getattr(item, "task_id", None) != ids[count - 1]:
                raise ConfigError(self._changed(count - 1))
            yield item
        if count != len(ids):
            raise ConfigError(self._changed(count))

    def _changed(self, position: int) -> str:
        return (
            f"the suite changed between two passes at position {position}: a callable or "
            "re-iterable suite must yield the same tasks in the same order every time"
        )

    def _fresh(self) -> Iterator[Any]:
        source = self._tasks() if callable(self._tasks) else self._tasks
        if isinstance(source, str | bytes | Mapping) or not hasattr(source, "__iter__"):
            raise ConfigError(
                f"a suite callable must return an iterable of AblationTask, got {type(source).__name__}"
            )
        return iter(source)

    def close(self) -> None:
        """Release the spool, if any."""
        if self._spool is not None:
            self._spool.close()
