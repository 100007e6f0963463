"""An agent whose module takes :data:`LOAD_S` seconds to load in an isolation worker.

Only in a worker process (its command line carries the worker marker): the test's own process
imports it at once. So a worker's first call of this agent costs an interpreter start plus
``LOAD_S``, the campaign's cost of process isolation that no trial's clock should run for.
"""

from __future__ import annotations

import sys
import time

from ablation.run.isolation_worker import WORKER_MARKER

LOAD_S = 0.5

if WORKER_MARKER in sys.argv:
    time.sleep(LOAD_S)


def echo(x: int) -> int:
    """Answers the task's input at once."""
    return x
