"""``ablation.stats.quantiles``' ``linear_quantiles`` and ``median`` against ``numpy.quantile`` and
``numpy.median``, to the bit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ablation.stats.quantiles import linear_quantiles, median
from tests.helpers.cli import fresh_json

values = hnp.arrays(
    np.float64,
    st.integers(min_value=1, max_value=300),
    elements=st.one_of(
        st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5]),  # ties and signed zeros
        st.floats(allow_nan=True, allow_infinity=True, width=64),
    ),
)
probs = hnp.arrays(
    np.float64, st.integers(min_value=1, max_value=4), elements=st.floats(min_value=0.0, max_value=1.0)
)


@settings(max_examples=400, deadline=None)
@given(values, probs)
def test_same_bits_as_numpy_quantile(data: np.ndarray, q: np.ndarray) -> None:
    with np.errstate(invalid="ignore", over="ignore"):  # inf − inf: NaN, as numpy warns
        expected = np.quantile(data, q)  # numpy.quantile(data, q), method="linear"
        got = linear_quantiles(data, q)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    finite = ~np.isnan(expected)
    assert got[finite].tobytes() == expected[finite].tobytes()  # signed zeros too


def test_bootstrap_levels_on_a_large_distribution() -> None:
    rng = np.random.default_rng(7)
    theta = np.round(rng.normal(size=10_000), 3)  # many ties, as a bootstrap of counts has
    q = np.array([0.025, 0.975, 0.0, 1.0, 0.5, 0.31337])
    assert linear_quantiles(theta, q).tobytes() == np.quantile(theta, q).tobytes()


@settings(max_examples=400, deadline=None)
@given(values)
def test_same_bits_as_numpy_median(data: np.ndarray) -> None:
    with np.errstate(invalid="ignore", over="ignore"):  # inf − inf and inf + inf: as numpy
        expected = float(np.median(data))  # numpy.median(data)
        got = median(data)
        kept = data.copy()
        in_place = median(kept, overwrite=True)
    assert np.isnan(got) == np.isnan(expected) == np.isnan(in_place)
    if not np.isnan(expected):
        assert np.float64(got).tobytes() == np.float64(expected).tobytes() == np.float64(in_place).tobytes()
    assert sorted(kept.tolist()) == sorted(data.tolist()) or np.isnan(data).any()  # only reordered


def test_median_leaves_its_input_alone_unless_told() -> None:
    data = np.array([3.0, 1.0, 2.0, 0.5])
    assert median(data) == 1.5 and data.tolist() == [3.0, 1.0, 2.0, 0.5]
    assert median(data, overwrite=True) == 1.5


def test_a_report_never_imports_numpy_ma(tmp_path: Path) -> None:
    """``np.median``/``np.unique`` import ``numpy.ma`` (~20 ms) on first use: a report with
    latencies, through ``compare_results`` (50 pairs: every Walsh average formed, the exact
    Wilcoxon's tie check) and through the CLI on files (400 pairs: the selection), takes
    neither."""
    lines = [
        json.dumps({"task_id": f"t{i}", "passed": i % 3 > 0, "latency_s": 0.1 + (i * 7 % 11) / 10})
        for i in range(400)
    ]
    base, cand = tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    base.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cand.write_text("\n".join(reversed(lines)) + "\n", encoding="utf-8")
    code = (
        "import json, sys\n"
        "from ablation import TaskResult, compare_results\n"
        "from ablation.cli.main import main\n"
        "rows = [TaskResult(task_id=f't{i}', arm='baseline', passed=i % 2 == 0, latency_s=1 + i / 7)"
        " for i in range(50)]\n"
        "other = [r.model_copy(update={'passed': not r.passed, 'latency_s': 2 + r.latency_s % 1})"
        " for r in rows]\n"
        "assert compare_results(rows, other).latency is not None\n"
        f"code = main(['compare', {str(base)!r}, {str(cand)!r}, '--key', 'task_id', '--field', 'passed'])\n"
        "assert code in (0, 2), code\n"
        "print(json.dumps('numpy.ma' in sys.modules))\n"
    )
    assert fresh_json(code) is False
