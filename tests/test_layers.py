"""The import layers of DESIGN.md section 4 hold: imports run downward only.

Every ``import`` statement of every library module (including lazy ones inside functions) is
read with :mod:`ast` and checked against the modules that module may use.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ablation"

BASE = {"errors"}
SCHEMA = BASE | {"schema"}
MODELS = SCHEMA | {"report"}
LEAVES = SCHEMA | {"agents", "agent_forms", "verifiers", "sandbox", "quality", "judges"}

# module (or package) -> project modules it may import
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "stats": {"stats"},
    "seeding": set(),
    "schema": BASE,
    "report": SCHEMA,
    "agents": SCHEMA | {"agent_forms"},
    "agent_forms": SCHEMA | {"agents"},
    "sandbox": SCHEMA,
    "verifiers": SCHEMA | {"sandbox"},
    "quality": SCHEMA | {"judges"},
    "judges": SCHEMA | {"quality", "stats"},
    "store": SCHEMA | {"store_format"},
    "store_format": SCHEMA,
    "progress": SCHEMA,
    "settings": BASE,
    "scaffold": BASE,
    "scaleout": BASE | {"loading"},
    "result_files": LEAVES,
    "loading": LEAVES | {"result_files"},
    "engine": LEAVES | {"progress"},
    "pairing": MODELS,
    "continuous": MODELS | {"stats", "seeding"},
    "gates": MODELS | {"stats"},
    "breakdowns": MODELS | {"stats", "seeding", "pairing"},
    "analysis": MODELS
    | {"stats", "seeding", "continuous", "gates", "pairing", "loading", "breakdowns"},
    "render": MODELS | {"stats", "render"},
    "testing": MODELS | {"gates"},
    "campaign": LEAVES | {"report", "engine", "analysis", "store", "progress"},
    "cli": {"*"},
}

THIRD_PARTY = {
    "rich": {"render", "progress", "cli"},
    "tenacity": {"engine"},
    "matplotlib": {"render"},
    "scipy": {"stats"},
    "distributed": {"scaleout"},
    "cloudpickle": {"scaleout"},
}


def _module_key(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            if node.module == "ablation":
                found.update(f"ablation.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level:
            found.add("ablation." + _module_key(path) + "." + (node.module or ""))
    return found


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py" or p.parent != PACKAGE)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_project_imports_run_downward(path: Path) -> None:
    key = _module_key(path)
    assert key in ALLOWED, f"{key} is not placed in a layer: add it to ALLOWED"
    allowed = ALLOWED[key]
    for name in _imports(path):
        parts = name.split(".")
        if parts[0] == "ablation" and len(parts) > 1:
            target = parts[1]
            if target == "__version__":
                continue
            assert "*" in allowed or target == key or target in allowed, (
                f"{path.relative_to(PACKAGE)} imports ablation.{target}, outside its layer"
            )
        elif parts[0] in THIRD_PARTY:
            assert key in THIRD_PARTY[parts[0]], (
                f"{path.relative_to(PACKAGE)} imports {parts[0]}, which belongs in "
                f"{sorted(THIRD_PARTY[parts[0]])}"
            )


def test_engine_does_not_load_rich_or_renderers() -> None:
    code = (
        "import sys, ablation.engine, ablation.campaign;"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('rich', 'matplotlib') "
        "or m.startswith('ablation.render')];"
        "print(','.join(bad)); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"engine loads: {proc.stdout.strip()} {proc.stderr[-500:]}"


def test_stats_imports_no_project_module() -> None:
    code = (
        "import sys, ablation.stats;"
        "bad = [m for m in sys.modules if m.startswith('ablation.') and not m.startswith('ablation.stats')];"
        "print(','.join(bad)); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"ablation.stats loads: {proc.stdout.strip()} {proc.stderr[-500:]}"
