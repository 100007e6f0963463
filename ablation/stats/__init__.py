"""Pure statistics for paired baseline-vs-candidate comparisons (numpy/scipy only).

This package is the bottom layer of ``ablation``: it imports no other project module. Every result
is a frozen dataclass with a human-readable ``method``; intervals are :class:`ConfidenceInterval`
objects. Conventions: ``b`` = regressions (baseline pass, candidate fail), ``c`` = improvements;
``Δ = (c − b)/n`` and every difference is candidate − baseline (positive = candidate better).
See ``STATISTICS.md`` for the methods and references.

The public names are loaded on first use (PEP 562 module ``__getattr__``): ``import ablation.stats``
imports no submodule, and ``stats.mcnemar`` imports only :mod:`ablation.stats.binary`. A command
such as ``ablation compare`` thus never pays for the sequential, repeated-runs or planning modules
it does not call. ``from ablation.stats import X`` and ``from ablation.stats import *`` work as
before; type checkers read the ``TYPE_CHECKING`` imports below. Every name's home is
:data:`_HOMES`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
        signed_rank_and_estimate,
        wilcoxon_signed_rank,
    )
    from ablation.stats.equivalence import metric_noninferiority, tost_paired
    from ablation.stats.headline_interval import headline_difference_interval
    from ablation.stats.multiplicity import adjust_pvalues
    from ablation.stats.paired_interval import (
        noninferiority_test,
        paired_difference_interval,
        tango_score_statistic,
    )
    from ablation.stats.planning import (
        minimum_detectable_effect,
        noninferiority_design_text,
        sample_size_paired,
    )
    from ablation.stats.power import (
        exact_mcnemar_power,
        exact_minimum_detectable_effect,
        exact_sample_size_paired,
    )
    from ablation.stats.quantiles import linear_quantiles, median
    from ablation.stats.repeated import (
        cluster_bootstrap,
        design_effect,
        fisher_exact_test,
        repeated_binary_bootstrap,
        variance_components,
    )
    from ablation.stats.sequential import (
        EValueResult,
        SequentialRegressionTest,
        regression_eprocess,
    )
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
    from ablation.stats.task_means import (
        bounded_mean_interval,
        bounded_mean_noninferiority,
        sign_flip_test,
    )

# submodule -> the public names it defines (the runtime twin of the TYPE_CHECKING imports above)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "_results": (
        "BootstrapResult", "ConfidenceInterval", "DifferenceResult", "McNemarResult",
        "NonInferiorityResult", "OneSidedTTest", "PairingSummary", "ProportionResult",
        "RatioResult", "SampleSizeResult", "TestResult", "TostResult", "TTestResult",
        "VarianceComponents",
    ),
    "binary": (
        "clopper_pearson_interval", "mcnemar", "paired_binary_summary", "wilson_interval",
        "zero_failure_upper_bound",
    ),
    "bootstrap": ("binary_uplift_bootstrap", "paired_bootstrap"),
    "continuous": (
        "MEAN_DIFFERENCE_MIN_N", "hodges_lehmann", "log_ratio_interval",
        "mean_difference_interval", "paired_t_test", "sign_test", "signed_rank_and_estimate",
        "wilcoxon_signed_rank",
    ),
    "equivalence": ("metric_noninferiority", "tost_paired"),
    "headline_interval": ("headline_difference_interval",),
    "multiplicity": ("adjust_pvalues",),
    "paired_interval": (
        "noninferiority_test", "paired_difference_interval", "tango_score_statistic",
    ),
    "planning": ("minimum_detectable_effect", "noninferiority_design_text", "sample_size_paired"),
    "quantiles": ("linear_quantiles", "median"),
    "power": (
        "exact_mcnemar_power", "exact_minimum_detectable_effect", "exact_sample_size_paired",
    ),
    "repeated": (
        "cluster_bootstrap", "design_effect", "fisher_exact_test", "repeated_binary_bootstrap",
        "variance_components",
    ),
    "sequential": ("EValueResult", "SequentialRegressionTest", "regression_eprocess"),
    "sequential_cs": (
        "ConfidenceSequenceResult", "UpliftConfidenceSequence", "uplift_confidence_sequence",
    ),
    "sequential_monitor": ("MonitorState", "SequentialMonitor"),
    "sequential_sim": (
        "SequentialDecisions", "SequentialSimulation", "sequential_decisions",
        "simulate_sequential",
    ),
    "task_means": ("bounded_mean_interval", "bounded_mean_noninferiority", "sign_flip_test"),
}
_HOMES: dict[str, str] = {name: module for module, names in _EXPORTS.items() for name in names}

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
    "bounded_mean_interval",
    "bounded_mean_noninferiority",
    "clopper_pearson_interval",
    "cluster_bootstrap",
    "design_effect",
    "exact_mcnemar_power",
    "exact_minimum_detectable_effect",
    "exact_sample_size_paired",
    "fisher_exact_test",
    "headline_difference_interval",
    "hodges_lehmann",
    "linear_quantiles",
    "log_ratio_interval",
    "mcnemar",
    "mean_difference_interval",
    "median",
    "metric_noninferiority",
    "minimum_detectable_effect",
    "noninferiority_design_text",
    "noninferiority_test",
    "paired_binary_summary",
    "paired_bootstrap",
    "paired_difference_interval",
    "paired_t_test",
    "repeated_binary_bootstrap",
    "sample_size_paired",
    "sign_flip_test",
    "sign_test",
    "signed_rank_and_estimate",
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

if not TYPE_CHECKING:  # hidden from type checkers, so that an unknown name stays a type error

    def __getattr__(name: str) -> Any:
        """Import the submodule that defines the public ``name`` and cache the name here (PEP 562).

        Called only when ``name`` is not yet a module global, so each name costs one import once.
        The submodules of :data:`_EXPORTS` are attributes too (``stats.binary``), as they were when
        this package imported all of them; importing one binds it here.
        """
        home = name if name in _EXPORTS else _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        # the import statement's machinery, not importlib.import_module: ``python -X importtime``
        # then lists the submodule like any other import
        __import__(f"{__name__}.{home}")
        module = sys.modules[f"{__name__}.{home}"]
        if home == name:
            return module
        value = getattr(module, name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        """The loaded globals and every public name, loaded or not."""
        return sorted(set(globals()) | set(__all__))
