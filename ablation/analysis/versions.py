"""The versions of Python and of the packages that decide a report's numbers (its provenance)."""

from __future__ import annotations

import platform
import sys

__all__ = ["package_versions"]

PACKAGES = ("ablation", "numpy", "scipy", "pydantic")


def package_versions() -> dict[str, str]:
    """Versions that decide the numbers (Python, numpy, scipy, pydantic, ablation).

    A package that is already imported gives its ``__version__``, which is the version of its
    installed distribution (a test checks the equality for each package); the others go through
    :mod:`importlib.metadata`, which scans ``sys.path`` and imports the ``email`` parser (about
    25 ms). ``compare`` on binary results imports no scipy, so there only scipy takes that path.

    Returns:
        ``{"python": ..., "ablation": ..., "numpy": ..., "scipy": ..., "pydantic": ...}``;
        ``"unknown"`` for a package that is neither imported nor installed.
    """
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        version = getattr(sys.modules.get(name), "__version__", None)
        versions[name] = version if isinstance(version, str) else installed_version(name)
    return versions


def installed_version(name: str) -> str:
    """The version of the installed distribution ``name``, or ``"unknown"`` when not installed."""
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:  # e.g. running from a checkout without installing
        return "unknown"
