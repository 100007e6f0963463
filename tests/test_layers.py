"""The import layers of DESIGN.md section 4 hold: imports run downward only, and there are no cycles.

Every ``import`` statement of every library module (including lazy ones inside functions and
``TYPE_CHECKING`` blocks) is read with :mod:`ast`. Each module has a *key*: its dotted path below
``ablation`` (``run.engine``, ``analysis.gates``, ``stats.binary``); ``ALLOWED`` maps key prefixes to
the key prefixes they may import. A key may always import its own subpackage's siblings only when the
map says so: within ``run`` and ``analysis`` the order matters too.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ablation"

GROUND = {"errors", "strict_json", "jsonable", "schema", "outputs", "config", "columns", "digests", "process_hooks", "eventloop", "forks", "spans", "daemon_pool"}
MODELS = GROUND | {"report", "report_items"}
EVALUATE = GROUND | {"evaluate", "stats"}

# key prefix -> key prefixes it may import (longest matching prefix wins)
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "stats": {"stats"},
    "digests": set(),
    "process_hooks": set(),
    "eventloop": {"errors", "daemon_pool"},
    "daemon_pool": set(),
    "forks": set(),
    "outputs": set(),
    "strict_json": {"errors"},
    "spans": {"outputs"},
    "jsonable": set(),
    "schema": {"errors", "digests", "jsonable", "outputs", "spans"},
    "config": {"errors"},
    "columns": {"errors", "outputs"},
    "report_items": {"spans"},
    "report": GROUND | {"report_items"},
    "agents": GROUND | {"agents"},
    "evaluate": set(),
    "evaluate.equality": set(),
    "evaluate.sandbox_process": GROUND,
    "evaluate.sandbox_wire": GROUND,
    "evaluate.seccomp": {"errors"},
    "evaluate.sandbox_confinement": {"evaluate.seccomp", "evaluate.sandbox_outcome"},
    "evaluate.sandbox_harness": GROUND | {"evaluate.sandbox_wire"},
    "evaluate.sandbox_runner": GROUND,
    "evaluate.sandbox_outcome": set(),
    "evaluate.sandbox": GROUND
    | {"evaluate.sandbox_process", "evaluate.sandbox_harness", "evaluate.sandbox_runner",
       "evaluate.sandbox_confinement", "evaluate.sandbox_outcome"},
    "evaluate.verifiers": GROUND | {"evaluate.equality"},
    "evaluate.code_tests": GROUND
    | {"evaluate.sandbox", "evaluate.verifiers", "evaluate.sandbox_confinement"},
    "evaluate.quality": GROUND,
    "evaluate.judges": GROUND | {"evaluate.quality", "stats"},
    "store": GROUND | {"store"},
    "sources.text": GROUND,
    "sources.result_files": GROUND | {"sources.text", "sources.readers"},
    "sources.readers": GROUND | {"sources.text", "sources.readers"},
    "sources.inputs": GROUND | {"sources.readers", "sources.result_files"},
    "sources": GROUND | {"sources", "agents", "evaluate"},
    "run": set(),
    "run.progress": GROUND,
    "run.plan": GROUND,
    "run.limits": set(),
    "run.plain_output": GROUND,
    "run.output_caps": GROUND | {"run.plain_output"},
    "run.transient": set(),
    "run.spans": GROUND,
    "run.threads": {"forks", "daemon_pool"},
    "run.deadlines": set(),
    "run.watchdog": GROUND,
    "run.attempts": GROUND | {"run.limits", "run.transient", "run.output_caps"},
    "run.trial": EVALUATE
    | {"agents", "run.attempts", "run.deadlines", "run.limits", "run.plan", "run.plain_output",
       "run.output_caps", "run.threads", "run.transient", "run.watchdog", "run.spans"},
    "run.isolation_worker": GROUND | {"sources.modules"},
    "run.worker_output": set(),
    "run.worker_process": {"run.isolation_worker", "run.worker_output"},
    "run.isolation": GROUND
    | {"agents", "run.threads", "run.isolation_worker", "run.worker_process", "sources.modules"},
    "run.engine": EVALUATE
    | {"agents", "run.progress", "run.plan", "run.limits", "run.trial", "run.threads", "run.watchdog",
       "run.isolation", "run.suite_source", "run.spans"},
    "run.suite_source": GROUND,
    "run.suite_scan": GROUND | {"run.suite_source"},
    "run.trials_report": MODELS | {"analysis"},
    "run.scaleout": GROUND | {"sources"},
    "run.sinks": GROUND | {"store"},
    "run.failfast": GROUND | {"run.transient"},
    "run.resume_checks": GROUND,
    "run.sequential": MODELS
    | {"stats", "analysis.pair_arms", "analysis.sequential", "analysis.in_memory"},
    "analysis": set(),
    "analysis.seeding": set(),
    "analysis.background": set(),
    "analysis.arm_totals": MODELS,
    "analysis.accumulate": MODELS,
    "analysis.pairing": MODELS | {"analysis.accumulate", "analysis.arm_totals"},
    "analysis.gate_status": MODELS,
    "analysis.gate_data": MODELS,
    "analysis.completeness": MODELS | {"analysis.gate_status"},
    "analysis.failures": MODELS | {"analysis.pairing"},
    "analysis.metric_margins": MODELS
    | {"stats", "analysis.breakdowns", "analysis.pairing", "analysis.gate_data", "analysis.failures",
       "analysis.latency_censoring"},
    "analysis.metric_gate": MODELS | {"stats", "analysis.failures", "analysis.gate_data", "analysis.gate_status"},
    "analysis.pass_note": MODELS | {"analysis.builtin_gates"},
    "analysis.latency_censoring": MODELS | {"analysis.pairing", "analysis.metrics"},
    "analysis.builtin_gates": MODELS
    | {"stats", "analysis.completeness", "analysis.gate_data", "analysis.gate_status",
       "analysis.metric_gate"},
    "analysis.latency_gate": MODELS
    | {"stats", "analysis.builtin_gates", "analysis.gate_data", "analysis.gate_status"},
    "analysis.gates": MODELS
    | {
        "stats",
        "analysis.builtin_gates",
        "analysis.gate_status",
        "analysis.latency_gate",
        "analysis.pass_note",
        "analysis.sequential_gates",
    },
    "analysis.numeric_verdict": MODELS
    | {"analysis.builtin_gates", "analysis.completeness", "analysis.gate_status"},
    "analysis.numeric": MODELS
    | {"stats", "analysis.gate_status", "analysis.metric_margins", "analysis.numeric_verdict"},
    "analysis.sequential_gates": MODELS | {"analysis.builtin_gates", "analysis.gate_status"},
    "analysis.stop_settings": MODELS | {"analysis.sequential"},
    "analysis.export_campaign": MODELS | {"analysis.stop_settings", "sources.readers"},
    "analysis.sequential": MODELS
    | {
        "stats",
        "analysis.accumulate",
        "analysis.arm_totals",
        "analysis.completeness",
        "analysis.pairing",
    },
    "analysis.in_memory": GROUND,
    "analysis.factorize": set(),
    "analysis.pair_arms": MODELS
    | {"analysis.accumulate", "analysis.arm_totals", "analysis.factorize", "analysis.pairing"},
    "analysis.metrics": MODELS | {"stats", "analysis.seeding"},
    "analysis.breakdowns": MODELS | {"stats", "analysis.seeding", "analysis.pairing", "analysis.factorize"},
    "analysis.uplift_intervals": MODELS
    | {"stats", "analysis.breakdowns", "analysis.pairing", "analysis.seeding"},
    "analysis.headline": MODELS
    | {"stats", "analysis.breakdowns", "analysis.pairing", "analysis.seeding", "analysis.uplift_intervals"},
    "analysis.details": MODELS | {"analysis.pairing"},
    "analysis.notes": MODELS | {"stats", "analysis.pairing", "analysis.gate_data"},
    "analysis.build": MODELS | {"stats", "analysis", "sources.result_files", "sources.inputs"},
    "analysis.stored": MODELS | {"analysis", "store"},
    "analysis.candidates": MODELS | {"stats"},
    "render": MODELS | {"stats", "render"},
    "render._summary": MODELS | {"stats", "render", "analysis.candidates"},
    "render.numeric_doc": MODELS | {"stats", "render", "analysis.numeric"},
    "run.campaign": MODELS | {"agents", "evaluate", "store", "analysis", "run"},
    "verifiers": {"evaluate.verifiers", "evaluate.code_tests", "evaluate.equality"},
    "quality": {"evaluate.quality", "evaluate.judges"},
    "testing": MODELS | {"analysis.gates"},
    "cli": {"*"},
    "view": MODELS | {"analysis", "store", "render", "view"},
}

THIRD_PARTY = {
    "rich": {"render", "run.progress", "cli"},
    "tenacity": {"run.attempts"},
    "matplotlib": {"render"},
    "scipy": {"stats"},
    "distributed": {"run.scaleout"},
    "cloudpickle": {"run.scaleout"},
    "starlette": {"view"},
    "uvicorn": {"view"},
    "opentelemetry": {"run.spans"},
}


def module_key(path: Path) -> str:
    """``ablation/run/engine.py`` -> ``run.engine``; ``ablation/render/__init__.py`` -> ``render``."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) or "__init__"


def _rule(key: str, table: dict[str, set[str]]) -> str | None:
    best = None
    for prefix in table:
        if (key == prefix or key.startswith(prefix + ".")) and (best is None or len(prefix) > len(best)):
            best = prefix
    return best


def _covers(prefixes: set[str], target: str) -> bool:
    return "*" in prefixes or any(target == p or target.startswith(p + ".") for p in prefixes)


@functools.cache  # read once per worker: by each module's layer test and by the cycle search
def project_imports(path: Path) -> frozenset[str]:
    """Dotted names below ``ablation`` that ``path`` imports (``from ablation.x import y`` -> ``x.y``
    when ``y`` is a submodule, else ``x``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "ablation" or node.module.startswith("ablation."):
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    rel = Path(*sub.split(".")[1:])
                    is_module = (PACKAGE / rel).with_suffix(".py").exists() or (PACKAGE / rel).is_dir()
                    found.add(sub if is_module else node.module)
            else:
                found.add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path}: relative import; use the absolute ablation.* name")
    return frozenset(found)


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p != PACKAGE / "__init__.py")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_project_imports_run_downward(path: Path) -> None:
    key = module_key(path)
    rule = _rule(key, ALLOWED)
    assert rule is not None, f"{key} is not placed in a layer: add it to ALLOWED"
    allowed = ALLOWED[rule]
    for name in project_imports(path):
        parts = name.split(".")
        if parts[0] == "ablation" and len(parts) > 1:
            target = ".".join(parts[1:])
            if target == "__version__" or target == key:
                continue
            assert _covers(allowed, target), (
                f"{path.relative_to(PACKAGE)} imports ablation.{target}, outside its layer"
            )
        elif parts[0] in THIRD_PARTY:
            assert _rule(key, {p: set() for p in THIRD_PARTY[parts[0]]}) is not None, (
                f"{path.relative_to(PACKAGE)} imports {parts[0]}, which belongs in "
                f"{sorted(THIRD_PARTY[parts[0]])}"
            )


def import_graph() -> dict[str, set[str]]:
    """Module key -> module keys it imports (a subpackage import points at its ``__init__``)."""
    keys = {module_key(p) for p in MODULES}
    graph: dict[str, set[str]] = {}
    for path in MODULES:
        edges = set()
        for name in project_imports(path):
            parts = name.split(".")
            if parts[0] != "ablation" or len(parts) < 2:
                continue
            target = ".".join(parts[1:])
            while target and target not in keys:
                target = target.rpartition(".")[0]
            if target and target != module_key(path):
                edges.add(target)
        graph[module_key(path)] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of keys (first repeated last), or ``None``."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_cycles() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_every_subpackage_is_mapped() -> None:
    subpackages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert subpackages == {"agents", "analysis", "cli", "evaluate", "render", "run", "sources", "stats", "store", "view"}


def test_engine_does_not_load_rich_or_renderers() -> None:
    code = (
        "import sys, ablation.run.engine, ablation.run.campaign;"
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
