"""A suite of 200 tasks for end-to-end tests: ``ablation run tests/helpers/slow_suite.py ...``.

Task ``tNNN`` has input ``{"n": NNN}`` and expects ``3 * NNN``; the tasks fall into four
categories. Environment variables, read at import:

- ``SLOW_SUITE_TASKS``: number of tasks (default 200).
- ``SLOW_SUITE_CHANGE``: id of one task whose expected output is edited (``3 * n + 1``), to
  simulate a suite that changed between a crash and a resume.
"""

from __future__ import annotations

import os

from ablation import AblationTask

DEFAULT_TASKS = 200
CATEGORIES = ("lookup", "math", "code", "prose")


def task_id(n: int) -> str:
    """The id of task number ``n``."""
    return f"t{n:03d}"


def make_tasks(n_tasks: int = DEFAULT_TASKS, *, changed: str | None = None) -> list[AblationTask]:
    """Build the suite.

    Args:
        n_tasks: Number of tasks.
        changed: Id of a task whose expected output is edited (``None``: no edit).

    Returns:
        The tasks, in id order.
    """
    return [
        AblationTask(
            task_id=task_id(n),
            input_data={"n": n},
            expected_output=3 * n + (1 if task_id(n) == changed else 0),
            category=CATEGORIES[n % len(CATEGORIES)],
        )
        for n in range(n_tasks)
    ]


tasks = make_tasks(
    int(os.environ.get("SLOW_SUITE_TASKS", DEFAULT_TASKS)),
    changed=os.environ.get("SLOW_SUITE_CHANGE") or None,
)
