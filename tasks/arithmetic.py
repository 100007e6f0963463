"""The classic small suite: 40 arithmetic expressions in five categories.

Load it by path: ``ablation run tasks/arithmetic.py --baseline ... --candidate ...``.
Each task's input is ``{"expression": "2 + 3 * 4"}`` and its expected output the exact value;
the default verifier compares numbers with a tiny relative tolerance.
"""

from fractions import Fraction

from ablation import AblationTask


def _value(expression: str) -> float:
    """Reference value, computed exactly with fractions (no eval of the text)."""
    tokens = expression.split()
    # Shunting-yard over the four operators; the suite only uses integers and + - * /.
    prec = {"+": 1, "-": 1, "*": 2, "/": 2}
    out: list[Fraction] = []
    ops: list[str] = []

    def apply() -> None:
        op = ops.pop()
        right, left = out.pop(), out.pop()
        if op == "+":
            out.append(left + right)
        elif op == "-":
            out.append(left - right)
        elif op == "*":
            out.append(left * right)
        else:
            out.append(left / right)

    for tok in tokens:
        if tok in prec:
            while ops and prec[ops[-1]] >= prec[tok]:
                apply()
            ops.append(tok)
        else:
            out.append(Fraction(int(tok)))
    while ops:
        apply()
    value = out[0]
    return int(value) if value.denominator == 1 else float(value)


_EXPRESSIONS = {
    "addition": ["1 + 2", "10 + 32", "123 + 877", "7 + 8 + 9", "1000 + 1", "55 + 45", "3 + 4 + 5 + 6"],
    "multiplication": ["6 * 7", "12 * 12", "25 * 4", "3 * 3 * 3", "99 * 0", "11 * 11", "2 * 2 * 2 * 2"],
    "precedence": [
        "2 + 3 * 4", "10 - 2 * 3", "1 + 2 * 3 + 4", "20 - 12 / 4", "5 * 2 + 3 * 4",
        "100 - 10 * 10", "8 + 16 / 4", "6 + 3 * 3 - 1", "9 - 8 / 2", "1 + 1 * 0",
    ],
    "division": ["84 / 2", "100 / 4", "7 / 2", "1 / 4", "22 / 7", "9 / 3", "10 / 4", "81 / 9"],
    "negative": ["5 - 12", "0 - 7 * 3", "-4 + 10", "3 - 3 - 3", "-6 * -6", "-20 / 5", "-1 - 1", "-9 + 3"],
}

tasks = [
    AblationTask(
        task_id=f"{category}-{i:02d}",
        name=expression,
        description=f"Evaluate {expression} with the usual operator precedence.",
        category=category,
        input_data={"expression": expression},
        expected_output=_value(expression),
        critical=category == "negative",
        tags=("arithmetic",),
    )
    for category, expressions in _EXPRESSIONS.items()
    for i, expression in enumerate(expressions)
]
