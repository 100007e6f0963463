"""The parent's control of the sandbox's processes.

Owns what :func:`ablation.evaluate.sandbox.run_python_tests` needs around one run: :func:`feed`
(the pipe that carries code, tests and nonce to the test process), :func:`supervise` (waiting with
the start-up, wall-time and process-count limits) and the ``/proc`` sweep that finds
(:func:`live_processes`, :func:`descendants`) and kills (:func:`kill_all`) what a run left behind.
It also owns the host scratch directories of the ``process`` confinement (:func:`make_scratch`,
:func:`remove_scratch`, :func:`remove_stale_scratch`; bubblewrap's scratch is a ``tmpfs`` that
ends with its namespace). The test process is a child subreaper, so while it lives every process the code started is its
descendant, ``setsid`` and double forks included; the environment marker catches what outlives it.
POSIX only; the process checks read Linux's ``/proc``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time

__all__ = [
    "COUNT_EVERY_S",
    "KILL_GRACE_S",
    "descendants",
    "feed",
    "kill_all",
    "live_processes",
    "make_scratch",
    "remove_scratch",
    "remove_stale_scratch",
    "supervise",
    "user_tasks",
]

_log = logging.getLogger(__name__)

#: Longest wait, in seconds, for killed processes to disappear (and for the feeder thread).
KILL_GRACE_S = 3.0
#: How often, in seconds, :func:`supervise` counts the child's processes.
COUNT_EVERY_S = 0.05

def live_processes(pgid: int | None, home_marker: bytes | None) -> list[int]:
    """Pids of live (non-zombie) processes in group ``pgid`` or whose environment has the marker."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    me, found = os.getpid(), []
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
            fields = stat[stat.rfind(b")") + 2 :].split()
            if fields[0] in (b"Z", b"X"):
                continue
            if pgid is not None and int(fields[2]) == pgid:
                found.append(int(entry))
                continue
            if home_marker is not None:
                with open(f"/proc/{entry}/environ", "rb") as fh:
                    if home_marker in fh.read().split(b"\0"):
                        found.append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _descendant_threads(root: int) -> dict[int, int]:
    """Each live (non-zombie) descendant of ``root`` with its thread count, from ``/proc``."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return {}
    children: dict[int, list[int]] = {}
    threads: dict[int, int] = {}
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
            fields = stat[stat.rfind(b")") + 2 :].split()
            if fields[0] not in (b"Z", b"X"):
                children.setdefault(int(fields[1]), []).append(int(entry))
                threads[int(entry)] = int(fields[17])  # num_threads
        except (OSError, IndexError, ValueError):
            continue
    found, todo = {}, [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found[pid] = threads[pid]
            todo.append(pid)
    return found


def descendants(root: int) -> list[int]:
    """Pids of the live (non-zombie) descendants of ``root``, read from ``/proc``."""
    return list(_descendant_threads(root))


def user_tasks(uid: int) -> int:
    """Threads of every process of ``uid`` on this machine (what ``RLIMIT_NPROC`` counts)."""
    total = 0
    for entry in (e for e in _listdir("/proc") if e.isdigit()):
        try:
            with open(f"/proc/{entry}/status") as fh:
                info = dict(line.split(":", 1) for line in fh if ":" in line)
            if int(info["Uid"].split()[0]) == uid:
                total += int(info.get("Threads", "1"))
        except (OSError, KeyError, ValueError, IndexError):
            continue
    return total


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _over(found: dict[int, int], max_processes: int, max_tasks: int | None) -> bool:
    """More than ``max_processes`` descendants in ``found``, or more than ``max_tasks`` threads."""
    return len(found) > max_processes or (max_tasks is not None and sum(found.values()) > max_tasks)


def _files_over(found: dict[int, int], scratch: str, max_files: int) -> bool:
    """More than ``max_files`` inodes used on the file system at ``scratch`` as the first of the
    descendants ``found`` whose root is not this process's (one in the sandbox) sees it.

    Read through ``/proc/<pid>/root``, which the sandbox's owner may traverse; a process that
    ended meanwhile is skipped. A ``tmpfs`` counts the bytes of files against its size, not the
    files themselves: empty files, directories and links hold kernel memory all the same.
    """
    try:
        host = os.stat("/")
    except OSError:
        return False
    for pid in found:
        try:
            root = os.stat(f"/proc/{pid}/root")
            if (root.st_dev, root.st_ino) == (host.st_dev, host.st_ino):
                continue
            disk = os.statvfs(f"/proc/{pid}/root{scratch}")
        except OSError:
            continue
        return disk.f_files - disk.f_ffree > max_files
    return False


def _kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def kill_all(root: int, home_marker: bytes) -> int:
    """SIGKILL every descendant of ``root`` (while ``root``, a subreaper, still holds them), then
    ``root``'s group and any process carrying the marker; wait until none is alive.

    Returns:
        How many processes were still alive at the deadline.
    """
    deadline = time.monotonic() + KILL_GRACE_S
    while True:
        below = descendants(root)
        _kill(below)
        if not below or time.monotonic() > deadline:
            break
        time.sleep(0.005)
    while True:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(root, signal.SIGKILL)
        alive = live_processes(root, home_marker)
        if not alive or time.monotonic() > deadline:
            return len(alive)
        _kill(alive)
        time.sleep(0.01)


def _started(fd: int) -> bool:
    """True when the test process has written to the non-blocking pipe ``fd``: the code starts."""
    try:
        return os.read(fd, 1) != b""
    except BlockingIOError:
        return False


def supervise(
    proc: subprocess.Popen[bytes],
    start_by: float,
    time_limit_s: float,
    max_processes: int,
    started: int,
    max_tasks: int | None = None,
    files: tuple[str, int] | None = None,
) -> str:
    """Wait until the child exits without reaping it (its pid keeps the group id reserved).

    Two phases. Start-up lasts until the test process writes to the pipe ``started`` (the code
    process's self-check arrived; the code is sent only after that) and must end by the
    monotonic time ``start_by``. The code's ``time_limit_s`` is counted from that write. A
    limit reached during start-up is the sandbox's, never the code's: ``"start_timeout"`` or
    ``"start_process_limit"``.

    Every ``COUNT_EVERY_S`` the child's descendants are counted, so a fork bomb is stopped even
    where ``RLIMIT_NPROC`` is not enforced (root) and whatever sessions it opens. Where it is
    enforced (a user who is not root), the kernel refuses the bomb's forks at about
    ``max_processes``; a bomb that ignores the refusals and keeps trying holds that many until
    the deadline, which is then the process limit's doing, not a plain timeout. The pipe is read
    after each count and at the deadline, so processes the code started are never taken for
    the sandbox's (the write precedes the code).

    Args:
        proc: The test process.
        start_by: ``time.monotonic()`` value by which the start-up must end.
        time_limit_s: The code's wall-time limit, in seconds.
        max_processes: Most descendants the child may hold.
        started: The read end of the start-up pipe, non-blocking.
        max_tasks: Most threads, of every process, the child's descendants may hold together
            (``None``: not counted). Root needs this: ``RLIMIT_NPROC`` does not bind uid 0, and
            threads take pids from the host as processes do.
        files: The scratch's path inside the sandbox and the most files (inodes) it may hold
            once the code runs, counted with the processes (:func:`_files_over`); ``None``: not
            counted.

    Returns:
        ``"exited"`` (after the code started), ``"start_exited"`` (before), ``"start_timeout"``,
        ``"start_process_limit"``, ``"timeout"``, ``"file_limit"`` or ``"process_limit"`` (more than ``max_processes`` descendants or ``max_tasks`` threads at
        a count, or at least ``max_processes`` descendants at the deadline).
    """
    delay, next_count = 0.001, time.monotonic() + COUNT_EVERY_S
    deadline, running = start_by, False
    while True:
        if hasattr(os, "waitid"):
            info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            if info is not None and info.si_pid == proc.pid:
                return "exited" if running or _started(started) else "start_exited"
        elif proc.poll() is not None:  # pragma: no cover - no waitid (macOS): tiny pid-reuse race
            return "exited" if running or _started(started) else "start_exited"
        now = time.monotonic()
        if not running and _started(started):
            running, deadline = True, now + time_limit_s
        if now >= deadline:
            if not running:
                return "start_timeout"
            return "process_limit" if len(descendants(proc.pid)) >= max_processes else "timeout"
        if now >= next_count:
            next_count = now + COUNT_EVERY_S
            found = _descendant_threads(proc.pid)
            if _over(found, max_processes, max_tasks):
                if running or _started(started):
                    return "process_limit"
                return "start_process_limit"
            if running and files is not None and _files_over(found, *files):
                return "file_limit"
        time.sleep(min(delay, deadline - now))
        delay = min(delay * 2, 0.02)


def feed(fd: int, data: bytes) -> None:
    """Write ``data`` to the pipe ``fd`` and close it; a child that died first is not an error."""
    try:
        with os.fdopen(fd, "wb") as pipe:
            pipe.write(data)
    except (BrokenPipeError, OSError):
        pass  # the child died before reading its input; its outcome says why


#: Scratch directories of the ``process`` confinement: ``ablation-sandbox-<owner pid>-<random>``.
_SCRATCH_PREFIX = "ablation-sandbox-"
_SCRATCH_NAME = re.compile(rf"{_SCRATCH_PREFIX}(\d+)-")


def _rm(path: str) -> str:
    """``rm -rf`` (never Python recursion, which a 3,000-deep chain would exhaust); its stderr."""
    rm = shutil.which("rm") or shutil.which("rm", path=os.defpath) or "rm"
    done = subprocess.run(
        [rm, "-rf", "--one-file-system", "--", path],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    return done.stderr.decode("utf-8", "replace")


def _unlock(root: str) -> None:
    """Give the owner ``rwx`` on every directory below ``root`` that lacks it.

    The code may have taken its own rights away (``chmod 000``), which stops a user who is not
    root from emptying the directory. Iterative (no recursion limit), on ``root``'s file system
    only, and symbolic links are never followed. Assumes no process of the run is alive.
    """
    try:
        device = os.lstat(root).st_dev
    except OSError:
        return
    todo = [root]
    while todo:
        folder = todo.pop()
        with contextlib.suppress(OSError):
            info = os.lstat(folder)
            if not stat.S_ISDIR(info.st_mode) or info.st_dev != device:
                continue
            if info.st_mode & 0o700 != 0o700:
                os.chmod(folder, stat.S_IMODE(info.st_mode) | 0o700)
            with os.scandir(folder) as entries:
                todo.extend(e.path for e in entries if e.is_dir(follow_symlinks=False))


def _remove_tree(path: str) -> str | None:
    """Delete ``path`` and everything in it, however deep; why it is still there, else ``None``."""
    _rm(path)
    if not os.path.lexists(path):
        return None
    _unlock(path)
    said = _rm(path)
    if not os.path.lexists(path):
        return None
    why = " ".join(said.split())[:300] or "rm -rf left it in place"
    _log.warning("the sandbox's scratch directory %s could not be removed: %s", path, why)
    return why


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_scratch(folder: str | None = None) -> list[str]:
    """Delete scratch directories whose owning process is gone (a killed campaign's).

    Args:
        folder: Where to look; the temporary directory when ``None``.

    Returns:
        The paths removed (one that could not be removed is logged as a warning).
    """
    folder = folder or tempfile.gettempdir()
    removed: list[str] = []
    try:
        entries = os.listdir(folder)
    except OSError:
        return removed
    for entry in entries:
        match = _SCRATCH_NAME.match(entry)
        if match and not _alive(int(match.group(1))):
            path = os.path.join(folder, entry)
            if _remove_tree(path) is None:
                removed.append(path)
    return removed


def make_scratch() -> str:
    """A fresh scratch directory for one ``process``-confined run (stale ones swept first)."""
    remove_stale_scratch()
    return tempfile.mkdtemp(prefix=f"{_SCRATCH_PREFIX}{os.getpid()}-")


def remove_scratch(path: str) -> str | None:
    """Delete a run's scratch directory, however deep the tree the code left in it.

    Directories the code made unreadable or unwritable for their owner are opened up first.

    Returns:
        ``None`` when it is gone, else why it is not (also logged as a warning).
    """
    return _remove_tree(path)
