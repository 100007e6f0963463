"""Baseline and candidate agents for ``tasks/arithmetic.py``.

- ``baseline`` evaluates strictly left to right (it ignores operator precedence), so it fails
  expressions like ``2 + 3 * 4``.
- ``candidate`` respects precedence but divides with integer floor division, so it now gets
  ``7 / 2`` wrong: it improves the precedence tasks and regresses the inexact divisions.

Both take ``{"expression": "..."}`` and return a number. They parse the text themselves; nothing
is evaluated with ``eval``. A tiny, deterministic sleep stands in for model latency.
"""

from __future__ import annotations

import time

_PREC = {"+": 1, "-": 1, "*": 2, "/": 2}


def _apply(op: str, left: float, right: float, *, floor_division: bool) -> float:
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    return left // right if floor_division else left / right


def _tidy(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def baseline(task: dict) -> float | int:
    """Left-to-right evaluation: ``2 + 3 * 4`` gives 20."""
    time.sleep(0.002)
    tokens = task["expression"].split()
    value = float(tokens[0])
    for op, operand in zip(tokens[1::2], tokens[2::2], strict=True):
        value = _apply(op, value, float(operand), floor_division=False)
    return _tidy(value)


def candidate(task: dict) -> float | int:
    """Precedence-aware evaluation with floor division: ``7 / 2`` gives 3."""
    time.sleep(0.001)
    out: list[float] = []
    ops: list[str] = []

    def reduce() -> None:
        op = ops.pop()
        right, left = out.pop(), out.pop()
        out.append(_apply(op, left, right, floor_division=True))

    for tok in task["expression"].split():
        if tok in _PREC:
            while ops and _PREC[ops[-1]] >= _PREC[tok]:
                reduce()
            ops.append(tok)
        else:
            out.append(float(tok))
    while ops:
        reduce()
    return _tidy(out[0])
