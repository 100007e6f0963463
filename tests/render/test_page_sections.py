"""The main fixture's Markdown and 80-column terminal renderings, one reviewed snapshot per section.

Each rendering is cut at its section headings (``helpers.page_sections``) and every section is
compared with its own inline snapshot, so a change to one section fails one test with one small
diff. Both renderings must have the sections of :data:`SECTIONS`, in that order.

After an intended change to a renderer, rewrite the snapshots in place and review the diff::

    python -m pytest tests/render/test_page_sections.py -n 0 --inline-snapshot=fix
    git diff tests/render/test_page_sections.py

(``-n 0``: inline-snapshot rewrites source only without xdist workers; under xdist, and wherever
``CI`` is set, ``snapshot(value)`` is the plain value, so every section is still compared and a
difference fails.) A new section: add its name to :data:`SECTIONS`, then run the command above.
"""

from __future__ import annotations

from functools import cache
from typing import Literal

import pytest
from helpers.page_sections import page_sections
from inline_snapshot import snapshot
from report_fixtures import SNAPSHOT_POLICY, hostile_report, make_report, repeated_report

from ablation.analysis.gates import evaluate_gates
from ablation.render import render
from ablation.report import AblationReport

pytestmark = pytest.mark.xdist_group("page-sections")  # one worker renders the fixture once

_TASKS = (
    "code/refactor-012",
    "code/sql-injection-guard",
    "code/parse-date-004",
    "math/word-problem-09",
    "code/fizzbuzz-variant-001",
    "code/json-schema-010",
    "code/regex-email-006",
    "code/sort-stable-015",
    "code/two-sum-008",
    "math/add-fractions-002",
    "math/percent-change-011",
    "math/unit-convert-007",
    "math/word-problem-03",
    "math/word-problem-14",
    "retrieval/wiki-capital-004",
    "retrieval/wiki-date-012",
    "retrieval/wiki-population-007",
)
#: The sections of both renderings in page order (the drill-down one per task, regressions first).
SECTIONS = (
    "headline",
    "Regressions",
    "Improvements",
    "Paired outcomes",
    "Arms",
    "Tests and intervals",
    "Paired metrics",
    "Non-inferiority",
    "Excluded from the paired analysis",
    "Categories",
    "Release gates",
    "Provenance",
    "Drill-down",
    *(f"Drill-down: {task}" for task in _TASKS),
)


@cache
def _page(kind: Literal["markdown", "terminal"]) -> dict[str, str]:
    """The main fixture, gated, rendered with its drill-down (80 columns in the terminal)."""
    report = evaluate_gates(make_report(), SNAPSHOT_POLICY)
    if kind == "terminal":
        return page_sections(render(report, "terminal", details=True, width=80), kind)
    return page_sections(render(report, "markdown", details=True), kind)


@pytest.mark.parametrize("kind", ["markdown", "terminal"])
def test_both_renderings_have_the_same_sections_in_order(
    kind: Literal["markdown", "terminal"],
) -> None:
    assert tuple(_page(kind)) == SECTIONS


@pytest.mark.parametrize(
    "report", [repeated_report(), hostile_report()], ids=["repeated", "hostile"]
)
def test_other_reports_cut_into_the_same_sections_in_both_renderings(
    report: AblationReport,
) -> None:
    # the cut itself checks that the sections add up to the page; hostile task ids stay one section
    markdown = page_sections(render(report, "markdown", details=True), "markdown")
    terminal = page_sections(render(report, "terminal", details=True, width=80), "terminal")
    assert list(markdown) == list(terminal)
    assert len([name for name in markdown if name.startswith("Drill-down: ")]) == len(
        report.details
    )


@pytest.mark.parametrize("name", SECTIONS)
def test_markdown_section(name: str) -> None:
    """One section of the Markdown rendering against :data:`MARKDOWN`; update with
    ``python -m pytest tests/render/test_page_sections.py -n 0 --inline-snapshot=fix``."""
    assert _page("markdown")[name] == MARKDOWN[name]


@pytest.mark.parametrize("name", SECTIONS)
def test_terminal_section(name: str) -> None:
    """One section of the 80-column terminal rendering against :data:`TERMINAL`; update with
    ``python -m pytest tests/render/test_page_sections.py -n 0 --inline-snapshot=fix``."""
    assert _page("terminal")[name] == TERMINAL[name]


#: The Markdown rendering's sections (reviewed).
MARKDOWN = snapshot(
    {
        "headline": """\
## ❌ ablation: Verdict: FAIL (2 of 5 gates not passed; failed: critical tasks must not regress, complete comparison)
Candidate is better: 4 regressions (2 critical), 13 improvements in 60 pairs; uplift +15.0 pp, 95% CI +1.7 pp to +28.3 pp, McNemar p = 0.049 at alpha 0.05.

""",
        "Regressions": """\
### Regressions (4, 2 critical)
| \\# | task | category | critical |
|---|---|---|---|
| 1 | code/refactor-012 | code | **CRITICAL** |
| 2 | code/sql-injection-guard | code | **CRITICAL** |
| 3 | code/parse-date-004 | code |  |
| 4 | math/word-problem-09 | math |  |

""",
        "Improvements": """\
### Improvements (13)
code/fizzbuzz-variant-001, code/json-schema-010, code/regex-email-006, code/sort-stable-015, code/two-sum-008, math/add-fractions-002, math/percent-change-011, math/unit-convert-007, math/word-problem-03, math/word-problem-14, retrieval/wiki-capital-004, retrieval/wiki-date-012, retrieval/wiki-population-007

""",
        "Paired outcomes": """\
### Paired outcomes
|  | candidate pass | candidate fail | total |
|---|---|---|---|
| baseline pass | 38 | 4 (regressions) | 42 |
| baseline fail | 13 (improvements) | 5 | 18 |
| total | 51 | 9 | 60 |

60 pairs of 62 tasks; 2 tasks excluded (listed below).

""",
        "Arms": """\
### Arms
|  | baseline | candidate |
|---|---|---|
| agent | agents/support.py:v1 | agents/support.py:v2 |
| pass rate | 70.0% (42/60) | 85.0% (51/60) |
| 95% CI (Wilson score interval) | \\[57.5%, 80.1%\\] | \\[73.9%, 91.9%\\] |
| errors / timeouts / retried | 1 / 0 / 2 | 2 / 1 / 3 |
| latency mean / median / p90 | 4.82 / 4.1 / 8.7 s | 4.11 / 3.6 / 7.2 s |
| cost total (mean) | 0.701 (0.0123) | 0.804 (0.0141) |
| quality: code\\_quality | 0.74 | 0.72 |
| quality: rubric | 0.71 | 0.78 |

""",
        "Tests and intervals": """\
### Tests and intervals
| quantity | estimate | interval / counts | method |
|---|---|---|---|
| McNemar p | 0.049 | b = 4, c = 13 | exact McNemar (binomial, two-sided) |
| McNemar mid-p | 0.0309 |  | mid-p McNemar (Lancaster 1961) |
| uplift | +15.0 pp | 95% CI \\[+1.7 pp, +28.3 pp\\] | paired bootstrap, percentile (10000 resamples) |
| uplift |  | 95% CI \\[+1.7 pp, +28.6 pp\\] | Tango score interval |
| relative uplift | +21.4% |  | uplift / baseline pass rate |
| SE paired / unpaired | 0.0659 / 0.075 | correlation 0.234 | pairing removes between-task variance |
| min. detectable effect | +9.3 pp |  | Connor (1987), observed discordance |

""",
        "Paired metrics": """\
### Paired metrics (pairs where both trials completed)
| metric | pairs | left out | baseline | candidate | difference | interval method | p | test |
|---|---|---|---|---|---|---|---|---|
| latency (s) | 57 | 3 | 4.82 s | 4.11 s | -710 ms 95% CI \\[-1.12 s, -290 ms\\] | paired bootstrap, percentile (10000 resamples) | 0.0031 | Wilcoxon signed-rank (exact) |
| latency ratio (geometric mean) | 57 | 3 |  |  | 0.873x 95% CI \\[0.812x, 0.939x\\] | paired t on log ratio | 0.0004 | median ratio 0.86x, faster on 72.0% of pairs |
| cost | 57 | 3 | 0.0123 | 0.0141 | +0.0018 95% CI \\[+0.0009, +0.0027\\] | paired bootstrap, percentile (10000 resamples) | 0.0008 | Wilcoxon signed-rank (normal approximation) |
| tokens | 57 | 3 | 1520 | 1710 | +190 95% CI \\[+120, +262\\] | paired bootstrap, percentile (10000 resamples) | 2e-05 | Wilcoxon signed-rank (normal approximation) |
| quality: code\\_quality | 25 | 35 | 0.74 | 0.72 | -0.02 95% CI \\[-0.06, +0.02\\] | paired bootstrap, percentile (10000 resamples) | 0.41 | Wilcoxon signed-rank (Pratt) |
| quality: rubric | 55 | 5 | 0.71 | 0.78 | +0.07 95% CI \\[+0.03, +0.11\\] | paired bootstrap, percentile (10000 resamples) | 0.0021 | Wilcoxon signed-rank (Pratt) |

Left out and scorer errors: latency (s): 3 left out: one arm did not complete (error or timeout); cost: 3 left out: one arm did not complete (error or timeout); tokens: 3 left out: one arm did not complete (error or timeout); quality: code\\_quality: 35 left out: scorer applies to code tasks only; quality: rubric: 5 left out: scorer error or incomplete trial; quality: rubric: scorer errors baseline 1, candidate 2.

""",
        "Non-inferiority": """\
### Non-inferiority (H0: uplift <= -margin)
margin -5.0 pp: NON-INFERIOR: 90% CI \\[+4.0 pp, +26.3 pp\\] (Tango score interval); Tango/Nam score test: z = 2.81, p = 0.00247, alpha 0.05

""",
        "Excluded from the paired analysis": """\
### Excluded from the paired analysis (2)
| reason | count | tasks |
|---|---|---|
| no candidate result (missing observation) | 1 | retrieval/wiki-019 |
| no baseline result (missing observation) | 1 | code/lint-fix-031 |

""",
        "Categories": """\
### Categories
| category | n | baseline | candidate | uplift | CI | b | c | p | adj. p |
|---|---|---|---|---|---|---|---|---|---|
| code | 25 | 72.0% | 80.0% | +8.0 pp | 95% CI \\[-15.5 pp, +30.9 pp\\] | 3 | 5 | 0.727 | 0.75 |
| math | 20 | 70.0% | 90.0% | +20.0 pp | 95% CI \\[-4.9 pp, +43.7 pp\\] | 1 | 5 | 0.219 | 0.375 |
| retrieval | 15 | 66.7% | 86.7% | +20.0 pp | 95% CI \\[-4.5 pp, +45.2 pp\\] | 0 | 3 | 0.25 | 0.375 |

CI: Tango score interval; p: McNemar, adjusted across categories.

""",
        "Release gates": """\
### Release gates
| gate | status | evidence | p | adj. p |
|---|---|---|---|---|
| critical tasks must not regress | FAIL | 2 critical task(s) regressed (baseline passed, candidate failed): code/refactor-012, code/sql-injection-guard. A critical regression fails whatever the p-value (McNemar p = 0.04904). | — | — |
| complete comparison | FAIL | 2 of 62 expected pair(s) missing (1 no baseline result (missing observation); 1 no candidate result (missing observation)), first: retrieval/wiki-019, code/lint-fix-031. | — | — |
| non-inferiority | PASS | non-inferior: Tango/Nam score test gives p = 0.002468 &lt;= alpha 0.05 (H0: uplift &lt;= -0.05); the 90% Tango score interval \\[+0.0397, +0.2628\\] lies above -0.05. | 0.00247 | — |
| no significant regression | PASS | one-sided exact McNemar (H1: candidate worse), regressions b = 4, improvements c = 13; p = 0.9936 (each fail-if-significant gate at alpha on its own, not adjusted) &gt;= alpha 0.05: not significant: passes. | 0.994 | — |
| no significant latency regression | PASS | geometric-mean latency ratio 0.873x (95% CI \\[0.812x, 0.939x\\], paired t on log ratio; 57 pairs, 3 left out: one arm did not complete (error or timeout)) vs limit 1.5x; one-sided, normal approximation on the log scale from the interval; p = 1 (each fail-if-significant gate at alpha on its own, not adjusted) &gt;= alpha 0.05: not significant: passes. | 1 | — |

**Verdict: FAIL (2 of 5 gates not passed; failed: critical tasks must not regress, complete comparison)**

""",
        "Provenance": """\
<sub>seed 20240611, 10000 resamples, confidence 95%, alpha 0.05, runs 1, on\\_error=fail, source campaign<br>
baseline: agents/support.py:v1; candidate: agents/support.py:v2<br>
suite fingerprint 9f2c4e61b7a0; campaign c-2f9a41; 2025-06-11T09:14:02+00:00 -&gt; 2025-06-11T09:31:47+00:00<br>
versions: ablation 0.1.0, numpy 2.4.6, python 3.11.7, scipy 1.17.1<br>
baseline reused from campaign c-1e77d0 (ran 2025-06-10T17:02:11+00:00)<br>
labels: model=gpt-x-2025-06, prompt=v2-concise</sub>

""",
        "Drill-down": """\
<details><summary>Drill-down: 17 regressed and improved tasks</summary>

""",
        "Drill-down: code/refactor-012": """\
<details><summary>CRITICAL REGRESSION: code/refactor-012 [code]</summary>

<b>baseline</b>: PASS (completed), latency 3.41 s, quality code\\_quality 0.82, rubric 0.9

<pre>def refactored(x):
    return sum(range(x))</pre>

<b>candidate</b>: FAIL (completed), latency 2.87 s, quality code\\_quality 0.55, rubric 0.4

<pre>def refactored(x):
    step_0 = x + 0
    step_1 = x + 1
    step_2 = x + 2
    step_3 = x + 3
    step_4 = x + 4
    step_5 = x + 5
    step_6 = x + 6
    step_7 = x + 7
    step_8 = x + 8
    step_9 = x + 9
    step_10 = x + 10
    step_11 = x + 11
    step_12 = x + 12
    step_13 = x + 13
    step_14 = x + 14
    step_15 = x + 15
    step_16 = x + 16
    step_17 = x + 17
    step_18 = x + 18
    step_19 = x + 19
    step_20 = x + 20
    step_21 = x + 21
    step_22 = x + 22
    step_23 = x + 23
    step_24 = x + 24
    step_25 = x + 25
    step_26 = x + 26
    step_27 = x + 27
    step_28 = x + 28
    step_29 = x + 29
    step_30 = x + 30
    step_31 = x + 31
    step_32 = x + 32
    step_33 = x + 33
    step_34 = x + 34
    step_35 = x + 35
    step_36 = x + 36
    step_37 = x + 37
    step_38 = x + 38
    step_39 = x + 39
    step_40 = x + 40
    step_41 = x + 41
    step_42 = x + 42
    step_43 = x + 43
    step_44 = x + 44
    step_45 = x + 45
    step_46 = x + 46
    step_47 = x + 47
    step_48 = x + 48
    step_49 = x + 49
    step_50 = x + 50
    step_51 = x + 51
    step_52 = x + 52
    step_53 = x + 53
    step_54 = x + 54
    step_55 = x + 55
    step_56 = x + 56
    step_57 = x + 57
    step_58 = x + 58
    step_59 = x + 59
    step_60 = x + 60
    step_61 = x + 61
    step_62 = x + 62
    step_63 = x + 63
    step_64 = x + 64
    step_65 = x + 65
    step_66 = x + 66
    step_67 = x + 67
    step_68 = x + 68
    step_69 = x + 69
    step_70 = x + 70
    step_71 = x + 71
    step_72 = x + 72
    step_73 = x + 73
    step_74 = x + 74
    step_75 = x + 75
    step_76 = x + 76
    step_77 = x + 77
    step_78 = x + 78
    step_79 = x + 79
    step_80 = x + 80
    step_81 = x + 81
    step_82 = x + 82
    step_83 = x + 83
    step_84 = x + 84
    step_85 = x + 85
    step_86 = x + 86
    step_87 = x + 87
    step_88 = x + 88
    step_89 = x + 89
    step_90 = x + 90
    step_91 = x + 91
    step_92 = x + 92
    step_93 = x + 93
    step_94 = x + 94
    st
… [truncated 559 of 2559 chars]</pre>

</details>

""",
        "Drill-down: code/sql-injection-guard": """\
<details><summary>CRITICAL REGRESSION: code/sql-injection-guard [code]</summary>

<b>baseline</b>: PASS (completed), latency 5.02 s, quality rubric 1

<pre>cursor.execute(&#x27;SELECT * FROM users WHERE id = ?&#x27;, (uid,))</pre>

<b>candidate</b>: FAIL (error), latency —, 3 attempts

<pre>error: TimeoutError: upstream model did not answer in 30 s</pre>

</details>

""",
        "Drill-down: code/parse-date-004": """\
<details><summary>REGRESSION: code/parse-date-004 [code]</summary>

<b>baseline</b>: PASS (completed), latency 1.90 s

<pre>2025-03-01</pre>

<b>candidate</b>: FAIL (completed), latency 1.40 s

<pre>03/01/2025</pre>

</details>

""",
        "Drill-down: math/word-problem-09": """\
<details><summary>REGRESSION: math/word-problem-09 [math]</summary>

<b>baseline</b>: PASS (completed), latency 2.20 s

<pre>{
  &quot;answer&quot;: 42,
  &quot;unit&quot;: &quot;apples&quot;
}</pre>

<b>candidate</b>: FAIL (completed), latency 1.70 s

<pre>{
  &quot;answer&quot;: 41,
  &quot;unit&quot;: &quot;apples&quot;
}</pre>

</details>

""",
        "Drill-down: code/fizzbuzz-variant-001": """\
<details><summary>IMPROVEMENT: code/fizzbuzz-variant-001 [code]</summary>

<b>baseline</b>: FAIL (completed), latency 4.10 s

<pre>I am not sure.</pre>

<b>candidate</b>: PASS (completed), latency 3.30 s, quality rubric 0.8

<pre>Answer for code/fizzbuzz-variant-001 | with a pipe</pre>

</details>

""",
        "Drill-down: code/json-schema-010": """\
<details><summary>IMPROVEMENT: code/json-schema-010 [code]</summary>

<b>baseline</b>: FAIL (completed), latency 4.10 s

<pre>I am not sure.</pre>

<b>candidate</b>: PASS (completed), latency 3.30 s, quality rubric 0.8

<pre>Answer for code/json-schema-010 | with a pipe</pre>

</details>

""",
        "Drill-down: code/regex-email-006": """\
<details><summary>IMPROVEMENT: code/regex-email-006 [code]</summary>

<b>baseline</b>: FAIL (completed), latency 4.10 s

<pre>I am not sure.</pre>

<b>candidate</b>: PASS (completed), latency 3.30 s, quality rubric 0.8

<pre>Answer for code/regex-email-006 | with a pipe</pre>

</details>

""",
        "Drill-down: code/sort-stable-015": """\
<details><summary>IMPROVEMENT: code/sort-stable-015 [code]</summary>

<b>baseline</b>: FAIL (completed), latency 4.10 s

<pre>I am not sure.</pre>

<b>candidate</b>: PASS (completed), latency 3.30 s, quality rubric 0.8

<pre>Answer for code/sort-stable-015 | with a pipe</pre>

</details>

""",
        "Drill-down: code/two-sum-008": """\
<details><summary>IMPROVEMENT: code/two-sum-008 [code]</summary>

<b>baseline</b>: FAIL (completed), latency 4.10 s

<pre>I am not sure.</pre>

<b>candidate</b>: PASS (completed), latency 3.30 s, quality rubric 0.8

<pre>Answer for code/two-sum-008 | with a pipe</pre>

</details>

""",
        "Drill-down: math/add-fractions-002": """\
<details><summary>IMPROVEMENT: math/add-fractions-002 [math]</summary>

<b>baseline</b>: FAIL (completed), latency 4.10 s

<pre>I am not sure.</pre>

<b>candidate</b>: PASS (completed), latency 3.30 s, quality rubric 0.8

<pre>Answer for math/add-fractions-002 | with a pipe</pre>

</details>

""",
        "Drill-down: math/percent-change-011": """\
<details><summary>IMPROVEMENT: math/percent-change-011 [math]</summary>

<b>baseline</b>: FAIL (completed), latency 4.10 s

<pre>I am not sure.</pre>

<b>candidate</b>: PASS (completed), latency 3.30 s, quality rubric 0.8

<pre>Answer for math/percent-change-011 | with a pipe</pre>

</details>

""",
        "Drill-down: math/unit-convert-007": """\
<details><summary>IMPROVEMENT: math/unit-convert-007 [math]</summary>

<b>baseline</b>: FAIL (completed), latency 4.10 s

<pre>I am not sure.</pre>

<b>candidate</b>: PASS (completed), latency 3.30 s, quality rubric 0.8

<pre>Answer for math/unit-convert-007 | with a pipe</pre>

</details>

""",
        "Drill-down: math/word-problem-03": """\
<details><summary>IMPROVEMENT: math/word-problem-03 [math]</summary>

<b>baseline</b>: FAIL (completed), latency 4.10 s

<pre>I am not sure.</pre>

<b>candidate</b>: PASS (completed), latency 3.30 s, quality rubric 0.8

<pre>Answer for math/word-problem-03 | with a pipe</pre>

</details>

""",
        "Drill-down: math/word-problem-14": """\
<details><summary>IMPROVEMENT: math/word-problem-14 [math]</summary>

<b>baseline</b>: FAIL (completed), latency 4.10 s

<pre>I am not sure.</pre>

<b>candidate</b>: PASS (completed), latency 3.30 s, quality rubric 0.8

<pre>Answer for math/word-problem-14 | with a pipe</pre>

</details>

""",
        "Drill-down: retrieval/wiki-capital-004": """\
<details><summary>IMPROVEMENT: retrieval/wiki-capital-004 [retrieval]</summary>

<b>baseline</b>: FAIL (completed), latency 4.10 s

<pre>I am not sure.</pre>

<b>candidate</b>: PASS (completed), latency 3.30 s, quality rubric 0.8

<pre>Answer for retrieval/wiki-capital-004 | with a pipe</pre>

</details>

""",
        "Drill-down: retrieval/wiki-date-012": """\
<details><summary>IMPROVEMENT: retrieval/wiki-date-012 [retrieval]</summary>

<b>baseline</b>: FAIL (completed), latency 4.10 s

<pre>I am not sure.</pre>

<b>candidate</b>: PASS (completed), latency 3.30 s, quality rubric 0.8

<pre>Answer for retrieval/wiki-date-012 | with a pipe</pre>

</details>

""",
        "Drill-down: retrieval/wiki-population-007": """\
<details><summary>IMPROVEMENT: retrieval/wiki-population-007 [retrieval]</summary>

<b>baseline</b>: FAIL (completed), latency 4.10 s

<pre>I am not sure.</pre>

<b>candidate</b>: PASS (completed), latency 3.30 s, quality rubric 0.8

<pre>Answer for retrieval/wiki-population-007 | with a pipe</pre>

</details>

</details>
""",
    }
)

#: The terminal rendering's sections at 80 columns (reviewed).
TERMINAL = snapshot(
    {
        "headline": """\
╭─ ablation: agents/support.py:v2 vs agents/support.py:v1 ─────────────────────╮
│ Verdict: FAIL (2 of 5 gates not passed; failed: critical tasks must not      │
│ regress, complete comparison)                                                │
│ Candidate is better: 4 regressions (2 critical), 13 improvements in 60       │
│ pairs; uplift +15.0 pp, 95% CI +1.7 pp to +28.3 pp, McNemar p = 0.049 at     │
│ alpha 0.05.                                                                  │
╰──────────────────────────────────────────────────────────────────────────────╯
""",
        "Regressions": """\
Regressions (4, 2 critical) ────────────────────────────────────────────────────
╭───┬──────────────────────────┬──────────┬──────────╮
│ # │ task                     │ category │          │
├───┼──────────────────────────┼──────────┼──────────┤
│ 1 │ code/refactor-012        │ code     │ CRITICAL │
│ 2 │ code/sql-injection-guard │ code     │ CRITICAL │
│ 3 │ code/parse-date-004      │ code     │          │
│ 4 │ math/word-problem-09     │ math     │          │
╰───┴──────────────────────────┴──────────┴──────────╯
""",
        "Improvements": """\
Improvements (13) ──────────────────────────────────────────────────────────────
code/fizzbuzz-variant-001, code/json-schema-010, code/regex-email-006,
code/sort-stable-015, code/two-sum-008, math/add-fractions-002,
math/percent-change-011, math/unit-convert-007, math/word-problem-03,
math/word-problem-14, retrieval/wiki-capital-004, retrieval/wiki-date-012,
retrieval/wiki-population-007
""",
        "Paired outcomes": """\
Paired outcomes ────────────────────────────────────────────────────────────────
╭───────────────┬───────────────────┬─────────────────┬───────╮
│               │ candidate pass    │ candidate fail  │ total │
├───────────────┼───────────────────┼─────────────────┼───────┤
│ baseline pass │ 38                │ 4 (regressions) │ 42    │
│ baseline fail │ 13 (improvements) │ 5               │ 18    │
│ total         │ 51                │ 9               │ 60    │
╰───────────────┴───────────────────┴─────────────────┴───────╯
60 pairs of 62 tasks; 2 tasks excluded (listed below).
""",
        "Arms": """\
Arms ───────────────────────────────────────────────────────────────────────────
╭────────────────────────────────┬──────────────────────┬──────────────────────╮
│                                │ baseline             │ candidate            │
├────────────────────────────────┼──────────────────────┼──────────────────────┤
│ agent                          │ agents/support.py:v1 │ agents/support.py:v2 │
│ pass rate                      │ 70.0% (42/60)        │ 85.0% (51/60)        │
│ 95% CI (Wilson score interval) │ [57.5%, 80.1%]       │ [73.9%, 91.9%]       │
│ errors / timeouts / retried    │ 1 / 0 / 2            │ 2 / 1 / 3            │
│ latency mean / median / p90    │ 4.82 / 4.1 / 8.7 s   │ 4.11 / 3.6 / 7.2 s   │
│ cost total (mean)              │ 0.701 (0.0123)       │ 0.804 (0.0141)       │
│ quality: code_quality          │ 0.74                 │ 0.72                 │
│ quality: rubric                │ 0.71                 │ 0.78                 │
╰────────────────────────────────┴──────────────────────┴──────────────────────╯
""",
        "Tests and intervals": """\
Tests and intervals ────────────────────────────────────────────────────────────
╭────────────────────┬────────────────┬────────────────────┬───────────────────╮
│ quantity           │ estimate       │ interval / counts  │ method            │
├────────────────────┼────────────────┼────────────────────┼───────────────────┤
│ McNemar p          │ 0.049          │ b = 4, c = 13      │ exact McNemar     │
│                    │                │                    │ (binomial,        │
│                    │                │                    │ two-sided)        │
│ McNemar mid-p      │ 0.0309         │                    │ mid-p McNemar     │
│                    │                │                    │ (Lancaster 1961)  │
│ uplift             │ +15.0 pp       │ 95% CI [+1.7 pp,   │ paired bootstrap, │
│                    │                │ +28.3 pp]          │ percentile (10000 │
│                    │                │                    │ resamples)        │
│ uplift             │                │ 95% CI [+1.7 pp,   │ Tango score       │
│                    │                │ +28.6 pp]          │ interval          │
│ relative uplift    │ +21.4%         │                    │ uplift / baseline │
│                    │                │                    │ pass rate         │
│ SE paired /        │ 0.0659 / 0.075 │ correlation 0.234  │ pairing removes   │
│ unpaired           │                │                    │ between-task      │
│                    │                │                    │ variance          │
│ min. detectable    │ +9.3 pp        │                    │ Connor (1987),    │
│ effect             │                │                    │ observed          │
│                    │                │                    │ discordance       │
╰────────────────────┴────────────────┴────────────────────┴───────────────────╯
""",
        "Paired metrics": """\
Paired metrics (only pairs where both trials completed) ────────────────────────
╭────────────────┬───────┬──────────┬───────────┬─────────────────┬────────────╮
│ metric         │ pairs │ baseline │ candidate │ difference (CI) │ Wilcoxon p │
├────────────────┼───────┼──────────┼───────────┼─────────────────┼────────────┤
│ latency (s)    │ 57    │ 4.82 s   │ 4.11 s    │ -710 ms         │ 0.0031     │
│                │       │          │           │ [-1.12 s, -290  │            │
│                │       │          │           │ ms]             │            │
│ cost           │ 57    │ 0.0123   │ 0.0141    │ +0.0018         │ 0.0008     │
│                │       │          │           │ [+0.0009,       │            │
│                │       │          │           │ +0.0027]        │            │
│ tokens         │ 57    │ 1520     │ 1710      │ +190            │ 2e-05      │
│                │       │          │           │ [+120, +262]    │            │
│ quality:       │ 25    │ 0.74     │ 0.72      │ -0.02           │ 0.41       │
│ code_quality   │       │          │           │ [-0.06, +0.02]  │            │
│ quality:       │ 55    │ 0.71     │ 0.78      │ +0.07           │ 0.0021     │
│ rubric         │       │          │           │ [+0.03, +0.11]  │            │
╰────────────────┴───────┴──────────┴───────────┴─────────────────┴────────────╯
- latency ratio (geometric mean): 0.873x 95% CI [0.812x, 0.939x], p = 0.0004
(paired t on log ratio); median ratio 0.86x; faster on 72.0% of pairs
- CI: paired bootstrap, percentile (10000 resamples) (latency (s), cost, tokens,
quality: code_quality, quality: rubric)
- p: Wilcoxon signed-rank (exact) (latency (s))
- p: Wilcoxon signed-rank (normal approximation) (cost, tokens)
- p: Wilcoxon signed-rank (Pratt) (quality: code_quality, quality: rubric)
- latency (s): 3 left out: one arm did not complete (error or timeout)
- cost: 3 left out: one arm did not complete (error or timeout)
- tokens: 3 left out: one arm did not complete (error or timeout)
- quality: code_quality: 35 left out: scorer applies to code tasks only
- quality: rubric: 5 left out: scorer error or incomplete trial
- quality: rubric: scorer errors baseline 1, candidate 2
""",
        "Non-inferiority": """\
Non-inferiority (H0: uplift <= -margin) ────────────────────────────────────────
margin -5.0 pp: NON-INFERIOR: 90% CI [+4.0 pp, +26.3 pp] (Tango score interval);
Tango/Nam score test: z = 2.81, p = 0.00247, alpha 0.05
""",
        "Excluded from the paired analysis": """\
Excluded from the paired analysis (2) ──────────────────────────────────────────
╭───────────────────────────────────────────┬───────┬────────────────────╮
│ reason                                    │ count │ tasks              │
├───────────────────────────────────────────┼───────┼────────────────────┤
│ no candidate result (missing observation) │ 1     │ retrieval/wiki-019 │
│ no baseline result (missing observation)  │ 1     │ code/lint-fix-031  │
╰───────────────────────────────────────────┴───────┴────────────────────╯
""",
        "Categories": """\
Categories ─────────────────────────────────────────────────────────────────────
╭───────────┬────┬──────┬──────┬───────────────────────┬───────┬───────────────╮
│ category  │ n  │ base │ cand │ uplift (CI)           │ b / c │ p (adj.)      │
├───────────┼────┼──────┼──────┼───────────────────────┼───────┼───────────────┤
│ code      │ 25 │ 72%  │ 80%  │ +8.0 pp [-15.5 pp,    │ 3 / 5 │ 0.727 (0.75)  │
│           │    │      │      │ +30.9 pp]             │       │               │
│ math      │ 20 │ 70%  │ 90%  │ +20.0 pp [-4.9 pp,    │ 1 / 5 │ 0.219 (0.375) │
│           │    │      │      │ +43.7 pp]             │       │               │
│ retrieval │ 15 │ 67%  │ 87%  │ +20.0 pp [-4.5 pp,    │ 0 / 3 │ 0.25 (0.375)  │
│           │    │      │      │ +45.2 pp]             │       │               │
╰───────────┴────┴──────┴──────┴───────────────────────┴───────┴───────────────╯
uplift CI: Tango score interval; p: McNemar, adjusted across categories
""",
        "Release gates": """\
Release gates ──────────────────────────────────────────────────────────────────
╭──────────────────────────────────┬────────┬──────────────────────────────────╮
│ gate                             │ status │ evidence                         │
├──────────────────────────────────┼────────┼──────────────────────────────────┤
│ critical tasks must not regress  │ FAIL   │ 2 critical task(s) regressed     │
│                                  │        │ (baseline passed, candidate      │
│                                  │        │ failed): code/refactor-012,      │
│                                  │        │ code/sql-injection-guard. A      │
│                                  │        │ critical regression fails        │
│                                  │        │ whatever the p-value (McNemar p  │
│                                  │        │ = 0.04904).                      │
│ complete comparison              │ FAIL   │ 2 of 62 expected pair(s) missing │
│                                  │        │ (1 no baseline result (missing   │
│                                  │        │ observation); 1 no candidate     │
│                                  │        │ result (missing observation)),   │
│                                  │        │ first: retrieval/wiki-019,       │
│                                  │        │ code/lint-fix-031.               │
│ non-inferiority                  │ PASS   │ non-inferior: Tango/Nam score    │
│                                  │        │ test gives p = 0.002468 <= alpha │
│                                  │        │ 0.05 (H0: uplift <= -0.05); the  │
│                                  │        │ 90% Tango score interval         │
│                                  │        │ [+0.0397, +0.2628] lies above    │
│                                  │        │ -0.05.                           │
│ no significant regression        │ PASS   │ one-sided exact McNemar (H1:     │
│                                  │        │ candidate worse), regressions b  │
│                                  │        │ = 4, improvements c = 13; p =    │
│                                  │        │ 0.9936 (each fail-if-significant │
│                                  │        │ gate at alpha on its own, not    │
│                                  │        │ adjusted) >= alpha 0.05: not     │
│                                  │        │ significant: passes.             │
│ no significant latency           │ PASS   │ geometric-mean latency ratio     │
│ regression                       │        │ 0.873x (95% CI [0.812x, 0.939x], │
│                                  │        │ paired t on log ratio; 57 pairs, │
│                                  │        │ 3 left out: one arm did not      │
│                                  │        │ complete (error or timeout)) vs  │
│                                  │        │ limit 1.5x; one-sided, normal    │
│                                  │        │ approximation on the log scale   │
│                                  │        │ from the interval; p = 1 (each   │
│                                  │        │ fail-if-significant gate at      │
│                                  │        │ alpha on its own, not adjusted)  │
│                                  │        │ >= alpha 0.05: not significant:  │
│                                  │        │ passes.                          │
╰──────────────────────────────────┴────────┴──────────────────────────────────╯
Verdict: FAIL (2 of 5 gates not passed; failed: critical tasks must not regress,
complete comparison)
""",
        "Provenance": """\
Provenance ─────────────────────────────────────────────────────────────────────
seed 20240611, 10000 resamples, confidence 95%, alpha 0.05, runs 1,
on_error=fail, source campaign
baseline: agents/support.py:v1; candidate: agents/support.py:v2
suite fingerprint 9f2c4e61b7a0; campaign c-2f9a41; 2025-06-11T09:14:02+00:00 ->
2025-06-11T09:31:47+00:00
versions: ablation 0.1.0, numpy 2.4.6, python 3.11.7, scipy 1.17.1
baseline reused from campaign c-1e77d0 (ran 2025-06-10T17:02:11+00:00)
labels: model=gpt-x-2025-06, prompt=v2-concise
""",
        "Drill-down": "Drill-down (17 tasks) ──────────────────────────────────────────────────────────\n",
        "Drill-down: code/refactor-012": """\
CRITICAL REGRESSION: code/refactor-012 [code]
╭───────────────────────────────────────┬──────────────────────────────────────╮
│ baseline                              │ candidate                            │
├───────────────────────────────────────┼──────────────────────────────────────┤
│ PASS (completed), latency 3.41 s,     │ FAIL (completed), latency 2.87 s,    │
│ quality code_quality 0.82, rubric 0.9 │ quality code_quality 0.55, rubric    │
│ output:                               │ 0.4                                  │
│ def refactored(x):                    │ output:                              │
│     return sum(range(x))              │ def refactored(x):                   │
│                                       │     step_0 = x + 0                   │
│                                       │     step_1 = x + 1                   │
│                                       │     step_2 = x + 2                   │
│                                       │     step_3 = x + 3                   │
│                                       │     step_4 = x + 4                   │
│                                       │     step_5 = x + 5                   │
│                                       │     step_6 = x + 6                   │
│                                       │     step_7 = x + 7                   │
│                                       │     step_8 = x + 8                   │
│                                       │     step_9 = x + 9                   │
│                                       │     step_10 = x + 10                 │
│                                       │     step_11 = x + 11                 │
│                                       │     step_12 = x + 12                 │
│                                       │     step_13 = x + 13                 │
│                                       │     step_14 = x + 14                 │
│                                       │     step_15 = x + 15                 │
│                                       │     step_16 = x + 16                 │
│                                       │     step_17 = x + 17                 │
│                                       │     step_18 = x + 18                 │
│                                       │     step_19 = x + 19                 │
│                                       │     step_20 = x + 20                 │
│                                       │     step_21 = x + 21                 │
│                                       │     step_22 = x + 22                 │
│                                       │     step_23 = x + 23                 │
│                                       │     step_24 = x + 24                 │
│                                       │     step_25 = x + 25                 │
│                                       │     step_26 = x + 26                 │
│                                       │     step_27 = x + 27                 │
│                                       │     step_28 =                        │
│                                       │ … [truncated 1959 of 2559 chars]     │
╰───────────────────────────────────────┴──────────────────────────────────────╯
""",
        "Drill-down: code/sql-injection-guard": """\
CRITICAL REGRESSION: code/sql-injection-guard [code]
╭───────────────────────────────────────┬──────────────────────────────────────╮
│ baseline                              │ candidate                            │
├───────────────────────────────────────┼──────────────────────────────────────┤
│ PASS (completed), latency 5.02 s,     │ FAIL (error), latency —, 3 attempts  │
│ quality rubric 1                      │ error: TimeoutError: upstream model  │
│ output:                               │ did not answer in 30 s               │
│ cursor.execute('SELECT * FROM users   │                                      │
│ WHERE id = ?', (uid,))                │                                      │
╰───────────────────────────────────────┴──────────────────────────────────────╯
""",
        "Drill-down: code/parse-date-004": """\
REGRESSION: code/parse-date-004 [code]
╭───────────────────────────────────────┬──────────────────────────────────────╮
│ baseline                              │ candidate                            │
├───────────────────────────────────────┼──────────────────────────────────────┤
│ PASS (completed), latency 1.90 s      │ FAIL (completed), latency 1.40 s     │
│ output:                               │ output:                              │
│ 2025-03-01                            │ 03/01/2025                           │
╰───────────────────────────────────────┴──────────────────────────────────────╯
""",
        "Drill-down: math/word-problem-09": """\
REGRESSION: math/word-problem-09 [math]
╭───────────────────────────────────────┬──────────────────────────────────────╮
│ baseline                              │ candidate                            │
├───────────────────────────────────────┼──────────────────────────────────────┤
│ PASS (completed), latency 2.20 s      │ FAIL (completed), latency 1.70 s     │
│ output:                               │ output:                              │
│ {                                     │ {                                    │
│   "answer": 42,                       │   "answer": 41,                      │
│   "unit": "apples"                    │   "unit": "apples"                   │
│ }                                     │ }                                    │
╰───────────────────────────────────────┴──────────────────────────────────────╯
""",
        "Drill-down: code/fizzbuzz-variant-001": """\
IMPROVEMENT: code/fizzbuzz-variant-001 [code]
╭───────────────────────────────────────┬──────────────────────────────────────╮
│ baseline                              │ candidate                            │
├───────────────────────────────────────┼──────────────────────────────────────┤
│ FAIL (completed), latency 4.10 s      │ PASS (completed), latency 3.30 s,    │
│ output:                               │ quality rubric 0.8                   │
│ I am not sure.                        │ output:                              │
│                                       │ Answer for code/fizzbuzz-variant-001 │
│                                       │ | with a pipe                        │
╰───────────────────────────────────────┴──────────────────────────────────────╯
""",
        "Drill-down: code/json-schema-010": """\
IMPROVEMENT: code/json-schema-010 [code]
╭───────────────────────────────────────┬──────────────────────────────────────╮
│ baseline                              │ candidate                            │
├───────────────────────────────────────┼──────────────────────────────────────┤
│ FAIL (completed), latency 4.10 s      │ PASS (completed), latency 3.30 s,    │
│ output:                               │ quality rubric 0.8                   │
│ I am not sure.                        │ output:                              │
│                                       │ Answer for code/json-schema-010 |    │
│                                       │ with a pipe                          │
╰───────────────────────────────────────┴──────────────────────────────────────╯
""",
        "Drill-down: code/regex-email-006": """\
IMPROVEMENT: code/regex-email-006 [code]
╭───────────────────────────────────────┬──────────────────────────────────────╮
│ baseline                              │ candidate                            │
├───────────────────────────────────────┼──────────────────────────────────────┤
│ FAIL (completed), latency 4.10 s      │ PASS (completed), latency 3.30 s,    │
│ output:                               │ quality rubric 0.8                   │
│ I am not sure.                        │ output:                              │
│                                       │ Answer for code/regex-email-006 |    │
│                                       │ with a pipe                          │
╰───────────────────────────────────────┴──────────────────────────────────────╯
""",
        "Drill-down: code/sort-stable-015": """\
IMPROVEMENT: code/sort-stable-015 [code]
╭───────────────────────────────────────┬──────────────────────────────────────╮
│ baseline                              │ candidate                            │
├───────────────────────────────────────┼──────────────────────────────────────┤
│ FAIL (completed), latency 4.10 s      │ PASS (completed), latency 3.30 s,    │
│ output:                               │ quality rubric 0.8                   │
│ I am not sure.                        │ output:                              │
│                                       │ Answer for code/sort-stable-015 |    │
│                                       │ with a pipe                          │
╰───────────────────────────────────────┴──────────────────────────────────────╯
""",
        "Drill-down: code/two-sum-008": """\
IMPROVEMENT: code/two-sum-008 [code]
╭───────────────────────────────────────┬──────────────────────────────────────╮
│ baseline                              │ candidate                            │
├───────────────────────────────────────┼──────────────────────────────────────┤
│ FAIL (completed), latency 4.10 s      │ PASS (completed), latency 3.30 s,    │
│ output:                               │ quality rubric 0.8                   │
│ I am not sure.                        │ output:                              │
│                                       │ Answer for code/two-sum-008 | with a │
│                                       │ pipe                                 │
╰───────────────────────────────────────┴──────────────────────────────────────╯
""",
        "Drill-down: math/add-fractions-002": """\
IMPROVEMENT: math/add-fractions-002 [math]
╭───────────────────────────────────────┬──────────────────────────────────────╮
│ baseline                              │ candidate                            │
├───────────────────────────────────────┼──────────────────────────────────────┤
│ FAIL (completed), latency 4.10 s      │ PASS (completed), latency 3.30 s,    │
│ output:                               │ quality rubric 0.8                   │
│ I am not sure.                        │ output:                              │
│                                       │ Answer for math/add-fractions-002 |  │
│                                       │ with a pipe                          │
╰───────────────────────────────────────┴──────────────────────────────────────╯
""",
        "Drill-down: math/percent-change-011": """\
IMPROVEMENT: math/percent-change-011 [math]
╭───────────────────────────────────────┬──────────────────────────────────────╮
│ baseline                              │ candidate                            │
├───────────────────────────────────────┼──────────────────────────────────────┤
│ FAIL (completed), latency 4.10 s      │ PASS (completed), latency 3.30 s,    │
│ output:                               │ quality rubric 0.8                   │
│ I am not sure.                        │ output:                              │
│                                       │ Answer for math/percent-change-011 | │
│                                       │ with a pipe                          │
╰───────────────────────────────────────┴──────────────────────────────────────╯
""",
        "Drill-down: math/unit-convert-007": """\
IMPROVEMENT: math/unit-convert-007 [math]
╭───────────────────────────────────────┬──────────────────────────────────────╮
│ baseline                              │ candidate                            │
├───────────────────────────────────────┼──────────────────────────────────────┤
│ FAIL (completed), latency 4.10 s      │ PASS (completed), latency 3.30 s,    │
│ output:                               │ quality rubric 0.8                   │
│ I am not sure.                        │ output:                              │
│                                       │ Answer for math/unit-convert-007 |   │
│                                       │ with a pipe                          │
╰───────────────────────────────────────┴──────────────────────────────────────╯
""",
        "Drill-down: math/word-problem-03": """\
IMPROVEMENT: math/word-problem-03 [math]
╭───────────────────────────────────────┬──────────────────────────────────────╮
│ baseline                              │ candidate                            │
├───────────────────────────────────────┼──────────────────────────────────────┤
│ FAIL (completed), latency 4.10 s      │ PASS (completed), latency 3.30 s,    │
│ output:                               │ quality rubric 0.8                   │
│ I am not sure.                        │ output:                              │
│                                       │ Answer for math/word-problem-03 |    │
│                                       │ with a pipe                          │
╰───────────────────────────────────────┴──────────────────────────────────────╯
""",
        "Drill-down: math/word-problem-14": """\
IMPROVEMENT: math/word-problem-14 [math]
╭───────────────────────────────────────┬──────────────────────────────────────╮
│ baseline                              │ candidate                            │
├───────────────────────────────────────┼──────────────────────────────────────┤
│ FAIL (completed), latency 4.10 s      │ PASS (completed), latency 3.30 s,    │
│ output:                               │ quality rubric 0.8                   │
│ I am not sure.                        │ output:                              │
│                                       │ Answer for math/word-problem-14 |    │
│                                       │ with a pipe                          │
╰───────────────────────────────────────┴──────────────────────────────────────╯
""",
        "Drill-down: retrieval/wiki-capital-004": """\
IMPROVEMENT: retrieval/wiki-capital-004 [retrieval]
╭───────────────────────────────────────┬──────────────────────────────────────╮
│ baseline                              │ candidate                            │
├───────────────────────────────────────┼──────────────────────────────────────┤
│ FAIL (completed), latency 4.10 s      │ PASS (completed), latency 3.30 s,    │
│ output:                               │ quality rubric 0.8                   │
│ I am not sure.                        │ output:                              │
│                                       │ Answer for                           │
│                                       │ retrieval/wiki-capital-004 | with a  │
│                                       │ pipe                                 │
╰───────────────────────────────────────┴──────────────────────────────────────╯
""",
        "Drill-down: retrieval/wiki-date-012": """\
IMPROVEMENT: retrieval/wiki-date-012 [retrieval]
╭───────────────────────────────────────┬──────────────────────────────────────╮
│ baseline                              │ candidate                            │
├───────────────────────────────────────┼──────────────────────────────────────┤
│ FAIL (completed), latency 4.10 s      │ PASS (completed), latency 3.30 s,    │
│ output:                               │ quality rubric 0.8                   │
│ I am not sure.                        │ output:                              │
│                                       │ Answer for retrieval/wiki-date-012 | │
│                                       │ with a pipe                          │
╰───────────────────────────────────────┴──────────────────────────────────────╯
""",
        "Drill-down: retrieval/wiki-population-007": """\
IMPROVEMENT: retrieval/wiki-population-007 [retrieval]
╭───────────────────────────────────────┬──────────────────────────────────────╮
│ baseline                              │ candidate                            │
├───────────────────────────────────────┼──────────────────────────────────────┤
│ FAIL (completed), latency 4.10 s      │ PASS (completed), latency 3.30 s,    │
│ output:                               │ quality rubric 0.8                   │
│ I am not sure.                        │ output:                              │
│                                       │ Answer for                           │
│                                       │ retrieval/wiki-population-007 | with │
│                                       │ a pipe                               │
╰───────────────────────────────────────┴──────────────────────────────────────╯
""",
    }
)
