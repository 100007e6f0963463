"""What the workflow ``ablation init`` writes installs: this ablation, never PyPI's ``ablation``.

The name ``ablation`` on PyPI is a different project (at the same version number), so the
workflow must name where this one came from (PEP 610's ``direct_url.json`` of the installed
distribution), or leave ``install`` empty and fail the job with a message.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from ablation.cli import main
from ablation.cli.scaffold import install_source

REPO = Path(__file__).resolve().parents[2]


def _installed_from(root: Path, direct_url: dict[str, object] | None) -> None:
    """A distribution ``ablation`` in ``root`` (put first on ``sys.path`` by the caller)."""
    info = root / "ablation-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ablation\nVersion: 0.1.0\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))


def _install_input(project: Path) -> str:
    workflow = yaml.safe_load((project / ".github" / "workflows" / "ablation.yml").read_text())
    step = workflow["jobs"]["ablation"]["steps"][1]
    return str(step["with"]["install"])


@pytest.mark.parametrize(
    ("direct_url", "expected"),
    [
        (
            {"url": "https://github.com/o/r.git", "vcs_info": {"vcs": "git", "commit_id": "ab12", "requested_revision": "main"}},
            "ablation@git+https://github.com/o/r.git@ab12",
        ),
        (
            {"url": "https://github.com/o/r.git", "subdirectory": "py", "vcs_info": {"vcs": "git", "commit_id": "ab12"}},
            "ablation@git+https://github.com/o/r.git@ab12#subdirectory=py",
        ),
        (
            {"url": "https://example.org/ablation-0.1.0.tar.gz", "archive_info": {"hashes": {"sha256": "ff00"}}},
            "ablation@https://example.org/ablation-0.1.0.tar.gz#sha256=ff00",
        ),
    ],
)
def test_a_remote_source_is_written_as_a_direct_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    direct_url: dict[str, object], expected: str,
) -> None:  # fmt: skip
    _installed_from(tmp_path / "site", direct_url)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert main(["init", str(tmp_path / "project")]) == 0
    assert _install_input(tmp_path / "project") == expected
    assert "install: is empty" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("direct_url", "origin"),
    [
        ({"url": "file:///home/me/ablation", "dir_info": {"editable": True}}, "the local path /home/me/ablation"),
        ({"url": "file:///tmp/ablation-0.1.0.whl", "archive_info": {}}, "the local path /tmp/ablation-0.1.0.whl"),
        (None, "a package index"),
    ],
)
def test_a_source_ci_cannot_reach_leaves_install_empty_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    direct_url: dict[str, object] | None, origin: str,
) -> None:  # fmt: skip
    _installed_from(tmp_path / "site", direct_url)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert install_source() == ('""', origin)
    assert main(["init", str(tmp_path / "project")]) == 0
    assert _install_input(tmp_path / "project") == ""
    text = (tmp_path / "project" / ".github" / "workflows" / "ablation.yml").read_text()
    assert origin in text and "different project" in text
    assert "install: is empty" in capsys.readouterr().err
    assert "ablation==" not in text


def _install_step(action: Path) -> str:
    steps = yaml.safe_load(action.read_text())["runs"]["steps"]
    return str(next(s["run"] for s in steps if s.get("name") == "install ablation"))


@pytest.mark.parametrize("action", [REPO / "action.yml", REPO / "ablation" / "cli" / "action.yml"])
def test_the_action_refuses_to_install_nothing(tmp_path: Path, action: Path) -> None:
    # The vendored copy `init` writes sits alone in .github/actions/ablation: no package to install.
    step = _install_step(action).replace("python -m pip", "false")  # never reach pip
    done = subprocess.run(["bash", "-c", step], env={"PATH": "/usr/bin:/bin", "INSTALL": "", "ACTION_PATH": str(tmp_path)},
                          capture_output=True, text=True, timeout=30)  # fmt: skip
    assert done.returncode == 1
    assert done.stdout.startswith("::error::the ablation action has nothing to install")


def test_the_action_gives_pip_the_written_requirement_as_one_argument(tmp_path: Path) -> None:
    step = _install_step(REPO / "action.yml").replace("python -m pip install --quiet", "printf '%s\\n'")
    written = "ablation@git+https://github.com/o/r.git@ab12"
    done = subprocess.run(["bash", "-c", step], env={"PATH": "/usr/bin:/bin", "INSTALL": written, "ACTION_PATH": str(tmp_path)},
                          capture_output=True, text=True, timeout=30)  # fmt: skip
    assert (done.returncode, done.stdout.splitlines()) == (0, [written])
