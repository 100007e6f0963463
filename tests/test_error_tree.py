"""Every exception class of the package derives from ``AblationError`` and stands, under its real
parent, in the tree the ``ablation.errors`` docstring draws; the public ones are exported.

The classes are found by importing every module of the package and walking ``BaseException``'s
subclasses (so a class no other test happens to import is still seen).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterator

import pytest

import ablation
from ablation import errors


def _exception_classes() -> dict[str, dict[str, object]]:
    """Every exception class of the package: its module, nearest ablation parent and kind."""
    for info in pkgutil.walk_packages(ablation.__path__, "ablation."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)

    def walk(cls: type) -> Iterator[type]:
        for sub in cls.__subclasses__():
            yield sub
            yield from walk(sub)

    found: dict[str, dict[str, object]] = {}
    for cls in walk(BaseException):
        if cls.__module__.startswith("ablation."):
            mro = [c for c in cls.__mro__[1:] if c.__module__.startswith("ablation.")]
            found[cls.__qualname__] = {
                "module": cls.__module__,
                "parent": mro[0].__qualname__ if mro else None,
                "error": issubclass(cls, Exception),
                "base": issubclass(cls, errors.AblationError),
            }
    return found


#: ``  NAME (Builtin)   [module: ][internal, ]when`` lines of the docstring's tree.
_LINE = re.compile(r"^(?P<indent> *)(?P<name>_?[A-Z]\w*)(?: \((?P<builtin>\w+)\))? +(?P<text>.+)$")


def _tree() -> dict[str, dict[str, str | None]]:
    """Each class of the docstring's tree: its parent in the tree and its description."""
    block = (errors.__doc__ or "").split("::\n", 1)[1]
    tree: dict[str, dict[str, str | None]] = {}
    stack: list[tuple[int, str]] = []
    for line in block.splitlines():
        match = _LINE.match(line[4:]) if line.startswith("    ") else None
        if match is None:
            continue
        depth = len(match["indent"])
        while stack and stack[-1][0] >= depth:
            stack.pop()
        tree[match["name"]] = {"parent": stack[-1][1] if stack else None, "text": match["text"]}
        stack.append((depth, match["name"]))
    return tree


@pytest.fixture(scope="module")
def classes() -> dict[str, dict[str, object]]:
    return _exception_classes()


def test_every_exception_derives_from_ablation_error(classes: dict[str, dict[str, object]]) -> None:
    assert "WorkerDied" in classes and "UsageError" in classes  # the walk saw the package
    outside = sorted(name for name, c in classes.items() if c["error"] and not c["base"])
    assert outside == []
    signals = sorted(name for name, c in classes.items() if not c["error"])
    # BaseExceptions that ``except Exception`` must not catch (Terminated is a KeyboardInterrupt)
    assert signals == ["LoopStalled", "Terminated"]


def test_the_docstring_tree_is_the_real_tree(classes: dict[str, dict[str, object]]) -> None:
    tree = _tree()
    assert set(tree) == set(classes)
    for name, c in classes.items():
        assert tree[name]["parent"] == c["parent"], name
        text = str(tree[name]["text"])
        if c["module"] != "ablation.errors":  # a class defined elsewhere names its module
            assert text.startswith(str(c["module"]).removeprefix("ablation.") + ":"), name


def test_public_errors_are_exported(classes: dict[str, dict[str, object]]) -> None:
    tree = _tree()
    public = {
        name for name in classes
        if not name.startswith("_") and name != "LoopStalled" and "internal" not in str(tree[name]["text"])
    }  # fmt: skip
    assert public <= set(ablation.__all__)
    for name in public:
        cls = getattr(ablation, name)
        assert issubclass(cls, BaseException) and cls.__name__ == name


def test_old_import_paths_still_work() -> None:
    from ablation.cli.parser import UsageError
    from ablation.evaluate.code_tests import SandboxUnavailable
    from ablation.run.failfast import BrokenArm
    from ablation.run.isolation import WorkerDied

    assert UsageError is ablation.UsageError is errors.UsageError
    assert issubclass(BrokenArm, ablation.CampaignAborted)
    assert issubclass(WorkerDied, RuntimeError) and issubclass(SandboxUnavailable, ablation.VerifierError)
