"""An exception user code raises is recorded whatever its class defines, never the campaign's end.

The chain of an exception raised ``from`` another was walked with ``link not in chain`` (which
calls ``__eq__``) and ``cause or context`` (``__bool__``), and :mod:`traceback` tests an
exception's truth and reads ``__notes__`` and ``__class__``: an exception class defining any of
them to raise ended ``AblationEngine.run`` with that error. An async call's ``SystemExit`` or
``KeyboardInterrupt`` is that trial's error too.
"""

from __future__ import annotations

import traceback
from typing import Any

import pytest

from ablation import AblationEngine, AblationTask, CampaignConfig


class Inner(Exception):
    pass


class EqRaises(Exception):
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__ of a user exception")

    __hash__ = Exception.__hash__


class BoolRaises(Exception):
    def __bool__(self) -> bool:
        raise RuntimeError("__bool__ of a user exception")


class NotesRaise(Exception):
    @property
    def __notes__(self) -> Any:  # type: ignore[override]
        raise RuntimeError("__notes__ of a user exception")


class ClassRaises(Exception):
    @property
    def __class__(self) -> Any:  # type: ignore[override]
        raise RuntimeError("__class__ of a user exception")


class CauseRaises(Exception):
    @property
    def __cause__(self) -> Any:  # type: ignore[override]
        raise RuntimeError("__cause__ of a user exception")


HOSTILE = [EqRaises, BoolRaises, NotesRaise, ClassRaises, CauseRaises]


def _agent(kind: type[Exception], chained: bool) -> Any:
    def agent(inp: Any) -> Any:
        if chained:
            raise kind("boom") from Inner("inner")
        raise kind("boom")

    return agent


def _one(baseline: Any, candidate: Any, **task: Any) -> dict[str, Any]:
    tasks = [AblationTask(task_id="t", input_data={}, expected_output=1, **task)]
    results = AblationEngine(CampaignConfig(timeout_s=10)).run(baseline, candidate, tasks)
    return {r.arm: r for r in results}


@pytest.mark.parametrize("chained", [False, True], ids=["alone", "from-inner"])
@pytest.mark.parametrize("kind", HOSTILE, ids=lambda k: k.__name__)
def test_agent_raising_hostile_exception_is_the_trials_error(kind: type[Exception], chained: bool) -> None:
    trials = _one(lambda inp: 1, _agent(kind, chained))
    trial = trials["candidate"]
    assert (trial.status, trial.error_stage, trial.error_type) == ("error", "agent", kind.__name__)
    assert trial.error_message == "boom"
    assert "Traceback (most recent call last):" in trial.error_traceback
    assert trials["baseline"].status == "completed"


def test_eq_raising_chain_keeps_its_whole_traceback() -> None:
    """Walked by identity, the chain of an ``__eq__``-raising exception is formatted as
    :mod:`traceback` formats it (which does not call ``__eq__``)."""
    trial = _one(lambda inp: 1, _agent(EqRaises, True))["candidate"]
    try:
        _agent(EqRaises, True)({})
    except EqRaises as exc:
        expected = traceback.format_exception(exc)
    assert "Inner: inner" in trial.error_traceback
    assert trial.error_traceback.endswith(expected[-1])
    assert expected[-1].endswith("EqRaises: boom\n")


@pytest.mark.parametrize("kind", HOSTILE, ids=lambda k: k.__name__)
def test_verifier_and_scorer_raising_hostile_exceptions(kind: type[Exception]) -> None:
    def verifier(output: Any, task: Any) -> bool:
        raise kind("verdict") from Inner("inner")

    async def scorer(output: Any, task: Any) -> float:
        raise kind("score") from Inner("inner")

    tasks = [
        AblationTask(task_id="v", input_data={}, expected_output=1, verifier=verifier),
        AblationTask(task_id="s", input_data={}, expected_output=1),
    ]
    engine = AblationEngine(CampaignConfig(timeout_s=10), quality_scorers=[scorer])
    trials = {(r.task_id, r.arm): r for r in engine.run(lambda inp: 1, lambda inp: 1, tasks)}
    judged = trials["v", "baseline"]
    assert (judged.error_stage, judged.error_type, judged.error_message) == ("verifier", kind.__name__, "verdict")
    quality_errors = trials["s", "candidate"].quality_errors
    assert list(quality_errors.values()) == [f"{kind.__name__}: score"]


@pytest.mark.parametrize("kind", HOSTILE, ids=lambda k: k.__name__)
def test_retried_agent_raising_hostile_exception(kind: type[Exception]) -> None:
    """Under retries (tenacity) the campaign still records the trial (tenacity's future tests
    the exception's truth: a ``BoolRaises`` is then recorded as the error its ``__bool__`` raised)."""
    tasks = [AblationTask(task_id="t", input_data={}, expected_output=1)]
    retry = {"max_attempts": 2, "retry_on": (), "initial_wait_s": 0.0, "max_wait_s": 0.0}
    engine = AblationEngine(CampaignConfig(timeout_s=10, retry=retry))
    results = engine.run(lambda inp: 1, _agent(kind, True), tasks, arms=("candidate",))
    assert [(r.status, r.error_stage) for r in results] == [("error", "agent")]


@pytest.mark.parametrize("kind", [SystemExit, KeyboardInterrupt])
def test_async_agents_system_exit_is_the_trials_error(kind: type[BaseException]) -> None:
    """A task re-raises ``SystemExit`` and ``KeyboardInterrupt`` out of the event loop: an async
    agent's, awaited in a task of its own, still reaches the trial as its error."""

    async def agent(inp: Any) -> Any:
        raise kind(3)

    trial = _one(lambda inp: 1, agent)["candidate"]
    assert (trial.status, trial.error_type) == ("error", kind.__name__)
