"""argparse types of the numeric flags: each refuses a bad value naming the flag, before any trial.

``type=float`` accepts ``nan``, ``inf`` and values the models reject only later, with their own
field names (``gates.noninferiority_margin``) or a raw exception (``ValueError: |delta| ...``).
Each numeric flag of ``run``, ``compare``, ``report`` and ``plan`` instead uses a type built here:
finite, within the flag's range, and an error that names the flag (argparse prefixes
``argument --margin:``; the parser turns it into one ``ablation: error:`` line, exit 1).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = ["FLAG_RANGES", "flag_type"]

#: flag -> (kind, low, high, low inclusive, high inclusive); ``None`` bounds are open-ended.
FLAG_RANGES: dict[str, tuple[type, float | None, float | None, bool, bool]] = {
    "--alpha": (float, 0, 1, False, False),
    "--confidence": (float, 0, 1, False, False),
    "--seed": (int, 0, 2**63 - 1, True, True),
    "--margin": (float, 0, 1, False, False),
    "--min-completed": (float, 0, 1, True, True),
    "--max-latency-ratio": (float, 0, None, False, False),
    "--runs": (int, 1, 10**6, True, True),
    "--concurrency": (int, 1, 10**5, True, True),
    "--timeout": (float, 0, 10**7, False, True),
    "--max-attempts": (int, 1, 1000, True, True),
    "--fail-fast": (int, 0, 10**9, True, True),
    "--stop-when-inconclusive-after": (int, 1, 10**9, True, True),
    "--dask-local": (int, 1, 4096, True, True),
    "--max-output-bytes": (int, 1, 2**27, True, True),  # CampaignConfig.max_output_bytes
    "--max-input-bytes": (int, 1, 2**40, True, True),
    "--worker-memory-mb": (int, 64, 2**30, True, True),
    "--regression-delta": (float, 0, None, True, False),
    "--discordance": (float, 1e-6, 1, True, True),
    "--uplift": (float, -1, 1, True, True),
    "--tasks": (int, 1, 10**7, True, True),
    "--power": (float, 0, 1, False, False),
    "--simulations": (int, 1, 10**6, True, True),
}


def flag_type(flag: str) -> Callable[[str], float | int]:
    """The argparse ``type`` of ``flag``: parse, check finite and in range, or raise naming it.

    Raises (from the returned function):
        argparse.ArgumentTypeError: ``--margin must be a number in (0, 1), got 'nan'``.
    """
    kind, low, high, low_in, high_in = FLAG_RANGES[flag]
    what = "an integer" if kind is int else "a number"
    span = (
        f"{'[' if low_in else '('}{low if low is not None else '-inf'}, "
        f"{high if high is not None else 'inf'}{']' if high_in else ')'}"
    )

    def parse(text: str) -> float | int:
        try:
            value = int(text) if kind is int else float(text)
        except ValueError:
            value = None
        ok = value is not None and math.isfinite(value)
        if ok and low is not None:
            ok = value >= low if low_in else value > low  # type: ignore[operator]
        if ok and high is not None:
            ok = value <= high if high_in else value < high  # type: ignore[operator]
        if not ok:
            raise argparse.ArgumentTypeError(f"{flag} must be {what} in {span}, got {text!r}")
        return value  # type: ignore[return-value]

    parse.__name__ = flag.lstrip("-").replace("-", "_")
    return parse
