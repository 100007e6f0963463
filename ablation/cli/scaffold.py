"""``ablation init``: scaffold a suite, two agents, ``[tool.ablation]`` defaults and CI in a project.

Besides the example suite and agents, it writes a GitHub workflow that runs the example campaign on
every pull request (``.github/workflows/ablation.yml``), the composite action it uses
(``.github/actions/ablation/action.yml``, a copy of this repository's ``action.yml``, shipped in the
package as ``ablation/cli/action.yml``), and adds ``.ablation/`` (the run store) to ``.gitignore``.
"""

from __future__ import annotations

import json
import shlex
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


WORKFLOW = """# Written by `ablation init`. On every pull request: run the example campaign, write the report
# to the job summary and to one pull-request comment (updated on every push, skipped for forks),
# upload the Markdown, JSON and JUnit files, and fail the job when a release gate fails.
# Pushes to main fill the cached run store whose baseline the pull requests reuse.
name: ablation
on:
  pull_request:
  push:
    branches: [main]
permissions:
  contents: read
  pull-requests: write
jobs:
  ablation:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: ./.github/actions/ablation
        with:
          # What pip installs: ablation, and whatever your agents need (a requirement, a path or a URL).
{install_note}          install: {install}
          command: {command}
          reuse-baseline: "true"
"""

#: Why ``install`` is left empty, written above it in the workflow.
UNSET_INSTALL = """\
          # Not set: ablation was installed here from {origin}, which CI cannot reach, and the
          # name ablation on PyPI is a different project. Set it to where CI gets this ablation,
          # e.g. "ablation@git+https://github.com/OWNER/REPO@COMMIT"; until then the job fails.
"""


def install_source() -> tuple[str, str | None]:
    """What the workflow's ``install`` input holds, and the origin when it cannot be known.

    Read from the installed distribution's ``direct_url.json`` (PEP 610): a VCS checkout becomes
    ``ablation@git+URL@COMMIT`` (the commit that is installed here), an archive at a remote URL
    ``ablation@URL`` (with its hash when recorded); PEP 508 direct references without spaces,
    because the action passes ``install`` to pip word by word (several requirements may be given). A local directory, a local file or an index
    (no ``direct_url.json``) is not reproducible in CI, and the bare name must not be written:
    ``ablation`` on PyPI is another project. Then the value is empty (the action fails and says
    so) and the origin is returned for a message.
    """
    from importlib import metadata

    try:
        text = metadata.distribution("ablation").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        text = None
    if not text:
        return '""', "a package index"
    try:
        direct = json.loads(text)
        url = str(direct["url"])
    except (ValueError, KeyError, TypeError):
        return '""', "an unrecorded source"
    if url.startswith("file:"):
        return '""', f"the local path {url.removeprefix('file://')}"
    subdirectory = direct.get("subdirectory")
    fragment = f"#subdirectory={subdirectory}" if subdirectory else ""
    vcs = direct.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs") and vcs.get("commit_id"):
        return json.dumps(f"ablation@{vcs['vcs']}+{url}@{vcs['commit_id']}{fragment}"), None
    hashes = (direct.get("archive_info") or {}).get("hashes") or {}
    if "sha256" in hashes and not fragment:
        fragment = f"#sha256={hashes['sha256']}"
    return json.dumps(f"ablation@{url}{fragment}"), None


#: The run store's directory, kept out of version control.
IGNORED = ".ablation/"


def _ignore_store(directory: Path) -> str | None:
    """``directory/.gitignore`` with ``.ablation/`` added; ``None`` when it already ignores it.

    Raises:
        ConfigError: if the file exists and is not UTF-8 text.
    """
    path = directory / ".gitignore"
    current = _read(path) if path.exists() else ""
    if any(line.strip() in (IGNORED, IGNORED.rstrip("/"), "/" + IGNORED) for line in current.splitlines()):
        return None
    separator = "" if not current or current.endswith("\n") else "\n"
    return f"{current}{separator}# ablation's run store\n{IGNORED}\n"


def _read(path: Path) -> str:
    """The UTF-8 text of ``path``; a file that is not UTF-8 is a :class:`ConfigError`."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}); nothing written") from None


def _with_settings(pyproject: Path) -> str | None:
    """``pyproject`` with ``[tool.ablation]`` defaults appended; ``None`` when it already sets them.

    The file is read as TOML (``tomllib``, as ``ablation run`` reads it), not searched as text: a
    ``tool.ablation`` in any form (a ``[tool.ablation]`` header, a key of ``[tool]``, a dotted key)
    counts, a comment naming the section does not. Assumes that appending is only right when the
    result parses and holds exactly the defaults in ``tool.ablation`` and everything else unchanged.

    Raises:
        ConfigError: if the file is not valid TOML (with tomllib's line and column), or ``tool``
            is something the section cannot be added to (a value, an inline table, an array).
    """
    import tomllib

    if not pyproject.exists():
        return SETTINGS.lstrip("\n")
    current = _read(pyproject)
    try:
        data = tomllib.loads(current)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{pyproject}: invalid TOML ({exc}); nothing written") from None
    tool = data.get("tool")
    if isinstance(tool, dict) and "ablation" in tool:
        return None
    text = current.rstrip("\n") + ("\n" if current.strip() else "") + SETTINGS.lstrip("\n")
    try:
        merged = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        merged = {}
    added = merged.get("tool")
    if isinstance(added, dict) and added.get("ablation") == tomllib.loads(SETTINGS)["tool"]["ablation"]:
        rest = {**merged, "tool": {k: v for k, v in added.items() if k != "ablation"}}
        if rest == {**data, "tool": tool or {}}:
            return text
    shape = "an inline table" if isinstance(tool, dict) else f"{type(tool).__name__} {tool!r:.40}"
    raise ConfigError(
        f"{pyproject}: [tool.ablation] cannot be added: tool is {shape}, which a [tool.ablation] "
        "table cannot extend; add the section by hand; nothing written"
    )


def _shell_path(directory: Path) -> str:
    """``directory`` as one shell word for ``cd`` (quoted; ``./`` before a leading ``-``)."""
    shown = str(directory)
    return shlex.quote(f"./{shown}" if shown.startswith("-") else shown)


def scaffold(directory: Path, *, force: bool = False) -> tuple[list[Path], str]:
    """Write the example suite and agents, ``[tool.ablation]`` and CI files in ``directory``.

    See the module docstring for the files; ``pyproject.toml`` and ``.gitignore`` are only ever
    appended to. Every check runs before the first write, so a refusal leaves the directory as it
    was. What happened to a file that existed is printed here, one line each (``appended to``,
    ``overwrote``, ``left ... as it is``); the files created anew are returned for the caller to
    list as created.

    Returns:
        The files created, and the command that runs the example campaign (its ``cd`` quoted
        for a POSIX shell).

    Raises:
        ConfigError: if a file exists (without ``force``), or pyproject.toml or .gitignore cannot
            be read or extended (see :func:`_with_settings`).
    """
    run_args = (
        "run tasks/example.py --baseline agents/example.py:baseline "
        "--candidate agents/example.py:candidate"
    )
    action = (Path(__file__).with_name("action.yml")).read_text(encoding="utf-8")
    install, origin = install_source()
    install_note = "" if origin is None else UNSET_INSTALL.format(origin=origin)
    files: dict[Path, str | None] = {
        directory / "tasks" / "example.py": SUITE,
        directory / "agents" / "example.py": AGENTS,
        directory / ".github" / "workflows" / "ablation.yml":
            WORKFLOW.format(install=install, install_note=install_note, command=run_args),
        directory / ".github" / "actions" / "ablation" / "action.yml": action,
    }  # fmt: skip
    existing = [p for p in files if p.exists()]
    if existing and not force:
        raise ConfigError(f"{existing[0]} exists (use --force to overwrite)")
    pyproject = directory / "pyproject.toml"
    files[pyproject] = _with_settings(pyproject)
    files[directory / ".gitignore"] = _ignore_store(directory)
    created: list[Path] = []
    for path, text in files.items():
        if text is None:
            if path == pyproject:
                print(f"left {path} as it is: it already sets tool.ablation")
            continue
        if not path.exists():
            created.append(path)
        elif path in (pyproject, directory / ".gitignore"):
            print(f"appended to {path}")
        else:
            print(f"overwrote {path}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    command = f"ablation {run_args}"
    if directory.resolve() != Path.cwd().resolve():
        command = f"cd {_shell_path(directory)} && {command}"
    return created, command
