"""The ``ablation`` command line: ``main(argv) -> int`` and the console-script entry point.

Exit codes: 0 every gate holds; 1 a usage, input or operational error (one line on stderr, no
traceback unless ``--debug``); 2 a release gate failed. Parsing lives in :mod:`ablation.cli.parser`,
the commands in :mod:`ablation.cli.commands` (its ``COMMANDS`` names the modules of the others),
report output in :mod:`ablation.cli.output`.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import threading
import traceback
from collections.abc import Sequence
from typing import Any, NoReturn

from ablation.cli.commands import COMMANDS
from ablation.cli.options import one_line
from ablation.cli.output import EXIT_ERROR
from ablation.cli.parser import UsageError, build_parser, command_of
from ablation.cli.signals import terminations_interrupt
from ablation.cli.tuning import CommandTuning
from ablation.cli.user_io import ClosedPipeSafe
from ablation.process_hooks import installed

__all__ = ["main", "main_entry"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return the exit code (0 pass, 1 error, 2 gate failed).

    Standard output is a :class:`~ablation.cli.user_io.ClosedPipeSafe` while the command runs,
    so a reader that goes away early (``ablation plan | head -1``) ends every command's output
    quietly, with the exit code the command decided.
    """
    stdout = sys.stdout
    if stdout is not None:
        sys.stdout = ClosedPipeSafe(stdout)  # type: ignore[assignment]
    try:
        return _command(argv)
    finally:
        sys.stdout = stdout


def _command(argv: Sequence[str] | None) -> int:
    """:func:`main` inside the closed-pipe guard."""
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(command_of(words))
    debug = "--debug" in words
    try:
        args = parser.parse_args(argv)
        _logging(bool(getattr(args, "verbose", False)))
        if sys.stdout is None:
            _closed_stdout(args)
        if args.command is None:
            parser.print_help()
            return EXIT_ERROR
        with terminations_interrupt(), installed(CommandTuning()):
            return COMMANDS[args.command](args)
    except SystemExit as exc:  # --help and --version (argparse exits 0 or 2 for usage errors)
        return 0 if exc.code in (0, None) else EXIT_ERROR
    except KeyboardInterrupt:
        print("ablation: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except BaseException as exc:
        if debug:
            traceback.print_exc()
        print(f"ablation: error: {_describe(exc)}", file=sys.stderr)
        return EXIT_ERROR


def _logging(verbose: bool) -> None:
    """Diagnostics of the ``ablation`` loggers on stderr: DEBUG with ``--verbose``, else WARNING."""
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("ablation: %(levelname)s: %(name)s: %(message)s"))
    logger = logging.getLogger("ablation")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.DEBUG if verbose else logging.WARNING)


def _closed_stdout(args: Any) -> None:
    """Started with file descriptor 1 closed (``>&-``): fill it with ``/dev/null`` (so no file
    the run opens becomes fd 1, where user code's prints would land), and refuse a command whose
    report has nowhere to go.

    Raises:
        UsageError: unless ``--output`` or ``--quiet`` was given.
    """
    fd = os.open(os.devnull, os.O_WRONLY)
    if fd != 1:
        os.dup2(fd, 1)
        os.close(fd)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115  (fd 1, kept open)
    if not (getattr(args, "output", None) or getattr(args, "quiet", False)):
        raise UsageError(
            "standard output is closed: the report has nowhere to go; pass --output FILE or --quiet"
        )


def _describe(exc: BaseException) -> str:
    """The error in one line, with what failed after it (its notes: a campaign that could not
    be marked interrupted on the full disk that stopped it)."""
    from ablation.errors import AblationError

    after = "".join(f"; {' '.join(str(note).split())}" for note in getattr(exc, "__notes__", ()))
    if isinstance(exc, UsageError | AblationError):
        return (" ".join(str(exc).split()) or type(exc).__name__) + after
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.filename}: {exc.strerror or exc}{after}"
    return f"{type(exc).__name__}: {one_line(exc)}{after}"


def main_entry() -> None:
    """Console-script entry point: :func:`main`, then exit with its code.

    Before exiting, every live object moves to the collector's permanent generation
    (:func:`gc.freeze`), so the interpreter's final collection does not walk the objects numpy,
    pydantic and the report left behind: 0.05-0.1 s, a sixth of a small ``compare``. Nothing is
    skipped that a process relies on: ``atexit`` handlers, module teardown and the flushing of
    open files still run; only unreachable cycles are left to the operating system, as memory.
    """
    os.environ.setdefault("PYTHONIOENCODING", "utf-8")
    code = main()
    gc.freeze()
    if _abandoned_threads():
        _exit_without_teardown(code)
    sys.exit(code)


def _abandoned_threads() -> bool:
    """Whether daemon threads still run calls the command abandoned (a timed-out or stopped
    agent, verifier or scorer: :mod:`ablation.run.threads` never waits for them)."""
    main_thread = threading.main_thread()
    return any(t.daemon and t.is_alive() for t in threading.enumerate() if t is not main_thread)


def _exit_without_teardown(code: int) -> NoReturn:
    """Exit with ``code`` after the ``atexit`` handlers and a flush of the standard streams, but
    without the interpreter's module teardown.

    Tearing modules down while daemon threads still run user code inside C extensions can crash
    the process (SIGSEGV after a broken arm's stop, with httpx calls in flight): the command's
    exit code would then be -11 instead of what it decided. Nothing the command wrote is lost:
    its files are closed, its stores committed, and the streams are flushed here.
    """
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
