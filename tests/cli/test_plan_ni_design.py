"""``plan --sequential --margin`` names the fixed-n non-inferiority design beside the sequential
cost: a sequential PASS is non-inferiority, so that design (not the superiority n) is the fair
fixed-n comparison."""

from __future__ import annotations

import math

from scipy import stats as sps

from ablation.cli import main


def test_plan_sequential_with_margin_prints_the_ni_design(capsys) -> None:
    code = main(["plan", "--discordance", "0.2", "--uplift", "0.05", "--sequential", "--margin",
                 "0.05", "--simulations", "200"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    z = sps.norm.ppf(0.95) + sps.norm.ppf(0.8)
    n = math.ceil(z**2 * (0.2 - 0.05**2) / 0.1**2)
    assert "fixed-n non-inferiority design (margin 0.05" in out
    assert f"{n} tasks, {2 * n} agent calls" in out
    assert 2 * n < 1252  # the superiority design it used to be compared with


def test_plan_ni_design_says_none_at_or_below_the_margin(capsys) -> None:
    assert main(["plan", "--discordance", "0.2", "--uplift", "-0.05", "--sequential",
                 "--margin", "0.05", "--simulations", "100"]) == 0  # fmt: skip
    assert "non-inferiority is not the expected answer" in capsys.readouterr().out
