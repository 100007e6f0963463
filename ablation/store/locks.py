"""One process at a time runs a campaign: an advisory lock file per campaign, naming its holder.

Two ``ablation run --resume`` of the same campaign would otherwise both compute the same missing
trials and both run them; the second then dies on "duplicate trial". :class:`CampaignLock` takes an
exclusive POSIX record lock (``fcntl.lockf``) on ``<store>.<campaign_id>.lock`` (created next to
the store) and writes the holder's pid into it; a second process fails at once with
:class:`~ablation.errors.StoreError` naming that pid. The kernel drops the lock when the holder
exits, even on ``kill -9``, so a stale file never blocks a later resume.

A record lock belongs to the process, not to the open file: a copy of the process forked by an
agent does not hold it (an ``flock`` would be shared with the copy, which could outlive a killed
holder and keep every resume out). Within one process, a second lock of the same file is refused
by a registry of the files this process holds.

Assumptions: POSIX record locks on a local file system (on NFS they depend on the lock daemon);
the process opens the lock file nowhere else (closing any descriptor of the file would drop a
record lock); an in-memory store needs no lock.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from pathlib import Path

from ablation.errors import StoreError

__all__ = ["CampaignLock"]


_HELD: set[str] = set()  # lock files this process holds


class CampaignLock:
    """Hold the run lock of one campaign of one store file until :meth:`release`.

    Args:
        store_path: The run store's file.
        campaign_id: The campaign to lock.

    Raises:
        StoreError: if another live process holds the lock (the message names its pid).
    """

    def __init__(self, store_path: Path, campaign_id: str) -> None:
        self.path = store_path.with_name(f"{store_path.name}.{campaign_id}.lock")
        key = os.path.realpath(self.path)
        self._fd: int | None = None
        if key in _HELD:
            raise StoreError(
                f"campaign {campaign_id} in {store_path} is being run by this process "
                f"(pid {os.getpid()}); wait for it to finish before resuming"
            )
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EAGAIN):  # not "held by another process"
                os.close(fd)
                raise
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise StoreError(
                f"campaign {campaign_id} in {store_path} is being run by another process "
                f"(pid {holder}); wait for it to finish or stop it before resuming"
            ) from None
        self._fd, self._key = fd, key
        _HELD.add(key)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)

    def release(self) -> None:
        """Drop the lock and remove the file (idempotent)."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self._fd)
        self._fd = None
        _HELD.discard(self._key)
