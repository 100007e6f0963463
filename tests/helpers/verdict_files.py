"""Result files of bare verdicts for command-line tests."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path


def write_verdicts(path: Path, passed: Iterable[bool]) -> Path:
    """Write one ``{"id": "t<i>", "passed": ...}`` line per flag to ``path`` and return it."""
    path.write_text("".join(json.dumps({"id": f"t{i}", "passed": p}) + "\n" for i, p in enumerate(passed)))
    return path
