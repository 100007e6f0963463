"""A module imported on first attribute access, so ``import ablation`` does not pay for scipy.

``scipy.stats`` takes about half a second to import; most commands (``--help``, ``plan``, the
store) never touch it, and the report path touches it only for the statistics that need it.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["LazyModule"]


class LazyModule:
    """Stands for the module ``name`` and imports it when an attribute is first read."""

    __slots__ = ("_module", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)
