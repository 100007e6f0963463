"""A suite may be any iterable of tasks (a generator included); a repeated id is still named."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ablation.config import CampaignConfig
from ablation.errors import ConfigError
from ablation.run.campaign import run_ablation_campaign
from ablation.schema import AblationTask


def _tasks(ids: list[str]) -> Iterator[AblationTask]:
    for i, tid in enumerate(ids):
        yield AblationTask(task_id=tid, input_data=i, expected_output=i)


def test_a_generator_suite_runs_every_task(tmp_path) -> None:  # type: ignore[no-untyped-def]
    report = run_ablation_campaign(
        lambda x: x, lambda x: x, _tasks([f"t{i}" for i in range(30)]),
        config=CampaignConfig(n_resamples=100), store=tmp_path / "runs.db",
    )  # fmt: skip
    assert report.n_paired == 30 and report.baseline.passes == 30


def test_a_generator_repeating_an_id_is_refused_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"duplicate task ids: 't1' at positions \[1, 3\]"):
        run_ablation_campaign(lambda x: x, lambda x: x, _tasks(["t0", "t1", "t2", "t1"]))
