"""``ablation init``: scaffold a suite, two agents and ``[tool.ablation]`` defaults in a project."""

from __future__ import annotations

from pathlib import Path

from ablation.errors import ConfigError

__all__ = ["scaffold"]

SUITE = '''"""Example suite: replace these tasks with your own.

Each task pairs an input with an expected output; the default verifier compares them for
equality (numbers with a tiny tolerance, strings without surrounding whitespace). Mark the tasks
that must never regress with ``critical=True``.
"""

from ablation import AblationTask

tasks = [
    AblationTask(task_id=f"add-{a}-{b}", category="addition", input_data={"op": "+", "a": a, "b": b},
                 expected_output=a + b)
    for a, b in [(1, 2), (10, 32), (-5, 5), (123, 877), (7, 8)]
] + [
    AblationTask(task_id=f"mul-{a}-{b}", category="multiplication", input_data={"op": "*", "a": a, "b": b},
                 expected_output=a * b, critical=(a == 0))
    for a, b in [(2, 3), (0, 99), (12, 12), (-3, 7), (25, 4)]
]
'''

AGENTS = '''"""Example agents: the baseline and the candidate you want to compare.

An agent is any callable taking the task input (sync or async), an object with ``run``, or a
dict with a ``"run"`` entry. Replace these with calls to your real agent.
"""


def baseline(task: dict) -> int:
    """The current agent."""
    a, b = task["a"], task["b"]
    return a + b if task["op"] == "+" else a * b


def candidate(task: dict) -> int:
    """The change under test: a shortcut that breaks negative sums."""
    a, b = task["a"], task["b"]
    if task["op"] == "+":
        return abs(a) + abs(b)
    return a * b
'''

SETTINGS = """
[tool.ablation]
# Defaults for `ablation run` / `ablation compare`; command-line flags win.
seed = 0
concurrency = 8
timeout = 60
runs = 1
# margin = 0.02                    # non-inferiority margin on the pass rate
# Default gates (critical tasks, no significant regression, completeness) are on; turning one
# off is explicit and the report lists it as OFF:
# no-significant-regression = false
# min-completed = 0.95             # least share of each arm's trials that must complete
# fail-fast = 10                   # stop when an arm's first 10 trials hit the same infra error
"""


def scaffold(directory: Path, *, force: bool = False) -> tuple[list[Path], str]:
    """Write ``tasks/example.py``, ``agents/example.py`` and ``[tool.ablation]`` in ``directory``.

    Returns:
        The files written or updated, and the command that runs the example campaign.

    Raises:
        ConfigError: if a file exists (without ``force``) or pyproject.toml already has the section.
    """
    directory.mkdir(parents=True, exist_ok=True)
    files = {directory / "tasks" / "example.py": SUITE, directory / "agents" / "example.py": AGENTS}
    existing = [p for p in files if p.exists()]
    if existing and not force:
        raise ConfigError(f"{existing[0]} exists (use --force to overwrite)")
    created: list[Path] = []
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        created.append(path)
    pyproject = directory / "pyproject.toml"
    current = pyproject.read_text(encoding="utf-8") if pyproject.exists() else ""
    if "[tool.ablation]" not in current:
        pyproject.write_text(current.rstrip("\n") + ("\n" if current else "") + SETTINGS.lstrip("\n")
                             if current else SETTINGS.lstrip("\n"), encoding="utf-8")
        created.append(pyproject)
    command = (
        "ablation run tasks/example.py --baseline agents/example.py:baseline "
        "--candidate agents/example.py:candidate"
    )
    if directory.resolve() != Path.cwd().resolve():
        command = f"cd {directory} && {command}"
    return created, command
