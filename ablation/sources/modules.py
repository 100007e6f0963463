"""Python code named by a path or a module spec: executing files, importing modules, naming errors.

Owns what :mod:`ablation.sources.suites` and :mod:`ablation.sources.agent_specs` share to turn
``file.py:NAME`` or ``pkg.mod:NAME`` into an object: :func:`exec_file` (a file imported under a
unique name starting with :data:`FILE_MODULE_PREFIX`, which :mod:`ablation.run.scaleout` uses to
ship such modules to workers by value), :func:`import_by_name`, :func:`get_attr`, the spec
grammar (:data:`MODULE_NAME`, :data:`ATTR_PATH`, :func:`split_py_attr`) and the line an import
error points at (:func:`frame_line`). Every error is one line naming the file (and the line when
known).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
import threading
import traceback
import types
import weakref
from pathlib import Path
from typing import Any

from ablation.sources.text import ErrorType, exc_text, file_error, one_line

__all__ = [
    "ATTR_PATH",
    "FILE_MODULE_PREFIX",
    "MODULE_NAME",
    "exec_file",
    "frame_line",
    "get_attr",
    "import_by_name",
    "public_names",
    "split_py_attr",
]

#: Prefix of the module names given to suite and agent files loaded by path.
FILE_MODULE_PREFIX = "_ablation_file_"

#: A dotted module name (``pkg.mod``).
MODULE_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
#: A dotted attribute path inside a module (``tasks``, ``obj.method``).
ATTR_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_SYS_PATH_LOCK = threading.RLock()


def frame_line(exc: BaseException, filename: str | None) -> tuple[str, int] | None:
    """Deepest traceback frame in ``filename`` (or the deepest non-frozen one) as (file, line)."""
    found: tuple[str, int] | None = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if filename is None and frame.filename.startswith("<frozen"):
            continue
        if filename is None or frame.filename == filename:
            found = (frame.filename, frame.lineno or 0)
    return found


def public_names(module: types.ModuleType) -> list[str]:
    """Names a module defines itself (imported modules, classes and functions left out)."""
    names = []
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, types.ModuleType):
            continue
        imported = getattr(value, "__module__", None) not in (None, module.__name__)
        if imported and (isinstance(value, type) or inspect.isroutine(value)):
            continue
        names.append(name)
    return sorted(names)


def exec_file(path: Path, display: str, cls: ErrorType) -> types.ModuleType:
    """Import a ``.py`` file under a unique module name, its directory briefly on ``sys.path``.

    The module stays in ``sys.modules`` (pickling and dataclasses need it); siblings it imports are
    cached there under their plain names, as Python always does.
    """
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise file_error(cls, display, "no such file") from None
    if not resolved.is_file():
        raise file_error(cls, display, "is not a file")
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    name = f"{FILE_MODULE_PREFIX}{re.sub(r'[^0-9A-Za-z_]', '_', resolved.stem)}_{digest}"
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise file_error(cls, display, "cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    directory = str(resolved.parent)
    with _SYS_PATH_LOCK:
        sys.path.insert(0, directory)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except SyntaxError as exc:
            sys.modules.pop(name, None)
            own = exc.filename == str(resolved)
            where = display if own else (exc.filename or display)
            context = "" if own else f" (imported by {display})"
            raise file_error(
                cls, where, f"cannot import: SyntaxError: {exc.msg}{context}", line=exc.lineno
            ) from None
        except (Exception, SystemExit) as exc:
            sys.modules.pop(name, None)
            found = frame_line(exc, str(resolved))
            raise file_error(
                cls, display, f"cannot import: {exc_text(exc)}", line=found[1] if found else None
            ) from None
        finally:
            if sys.path and sys.path[0] == directory:
                del sys.path[0]
            elif directory in sys.path:
                sys.path.remove(directory)
    return module


def import_by_name(name: str, cls: ErrorType) -> types.ModuleType:
    """Import ``name``; failures become ``cls`` naming the module, the place and the cause."""
    try:
        return importlib.import_module(name)
    except (Exception, SystemExit) as exc:
        missing = getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None
        if missing and (name == missing or name.startswith(missing + ".")):
            raise cls(f"module {name!r}: cannot import: no module named {missing!r}") from None
        found: tuple[str, int] | None
        if isinstance(exc, SyntaxError):
            found = (exc.filename or name, exc.lineno or 0)
            text = f"SyntaxError: {exc.msg}"
        else:
            found, text = frame_line(exc, None), exc_text(exc)
        where = f"{found[0]}:{found[1]}: " if found else ""
        raise cls(one_line(f"{where}module {name!r}: cannot import: {text}")) from None


def get_attr(
    module: types.ModuleType, attr: str, where: str, cls: ErrorType, hint: str = ""
) -> Any:
    """``module.attr`` (``attr`` may be dotted); a missing name is ``cls`` listing the names the
    module defines, then ``hint``."""
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = ", ".join(public_names(module)[:30]) or "no public names"
            raise file_error(cls, where, f"no attribute {attr!r} (it defines: {names}){hint}")
        obj = getattr(obj, part)
    return obj


def split_py_attr(spec: str) -> tuple[str, str] | None:
    """``"dir/file.py:name"`` → ``("dir/file.py", "name")``; anything else → ``None``."""
    head, sep, tail = spec.rpartition(":")
    if sep and head.endswith(".py"):
        return head, tail
    return None


#: Where an agent spec's object was found (:func:`found_at`), by ``id`` with a weak reference to
#: tell a later object of the same ``id`` apart (an object such as a pydantic-ai ``Agent`` may be
#: unhashable).
_PLACES: dict[int, tuple[weakref.ref[Any], tuple[str, str]]] = {}


def found_at(obj: Any, module: types.ModuleType, attr: str) -> Any:
    """``obj``, remembered as found at ``module.attr`` (:func:`loaded_from`) when it can be
    referred to weakly (not an ``int`` or a ``str``)."""
    with contextlib.suppress(TypeError):
        _PLACES[id(obj)] = (weakref.ref(obj), (module.__name__, attr))
    return obj


def loaded_from(obj: Any) -> tuple[str, str] | None:
    """``(module name, attribute)`` where an agent spec named ``obj`` (:func:`found_at`), else
    ``None``: how a worker process builds an agent that cannot be pickled (a pydantic-ai
    ``Agent``) from its own load of the same module (:mod:`ablation.run.isolation`)."""
    ref, place = _PLACES.get(id(obj), (None, None))
    return place if ref is not None and ref() is obj else None
