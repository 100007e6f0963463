"""An output mapping whose keys read the same as text keeps every item.

JSON keys are text: ``{1: "a", "1": "b"}`` written with ``str(key)`` kept ``{"1": "b"}``, the
``1`` item silently gone from the stored output (and from what the report shows of it).
"""

from __future__ import annotations

import json

from ablation import AblationEngine, AblationTask, CampaignConfig
from ablation.schema import to_jsonable


def _colliding(x: int) -> dict[object, str]:
    return {1: "int one", "1": "text one", 2.0: "float two"}


def test_keys_equal_as_text_are_kept_apart_by_their_repr() -> None:
    value = {1: "a", "1": "b", "x": {True: 1, "True": 2}}
    assert to_jsonable(value) == {"1": "a", "'1'": "b", "'x'": {"True": 1, "'True'": 2}}


def test_distinct_keys_are_written_as_before() -> None:
    assert to_jsonable({1: "a", "b": [1, 2], None: 3}) == {"1": "a", "b": [1, 2], "None": 3}


def test_keys_equal_even_as_repr_keep_their_positions() -> None:
    class Same:
        def __repr__(self) -> str:
            return "k"

        __str__ = __repr__

    value = {Same(): 1, Same(): 2}
    assert to_jsonable(value) == {"k [0]": 1, "k [1]": 2}


def test_a_trial_stores_every_item_of_its_output() -> None:
    tasks = [AblationTask(task_id="t", input_data=0, expected_output=None)]
    results = AblationEngine(CampaignConfig()).run(_colliding, _colliding, tasks)
    for result in results:
        stored = json.loads(result.model_dump_json())["output"]
        assert sorted(stored.values()) == ["float two", "int one", "text one"], stored
