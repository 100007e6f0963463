"""A suite whose ids repeat is refused in a bounded message, by a list and by a generator alike.

The message quoted every repeated id whole with every position: three ids of a million
characters, each four times, made a 3 MB error; one id repeated a million times, a list of a
million positions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator

import pytest

from ablation import AblationTask, ConfigError, run_ablation_campaign
from ablation.schema import NAME_SHOWN, TASK_ID_LIMIT


def _generated(tasks: list[AblationTask]) -> Iterator[AblationTask]:
    yield from tasks


FORMS: list[Callable[[list[AblationTask]], Iterable[AblationTask]]] = [list, _generated]


@pytest.mark.parametrize("form", FORMS)
def test_long_repeated_ids_are_named_bounded_and_apart(form: Callable[[list[AblationTask]], Iterable[AblationTask]]) -> None:
    ids = ["x" * (TASK_ID_LIMIT - 1) + str(i) for i in range(3)]  # the same first million characters
    tasks = [AblationTask(task_id=ids[i % 3], input_data=i) for i in range(12)]
    with pytest.raises(ConfigError, match="duplicate task ids") as raised:
        run_ablation_campaign(lambda x: x, lambda x: x, form(tasks))
    text = str(raised.value)
    assert len(text) < 3 * 2 * NAME_SHOWN
    for i, tid in enumerate(ids):
        assert hashlib.sha256(tid.encode()).hexdigest()[:16] in text
        assert f"at positions {list(range(i, 12, 3))}" in text


@pytest.mark.parametrize("form", FORMS)
def test_an_id_repeated_many_times_lists_its_first_positions_and_a_count(
    form: Callable[[list[AblationTask]], Iterable[AblationTask]],
) -> None:
    tasks = [AblationTask(task_id="same", input_data=i) for i in range(5000)]
    with pytest.raises(ConfigError, match=r"'same' at positions \[0, 1, 2, 3, 4, 5, 6, 7, 8, 9\] \.\.\. \(5000 in all\)"):
        run_ablation_campaign(lambda x: x, lambda x: x, form(tasks))
