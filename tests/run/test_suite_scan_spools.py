"""A suite refused while it is read leaves no spool open.

The suite's one pass spools each task's fingerprint entry (and, for a callable suite, the inputs
and expected outputs; for a generator, its items). A suite refused on that pass (empty, a
repeated id, an item that is not a task, a generator that raises) left those temporary files
open until the garbage collector found them, with a ``ResourceWarning`` each.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ablation import AblationTask, ConfigError, run_ablation_campaign


def _task(tid: str) -> AblationTask:
    return AblationTask(task_id=tid, input_data=1, expected_output=1)


def _generated(ids: list[str]) -> Iterator[AblationTask]:
    for tid in ids:
        yield _task(tid)


def _failing() -> Iterator[AblationTask]:
    yield _task("a")
    raise ValueError("the source broke")


SUITES: dict[str, Callable[[], Any]] = {
    "empty list": lambda: [],
    "repeated id in a list": lambda: [_task("a"), _task("a")],
    "repeated id from a generator": lambda: _generated(["a", "b", "a"]),
    "repeated id from a callable": lambda: (lambda: [_task("a"), _task("a")]),
    "not a task": lambda: [_task("a"), "b"],
    "a generator that raises": _failing,
}


@pytest.mark.parametrize("case", list(SUITES))
def test_a_refused_suite_closes_its_spools(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[Any] = []
    real = tempfile.SpooledTemporaryFile

    def tracked(*args: Any, **kwargs: Any) -> Any:
        spool = real(*args, **kwargs)
        opened.append(spool)
        return spool

    monkeypatch.setattr(tempfile, "SpooledTemporaryFile", tracked)
    with pytest.raises((ConfigError, ValueError)):
        run_ablation_campaign(lambda x: x, lambda x: x, SUITES[case]())
    assert opened  # the pass spooled something
    assert [s.closed for s in opened] == [True] * len(opened)
