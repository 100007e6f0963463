"""What a gate's status means for the verdict, and the words of a gate that judged no data.

A gate *holds* when its status is ``"pass"`` or ``"off"``
(:attr:`~ablation.report.GateResult.holds`, the one place that set is written); ``"fail"`` and
``"inconclusive"`` make the verdict ``"fail"`` (exit code 2). :func:`verdict_of` applies it to a
report's gates (:func:`ablation.analysis.gates.evaluate_gates`) and to a numeric comparison's
(:mod:`ablation.analysis.numeric`).

Two kinds of gate judge no data, and say so in the same words wherever they occur:

- a gate whose test could not run (no paired task, no values of the metric it tests, no
  completed trial) is ``"inconclusive"``, never a pass and never a failure of the candidate
  (:func:`could_not_run`), with the reason in its evidence;
- a default gate the caller turned off is ``"off"`` and names the
  :class:`~ablation.config.GatePolicy` field that turned it off (:func:`turned_off`). The
  analysis knows the policy, not how it was spelled: the flags and ``[tool.ablation]`` keys that
  set each field are declared once, in the command line's option table.

Assumptions: a :class:`~ablation.report.GateResult` status is one of ``pass``, ``fail``,
``inconclusive`` and ``off``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from ablation.config import GatePolicy
from ablation.report import GateResult
from ablation.schema import shown_name

__all__ = ["could_not_run", "listed_ids", "turned_off", "verdict_of"]


def verdict_of(gates: Iterable[GateResult]) -> Literal["pass", "fail"]:
    """``"pass"`` when every gate holds (passed or turned off), else ``"fail"``.

    An inconclusive gate fails the verdict as a failed one does: a check that could not decide
    never lets a candidate through.
    """
    return "pass" if all(g.holds for g in gates) else "fail"


def listed_ids(
    ids: Sequence[str], shown: int, total: int | None = None, why: Mapping[str, str] | None = None
) -> str:
    """The first ``shown`` task ids as a gate's evidence lists them, then how many more.

    Each id is named by :func:`~ablation.schema.shown_name` (a long one cut, marked and digested:
    an id may hold a million characters; the report's id lists keep it whole), followed by
    ``(why[id])`` when ``why`` is given, the ids joined by ``", "``, then ``" ... and N more"``
    of ``total`` (default ``len(ids)``).
    """
    named = [shown_name(i, "task id") + (f" ({why[i]})" if why is not None else "") for i in ids[:shown]]
    more = (len(ids) if total is None else total) - len(named)
    return ", ".join(named) + (f" ... and {more} more" if more > 0 else "")


def turned_off(field: str) -> str:
    """The opening words of a gate turned off by the :class:`GatePolicy` field ``field``.

    Raises:
        ValueError: if ``field`` is not a boolean field of :class:`GatePolicy` (a gate is turned
            off by setting one to ``False``).
    """
    info = GatePolicy.model_fields.get(field)
    if info is None or info.annotation is not bool:
        raise ValueError(f"{field!r} is not a boolean field of GatePolicy")
    return f"turned off (GatePolicy.{field} = False)"


def could_not_run(name: str, test: str, why: str) -> GateResult:
    """The inconclusive result of gate ``name`` whose ``test`` could not run, because ``why``.

    Args:
        name: The gate's name.
        test: What could not run, e.g. ``"the one-sided test"``.
        why: The reason, as a clause (``"no task was paired"``); it should say exactly what is
            missing: no values at all, none in both arms of a pair, no completed trial.
    """
    return GateResult(
        name=name,
        status="inconclusive",
        evidence=(
            f"{test} could not run, because {why}. A check that could not run is neither a pass "
            "nor a failure of the candidate, and the verdict cannot pass on it."
        ),
    )
