"""One process at a time runs a campaign: an advisory lock file per campaign, naming its holder.

Two ``ablation run --resume`` of the same campaign would otherwise both compute the same missing
trials and both run them; the second then dies on "duplicate trial". :class:`CampaignLock` takes an
exclusive ``flock`` on ``<store>.<campaign_id>.lock`` (created next to the store) and writes the
holder's pid into it; a second process fails at once with :class:`~ablation.errors.StoreError`
naming that pid. The kernel drops the lock when the holder exits, even on ``kill -9``, so a stale
file never blocks a later resume.

Assumptions: POSIX ``fcntl.flock`` on a local file system (on NFS, flock may be local to one host);
an in-memory store needs no lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from ablation.errors import StoreError

__all__ = ["CampaignLock"]


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
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self._fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(self._fd)
            self._fd = None
            raise StoreError(
                f"campaign {campaign_id} in {store_path} is being run by another process "
                f"(pid {holder}); wait for it to finish or stop it before resuming"
            ) from None
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, f"{os.getpid()}\n".encode("ascii"), 0)

    def release(self) -> None:
        """Drop the lock and remove the file (idempotent)."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self._fd)
        self._fd = None
