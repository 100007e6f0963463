"""Agents by spec: a file or module attribute, a command line, or an HTTP endpoint.

Owns :func:`load_agent`, which turns ``path/to/file.py:NAME``, ``pkg.mod:NAME``,
``cmd:COMMAND LINE`` or an ``http(s)://`` URL into the object it names (wrap it with
:func:`~ablation.agents.as_agent`). Every error is one :class:`~ablation.errors.AgentSpecError`
line naming the spec, or the file and line when the problem is in the file.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ablation.agents import CommandAgent, HttpAgent
from ablation.errors import AgentSpecError
from ablation.sources.modules import (
    ATTR_PATH,
    MODULE_NAME,
    exec_file,
    found_at,
    get_attr,
    import_by_name,
    public_names,
    split_py_attr,
)
from ablation.sources.text import file_error

__all__ = ["load_agent"]


def load_agent(
    spec: str, *, max_output_bytes: int | None = None, inherit_env: Sequence[str] | None = None,
    timeout_s: float | None = None,
) -> Any:
    """Resolve an agent spec to the object it names (wrap it with :func:`~ablation.agents.as_agent`).

    Args:
        spec: ``path/to/file.py:NAME`` (the file is imported as by :func:`load_suite`),
            ``pkg.mod:NAME``, ``cmd:COMMAND LINE`` (split with :func:`shlex.split` into a
            :class:`~ablation.agents.CommandAgent`) or an ``http(s)://`` URL (an
            :class:`~ablation.agents.HttpAgent`). ``NAME`` may be dotted (``obj.method``).
        max_output_bytes: For ``cmd:``, the cap on its stdout (default: the agent's own).
        inherit_env: For ``cmd:``, the environment variables (shell-style patterns) the command
            inherits; ``None`` inherits the whole environment.
        timeout_s: For a URL, the agent's own time limit per call (``ablation run`` gives its
            ``--timeout``, so that the call is not cut before the trial's limit); ``None``: the
            agent's default.

    Returns:
        The named object, a :class:`CommandAgent` or an :class:`HttpAgent`.

    Raises:
        AgentSpecError: the spec has none of these forms, the file is missing or fails to import
            (naming the file, line and exception), or the attribute is missing (naming the file and
            the names it does define).
    """
    if not isinstance(spec, str):
        raise AgentSpecError(f"an agent spec is a string, got {type(spec).__name__}")
    text = spec.strip()
    if text.startswith("cmd:"):
        try:
            argv = shlex.split(text[4:])
        except ValueError as exc:
            raise AgentSpecError(f"{spec!r}: cannot split the command line: {exc}") from None
        if not argv:
            raise AgentSpecError(f"{spec!r}: 'cmd:' needs a command line, e.g. 'cmd:python a.py'")
        options: dict[str, Any] = {"inherit_env": inherit_env}
        if max_output_bytes is not None:
            options["max_output_bytes"] = max_output_bytes
        return CommandAgent(argv, **options)
    if text.lower().startswith(("http://", "https://")):
        given: dict[str, Any] = {"max_output_bytes": max_output_bytes, "timeout_s": timeout_s}
        return HttpAgent(text, **{name: value for name, value in given.items() if value is not None})
    py_attr = split_py_attr(text)
    if py_attr is not None or text.endswith(".py"):
        file, attr = py_attr if py_attr is not None else (text, "")
        module = exec_file(Path(file), file, AgentSpecError)
        if not attr or not ATTR_PATH.fullmatch(attr):
            names = ", ".join(public_names(module)[:30]) or "no public names"
            raise file_error(
                AgentSpecError,
                file,
                f"name the agent as '{file}:NAME', got {text!r} (it defines: {names})",
            )
        return found_at(get_attr(module, attr, file, AgentSpecError), module, attr)
    module_name, sep, attr = text.partition(":")
    if sep and MODULE_NAME.fullmatch(module_name) and ATTR_PATH.fullmatch(attr):
        module = import_by_name(module_name, AgentSpecError)
        return found_at(get_attr(module, attr, f"module {module_name!r}", AgentSpecError), module, attr)
    raise AgentSpecError(
        f"not an agent spec: {spec!r}; expected 'path/to/file.py:NAME', 'pkg.mod:NAME', "
        "'cmd:COMMAND LINE' or an http(s):// URL"
    )
