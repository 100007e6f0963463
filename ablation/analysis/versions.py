"""The versions of Python and of the packages that decide a report's numbers (its provenance)."""

from __future__ import annotations

import platform
import sys

__all__ = ["package_versions"]

PACKAGES = ("ablation", "numpy", "scipy", "pydantic")


def package_versions() -> dict[str, str]:
    """Versions that decide the numbers (Python, numpy, scipy, pydantic, ablation).

    A package that is already imported gives its ``__version__``, which is the version of its
    installed distribution (a test checks the equality for each package); the others are read
    from their distribution's metadata (:func:`installed_version`). ``compare`` on binary
    results imports no scipy, so there only scipy takes that path.

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
    """The version of the installed distribution ``name``, or ``"unknown"`` when not installed.

    The same string as :func:`importlib.metadata.version`, which parses the whole ``METADATA``
    file with the ``email`` package: scipy's carries its licences (60 kB), a 10 ms parse. The
    ``Version`` field is read from the header block instead (core metadata: ``Name: value``
    lines up to the first empty line, as the ``email`` parser splits them); anything unusual (no
    such file, as in an old egg; no field; a folded or malformed header) takes the full parse.
    """
    from importlib import metadata

    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:  # e.g. running from a checkout without installing
        return "unknown"
    return _version_field(dist.read_text("METADATA") or "") or dist.version


def _version_field(text: str) -> str | None:
    """The ``Version`` header of core-metadata ``text`` as the ``email`` parser reads it, or
    ``None`` when it is absent or not a plain one-line header."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        field, colon, value = line.partition(":")
        if not colon or not field or field[0] in " \t":
            return None  # the end of the headers, a folded line or a malformed header
        if field.lower() == "version":
            folded = i + 1 < len(lines) and lines[i + 1][:1] in (" ", "\t")
            return None if folded else value.lstrip(" \t")
    return None
