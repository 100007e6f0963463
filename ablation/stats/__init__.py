"""Pure statistics for paired baseline-vs-candidate comparisons (numpy/scipy only).

This package is the bottom layer of ``ablation``: it imports no other project module. Every result
is a frozen dataclass with a human-readable ``method``; intervals are :class:`ConfidenceInterval`
objects. Conventions: ``b`` = regressions (baseline pass, candidate fail), ``c`` = improvements;
``Δ = (c − b)/n`` and every difference is candidate − baseline (positive = candidate better).
See ``STATISTICS.md`` for the methods and references.
"""

from ablation.stats._results import (
    BootstrapResult,
    ConfidenceInterval,
    DifferenceResult,
    McNemarResult,
    NonInferiorityResult,
    OneSidedTTest,
    PairingSummary,
    ProportionResult,
    RatioResult,
    SampleSizeResult,
    TestResult,
    TostResult,
    TTestResult,
    VarianceComponents,
)
from ablation.stats.binary import (
    clopper_pearson_interval,
    mcnemar,
    paired_binary_summary,
    wilson_interval,
    zero_failure_upper_bound,
)
from ablation.stats.bootstrap import binary_uplift_bootstrap, paired_bootstrap
from ablation.stats.continuous import (
    MEAN_DIFFERENCE_MIN_N,
    hodges_lehmann,
    log_ratio_interval,
    mean_difference_interval,
    paired_t_test,
    sign_test,
    wilcoxon_signed_rank,
)
from ablation.stats.equivalence import metric_noninferiority, tost_paired
from ablation.stats.multiplicity import adjust_pvalues
from ablation.stats.paired_interval import (
    noninferiority_test,
    paired_difference_interval,
    tango_score_statistic,
)
from ablation.stats.planning import minimum_detectable_effect, sample_size_paired
from ablation.stats.power import (
    exact_mcnemar_power,
    exact_minimum_detectable_effect,
    exact_sample_size_paired,
)
from ablation.stats.repeated import (
    cluster_bootstrap,
    design_effect,
    fisher_exact_test,
    repeated_binary_bootstrap,
    variance_components,
)
from ablation.stats.sequential import EValueResult, SequentialRegressionTest, regression_eprocess
from ablation.stats.sequential_cs import (
    ConfidenceSequenceResult,
    UpliftConfidenceSequence,
    uplift_confidence_sequence,
)
from ablation.stats.sequential_monitor import MonitorState, SequentialMonitor
from ablation.stats.sequential_sim import (
    SequentialDecisions,
    SequentialSimulation,
    sequential_decisions,
    simulate_sequential,
)

__all__ = [
    "MEAN_DIFFERENCE_MIN_N",
    "BootstrapResult",
    "ConfidenceInterval",
    "DifferenceResult",
    "McNemarResult",
    "NonInferiorityResult",
    "OneSidedTTest",
    "PairingSummary",
    "ProportionResult",
    "RatioResult",
    "SampleSizeResult",
    "TTestResult",
    "TestResult",
    "TostResult",
    "VarianceComponents",
    "adjust_pvalues",
    "binary_uplift_bootstrap",
    "clopper_pearson_interval",
    "cluster_bootstrap",
    "design_effect",
    "exact_mcnemar_power",
    "exact_minimum_detectable_effect",
    "exact_sample_size_paired",
    "fisher_exact_test",
    "hodges_lehmann",
    "log_ratio_interval",
    "mcnemar",
    "mean_difference_interval",
    "metric_noninferiority",
    "minimum_detectable_effect",
    "noninferiority_test",
    "paired_binary_summary",
    "paired_bootstrap",
    "paired_difference_interval",
    "paired_t_test",
    "repeated_binary_bootstrap",
    "sample_size_paired",
    "sign_test",
    "tango_score_statistic",
    "tost_paired",
    "variance_components",
    "wilcoxon_signed_rank",
    "wilson_interval",
    "zero_failure_upper_bound",
]
__all__ += [  # sequential monitoring (anytime-valid tests and confidence sequences)
    "ConfidenceSequenceResult",
    "EValueResult",
    "MonitorState",
    "SequentialDecisions",
    "SequentialMonitor",
    "SequentialRegressionTest",
    "SequentialSimulation",
    "UpliftConfidenceSequence",
    "regression_eprocess",
    "sequential_decisions",
    "simulate_sequential",
    "uplift_confidence_sequence",
]
