"""The provenance's package versions: ``__version__`` of imported packages, metadata otherwise.

``package_versions`` reads an imported package's ``__version__`` instead of asking
:mod:`importlib.metadata` (issue 13: start-up of ``compare``). The report must not change, so each
string must equal what :func:`importlib.metadata.version` says, whichever path produced it.
"""

from __future__ import annotations

import email
import importlib
import json
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from ablation.analysis import build
from ablation.analysis.versions import PACKAGES, _version_field, installed_version, package_versions


def _expected() -> dict[str, str]:
    return {"python": platform.python_version(), **{n: metadata.version(n) for n in PACKAGES}}


@pytest.mark.parametrize("name", PACKAGES)
def test_version_attribute_is_the_distribution_version(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__version__ == metadata.version(name)
    assert installed_version(name) == metadata.version(name)


def test_imported_packages_give_the_metadata_versions() -> None:
    for name in PACKAGES:
        importlib.import_module(name)
    assert package_versions() == _expected()
    assert build.package_versions is package_versions


def test_not_imported_package_falls_back_to_metadata_without_importing_it() -> None:
    code = (
        "import sys, json; from ablation.analysis.versions import package_versions;"
        "v = package_versions(); print(json.dumps([v, 'scipy' in sys.modules]))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    versions, scipy_loaded = json.loads(proc.stdout)
    assert scipy_loaded is False
    assert versions == _expected()


def test_unknown_package_is_unknown() -> None:
    assert installed_version("no-such-distribution-for-ablation") == "unknown"


@pytest.mark.parametrize("name", ["numpy", "scipy", "pydantic"])
def test_version_field_of_real_metadata_is_the_email_parsers(name: str) -> None:
    text = metadata.distribution(name).read_text("METADATA") or ""
    assert _version_field(text) == email.message_from_string(text)["Version"] is not None


TEXTS = {
    "plain": "Metadata-Version: 2.1\nName: x\nVersion: 1.2.3\nSummary: s\n\nbody\n",
    "spaces kept at the end": "Name: x\nversion:\t 4.0rc1 \n\nbody",
    "only in the body": "Name: x\nSummary: s\n\nVersion: 9\n",
    "folded": "Name: x\nVersion: 1\n  .2\n\n",
    "after a folded header": "Name: x\nLicense: a\n Version: 7\nVersion: 2\n\n",
    "malformed first": "not a header\nVersion: 3\n\n",
    "empty": "",
}


@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS.keys())
def test_version_field_is_the_email_parsers_or_defers_to_it(text: str) -> None:
    found = _version_field(text)
    assert found is None or found == email.message_from_string(text)["Version"]
    assert (found is not None) == (text.startswith("Metadata") or text.startswith("Name: x\nversion"))


def test_installed_distribution_is_read_from_its_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = tmp_path / "ablation_fake_dist-2.5.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ablation-fake-dist\nVersion: 2.5.1\n\nVersion: 0\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert installed_version("ablation-fake-dist") == metadata.version("ablation-fake-dist") == "2.5.1"
    (info / "METADATA").write_text("Name: ablation-fake-dist\nLicense: a\n b\nVersion: 3\n", encoding="utf-8")
    assert installed_version("ablation-fake-dist") == "3"  # the full parse, after a folded header
