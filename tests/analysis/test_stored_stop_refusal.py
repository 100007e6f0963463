"""The library's ``report_stored_campaign`` refuses a setting that decided a sequential stop.

A sequential campaign's stop is a fact of the campaign: it was decided with the stored seed (the
run order), alpha, margin, critical rule and sequential policy, so its report replays it with
those. ``ablation report`` refuses a flag that changes one; a library caller passing the same
change in ``config_update`` is refused by the same rule (one ``ConfigError`` naming the setting
and its stored value), while a fixed-n campaign may still be judged with other settings.

Suite: 60 tasks both arms pass and 3 the candidate fails; the campaigns run with ``--margin 0.2``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import analysis_shared, cli

from ablation.analysis.stored import report_stored_campaign
from ablation.errors import ConfigError
from ablation.store import RunStore

pytestmark = pytest.mark.xdist_group("stored-stop-refusal")  # one worker runs the campaign once


def _campaign(folder: Path, *extra: str) -> Path:
    """Run the campaign through ``ablation run``; its store."""
    return analysis_shared.margin_run(folder, *extra)[0]


@pytest.fixture(scope="module")
def sequential(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _campaign(tmp_path_factory.mktemp("seq") / "campaign", "--sequential")


@pytest.fixture(scope="module")
def fixed_n(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _campaign(tmp_path_factory.mktemp("fixed") / "campaign")


def _gates(store: RunStore, **fields: Any) -> Any:
    record = store.latest_campaign()
    assert record is not None
    return record.config.gates.model_copy(update=fields)


@pytest.mark.parametrize(
    ("update", "given", "stored"),
    [
        ({"seed": 1}, "seed 1", "seed 0"),
        ({"alpha": 0.1}, "alpha 0.1", "alpha 0.05"),
        ({"gates": {"noninferiority_margin": 0.5}}, "margin 0.5", "margin 0.2"),
        ({"gates": {"critical_must_not_regress": False}}, "the critical gate off", "the critical gate on"),
    ],
)
def test_a_changed_stop_setting_is_refused(
    sequential: Path, update: dict[str, Any], given: str, stored: str
) -> None:
    with RunStore(sequential, read_only=True) as store:
        if "gates" in update:
            update = {"gates": _gates(store, **update["gates"])}
        with pytest.raises(ConfigError) as caught:
            report_stored_campaign(store, config_update=update)
    message = str(caught.value)
    assert message.startswith(f"{given}: campaign ")
    assert f"is sequential and its stop was decided with {stored};" in message
    assert "\n" not in message


def test_the_callers_names_are_used(sequential: Path) -> None:
    with RunStore(sequential, read_only=True) as store, pytest.raises(ConfigError) as caught:
        report_stored_campaign(store, config_update={"seed": 1}, names={"seed": "--seed"})
    assert str(caught.value).startswith("--seed 1: campaign ")
    assert str(caught.value).endswith("(drop --seed)")


def test_the_stored_values_give_the_stored_report(sequential: Path) -> None:
    with RunStore(sequential, read_only=True) as store:
        plain, record = report_stored_campaign(store)
        same = {"seed": record.config.seed, "alpha": record.config.alpha,
                "gates": record.config.gates, "resamples": 200}  # fmt: skip
        again, _ = report_stored_campaign(store, config_update=same)
        lenient, _ = report_stored_campaign(store, config_update={"gates": _gates(store, min_completed=0.5)})
    stable = [cli.stable(json.loads(r.model_dump_json())) for r in (plain, again)]
    assert stable[0] == stable[1]
    assert lenient.sequential == plain.sequential  # a gate that does not decide the stop


def test_a_fixed_n_campaign_takes_other_settings(fixed_n: Path) -> None:
    with RunStore(fixed_n, read_only=True) as store:
        report, _ = report_stored_campaign(store, config_update={"seed": 7, "alpha": 0.1})
    assert report.provenance.seed == 7 and report.provenance.alpha == 0.1
