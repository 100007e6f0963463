"""The provenance's package versions: ``__version__`` of imported packages, metadata otherwise.

``package_versions`` reads an imported package's ``__version__`` instead of asking
:mod:`importlib.metadata` (issue 13: start-up of ``compare``). The report must not change, so each
string must equal what :func:`importlib.metadata.version` says, whichever path produced it.
"""

from __future__ import annotations

import importlib
import json
import platform
import subprocess
import sys
from importlib import metadata

import pytest

from ablation.analysis import build
from ablation.analysis.versions import PACKAGES, installed_version, package_versions


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
