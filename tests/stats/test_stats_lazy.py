"""``ablation.stats`` loads its public names on first use (PEP 562) and keeps the same API.

The package ``__init__`` used to import every submodule, so any command paid for the sequential,
repeated-runs and planning code (issue 13). These tests pin the three views of one public API
to each other: ``__all__``, the runtime map ``_EXPORTS`` and the ``TYPE_CHECKING`` imports that
type checkers read; and they check that a name resolves to the very object of its submodule.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import ablation.stats as stats_pkg

INIT = Path(stats_pkg.__file__)


def _type_checking_imports() -> dict[str, set[str]]:
    """``{submodule: names}`` of the ``from ablation.stats.X import ...`` in ``if TYPE_CHECKING:``."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    found: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module, ast.dump(stmt)
                found[stmt.module.rpartition(".")[2]] = {a.name for a in stmt.names}
    return found


def test_all_exports_and_type_checking_imports_name_the_same_api() -> None:
    assert len(stats_pkg.__all__) == len(set(stats_pkg.__all__))
    assert set(stats_pkg.__all__) == set(stats_pkg._HOMES)
    runtime = {module: set(names) for module, names in stats_pkg._EXPORTS.items()}
    assert runtime == _type_checking_imports()


@pytest.mark.parametrize("name", sorted(stats_pkg.__all__))
def test_each_public_name_is_its_submodules_object(name: str) -> None:
    home = importlib.import_module(f"ablation.stats.{stats_pkg._HOMES[name]}")
    assert getattr(stats_pkg, name) is getattr(home, name)
    assert name in dir(stats_pkg)


def test_unknown_name_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_test"):
        stats_pkg.no_such_test  # type: ignore[attr-defined]  # noqa: B018
    assert not hasattr(stats_pkg, "_private_helper")


def test_star_import_binds_every_public_name() -> None:
    namespace: dict[str, object] = {}
    exec("from ablation.stats import *", namespace)
    assert set(stats_pkg.__all__) <= set(namespace)
    assert namespace["mcnemar"] is importlib.import_module("ablation.stats.binary").mcnemar


def test_first_use_imports_only_the_home_submodule() -> None:
    code = (
        "import sys, ablation.stats as s;"
        "loaded = lambda: sorted(m for m in sys.modules if m.startswith('ablation.stats.'));"
        "print(loaded()); s.mcnemar; print(loaded());"
        "print(s.planning.__name__, 'ablation.stats.planning' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before_line, after_line, planning_line = proc.stdout.splitlines()
    before, after = ast.literal_eval(before_line), ast.literal_eval(after_line)
    assert before == []
    assert "ablation.stats.binary" in after
    unused = {"sequential", "sequential_cs", "sequential_monitor", "sequential_sim", "repeated",
              "planning", "equivalence", "bootstrap", "continuous"}
    assert not unused & {m.rpartition(".")[2] for m in after}
    # a submodule is an attribute, as when the package imported every submodule
    assert planning_line == "ablation.stats.planning True"
