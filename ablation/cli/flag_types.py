"""argparse types of the numeric flags: each refuses a bad value naming the flag, before any trial.

``type=float`` accepts ``nan``, ``inf`` and values the models reject only later, with their own
field names (``gates.noninferiority_margin``) or a raw exception (``ValueError: |delta| ...``).
Each numeric flag of every command instead uses a type built here from its declared range:
finite, within the flag's range, and an error that names the flag (argparse prefixes
``argument --margin:``; the parser turns it into one ``ablation: error:`` line, exit 1).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import astuple

from ablation.cli.option_table import OPTIONS

__all__ = ["FLAG_RANGES", "flag_type"]

#: flag -> (kind, low, high, low inclusive, high inclusive); ``None`` bounds are open-ended. Derived
#: from :data:`ablation.cli.option_table.OPTIONS`, which ``[tool.ablation]`` keys share.
FLAG_RANGES: dict[str, tuple[type, float | None, float | None, bool, bool]] = {
    o.flags[0]: (int if o.kind == "int" else float, *astuple(o.bounds))
    for o in OPTIONS
    if o.bounds is not None
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
