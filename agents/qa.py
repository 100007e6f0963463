"""Question-answering agents for the JSONL suite ``tasks/qa.jsonl``.

Both are canned answer tables keyed by the question text, standing in for two prompts of one
model:

- ``baseline`` answers tersely, and gets five facts or formats wrong (Sydney, Mount Kenya,
  nine planets, a two-decimal square root, a US-style date);
- ``candidate`` knows those facts but answers in full sentences, which breaks two tasks whose
  verifier wants a bare number (``math-percent`` and ``science-speed-of-light``): a typical
  regression of a "be more helpful" prompt that a total pass rate hides.

Run it::

    ablation run tasks/qa.jsonl --baseline agents/qa.py:baseline --candidate agents/qa.py:candidate
"""

from __future__ import annotations

from typing import Any

__all__ = ["baseline", "candidate"]

_BASELINE: dict[str, str] = {
    "What is the capital of France?": "Paris",
    "What is the capital of Australia?": "Sydney",
    "Which river is the longest in South America?": "Amazon",
    "What is the highest mountain in Africa?": "Mount Kenya",
    "How many days are in a leap year?": "366",
    "What is the square root of 2, to three decimal places?": "1.41",
    "What is 15% of 240?": "36",
    "How many primes are smaller than 20?": "8",
    "At what temperature in degrees Celsius does water boil at sea level?": "100",
    "What is the chemical symbol of gold?": "Au",
    "How many planets are in the Solar System?": "9",
    "What is the speed of light in a vacuum in km/s, to the nearest thousand?": "299792",
    "Write the date 4 July 2024 in ISO 8601 format.": "07/04/2024",
    "Return the point x = 1, y = 2 as a JSON object with keys x and y.": '{"x": 1, "y": 2}',
    "Spell the word 'ablation' in upper case.": "ABLATION",
    "Give an example e-mail address at the domain example.com.": "user@example.com",
}

_CANDIDATE: dict[str, str] = {
    "What is the capital of France?": "The capital of France is Paris.",
    "What is the capital of Australia?": "Canberra is the capital of Australia.",
    "Which river is the longest in South America?": "The Amazon.",
    "What is the highest mountain in Africa?": "Mount Kilimanjaro, at 5,895 m.",
    "How many days are in a leap year?": "366",
    "What is the square root of 2, to three decimal places?": "1.414",
    "What is 15% of 240?": "15% of 240 is 36.",
    "How many primes are smaller than 20?": "8",
    "At what temperature in degrees Celsius does water boil at sea level?": "100",
    "What is the chemical symbol of gold?": "Au",
    "How many planets are in the Solar System?": "8",
    "What is the speed of light in a vacuum in km/s, to the nearest thousand?": "about 300,000 km/s",
    "Write the date 4 July 2024 in ISO 8601 format.": "2024-07-04",
    "Return the point x = 1, y = 2 as a JSON object with keys x and y.": '{"y": 2, "x": 1}',
    "Spell the word 'ablation' in upper case.": "ABLATION",
    "Give an example e-mail address at the domain example.com.": "jane.doe@example.com",
}

_UNKNOWN = "I don't know."


def baseline(task: dict[str, Any]) -> str:
    """Terse answers from the current prompt.

    Args:
        task: ``{"question": "..."}``.

    Returns:
        The answer text.
    """
    return _BASELINE.get(task.get("question", ""), _UNKNOWN)


def candidate(task: dict[str, Any]) -> str:
    """Full-sentence answers from the new prompt.

    Args:
        task: ``{"question": "..."}``.

    Returns:
        The answer text.
    """
    return _CANDIDATE.get(task.get("question", ""), _UNKNOWN)
