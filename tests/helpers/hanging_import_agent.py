"""An agent whose module never finishes loading in an isolation worker.

Only in a worker process (its command line carries the worker marker) does the import hang; the
test's own process imports it at once. Every call of it in a worker is therefore a timeout.
"""

from __future__ import annotations

import sys
import time

from ablation.run.isolation_worker import WORKER_MARKER

if WORKER_MARKER in sys.argv:
    time.sleep(3600)


def echo(x: int) -> int:
    """Answers the task's input at once (never reached in a worker)."""
    return x
