"""Docstrings that enumerate something the code registers say what the code holds.

Each check reads the registry (interval methods, report formats) or runs the function the
docstring describes, so a method or format added, removed or renamed without its docstring fails
here. The examples of :func:`ablation.render._format.fmt_p` are compared with its output.
"""

from __future__ import annotations

import re

import pytest

from ablation import render
from ablation.analysis.uplift_intervals import INTERVAL_METHODS
from ablation.render._format import fmt_p
from ablation.render.formats import REPORT_FORMATS
from ablation.report import Uplift

BUILT_IN_FORMATS = ("terminal", "markdown", "json", "html", "junit")


def quoted(doc: str | None) -> set[str]:
    """The ````literal```` and ``"string"`` names a docstring quotes."""
    return set(re.findall(r"``\"?([\w-]+)\"?``", doc or "")) | set(re.findall(r'"([\w-]+)"', doc or ""))


def test_uplift_docstring_names_every_interval_method_and_the_headline_rule() -> None:
    names = quoted(Uplift.__doc__)
    assert set(INTERVAL_METHODS) <= names, sorted(set(INTERVAL_METHODS) - names)
    # the headline chooser's three choices, as choose_headline applies them
    assert {"tango_sparse", "betting", "bootstrap"} <= names


def test_render_docstrings_name_the_built_in_formats() -> None:
    assert set(BUILT_IN_FORMATS) <= set(REPORT_FORMATS)
    assert set(BUILT_IN_FORMATS) <= quoted(render.render.__doc__)
    with_summary = {n for n in BUILT_IN_FORMATS if REPORT_FORMATS[n].summary is not None}
    without = set(BUILT_IN_FORMATS) - with_summary
    doc = render.render_summary.__doc__ or ""
    listed, rest = doc.split("has a summary")[1].split(")")[0].split(";")
    assert quoted(listed) == with_summary
    assert quoted(rest) == without


@pytest.mark.parametrize(
    ("p", "text"),
    [(0.5, "0.5"), (0.0123, "0.0123"), (0.001, "0.001"), (0.00045, "0.00045"), (4.5e-05, "4.5e-05"),
     (0.0, "< 1e-300"), (float("nan"), "nan")],
)  # fmt: skip
def test_fmt_p_does_what_its_docstring_says(p: float, text: str) -> None:
    assert fmt_p(p) == text
    doc = fmt_p.__doc__ or ""
    if text in {"0.00045", "4.5e-05", "< 1e-300", "nan"}:
        assert f'"{text}"' in doc, f"{text!r} is an example the docstring gives"
