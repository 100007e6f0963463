"""ablation.stats is the bottom layer: no other ablation module, no pydantic."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import ablation.stats as stats_pkg

STATS_DIR = Path(stats_pkg.__file__).parent


def test_stats_imports_only_itself_and_numeric_libraries() -> None:
    for path in STATS_DIR.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not name.startswith("pydantic"), f"{path.name} imports {name}"
                if name.startswith("ablation"):
                    assert name.startswith("ablation.stats"), f"{path.name} imports {name}"


def test_public_api_is_complete_and_results_are_frozen() -> None:
    for name in stats_pkg.__all__:
        assert hasattr(stats_pkg, name), name
    exported = [getattr(stats_pkg, n) for n in stats_pkg.__all__ if n[0].isupper()]
    results = [obj for obj in exported if isinstance(obj, type)]  # not constants
    assert len(results) >= len(exported) - 1
    for cls in results:
        assert dataclasses.is_dataclass(cls)
        assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
