"""A command-line agent: the task input as JSON on stdin, one JSON document back on stdout.

The child runs in its own process group (POSIX), which is killed on timeout or cancellation, and
after the child exits. Its streams are read until they end or, when a process it left running
holds them open, for at most 0.2 s (``_EXIT_GRACE_S``) after its exit, then again at most that
long after its group was killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import signal
from collections.abc import Mapping, Sequence
from typing import Any

from ablation.agents.forms import (
    DEFAULT_MAX_OUTPUT_BYTES,
    STDERR_KEPT_BYTES,
    AgentProcessError,
    AgentTimeoutError,
    _excerpt,
    _tail,
    interpret_agent_json,
)
from ablation.errors import AblationError, AgentSpecError, ConfigError
from ablation.schema import to_jsonable
from ablation.strict_json import NotFiniteNumber, RepeatedMember, decode_finite, json_decoder_limit

__all__ = ["DEFAULT_MAX_OUTPUT_BYTES", "SAFE_ENV", "CommandAgent", "filtered_environment"]

#: Environment variables a command agent keeps when its environment is restricted (the command
#: line's default): what a program needs to find executables, its home, its locale, a temporary
#: directory and the Python it runs under, and nothing that usually holds a secret. Shell-style
#: patterns (``fnmatch``, case-sensitive).
SAFE_ENV = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "LANG", "LANGUAGE", "LC_*",
    "TMPDIR", "TEMP", "TMP", "PYTHONPATH", "PYTHONIOENCODING", "VIRTUAL_ENV",
)  # fmt: skip

_CHUNK = 64 * 1024

#: Seconds the streams of a command that exited may stay open (a process it started in the
#: background inherited them) before its process group is killed, and again before the pipes are
#: closed when something outside the group still holds them.
_EXIT_GRACE_S = 0.2

#: Added to an error about stdout when the streams were held open after the command exited.
_HELD_NOTE = (" (the command had exited while a process it left running held its output open; "
              "stdout is what was printed until that was ended)")

#: How often a command whose streams are still open is checked for having exited.
_EXIT_POLL_S = 0.05


class _Overflow(AblationError):
    """Internal: a stream exceeded its cap."""


async def _read_capped(
    stream: asyncio.StreamReader | None, cap: int, sink: bytearray, *, keep_tail: bool
) -> None:
    """Read ``stream`` to its end into ``sink``, at most ``cap`` bytes of it.

    Past ``cap`` bytes, raise :class:`_Overflow`, or with ``keep_tail`` drop the oldest bytes.
    ``sink`` holds what was read so far even when the read is cancelled or fails.
    """
    if stream is None:
        return
    while chunk := await stream.read(_CHUNK):
        sink += chunk
        if len(sink) > cap:
            if not keep_tail:
                raise _Overflow
            del sink[: len(sink) - cap]


async def _feed(stdin: asyncio.StreamWriter | None, payload: bytes) -> None:
    if stdin is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(payload)
        await stdin.drain()
    stdin.close()


async def _until_ended(parts: Sequence[asyncio.Future[None]]) -> None:
    """Return once every part has ended; raise the error of one as soon as it fails."""
    done, _ = await asyncio.wait(parts, return_when=asyncio.FIRST_EXCEPTION)
    errors = [part.exception() for part in done]
    for error in errors:
        if error is not None:
            raise error


def _close_pipes(proc: asyncio.subprocess.Process) -> None:
    """Close our ends of the child's pipes; its stream readers then see the end of their stream.

    Assumes the asyncio subprocess transport (``Process._transport``); without one nothing is closed.
    """
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        for fd in (0, 1, 2):
            pipe = transport.get_pipe_transport(fd)
            if pipe is not None:
                pipe.close()


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Return once the child itself has exited, whoever still holds its pipes (``proc.wait()``
    also waits for every pipe to close). ``returncode`` is set as soon as the event loop's child
    watcher reports the exit, hence the polling."""
    while proc.returncode is None:
        await asyncio.sleep(_EXIT_POLL_S)


async def _settle(streams: asyncio.Future[Any], proc: asyncio.subprocess.Process) -> bool:
    """End the streams of a command that exited while something may still hold them open.

    Waits at most :data:`_EXIT_GRACE_S` for them to end; then kills the process group (its
    leftover processes close their copies, and what they wrote before is still read) and waits
    as long again; then closes the pipes (a process outside the group, such as one that called
    ``setsid``, holds them), which ends the reads with what was read by then.

    Returns:
        Whether the streams were held: still open :data:`_EXIT_GRACE_S` after the exit.
    """
    await asyncio.wait((streams,), timeout=_EXIT_GRACE_S)
    if streams.done():
        return False
    _killpg(proc.pid)
    await asyncio.wait((streams,), timeout=_EXIT_GRACE_S)
    if not streams.done():
        _close_pipes(proc)
        await asyncio.wait((streams,), timeout=_EXIT_GRACE_S)
    return True


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Close the child's pipes, wait (bounded) for its exit to be reported, close its transport.

    The pipes are closed first: a paused or still-open pipe (a grandchild that escaped the group
    holds it) would otherwise keep ``wait()`` from ever returning. The transport itself is closed
    only after the exit was reported: closing it earlier polls the child, which reaps it under
    the event loop's child watcher, and the watcher then logs "Unknown child process" on stderr.
    """
    transport = getattr(proc, "_transport", None)
    _close_pipes(proc)
    if proc.returncode is None:
        with contextlib.suppress(TimeoutError):
            await asyncio.shield(asyncio.wait_for(proc.wait(), 5))
    if transport is not None:
        transport.close()


def _ignore_stdin_closed(proc: asyncio.subprocess.Process) -> None:
    """Mark the error of a broken stdin pipe (a command that did not read all of its input) as
    seen: :func:`_feed` ignores it, but some Python 3.11 releases (3.11.2, Debian 12's) log
    "Future exception was never retrieved" for the close waiter that only ``wait_closed()`` awaits.
    Assumes CPython's subprocess protocol (``_stdin_closed``); without one nothing is done."""
    waiter = getattr(getattr(proc, "_protocol", None), "_stdin_closed", None)
    if isinstance(waiter, asyncio.Future):
        waiter.add_done_callback(lambda done: done.cancelled() or done.exception())


def filtered_environment(patterns: Sequence[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables of ``environ`` (default ``os.environ``) whose names match one of ``patterns``.

    Patterns are shell-style (``LC_*``, ``OPENAI_*``; ``*`` keeps everything) and case-sensitive.
    """
    from fnmatch import fnmatchcase

    source = os.environ if environ is None else environ
    return {k: v for k, v in source.items() if any(fnmatchcase(k, p) for p in patterns)}


def _killpg(pid: int) -> None:
    """SIGKILL the process group led by ``pid``; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class CommandAgent:
    """An agent that runs a command per task, speaking JSON over stdin and stdout.

    Each call starts ``argv`` in a new session (so the child leads its own process group), writes
    the task input as one line of JSON on its stdin (ending in a newline, so that a line reader
    such as the shell's ``read`` sees a whole line), closes stdin, and reads stdout to the end.
    stdout must hold exactly one JSON document (surrounding whitespace allowed); stderr is for logs.

    The answer does not wait for processes the command leaves running: when the command has
    exited but its streams are still open (a background child inherited them), they are read for
    at most 0.2 s more, then its process group is killed and what the group had written is read
    for at most 0.2 s more, then the pipes are closed. The answer is what stdout held by then,
    whoever wrote it: a leftover that kept printing makes it invalid JSON, an error that says so.

    Whatever happens, no process is left behind in the group: when the call is cancelled (the
    engine's per-trial timeout cancels it) or exceeds ``timeout_s``, the whole process group is
    killed with SIGKILL and the child is reaped before the call returns. Processes the command
    leaves running in its group after exiting are killed too. A grandchild that moves to another
    session or process group on purpose escapes this (POSIX offers no way to follow it): it is not
    killed, but the call ends all the same, and once the pipes are closed its writes to them fail.

    Assumes a POSIX system (``os.killpg``, ``start_new_session``).

    Args:
        argv: The program and its arguments (not a shell string; see ``shlex.split``).
        cwd: Working directory of the command (default: the current one when the agent is made).
        env: Variables added to (overriding) the environment the command inherits.
        inherit_env: Names (shell-style patterns) of the current environment's variables the
            command inherits; ``None`` (the default) inherits the whole environment. The command
            line passes :data:`SAFE_ENV` plus its ``--agent-env`` names, so that API keys and CI
            tokens reach a command only when named.
        name: Name recorded for the agent; defaults to ``"cmd:" + shlex.join(argv)``.
        timeout_s: Own time limit per call in seconds (``None``: only the engine's limit).
        max_output_bytes: Cap on stdout; a command printing more is killed and the call fails
            with :class:`AgentProcessError` (the trial's error). Default 8 MiB.

    Raises:
        AgentSpecError: if ``argv`` is a string or empty.
        ConfigError: if ``timeout_s`` is not positive.
    """

    def __init__(
        self,
        argv: Sequence[str | os.PathLike[str]],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        inherit_env: Sequence[str] | None = None,
        name: str | None = None,
        timeout_s: float | None = None,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    ) -> None:
        if isinstance(argv, str | bytes):
            raise AgentSpecError(
                f"CommandAgent needs argv as a list of strings, got the string {argv!r:.80}; "
                "split it with shlex.split or use load_agent('cmd:...')"
            )
        self.argv: tuple[str, ...] = tuple(os.fspath(a) for a in argv)
        if not self.argv:
            raise AgentSpecError("CommandAgent needs a non-empty argv")
        if timeout_s is not None and not timeout_s > 0:
            raise ConfigError(f"CommandAgent timeout_s must be positive, got {timeout_s!r}")
        self.cwd = os.getcwd() if cwd is None else cwd
        self.env: dict[str, str] | None = None if env is None else {**env}
        if isinstance(inherit_env, str):
            raise AgentSpecError(f"inherit_env needs a list of names, got the string {inherit_env!r}")
        self.inherit_env: tuple[str, ...] | None = None if inherit_env is None else tuple(inherit_env)
        self.name: str = name or "cmd:" + shlex.join(self.argv)
        self.timeout_s = timeout_s
        if not max_output_bytes > 0:
            raise ConfigError(f"CommandAgent max_output_bytes must be positive, got {max_output_bytes!r}")
        self.max_output_bytes = max_output_bytes

    def _environment(self) -> dict[str, str] | None:
        """The command's environment (``None``: inherit the current one unchanged)."""
        if self.inherit_env is None and self.env is None:
            return None
        inherited = dict(os.environ) if self.inherit_env is None else filtered_environment(self.inherit_env)
        return {**inherited, **(self.env or {})}

    def __repr__(self) -> str:
        return f"CommandAgent({list(self.argv)!r}, name={self.name!r})"

    async def run(self, input_data: Any) -> Any:
        """Run the command once on ``input_data``.

        Args:
            input_data: The task input; converted with :func:`~ablation.schema.to_jsonable`.

        Returns:
            The decoded stdout JSON, or an :class:`AgentOutput` (see the module docstring).

        Raises:
            AgentProcessError: if the command cannot be started, exits non-zero (with the exit code
                and the tail of stderr), or prints no valid JSON on stdout (with an excerpt).
            AgentTimeoutError: if ``timeout_s`` passed; the process group was killed first.
        """
        payload = json.dumps(to_jsonable(input_data), ensure_ascii=False).encode("utf-8") + b"\n"
        env = self._environment()
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            raise AgentProcessError(
                f"{self.name}: cannot start the command: {type(exc).__name__}: {exc}"
            ) from None
        _ignore_stdin_closed(proc)
        try:
            async with asyncio.timeout(self.timeout_s):
                stdout, stderr, held = await self._exchange(proc, payload)
        except TimeoutError:
            raise AgentTimeoutError(
                f"{self.name} exceeded timeout_s={self.timeout_s}; its process group was killed"
            ) from None
        except _Overflow:
            raise AgentProcessError(
                f"{self.name} printed more than max_output_bytes={self.max_output_bytes} on "
                "stdout; its process group was killed"
            ) from None
        finally:
            # Runs on success, error, own timeout and cancellation alike: kill, then reap with a
            # bound (the group was SIGKILLed, so the wait is short unless the child is stuck in D).
            _killpg(proc.pid)
            await _reap(proc)
        return self._decode(proc.returncode, stdout, stderr, held=held)

    async def _exchange(
        self, proc: asyncio.subprocess.Process, payload: bytes
    ) -> tuple[bytes, bytes, bool]:
        """Feed stdin and read both streams with caps until they end or the command has exited.

        Streams still open when the command exits (a process it left running holds them) are
        ended by :func:`_settle`; the answer is then what was read by that time, a leftover
        process's writes included.

        Returns:
            stdout, the last ``STDERR_KEPT_BYTES`` of stderr, and whether the streams were held
            open after the command exited.
        """
        cap = self.max_output_bytes
        stdout, stderr = bytearray(), bytearray()
        parts = [
            asyncio.ensure_future(_feed(proc.stdin, payload)),
            asyncio.ensure_future(_read_capped(proc.stdout, cap, stdout, keep_tail=False)),
            asyncio.ensure_future(_read_capped(proc.stderr, STDERR_KEPT_BYTES, stderr, keep_tail=True)),
            asyncio.ensure_future(_exited(proc)),
        ]
        streams = asyncio.ensure_future(_until_ended(parts[:3]))
        held = False
        try:
            await asyncio.wait((streams, parts[3]), return_when=asyncio.FIRST_COMPLETED)
            if not streams.done():
                held = await _settle(streams, proc)
            if streams.done():
                streams.result()  # raises _Overflow, or what feeding stdin raised
            if not held:
                await proc.wait()
        finally:
            for part in (streams, *parts):
                part.cancel()
        return bytes(stdout), bytes(stderr), held

    def _decode(self, returncode: int | None, stdout: bytes, stderr: bytes, *, held: bool = False) -> Any:
        """The command's answer from its exit code and streams.

        ``held``: the streams outlived the command, so stdout is what was read until they were
        ended; an error about stdout says so.
        """
        tail = _tail(stderr)
        cut = _HELD_NOTE if held else ""
        if returncode != 0:
            how = (
                f"was killed by signal {_signal_name(-returncode)}"
                if returncode is not None and returncode < 0
                else f"exited with code {returncode}"
            )
            detail = f"; stderr: {tail}" if tail else "; stderr was empty"
            raise AgentProcessError(
                f"{self.name} {how}{detail}", returncode=returncode, stderr=tail
            )
        if not stdout.strip():
            detail = f"; stderr: {tail}" if tail else ""
            raise AgentProcessError(
                f"{self.name} printed nothing on stdout (expected one JSON document){cut}{detail}",
                returncode=returncode,
                stderr=tail,
            )
        try:
            value = decode_finite(stdout.decode("utf-8-sig"))  # a byte-order mark is ignored (RFC 8259 §8.1)
        except UnicodeDecodeError as exc:
            what = f"invalid UTF-8 on stdout ({exc.reason} at byte {exc.start})"
        except json.JSONDecodeError as exc:
            what = f"invalid JSON on stdout ({exc.msg} at line {exc.lineno} column {exc.colno})"
        except NotFiniteNumber as exc:
            what = f"a number JSON has no value for on stdout ({exc})"
        except RepeatedMember as exc:
            what = f"{exc.problem()} on stdout"
        except (RecursionError, ValueError) as exc:
            what = f"{json_decoder_limit(exc)} on stdout"
        else:
            return interpret_agent_json(value, self.name)
        raise AgentProcessError(
            f"{self.name} printed {what}{cut}: {_excerpt(stdout)}", returncode=returncode, stderr=tail
        )


def _signal_name(number: int) -> str:
    return next((s.name for s in signal.Signals if s == number), str(number))
