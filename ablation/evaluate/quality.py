"""Quality scorers: a number per trial beside the pass/fail verdict.

A scorer matches :class:`QualityScorer` (a ``name`` and ``(output, task) -> float``, sync or
async). The engine calls it through :func:`run_scorer`, which turns anything but a finite real
number into a :class:`ScorerError`: recorded for that trial and scorer, never a silent 0.
Built-ins: :class:`CodeQualityScorer` (AST heuristics), :class:`RubricScorer` (the task's weighted
criteria), :class:`JudgeScorer` (a model you supply gives a bounded score) and
:class:`PairwiseJudge` (a model picks the better arm; :func:`pairwise_preference` counts the
verdicts, the sign test lives in ``ablation.stats``). No model client is bundled. Agent outputs are
untrusted: judge prompts fence them and tell the model not to obey them, which reduces but cannot
exclude prompt injection.
"""

from __future__ import annotations

import ast
import json
import math
import numbers
import re
from collections.abc import Awaitable, Mapping
from typing import Any, Protocol, runtime_checkable

from ablation.errors import AblationError
from ablation.eventloop import is_awaitable
from ablation.outputs import VALUE_LIMIT, usable_number
from ablation.schema import (
    AblationTask,
    RubricCriterion,
    callable_name,
    is_async_callable,
    to_jsonable,
)

__all__ = [
    "CODE_QUALITY_WEIGHTS",
    "CodeQualityScorer",
    "QualityScorer",
    "RubricScorer",
    "ScorerError",
    "run_scorer",
    "scorer_is_async",
    "scorer_name",
]


class ScorerError(AblationError):
    """A scorer returned something other than a finite real number, or cannot score this trial."""


@runtime_checkable
class QualityScorer(Protocol):
    """What the engine accepts as a quality scorer.

    Attributes:
        name: Stable name; the key of the score in ``TaskResult.quality`` and in the report.
    """

    name: str

    def __call__(self, output: Any, task: AblationTask) -> float | Awaitable[float]:
        """Score one output of one task."""
        ...


def scorer_name(scorer: Any) -> str:
    """The scorer's ``name`` attribute, else its ``module:qualname``."""
    return callable_name(scorer)


def scorer_is_async(scorer: Any) -> bool:
    """True when calling ``scorer`` returns an awaitable (async function or async ``__call__``)."""
    return is_async_callable(scorer)


def _type_name(value: Any) -> str:
    """The name of ``value``'s type (never its ``__class__``, which the value may fake)."""
    try:
        return str.__str__(type(value).__name__)
    except Exception:  # a metaclass's __name__ that raises or is no str
        return "<unnamed type>"


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _excerpt(value: Any, limit: int = 200) -> str:
    """The start of a text, or of any other value's ``repr``; never raises: a ``repr`` that raises
    (an ``int`` past the digit limit's does) or is no plain ``str`` is described instead."""
    if type(value) is int and value.bit_length() > 3 * limit:  # more digits than are shown
        return f"<{'negative ' if value < 0 else ''}int of {value.bit_length()} bits>"
    try:
        return _bounded(str.__str__(value if issubclass(type(value), str) else repr(value)), limit)
    except Exception as exc:
        return f"<{_type_name(value)} whose repr raised {_raised(exc)}>"


def _raised(exc: BaseException) -> str:
    """``Type: message`` of an exception, bounded; only the type when its ``str()`` raises."""
    try:
        text = _bounded(str.__str__(str(exc)), 120)
    except Exception:
        text = ""
    return _type_name(exc) + (f": {text}" if text else "")


def _refused(name: str, value: Any, why: str) -> ScorerError:
    """The scorer's error for ``value``, built without raising (a text is quoted)."""
    shown = _excerpt(str.__repr__(value) if type(value) is str else value)
    return ScorerError(f"scorer {name!r} returned {_type_name(value)} {shown}{why}")


async def run_scorer(scorer: Any, output: Any, task: AblationTask) -> float:
    """Call a sync or async scorer and return its score as a ``float``.

    Sync scorers are called directly on the calling thread (an awaitable they return is awaited,
    as is one a sync scorer returns when the engine runs it in a thread). Only the result's own type is trusted: its ``__class__``, ``repr`` and ``float()`` may raise,
    and each such failure is the :class:`ScorerError`, whose message never raises.

    Raises:
        ScorerError: if the result is not a finite real number below ``VALUE_LIMIT`` in magnitude
            (``bool``, ``str``, ``None``, NaN, infinities, a ``float()`` that raises are all
            rejected), naming the scorer, the type and the value.
        Exception: whatever the scorer raises, unchanged.
    """
    value = scorer(output, task)
    for _ in range(2):  # its awaitable, then one a sync scorer run in a thread returned there
        if is_awaitable(value):
            value = await value
    try:
        name = str.__str__(scorer_name(scorer))
    except Exception:
        name = f"<{_type_name(scorer)}>"
    real = "; a score must be a finite real number"
    try:
        if type(value) is bool or not issubclass(type(value), numbers.Real):
            raise _refused(name, value, real)
        result = float(value)  # an exact float, whatever __float__ returned
    except OverflowError:  # an int or a Fraction past the float range
        result = math.inf
    except ScorerError:
        raise
    except Exception as exc:  # float(), or the ABC's subclass check, raised
        raise _refused(name, value, f", whose float() raised {_raised(exc)}{real}") from None
    if not usable_number(result):
        raise _refused(name, value, f"; a score must be finite and below {VALUE_LIMIT:g} in magnitude")
    return result


def _output_text(output: Any) -> str:
    if output is None:
        return ""
    if isinstance(output, str):
        return output
    if isinstance(output, bytes):
        return output.decode("utf-8", errors="replace")
    return json.dumps(to_jsonable(output), ensure_ascii=False, sort_keys=True)


# ---------------------------------------------------------------------------------------------
# Code quality

#: Weight (points out of 100) of each :class:`CodeQualityScorer` component.
CODE_QUALITY_WEIGHTS: dict[str, float] = {
    "structure": 15.0,
    "docstrings": 25.0,
    "annotations": 25.0,
    "complexity": 20.0,
    "naming": 10.0,
    "line_length": 5.0,
}

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_DECISIONS = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.IfExp,
    ast.ExceptHandler,
    ast.match_case,
)
_FENCE = re.compile(r"\A\s*```[A-Za-z0-9_+-]*[ \t]*\n(?P<body>.*?)\n?```\s*\Z", re.DOTALL)
_SNAKE = re.compile(r"^_{0,2}[a-z][a-z0-9_]*$")
_CAPWORDS = re.compile(r"^_?[A-Z][A-Za-z0-9]*$")


def _branches(node: ast.AST) -> int:
    """Decision points in ``node``'s own body (nested functions and classes excluded); read
    without recursion, so an expression nested as deep as the parser allows is counted too."""
    count = 0
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        if isinstance(child, (*_FUNCS, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(child, _DECISIONS):
            count += 1
        elif isinstance(child, ast.BoolOp):
            count += len(child.values) - 1
        elif isinstance(child, ast.comprehension):
            count += 1 + len(child.ifs)
        stack.extend(ast.iter_child_nodes(child))
    return count


class CodeQualityScorer:
    """Deterministic AST-based code quality score, 0-100.

    Code that does not parse (nor compiles: nested deeper than the parser builds), or is empty,
    scores 0 overall. Otherwise the score is
    ``sum(weight * component)`` over these components, each in ``[0, 1]``
    (weights in :data:`CODE_QUALITY_WEIGHTS`, summing to 100):

    * ``structure`` (15): 1 if the code defines at least one function or class, else 0.
    * ``docstrings`` (25): documented share of the units {module} + every function and class
      (at any depth).
    * ``annotations`` (25): annotated share of the annotation slots: every parameter (except a
      method's leading ``self``/``cls``) and every return; 0 when there is no function.
    * ``complexity`` (20): mean over functions of ``max(0, 1 - 0.1 * max(0, cc - threshold))``,
      where ``cc = 1 + decision points`` (``if``, loops, conditional expressions, ``except``,
      ``case``, each extra operand of ``and``/``or``, each comprehension ``for`` and ``if``;
      nested functions count for themselves, lambdas are skipped). Without functions the module
      body is the unit.
    * ``naming`` (10): share of function names in snake_case and class names in CapWords;
      0 when there is no function or class.
    * ``line_length`` (5): share of non-blank lines no longer than ``max_line_length``.

    The output may be a string of Python source or a mapping with a ``"code"`` string; a string
    wrapped as a whole in one Markdown code fence is unwrapped. Any other output is a
    :class:`ScorerError`.

    Args:
        complexity_threshold: Cyclomatic complexity a function may have without penalty.
        max_line_length: Longest line (characters) that counts as short enough.
    """

    name = "code_quality"
    inline = True  # pure AST work: cheap enough for the event loop

    def __init__(self, *, complexity_threshold: int = 10, max_line_length: int = 100) -> None:
        self.complexity_threshold = complexity_threshold
        self.max_line_length = max_line_length

    def __call__(self, output: Any, task: AblationTask) -> float:
        if isinstance(output, Mapping):
            output = output.get("code")
        if not isinstance(output, str):
            raise ScorerError(
                f"code_quality: task {task.task_id!r}: output is {type(output).__name__}, "
                "not Python source"
            )
        return self.breakdown(output)["total"]

    def breakdown(self, code: str) -> dict[str, float]:
        """Component scores in ``[0, 1]``, ``"parses"`` (0 or 1) and the weighted ``"total"``."""
        match = _FENCE.match(code)
        code = match.group("body") if match else code
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError, RecursionError):  # RecursionError: nested past what compiles
            tree = None
        if tree is None or not tree.body:
            return {"parses": 0.0, **dict.fromkeys(CODE_QUALITY_WEIGHTS, 0.0), "total": 0.0}
        parts = {
            "structure": self._structure(tree),
            "docstrings": self._docstrings(tree),
            "annotations": self._annotations(tree),
            "complexity": self._complexity(tree),
            "naming": self._naming(tree),
            "line_length": self._line_length(code),
        }
        total = sum(CODE_QUALITY_WEIGHTS[k] * v for k, v in parts.items())
        return {"parses": 1.0, **parts, "total": total}

    @staticmethod
    def _defs(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
        return [n for n in ast.walk(tree) if isinstance(n, (*_FUNCS, ast.ClassDef))]

    def _structure(self, tree: ast.Module) -> float:
        return 1.0 if self._defs(tree) else 0.0

    def _docstrings(self, tree: ast.Module) -> float:
        units: list[Any] = [tree, *self._defs(tree)]
        return sum(bool(ast.get_docstring(u)) for u in units) / len(units)

    def _annotations(self, tree: ast.Module) -> float:
        methods = {id(f) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for f in c.body}
        slots = annotated = 0
        for fn in ast.walk(tree):
            if not isinstance(fn, _FUNCS):
                continue
            a = fn.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
            params += [p for p in (a.vararg, a.kwarg) if p is not None]
            if id(fn) in methods and params and params[0].arg in ("self", "cls"):
                params = params[1:]
            slots += len(params) + 1
            annotated += sum(p.annotation is not None for p in params) + (fn.returns is not None)
        return annotated / slots if slots else 0.0

    def _complexity(self, tree: ast.Module) -> float:
        units: list[ast.AST] = [n for n in ast.walk(tree) if isinstance(n, _FUNCS)] or [tree]
        scores = [
            max(0.0, 1.0 - 0.1 * max(0, 1 + _branches(u) - self.complexity_threshold))
            for u in units
        ]
        return sum(scores) / len(scores)

    def _naming(self, tree: ast.Module) -> float:
        defs = self._defs(tree)
        good = sum(
            bool((_CAPWORDS if isinstance(d, ast.ClassDef) else _SNAKE).match(d.name)) for d in defs
        )
        return good / len(defs) if defs else 0.0

    def _line_length(self, code: str) -> float:
        lines = [line for line in code.splitlines() if line.strip()]
        return sum(len(line) <= self.max_line_length for line in lines) / len(lines)


# ---------------------------------------------------------------------------------------------
# Rubric


def _criterion_met(criterion: RubricCriterion, text: str, task_id: str) -> bool:
    met = True
    if criterion.pattern is not None:
        try:
            met = re.search(criterion.pattern, text) is not None
        except re.error as exc:
            raise ScorerError(
                f"task {task_id!r}: rubric criterion {criterion.name!r} has a bad pattern: {exc}"
            ) from None
    if met and criterion.keywords:
        folded = text.casefold()
        met = all(k.casefold() in folded for k in criterion.keywords)
    return met != criterion.negate


class RubricScorer:
    """Scores an output against ``task.quality_rubric`` criteria, 0-100.

    A criterion is met when its ``pattern`` matches the output text (``re.search``, case-sensitive
    unless the pattern says ``(?i)``) and every one of its ``keywords`` occurs in it
    (case-insensitive); when both are given both must hold. ``negate=True`` inverts the test.
    Score = 100 x (weight of met criteria) / (total weight). Non-string outputs are scored on
    their JSON text; ``None`` is the empty text.

    A task without a criteria rubric (``None``, empty, or free text meant for a judge) raises
    :class:`ScorerError`, so it is reported as an error for that trial rather than a 0.
    """

    name = "rubric"
    inline = True

    def _criteria(self, task: AblationTask) -> tuple[RubricCriterion, ...]:
        rubric = task.quality_rubric
        if rubric is None:
            raise ScorerError(f"task {task.task_id!r} has no rubric")
        if isinstance(rubric, str):
            raise ScorerError(
                f"task {task.task_id!r} has a free-text rubric; RubricScorer needs criteria "
                "(use a JudgeScorer for free text)"
            )
        if not rubric:
            raise ScorerError(f"task {task.task_id!r} has an empty rubric")
        return rubric

    def explain(self, output: Any, task: AblationTask) -> dict[str, bool]:
        """Whether each criterion (by name) is met."""
        text = _output_text(output)
        return {c.name: _criterion_met(c, text, task.task_id) for c in self._criteria(task)}

    def __call__(self, output: Any, task: AblationTask) -> float:
        criteria = self._criteria(task)
        text = _output_text(output)
        met = sum(c.weight for c in criteria if _criterion_met(c, text, task.task_id))
        return 100.0 * met / sum(c.weight for c in criteria)
