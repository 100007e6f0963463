"""Public face of the quality scorers: a number per trial beside the pass/fail verdict.

:class:`QualityScorer` is the protocol (a ``name`` and ``(output, task) -> float``, sync or
async). Built-ins: :class:`CodeQualityScorer`, :class:`RubricScorer`, and the model judges
:class:`JudgeScorer` and :class:`PairwiseJudge`. The implementations live in
:mod:`ablation.evaluate.quality` and :mod:`ablation.evaluate.judges`.
"""

from ablation.evaluate.judges import (
    DEFAULT_JUDGE_TEMPLATE,
    DEFAULT_PAIRWISE_TEMPLATE,
    JudgeScorer,
    PairwiseJudge,
    PairwisePreference,
    PairwiseVerdict,
    judge_pairs,
    pairwise_preference,
    parse_score,
    parse_winner,
)
from ablation.evaluate.quality import (
    CODE_QUALITY_WEIGHTS,
    CodeQualityScorer,
    QualityScorer,
    RubricScorer,
    ScorerError,
    run_scorer,
    scorer_is_async,
    scorer_name,
)

__all__ = [
    "CODE_QUALITY_WEIGHTS",
    "DEFAULT_JUDGE_TEMPLATE",
    "DEFAULT_PAIRWISE_TEMPLATE",
    "CodeQualityScorer",
    "JudgeScorer",
    "PairwiseJudge",
    "PairwisePreference",
    "PairwiseVerdict",
    "QualityScorer",
    "RubricScorer",
    "ScorerError",
    "judge_pairs",
    "pairwise_preference",
    "parse_score",
    "parse_winner",
    "run_scorer",
    "scorer_is_async",
    "scorer_name",
]
