"""Model judges: grade outputs with a model you supply, and compare the two arms pairwise.

Run from the repository root::

    python examples/llm_judges.py

``JudgeScorer`` turns any ``prompt -> answer`` callable into a quality scorer (here a small,
deterministic stand-in for a model client: plug in your own). ``PairwiseJudge`` shows the judge
both arms' outputs, in an order drawn from the seed and the task id so that position bias cannot
favour one arm, and ``pairwise_preference`` counts the verdicts with an exact sign test. An answer
the judge gets wrong (no parsable score) is recorded as that scorer's error, never as a zero.
"""

from __future__ import annotations

import asyncio
import re
import sys

from ablation import AblationTask, CampaignConfig, RubricCriterion, run_ablation_campaign, verifiers
from ablation.evaluate.judges import JudgeScorer, PairwiseJudge, judge_pairs, pairwise_preference

GOOD_SIGNS = ("sorry", "refund", "steps", "today", "thanks")


def fake_model(prompt: str) -> str:
    """A stand-in model: rewards replies that apologise, act and give a timeline.

    It reads only what sits between the output markers, as a careful judge prompt asks.
    """
    pair = re.search(r"<<<RESPONSE A\n(.*?)\nRESPONSE A>>>.*?<<<RESPONSE B\n(.*?)\nRESPONSE B>>>",
                     prompt, re.S)
    if pair:
        a, b = (sum(w in text.lower() for w in GOOD_SIGNS) for text in pair.groups())
        return "Winner: " + ("tie" if a == b else "A" if a > b else "B")
    single = re.search(r"<<<OUTPUT\n(.*?)\nOUTPUT>>>", prompt, re.S)
    reply = single.group(1) if single else ""
    if "???" in reply:
        return "I cannot grade this."  # unparseable: recorded as a scorer error
    return f"Reasoning omitted.\nScore: {min(10, 2 * sum(w in reply.lower() for w in GOOD_SIGNS))}"


TICKETS = [
    ("late-order", "My order is two weeks late."),
    ("double-charge", "I was charged twice for one subscription."),
    ("broken-item", "The lamp arrived broken."),
    ("login", "I cannot log in since yesterday."),
    ("cancel", "Please cancel my plan."),
    ("invoice", "I need an invoice with my company name."),
    ("upgrade", "How do I upgrade to the team plan?"),
    ("slow", "The dashboard is very slow."),
]

tasks = [
    AblationTask(
        task_id=tid,
        description="Reply to a customer support ticket helpfully and politely.",
        input_data={"ticket": text},
        expected_output=tid.split("-")[0],
        verifier=verifiers.contains(),  # the reply must mention the ticket's topic word
        quality_rubric=(
            RubricCriterion(name="apologises", keywords=("sorry",)),
            RubricCriterion(name="acts", pattern=r"refund|steps|today"),
        ),
    )
    for tid, text in TICKETS
]


def baseline(ticket: dict) -> str:
    """Terse replies that name the topic."""
    topic = ticket["ticket"].split()[-1].strip(".?")
    return f"We received your message about {topic}. ({ticket['ticket']})"


def candidate(ticket: dict) -> str:
    """Warmer replies with a next step; one reply is garbled."""
    text = ticket["ticket"]
    if "invoice" in text:
        return "??? invoice"
    return f"Sorry about this! ({text}) Here are the steps we take today, with thanks."


def main() -> int:
    judge = JudgeScorer(fake_model, name="judge")
    report = run_ablation_campaign(
        baseline, candidate, tasks, config=CampaignConfig(seed=3, n_resamples=2000),
        quality_scorers=[judge],
    )
    q = report.quality["judge"]
    print(f"pass rate: baseline {report.baseline.pass_rate:.0%}, candidate {report.candidate.pass_rate:.0%}")
    print(f"judge score: baseline {q.baseline_mean:.1f}, candidate {q.candidate_mean:.1f} "
          f"(difference {q.mean_difference:+.1f}, {q.n_pairs} pairs; "
          f"{q.scorer_errors_candidate} candidate answer(s) the judge could not grade, left out)")

    pairwise = PairwiseJudge(fake_model, seed=3)
    pairs = [(t, baseline(t.input_data), candidate(t.input_data)) for t in tasks]
    verdicts = asyncio.run(judge_pairs(pairwise, pairs))
    pref = pairwise_preference(verdicts)
    positions = sorted({v.candidate_position for v in verdicts})
    print(f"pairwise: candidate wins {pref.candidate_wins}, baseline wins {pref.baseline_wins}, "
          f"ties {pref.ties}; sign test p = {pref.sign_test_pvalue:.4g}; "
          f"candidate shown as {' and '.join(positions)}")
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
