"""The JSON report round-trips when a metric's non-inferiority statistic is infinite.

Per-task differences with zero variance (equal token counts in both arms, or a constant shift)
give the one-sided paired t an infinite statistic. The JSON writes it as ``"Infinity"`` or
``"-Infinity"``, which ``model_validate_json`` reads back, and the document still validates
against the report's own JSON schema.
"""

from __future__ import annotations

import functools
import json
import math

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from ablation import CampaignConfig, GatePolicy, TaskResult, compare_results
from ablation.report import AblationReport

_MARGINS = {"tokens": 5.0, "cost": 0.5, "latency_s": 0.25, "score": 0.1}


def _results(
    n: int, tokens: list[int], shift: int, noise: list[int], passed: list[tuple[bool, bool]]
) -> tuple[list[TaskResult], list[TaskResult]]:
    """Baseline and candidate trials of ``n`` tasks: the candidate's tokens are the baseline's
    plus ``shift`` plus ``noise`` (all-zero noise: differences of zero variance)."""
    base, cand = [], []
    for i in range(n):
        t = f"t{i:02d}"
        b_tok, c_tok = 20 + tokens[i], 20 + tokens[i] + shift + noise[i]
        base.append(TaskResult(
            task_id=t, arm="baseline", passed=passed[i][0], tokens=b_tok, cost=0.01 * b_tok,
            latency_s=1.0, metrics={"score": 0.5},
        ))  # fmt: skip
        cand.append(TaskResult(
            task_id=t, arm="candidate", passed=passed[i][1], tokens=c_tok, cost=0.01 * c_tok,
            latency_s=1.0 + 0.1 * noise[i], metrics={"score": 0.5 + 0.01 * shift},
        ))  # fmt: skip
    return base, cand


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    """The report's JSON schema, checked once (checking it is the slow part of validating)."""
    schema = AblationReport.model_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _round_trips(report: AblationReport) -> None:
    text = report.model_dump_json()
    back = AblationReport.model_validate_json(text)
    assert back.model_dump_json() == text
    assert back == report
    _validator().validate(json.loads(text))


@st.composite
def _campaigns(draw: st.DrawFn) -> tuple[list[TaskResult], list[TaskResult]]:
    n = draw(st.integers(2, 12))
    tokens = draw(st.lists(st.integers(0, 500), min_size=n, max_size=n))
    shift = draw(st.integers(-20, 20))
    constant = draw(st.booleans())
    noise = [0] * n if constant else draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    passed = draw(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=n, max_size=n))
    return _results(n, tokens, shift, noise, passed)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(_campaigns())
def test_a_report_with_metric_margins_round_trips_through_json(
    arms: tuple[list[TaskResult], list[TaskResult]],
) -> None:
    config = CampaignConfig(gates=GatePolicy(metric_margins=_MARGINS), n_resamples=200)
    _round_trips(compare_results(*arms, config=config))


def test_equal_token_counts_write_an_infinite_statistic_that_reads_back() -> None:
    n = 100  # a margin needs MEAN_DIFFERENCE_MIN_N pairs
    base, cand = _results(n, [30] * n, 0, [0] * n, [(True, True)] * n)
    config = CampaignConfig(gates=GatePolicy(metric_margins={"tokens": 5}), n_resamples=200)
    report = compare_results(base, cand, config=config)
    ni = report.metric_noninferiority["tokens"]
    assert ni.statistic == -math.inf and ni.decision == "non-inferior"  # d = 0 < margin 5, exactly
    doc = json.loads(report.model_dump_json())
    assert doc["metric_noninferiority"]["tokens"]["statistic"] == "-Infinity"
    _round_trips(report)


def test_a_constant_shift_past_the_margin_writes_plus_infinity() -> None:
    n = 100
    base, cand = _results(n, list(range(n)), -7, [0] * n, [(True, True)] * n)
    config = CampaignConfig(gates=GatePolicy(metric_margins={"tokens": 5}), n_resamples=200)
    report = compare_results(base, cand, config=config)
    # lower is better: t of (d - margin) = (-7 - 5) / 0 is -inf; of a shift of +7: +inf
    assert report.metric_noninferiority["tokens"].statistic == -math.inf
    base, cand = _results(n, list(range(n)), 7, [0] * n, [(True, True)] * n)
    worse = compare_results(base, cand, config=config)
    ni = worse.metric_noninferiority["tokens"]
    assert ni.statistic == math.inf and ni.decision == "regression"
    assert json.loads(worse.model_dump_json())["metric_noninferiority"]["tokens"]["statistic"] == (
        "Infinity"
    )
    _round_trips(worse)


def test_every_report_model_writes_non_finite_floats_as_strings() -> None:
    """Each nested model serialises with its own config: one that wrote ``null`` would break the
    round trip wherever it sits (an infinite e-value, an interval bound)."""
    import inspect

    from pydantic import BaseModel

    from ablation import report as report_module
    from ablation import report_items

    models = {
        obj
        for module in (report_module, report_items)
        for obj in vars(module).values()
        if inspect.isclass(obj) and issubclass(obj, BaseModel) and obj.__module__ == module.__name__
    }
    assert len(models) > 10
    assert {m.__name__ for m in models if m.model_config.get("ser_json_inf_nan") != "strings"} == set()
