"""One process at a time runs a campaign: an advisory lock file per campaign, naming its holder.

Two ``ablation run --resume`` of the same campaign would otherwise both compute the same missing
trials and both run them; the second then dies on "duplicate trial". :class:`CampaignLock` takes an
exclusive POSIX record lock (``fcntl.lockf``) on ``<store>.<campaign_id>.lock`` (created next to
the store) and writes the holder's pid into it; a second process fails at once with
:class:`~ablation.errors.StoreError` naming that pid. The kernel drops the lock when the holder
exits, even on ``kill -9``, so a stale file never blocks a later resume. A lock that cannot be
taken or written (a full disk) is one :class:`~ablation.errors.StoreError` naming the store and
leaves no file; a new campaign whose row could not be written after its lock was taken releases
it (:func:`ablation.run.campaign.run_ablation_campaign_async`: whoever takes a lock releases it).

A record lock belongs to the process, not to the open file: a copy of the process forked by an
agent does not hold it (an ``flock`` would be shared with the copy, which could outlive a killed
holder and keep every resume out). Within one process, a second lock of the same file is refused
by a registry of the files this process holds.

Whether a live process runs a campaign is read from its lock without taking it
(:func:`campaign_running`: ``F_GETLK``), so that a reader (``ablation list``, the viewer) never
makes a starting run fail: a campaign stored as ``running`` whose lock nobody holds was killed
(``kill -9``, a lost machine) and is resumable.

Assumptions: POSIX record locks on a local file system (on NFS they depend on the lock daemon);
the process opens the lock file nowhere else (closing any descriptor of the file would drop a
record lock; :func:`campaign_running` opens none of the files this process holds); an in-memory
store needs no lock. ``F_GETLK``'s ``struct flock`` is laid out as on Linux or the BSDs and
macOS; elsewhere a campaign is taken to be running, as stored.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import struct
import sys
import threading
from pathlib import Path

from ablation.errors import StoreError

__all__ = ["CampaignLock", "campaign_running"]


_HELD: set[str] = set()  # lock files this process holds
_GUARD = threading.Lock()  # held while this process opens, locks or closes a lock file
#: ``struct flock`` as ``F_GETLK`` reads and writes it, and the index of ``l_type`` in it.
_FLOCK: tuple[str, int] | None = (
    ("hhqqi4x", 0) if sys.platform.startswith("linux")
    else ("qqihh4x", 3) if sys.platform == "darwin" or "bsd" in sys.platform
    else None
)  # fmt: skip


def lock_path(store_path: Path, campaign_id: str) -> Path:
    """The lock file of a campaign: ``<store>.<campaign_id>.lock`` beside the store.

    Raises:
        ValueError: for an id that cannot name a file (a NUL character, a ``/``).
    """
    if "\x00" in campaign_id:  # the OS refuses it in every call, os.path.realpath included
        raise ValueError(f"a file name cannot hold a NUL character: {campaign_id!r}")
    return store_path.with_name(f"{store_path.name}.{campaign_id}.lock")


def campaign_running(store_path: Path, campaign_id: str) -> bool:
    """Whether a live process holds the campaign's run lock (a run or resume of it is under way).

    The lock is tested (``F_GETLK``), never taken, so a run starting meanwhile is not refused.
    ``False`` when the lock file is missing (a run removes it when it ends) or nobody holds it;
    ``True`` when this process holds it, and when it cannot be told (the file unreadable, a
    campaign id that cannot name a file, a platform of unknown ``struct flock``).
    """
    try:
        path = lock_path(store_path, campaign_id)
    except ValueError:
        return True
    with _GUARD:
        if os.path.realpath(path) in _HELD:
            return True
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return False
        except OSError:
            return True
        try:
            return _locked(fd)
        finally:
            os.close(fd)


def _locked(fd: int) -> bool:
    """Whether another process holds a record lock on any byte of the open file ``fd``."""
    if _FLOCK is None:
        return True
    layout, type_at = _FLOCK
    fields = [0] * 5
    fields[type_at] = fcntl.F_WRLCK  # l_whence SEEK_SET, l_start 0, l_len 0: the whole file
    try:
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack(layout, *fields))
    except OSError:
        return True
    return bool(struct.unpack(layout, answer)[type_at] != fcntl.F_UNLCK)


class CampaignLock:
    """Hold the run lock of one campaign of one store file until :meth:`release`.

    Args:
        store_path: The run store's file.
        campaign_id: The campaign to lock.

    Raises:
        StoreError: if another live process holds the lock (the message names its pid).
    """

    def __init__(self, store_path: Path, campaign_id: str) -> None:
        try:
            self.path = lock_path(store_path, campaign_id)
        except ValueError:
            raise StoreError(
                f"campaign {campaign_id!r} in {store_path} cannot be run: its id cannot name a "
                "lock file"
            ) from None
        self._fd: int | None = None
        with _GUARD:
            self._take(store_path, campaign_id)

    def _take(self, store_path: Path, campaign_id: str) -> None:
        key = os.path.realpath(self.path)
        if key in _HELD:
            raise StoreError(
                f"campaign {campaign_id} in {store_path} is being run by this process "
                f"(pid {os.getpid()}); wait for it to finish before resuming"
            )
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise self._failed(store_path, campaign_id, exc) from exc
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EAGAIN):  # not "held by another process"
                os.close(fd)
                raise self._failed(store_path, campaign_id, exc) from exc
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise StoreError(
                f"campaign {campaign_id} in {store_path} is being run by another process "
                f"(pid {holder}); wait for it to finish or stop it before resuming"
            ) from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        except OSError as exc:  # a full disk: the pid does not fit
            with contextlib.suppress(OSError):
                self.path.unlink()
            os.close(fd)
            raise self._failed(store_path, campaign_id, exc) from exc
        self._fd, self._key = fd, key
        _HELD.add(key)

    def _failed(self, store_path: Path, campaign_id: str, exc: OSError) -> StoreError:
        return StoreError(
            f"run store {store_path}: cannot take the run lock of campaign {campaign_id} "
            f"({self.path.name}): {exc.strerror or exc}"
        )

    def release(self) -> None:
        """Drop the lock and remove the file (idempotent)."""
        with _GUARD:
            if self._fd is None:
                return
            with contextlib.suppress(OSError):
                self.path.unlink()
            os.close(self._fd)
            self._fd = None
            _HELD.discard(self._key)

