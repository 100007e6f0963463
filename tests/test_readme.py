"""Every command in the README runs, with the exit code the README promises.

The two commands at the top (install + example campaign, install + tests) are exactly what
``.ci/run`` executes; the ``ablation ...`` commands of the tour are run here through the
installed console script, in a scratch directory that sees the repository's suites, agents and
example data.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```bash\n(.*?)```", README, flags=re.DOTALL)
COMMANDS = [line.strip() for block in BLOCKS for line in block.splitlines() if line.strip()]
TOUR = [c for c in COMMANDS if c.startswith("ablation ")]

# Commands whose gate is meant to fail (the README says so next to them).
EXPECTED_EXIT = {
    "tasks/support_policy.py": 2,
    # a significant regression: the default gate fails; the README shows the opt-out next to it
    "gpt-5-mini.jsonl --key id --field passed": 2,
    # the candidate's task error fails the completeness gate (the README says so)
    "pe_candidate.json --details": 2,
}


def test_top_commands_are_what_ci_runs() -> None:
    first, second = COMMANDS[0], COMMANDS[1]
    assert first.startswith("pip install -e . && ablation run ")
    assert second == 'pip install -e ".[test]" && python -m pytest'
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert first in ci
    assert second in ci
    # ... in a fresh virtual environment, as users install (the sandbox must work there).
    assert "python3 -m venv" in ci and "/bin/activate" in ci
    assert ci.index("/bin/activate") < ci.index(first)


def test_readme_has_a_tour() -> None:
    assert len(TOUR) >= 5
    assert {c.split()[1] for c in TOUR} >= {"run", "compare", "plan", "init"}


@pytest.mark.parametrize("command", [*TOUR, COMMANDS[0].split(" && ", 1)[1]])
def test_readme_command_runs(command: str, tmp_path: Path) -> None:
    exe = shutil.which("ablation")
    assert exe, "the ablation console script is not installed (pip install -e .)"
    for name in ("tasks", "agents", "examples", "tests"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    args = shlex.split(command)
    proc = subprocess.run(
        [exe, *args[1:]], cwd=tmp_path, capture_output=True, text=True, check=False, timeout=240,
        env={**os.environ, "COLUMNS": "100"},
    )
    expected = next((code for key, code in EXPECTED_EXIT.items() if key in command), 0)
    assert proc.returncode == expected, f"{command}\nstdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr[-2000:]}"
    assert proc.stdout.strip(), f"{command} printed nothing"


PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_readme_python_block_runs(index: int, tmp_path: Path) -> None:
    for name in ("tasks", "agents", "examples", "tests"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    script = tmp_path / f"block_{index}.py"
    script.write_text(PYTHON_BLOCKS[index], encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
        check=False, timeout=120,
    )
    assert proc.returncode == 0, f"README python block {index}:\n{proc.stderr[-2000:]}"


def _examples_paragraph() -> str:
    return README.split("\n## Examples\n", 1)[1].split("\n## ", 1)[0]


def test_readme_names_every_example_and_the_extra_it_needs() -> None:
    """Each ``examples/*.py`` is named under "Examples"; one whose docstring says it needs an
    extra (``pip install 'ablation[NAME]'``) is said there to need it."""
    import ast

    text = " ".join(_examples_paragraph().split())
    for script in sorted((ROOT / "examples").glob("*.py")):
        assert f"`{script.name}`" in text, f"README's Examples section does not name {script.name}"
        doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
        about = re.split(r"`\w+\.py`", text.split(f"`{script.name}`", 1)[1], maxsplit=1)[0]
        for extra in re.findall(r"ablation\[(\w+)\]", doc):
            assert f"needs the `{extra}` extra" in about, f"README: {script.name} needs the {extra} extra"


def test_readme_says_how_a_command_agent_gets_a_secret() -> None:
    """``ablation run`` gives a ``cmd:`` agent only ``SAFE_ENV``: the tour's sentence on command
    agents names that and the real flag that passes more."""
    from ablation.agents.command import SAFE_ENV
    from ablation.cli.option_table import option_of

    sentence = " ".join(README.split("a command line (`cmd:", 1)[1].split(") or an", 1)[0].split())
    flag = re.search(r"`(--[a-z-]+) [A-Z_]+`", sentence)
    assert flag and flag.group(1) in option_of("agent_env").flags, sentence
    for name in re.findall(r"`([A-Z_]+)`", sentence):
        assert name in SAFE_ENV, f"README says a command agent gets {name}; SAFE_ENV: {SAFE_ENV}"


def test_readme_states_the_json_protocol_of_external_agents() -> None:
    """The sentence on command and HTTP agents names the request body the HTTP agent sends and
    every key of the reply object read as an ``AgentOutput`` (``agents/forms.py``)."""
    import json

    from ablation.agents.forms import _OUTPUT_KEYS

    sentence = " ".join(README.split("a command line (`cmd:", 1)[1].split("`TypeError`, never", 1)[0].split())
    server = (ROOT / "agents" / "http_server.py").read_text(encoding="utf-8")
    assert "`agents/http_server.py`" in sentence and '`{"input": ...}`' in sentence
    assert 'POST`` a JSON body ``{"input":' in " ".join(server.split())
    named = {k for k in re.findall(r'`"(\w+)"`', sentence)}
    assert named == set(_OUTPUT_KEYS), f"README names {sorted(named)}, the reply keys are {sorted(_OUTPUT_KEYS)}"
    example = json.loads(re.search(r'`(\{"output": 14, "note": "x"\})`', sentence).group(1))  # type: ignore[union-attr]
    from ablation.agents.forms import interpret_agent_json

    assert interpret_agent_json(example, "readme") == example


def test_readme_says_retries_are_off_unless_asked() -> None:
    """The default of ``--max-attempts`` (one attempt: no retry) is the one the README states, and
    the retry example in the tour is not mistaken for a default."""
    from ablation.cli.option_table import option_of

    default = option_of("max_attempts").default
    text = " ".join(README.split())
    assert f"off by default (`--max-attempts {default}`)" in text
    assert "the default retries retry them" not in text
