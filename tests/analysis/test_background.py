"""The exact MDE computed on a thread of its own gives the same report as in one thread."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from helpers.random_trials import campaign

from ablation.analysis import build
from ablation.analysis.background import in_background
from ablation.config import CampaignConfig


def test_the_call_runs_on_another_thread_and_its_error_reaches_the_getter() -> None:
    seen: list[str] = []

    def call() -> int:
        seen.append(threading.current_thread().name)
        return 7

    with in_background(call, True) as result:
        assert result() == 7
    assert seen and seen[0].startswith("ablation-stats")
    with in_background(call, False) as result:
        assert result() == 7
    assert seen[-1] == threading.current_thread().name

    def broken() -> int:
        raise ValueError("mde failed")

    with pytest.raises(ValueError, match="mde failed"), in_background(broken, True) as result:
        result()


@pytest.mark.parametrize("seed", [0, 1])
def test_report_is_the_same_with_and_without_the_second_thread(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    baseline, candidate = campaign(seed, 1500)
    config = CampaignConfig(n_resamples=300, seed=seed)

    def report(threshold: int) -> Any:
        monkeypatch.setattr(build, "_PARALLEL", threshold)
        return build.compare_results(baseline, candidate, config=config)

    alone, beside = report(10**12), report(0)
    assert alone.minimum_detectable_effect is not None
    assert alone.model_dump_json() == beside.model_dump_json()
