"""A numeric ``compare --field`` regression gate that passes beside an interval on the harmful side.

The gate is a one-sided paired t test at ``alpha``; the interval of the mean difference is shown
at ``--confidence``. Below ``1 - 2 alpha`` (``--confidence 0.8`` at alpha 0.05) the interval can
lie wholly below the gate's threshold while the test does not reject: the gate passes, and its
evidence (which every format shows) says that the interval lies there and that the test, at
another level, decides. References: scipy's ``ttest_rel`` for the p-value and the interval.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers.analysis_shared import run_here
from scipy import stats

from ablation.analysis.numeric import compare_numeric

N = 120


def _arms(mean: float, lower: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Baseline values and candidate values whose per-task differences have mean ``mean`` (a
    worsening: a drop, or for a lower-is-better field a rise) and a spread of 0.1."""
    x = np.linspace(0.2, 0.8, N)
    spread = 0.1 * np.where(np.arange(N) % 2 == 0, 1.0, -1.0) * np.linspace(0.5, 1.5, N)
    d = -mean + spread if lower else mean + spread
    return x, x + d


def _compare(x: np.ndarray, y: np.ndarray, field: str, **kw: object):  # type: ignore[no-untyped-def]
    ids = [f"t{i}" for i in range(len(x))]
    return compare_numeric(dict(zip(ids, x.tolist(), strict=True)), dict(zip(ids, y.tolist(), strict=True)),
                           field=field, **kw)  # type: ignore[arg-type]  # fmt: skip


@pytest.mark.parametrize(("field", "lower", "side"), [("score", False, "below 0"), ("cost", True, "above 0")])
def test_a_pass_beside_an_interval_past_the_threshold_says_so(field: str, lower: bool, side: str) -> None:
    x, y = _arms(-0.0145, lower=lower)
    ref = stats.ttest_rel(y, x, alternative="greater" if lower else "less")
    ci = stats.ttest_rel(y, x).confidence_interval(0.8)
    assert 0.05 < ref.pvalue < 0.1  # not significant at alpha 0.05 ...
    assert (ci.low > 0) if lower else (ci.high < 0)  # ... beside an 80% interval wholly worse
    c = _compare(x, y, field, confidence_level=0.8)
    gate = c.gates[1]
    assert (gate.status, c.verdict) == ("pass", "pass")
    assert gate.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
    assert (c.ci_low, c.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-9)
    words = f"The 80% CI of the mean difference [{c.ci_low:.4g}, {c.ci_high:.4g}] lies {side}"
    assert words in gate.evidence
    assert "the interval is at another level than the gate" in gate.evidence
    # at 95% (at least 1 - 2 alpha) the interval reaches the threshold: nothing to say
    assert "lies" not in _compare(x, y, field, confidence_level=0.95).gates[1].evidence


def test_the_threshold_is_the_regression_delta() -> None:
    x, y = _arms(-0.0145)
    assert stats.ttest_rel(y, x).confidence_interval(0.8).high < 0
    # within a tolerated drop of 0.05 the interval does not lie past -0.05: no clause
    inside = _compare(x, y, "score", confidence_level=0.8, regression_delta=0.05).gates[1]
    assert inside.status == "pass" and "lies" not in inside.evidence
    # past a tolerated drop of 0.002 it does, and the test (of d + 0.002 < 0) still passes
    ref = stats.ttest_rel(y + 0.002, x, alternative="less")
    assert stats.ttest_rel(y, x).confidence_interval(0.8).high < -0.002 and ref.pvalue >= 0.05
    past = _compare(x, y, "score", confidence_level=0.8, regression_delta=0.002).gates[1]
    assert past.status == "pass" and "lies below -0.002" in past.evidence


def test_every_format_of_compare_shows_it(tmp_path: Path) -> None:
    x, y = _arms(-0.0145)
    files = []
    for name, values in (("before", x), ("after", y)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps({"id": f"t{i}", "score": v}) + "\n" for i, v in enumerate(values)))
        files.append(str(path))
    for fmt in ("terminal", "json", "markdown", "html", "junit"):
        proc = run_here(["compare", *files, "--field", "score", "--confidence", "0.8", "--format", fmt])
        assert proc.returncode == 0, proc.stderr
        assert "lies below 0" in proc.stdout, fmt
