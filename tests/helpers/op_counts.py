"""How much work a library call does, counted instead of timed (the count is the same on any machine).

Two counts:

* :func:`library_lines` - Python lines executed inside the ``ablation`` package during one call
  (``sys.settrace``), for claims about Python-level loops: an algorithm that loops once per pair
  or per resample executes at least that many lines.
* :func:`count_binomial_tails` - binomial tail evaluations (the elements of every
  ``ablation.stats._dist.bdtr``/``bdtrc`` call), for claims about vectorised sums whose cost is the
  number of terms: ``O(√n)`` work shows as a count that grows ~10x when ``n`` grows 100x.

Assumptions: the call runs in the calling thread (other threads are not traced); the modules
read ``_dist.bdtr``/``_dist.bdtrc`` as attributes of the module at call time (so the
monkeypatched counters are the ones called).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

import numpy as np
import pytest

import ablation
from ablation.stats import _dist

__all__ = ["count_binomial_tails", "library_lines"]

_PACKAGE = str(Path(ablation.__file__).resolve().parent) + os.sep
T = TypeVar("T")


def library_lines(fn: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[T, int]:
    """``(fn(*args, **kwargs), lines executed in ablation/ during it)``; the old tracer is restored."""
    count = 0

    def in_frame(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return in_frame

    def on_call(frame: FrameType, event: str, arg: object) -> Any:
        return in_frame if frame.f_code.co_filename.startswith(_PACKAGE) else None

    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        result = fn(*args, **kwargs)
    finally:
        sys.settrace(previous)
    return result, count


def count_binomial_tails(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count binomial tails from now on: the returned list gets each call's number of elements.

    Clear the list between measurements; the counters are removed with ``monkeypatch``.
    """
    sizes: list[int] = []
    for name in ("bdtr", "bdtrc"):
        real = getattr(_dist, name)

        def counted(k: Any, n: Any, p: Any, _real: Callable[..., Any] = real) -> Any:
            sizes.append(np.broadcast(k, n, p).size)
            return _real(k, n, p)

        monkeypatch.setattr(_dist, name, counted)
    return sizes
