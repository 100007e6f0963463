"""Small units: no module in ``ablation/`` over ~400 lines, no function body over 60 lines.

A function's size is counted from its first statement after the docstring to its last line, so
documentation never pushes code over the limit. The few exceptions are listed in ``ALLOWED`` with
the reason each is kept whole; an entry that no longer needs its exception fails the test too, so
the list cannot go stale.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ablation"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60

#: "path" or "path::function" -> why it stays whole.
ALLOWED: dict[str, str] = {}


def body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the first statement after the docstring to the end of the function."""
    body = node.body
    if (
        len(body) > 1
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    return (node.end_lineno or node.lineno) - body[0].lineno + 1


@functools.cache  # both tests read the same files; a worker parses them once
def oversized() -> dict[str, int]:
    found: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).as_posix()
        text = path.read_text(encoding="utf-8")
        n_lines = len(text.splitlines())
        if n_lines > MAX_MODULE_LINES:
            found[rel] = n_lines
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = body_lines(node)
                if size > MAX_FUNCTION_LINES:
                    found[f"{rel}::{node.name}"] = size
    return found


def test_modules_and_functions_stay_small() -> None:
    too_big = {k: v for k, v in oversized().items() if k not in ALLOWED}
    assert not too_big, "split these (or justify them in ALLOWED): " + ", ".join(
        f"{k} ({v} lines)" for k, v in sorted(too_big.items())
    )


def test_allow_list_is_short_and_current() -> None:
    assert len(ALLOWED) <= 6, "the allow-list is for rare exceptions"
    stale = sorted(set(ALLOWED) - set(oversized())) if ALLOWED else []  # nothing to go stale
    assert not stale, f"no longer oversized, remove from ALLOWED: {stale}"


def test_body_lines_skips_the_docstring() -> None:
    tree = ast.parse('def f():\n    """doc\n\n    more doc\n    """\n    a = 1\n    return a\n')
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef) and body_lines(fn) == 2
