"""Loading the user's code for ``ablation run``: agents, quality scorers and the executor."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = ["agent_name", "executor", "load_agents", "scorers"]


@contextlib.contextmanager
def executor(s: dict[str, Any]) -> Iterator[Any]:
    """The Dask executor of ``--dask-scheduler`` / ``--dask-local`` for the block, else ``None``."""
    if s.get("dask_scheduler") or s.get("dask_local"):
        from ablation.run.scaleout import dask_executor

        with dask_executor(scheduler=s.get("dask_scheduler"), local_workers=s.get("dask_local")) as ex:
            yield ex
    else:
        yield None


def scorers(specs: Sequence[str], s: dict[str, Any] | None = None) -> list[Any]:
    """The ``--quality`` scorers: a built-in name, or a spec of a scorer (a class is instantiated).

    A spec that cannot be loaded is one :class:`~ablation.cli.parser.UsageError` naming where it
    was set (``argument --quality: ...`` or ``FILE [tool.ablation] quality: ...``, from ``s``).
    """
    from ablation.cli.options import where_set
    from ablation.cli.parser import UsageError
    from ablation.errors import AgentSpecError
    from ablation.evaluate import quality
    from ablation.sources.agent_specs import load_agent

    builtin = {"code_quality": quality.CodeQualityScorer, "rubric": quality.RubricScorer}
    out = []
    for spec in specs:
        if spec in builtin:
            out.append(builtin[spec]())
            continue
        try:
            obj = load_agent(spec)
        except AgentSpecError as exc:
            where = where_set("quality", s or {})
            where = f"argument {where}" if where.startswith("-") else where
            if str(exc).startswith("not an agent spec"):
                raise UsageError(
                    f"{where}: not a quality scorer: {spec!r}; expected a built-in "
                    f"({', '.join(builtin)}), 'path/to/file.py:NAME' or 'pkg.mod:NAME'"
                ) from None
            raise UsageError(f"{where}: cannot load the quality scorer {spec!r}: {exc}") from None
        out.append(obj() if isinstance(obj, type) else obj)
    return out


def agent_name(spec: str) -> str:
    """``file.py:attr`` specs are named by their path relative to the working directory, a URL
    without its password (:func:`~ablation.agents.http.shown_url`)."""
    if spec.strip().lower().startswith(("http://", "https://")):
        from ablation.agents.http import shown_url

        return shown_url(spec)
    path, sep, attr = spec.rpartition(":")
    if sep and path.endswith(".py") and not spec.startswith(("cmd:", "http:", "https:")):
        with contextlib.suppress(ValueError):
            relative = os.path.relpath(Path(path).resolve(), Path.cwd())
            path = path if relative.startswith("..") else relative
        return f"{Path(path).as_posix()}:{attr}"
    return spec


def load_agents(specs: list[str], s: dict[str, Any], timeout_s: float | None = None) -> list[Any]:
    """Each spec as an agent named by its spec (a resume from the same command line matches).

    A URL's agent waits up to ``timeout_s`` (the campaign's ``--timeout``) per call, not its own
    default. ``cmd:`` agents get the ``--max-output-bytes`` cap, and inherit only the variables of
    :data:`~ablation.agents.command.SAFE_ENV` plus those named by ``--agent-env`` (patterns;
    ``--agent-env '*'`` inherits everything): an API key or a CI token reaches a command only
    when named.
    """
    from ablation.agents.callables import as_agent
    from ablation.agents.command import SAFE_ENV
    from ablation.sources.agent_specs import load_agent

    cap = s.get("max_output_bytes")
    allowed = (*SAFE_ENV, *(s.get("agent_env") or ()))
    return [
        as_agent(load_agent(spec, max_output_bytes=cap, inherit_env=allowed, timeout_s=timeout_s), name=agent_name(spec))
        for spec in specs
    ]
