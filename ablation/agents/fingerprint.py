"""What identifies an agent's code, so that a resume can refuse an agent that changed.

A resume mixes the stored trials of the interrupted campaign with new ones; if the agent's code
changed in between under the same name, the report would silently describe two agents. The
fingerprint of :func:`agent_fingerprint` is stored per arm when a campaign starts and compared on
``--resume`` (:mod:`ablation.store.resume`).

What is fingerprinted, by agent form:

- a Python callable (``file.py:NAME``, ``pkg.mod:NAME`` or one given to the Python API): the
  SHA-256 of its own source (:func:`inspect.getsource`; for an object with ``run`` or
  ``__call__``, the source of its class); when the source cannot be read (a builtin, a C
  extension, code typed at a prompt), the SHA-256 of the file that defines it; failing that, its
  qualified name only, so a changed body cannot be detected (DESIGN.md, resume);
- a pydantic-ai ``Agent`` given as an agent (its class is pydantic-ai's, the same for every
  agent): the SHA-256 of what defines it, its model, output type, model settings,
  instructions and system prompts, and each tool's name, description and function, a function
  by its source as above (so an edited instruction, tool or model is seen);
- a command agent (``cmd:``): the command line, plus the SHA-256 of every word of it that names
  an existing file (the executable or script, e.g. ``cmd:python agent.py``);
- an HTTP agent: its URL (the server's code is out of reach).

Assumptions: the source of a callable is enough to identify its behaviour; helpers it calls in
other functions, data files and installed packages are not covered (a change there is not seen).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import re
from pathlib import Path
from typing import Any

from ablation.agents.callables import Agent
from ablation.agents.command import CommandAgent
from ablation.agents.http import HttpAgent
from ablation.agents.sdk import pydantic_ai_runner
from ablation.schema import callable_name

__all__ = ["agent_fingerprint"]

_CHUNK = 1 << 20


def agent_fingerprint(agent: Any) -> str:
    """The fingerprint ``"KIND:VALUE"`` of an agent's code (see the module docstring).

    Args:
        agent: Any supported agent form, an :class:`~ablation.agents.Agent` included.

    Returns:
        ``"source:<sha256>"``, ``"file:<sha256>"``, ``"pydantic-ai:<sha256>"``,
        ``"command:<sha256>"``, ``"url:<url>"`` or
        ``"name:<module:qualname>"`` (the weakest: no code could be read).
    """
    target = agent.fn if isinstance(agent, Agent) else agent
    runner = pydantic_ai_runner(target) or target  # a pydantic-ai Agent given as itself, or run
    wrapped = getattr(runner, "pydantic_ai_agent", None) if inspect.isfunction(runner) else None
    if wrapped is not None:
        return "pydantic-ai:" + _pydantic_ai_digest(wrapped)
    target = getattr(target, "__self__", target) if inspect.ismethod(target) else target
    if isinstance(target, dict) and "run" in target:
        target = target["run"]
    if isinstance(target, CommandAgent):
        return "command:" + _command_digest(target.argv, target.cwd)
    if isinstance(target, HttpAgent):
        return "url:" + target.url
    return _python_fingerprint(target)


def _python_fingerprint(obj: Any) -> str:
    """Source digest of a callable (or of the class of a callable object), else its file's."""
    while isinstance(obj, functools.partial):
        obj = obj.func
    obj = inspect.unwrap(obj) if callable(obj) else obj
    code_owner = obj if inspect.isroutine(obj) or inspect.isclass(obj) else type(obj)
    code_owner = getattr(code_owner, "__func__", code_owner)
    try:
        source = inspect.getsource(code_owner)
    except (OSError, TypeError):
        source = None
    if source is not None:
        return "source:" + hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
    try:
        file = inspect.getsourcefile(code_owner) or inspect.getfile(code_owner)
    except (OSError, TypeError):
        file = None
    digest = _file_digest(Path(file)) if file else None
    if digest is not None:
        return "file:" + digest
    return "name:" + callable_name(obj)


def _pydantic_ai_digest(agent: Any) -> str:
    """SHA-256 of what defines a pydantic-ai ``Agent`` (the module docstring); an attribute an
    older or newer pydantic-ai lacks counts as absent. Not its name, which pydantic-ai infers
    from the caller's variables at its first run: the digest must not change once it ran."""
    tools = {
        str(name): [_described(getattr(tool, "function", None)), getattr(tool, "description", None)]
        for toolset in getattr(agent, "toolsets", None) or ()
        for name, tool in (getattr(toolset, "tools", None) or {}).items()
    }
    parts = {
        "model": _model_id(getattr(agent, "model", None)),
        "output_type": _described(getattr(agent, "output_type", None)),
        "model_settings": _described(getattr(agent, "model_settings", None)),
        "instructions": _described(list(getattr(agent, "_instructions", None) or ())),
        "system_prompts": _described(list(getattr(agent, "_system_prompts", None) or ())),
        "system_prompt_functions": _described(
            [getattr(r, "function", r) for r in getattr(agent, "_system_prompt_functions", None) or ()]
        ),
        "tools": tools,
    }
    payload = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def _model_id(model: Any) -> Any:
    """A pydantic-ai agent's model as its name (``"openai:gpt-4o"``), or a ``Model`` as its
    provider and model name: not its ``repr``, which may hold state a run changes (``TestModel``
    keeps its last request's parameters)."""
    if model is None or isinstance(model, str):
        return model
    return [str(getattr(model, "system", "")), str(getattr(model, "model_name", ""))]


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _described(value: Any) -> Any:
    """``value`` as stable plain data: a function or class by :func:`_python_fingerprint`, plain
    values as they are, containers item by item, anything else by its ``repr`` without memory
    addresses (which differ from one process to the next)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if inspect.isroutine(value) or inspect.isclass(value):
        return _python_fingerprint(value)
    if isinstance(value, list | tuple):
        return [_described(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _described(v) for k, v in value.items()}
    return _ADDRESS.sub("", repr(value))


def _command_digest(argv: tuple[str, ...], cwd: str | os.PathLike[str] | None) -> str:
    """SHA-256 of the command line and of every file a word of it names."""
    base = Path(cwd) if cwd is not None else Path.cwd()
    files = {}
    for word in argv:
        path = Path(word) if os.path.isabs(word) else base / word
        digest = _file_digest(path)
        if digest is not None:
            files[word] = digest
    payload = json.dumps({"argv": list(argv), "files": files}, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def _file_digest(path: Path) -> str | None:
    """SHA-256 of a regular file's bytes, ``None`` when it is not a readable regular file."""
    try:
        if not path.is_file():
            return None
        sha = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(_CHUNK), b""):
                sha.update(block)
        return sha.hexdigest()
    except OSError:
        return None
