"""One pass over a suite that keeps only what a campaign needs per task, never the tasks.

:func:`scan_suite` reads a :class:`~ablation.run.suite_source.TaskSource` once and checks it as
:func:`~ablation.schema.validate_suite` does (not empty, only tasks, distinct ids, with the same
messages), and keeps per task: its id, digest (:func:`~ablation.schema.task_digests`), category,
family and critical flag, plus the values with no stable representation (a resume could not check
them). The suite fingerprint (:func:`~ablation.schema.suite_fingerprint`, the same value) is hashed
from each task's entry, spooled as bytes (a temporary file once large) and read back in task-id
order. The report gets light :class:`TaskInfo` records whose expected output is fetched only when
a drill-down shows it (from the sequence, the source's spool, or spools of expected outputs and
inputs).

Memory: O(tasks) small strings and integers (ids, digests), not the tasks themselves.
"""

from __future__ import annotations

import functools
import tempfile
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring_ascii
from typing import Any

from ablation.digests import entry_digest, fingerprint_of_entries
from ablation.errors import ConfigError
from ablation.run.suite_source import SPOOL_MEMORY, Spool, TaskSource
from ablation.schema import AblationTask, duplicate_ids_error, not_tasks, note_unstable, task_entry

__all__ = ["SuiteScan", "TaskInfo", "encode_entry", "scan_suite"]


def encode_entry(entry: tuple[str, ...]) -> str:
    """``json.dumps(entry)`` of a task entry (a tuple of strings), without the encoder's set-up.

    The same text: ``json.dumps`` writes each string with ``encode_basestring_ascii`` (its
    default ``ensure_ascii=True``) and separates items with ``", "``.
    """
    return "[" + ", ".join(map(encode_basestring_ascii, entry)) + "]"


class TaskInfo:
    """What a report needs of one task, read from the scan's lists (two slots per record: a
    million of them fit in ~50 MB); ``expected_output`` is read only when asked for."""

    __slots__ = ("_index", "_scan")

    def __init__(self, scan: SuiteScan, index: int) -> None:
        self._scan, self._index = scan, index

    @property
    def task_id(self) -> str:
        """The task's id."""
        return self._scan.ids[self._index]

    @property
    def category(self) -> str:
        """The task's category."""
        return self._scan.categories[self._index]

    @property
    def family(self) -> str | None:
        """The task's family (``None``: its own)."""
        return self._scan.families[self._index]

    @property
    def critical(self) -> bool:
        """Whether the task is critical."""
        return bool(self._scan.critical[self._index])

    @property
    def expected_output(self) -> Any:
        """The task's expected output (read from where the scan left it)."""
        return self._scan.expected_output(self._index)

    @property
    def input_data(self) -> Any:
        """The task's input (read from where the scan left it), for the drill-downs."""
        return self._scan.input_data(self._index)


class _TaskInfos(Sequence[TaskInfo]):
    """The suite as :class:`TaskInfo` records, made on demand."""

    def __init__(self, scan: SuiteScan) -> None:
        self._scan = scan

    def __len__(self) -> int:
        return len(self._scan.ids)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [TaskInfo(self._scan, i) for i in range(len(self))[index]]
        return TaskInfo(self._scan, range(len(self))[index])

    def __iter__(self) -> Iterator[TaskInfo]:
        return (TaskInfo(self._scan, i) for i in range(len(self)))


@dataclass
class SuiteScan:
    """The result of :func:`scan_suite` (see the module docstring).

    Attributes:
        source: The suite, re-iterable (the plan reads it again).
        fingerprint: :func:`~ablation.schema.suite_fingerprint` of the suite and scorers.
        digests: ``task_id -> digest`` (:func:`~ablation.schema.task_digests`).
        ids, categories, families, critical: Per task, in suite order.
        unstable: ``(task_id, type name)`` of values with no stable representation.
    """

    source: TaskSource
    fingerprint: str = ""
    digests: dict[str, str] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    families: list[str | None] = field(default_factory=list)
    critical: bytearray = field(default_factory=bytearray)
    unstable: list[tuple[str, str]] = field(default_factory=list)
    expected: Spool | None = None
    inputs: Spool | None = None

    def expected_output(self, index: int) -> Any:
        """Expected output of the task at ``index`` without holding the suite."""
        if self.expected is not None:
            return self.expected[index]
        return self.source.task(index).expected_output

    def input_data(self, index: int) -> Any:
        """Input of the task at ``index`` without holding the suite."""
        if self.inputs is not None:
            return self.inputs[index]
        return self.source.task(index).input_data

    def report_tasks(self) -> Sequence[AblationTask]:
        """The suite for the report: the user's sequence itself, else :class:`TaskInfo` records."""
        if self.source.sequence is not None:
            return self.source.sequence
        infos: Any = _TaskInfos(self)  # duck-typed: the report reads only these fields
        return infos  # type: ignore[no-any-return]

    def tasks(self) -> tuple[AblationTask, ...]:
        """The whole suite in memory (a sequential campaign reorders it)."""
        return tuple(self.source)

    def close(self) -> None:
        """Release the spools."""
        self.source.close()
        for spool in (self.expected, self.inputs):
            if spool is not None:
                spool.close()


def scan_suite(
    tasks: Iterable[AblationTask] | Callable[[], Iterable[AblationTask]],
    scorer_names: Sequence[str] = (),
) -> SuiteScan:
    """Check and fingerprint a suite in one pass (see the module docstring).

    Raises:
        ConfigError: if the suite is empty, holds an item that is not an
            :class:`~ablation.schema.AblationTask` (naming its position), or repeats a task id
            (naming the id and its positions), as :func:`~ablation.schema.validate_suite` does.
        InputError: from a streamed JSONL suite, naming the file, line and task id.
    """
    source = TaskSource(tasks)
    scan = SuiteScan(source)
    entries = _Entries()
    try:
        if source.sequence is None and not source.one_shot:
            scan.expected, scan.inputs = Spool(), Spool()
        bad: list[str] = []
        dups: dict[str, None] = {}
        unstable: dict[tuple[str, str], None] = {}
        labels: dict[str, str] = {}
        for i, task in enumerate(source.first_pass()):
            if not isinstance(task, AblationTask):
                bad.append(f"#{i} ({type(task).__name__})")
                continue
            tid = task.task_id
            scan.ids.append(tid)
            if tid in scan.digests:
                dups[tid] = None
                continue
            entry = task_entry(task, functools.partial(note_unstable, tid, unstable))
            scan.digests[tid] = entry_digest(entry)
            entries.add(tid, encode_entry(entry))
            scan.categories.append(labels.setdefault(task.category, task.category))
            scan.families.append(task.family)
            scan.critical.append(task.critical)
            if scan.expected is not None and scan.inputs is not None:
                scan.expected.append(task.expected_output)
                scan.inputs.append(task.input_data)
        _raise_invalid(scan.ids, bad, dups)
        source.seal(scan.ids)
        scan.unstable = list(unstable)
        scan.fingerprint = fingerprint_of_entries(entries.in_id_order(), scorer_names)
    except BaseException:  # an invalid suite, a failing stream: release the spools now
        entries.close()
        scan.close()
        raise
    return scan


def _raise_invalid(ids: list[str], bad: list[str], dups: dict[str, None]) -> None:
    """The errors of :func:`~ablation.schema.validate_suite`, worded the same."""
    if not ids and not bad:
        raise ConfigError("the suite is empty: a campaign needs at least one task")
    if bad:
        raise not_tasks(bad)
    if dups:
        positions: dict[str, list[int]] = {tid: [] for tid in dups}
        for i, tid in enumerate(ids):
            if tid in positions:
                positions[tid].append(i)
        raise duplicate_ids_error(positions)


class _Entries:
    """Each task's encoded fingerprint entry, spooled; read back sorted by task id."""

    def __init__(self) -> None:
        self._file = tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY)  # noqa: SIM115
        self._offsets = array("q", [0])
        self._ids: list[str] = []
        self._sorted = True

    def add(self, task_id: str, encoded: str) -> None:
        if self._ids and task_id < self._ids[-1]:
            self._sorted = False
        self._ids.append(task_id)
        data = encoded.encode()
        self._file.write(data)
        self._offsets.append(self._offsets[-1] + len(data))

    def close(self) -> None:
        """Delete the spool (when the entries will not be read)."""
        self._file.close()

    def in_id_order(self) -> Iterator[str]:
        order: Iterable[int] = range(len(self._ids))
        if not self._sorted:
            order = sorted(order, key=self._ids.__getitem__)
        self._ids = []
        try:
            for i in order:
                start = self._offsets[i]
                self._file.seek(start)
                yield self._file.read(self._offsets[i + 1] - start).decode()
        finally:
            self._file.close()
