"""Suite fingerprints and task digests from the canonical JSON of each task, as streams.

The fingerprint of a suite (:func:`ablation.schema.suite_fingerprint`) is the SHA-256 of
``json.dumps({"tasks": entries, "scorers": sorted(scorer_names)}, sort_keys=True)`` where each
entry is :func:`ablation.schema.task_entry` of a task, the entries sorted by task id.
:func:`fingerprint_of_entries` hashes the same bytes from the encoded entries one at a time, so a
caller holding no suite (:mod:`ablation.run.suite_scan`) gets the same value. Assumption: the
standard :mod:`json` separators (``", "`` and ``": "``), which both sides use.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence

__all__ = ["entry_digest", "fingerprint_of_entries"]


def fingerprint_of_entries(encoded: Iterable[str], scorer_names: Sequence[str] = ()) -> str:
    """The suite fingerprint from ``json.dumps(task_entry(t))`` of each task, in task-id order.

    Args:
        encoded: The encoded entries, sorted by task id (ids are unique in a suite).
        scorer_names: Names of the quality scorers (their order does not matter).
    """
    sha = hashlib.sha256(b'{"scorers": ' + json.dumps(sorted(scorer_names)).encode() + b', "tasks": [')
    for i, entry in enumerate(encoded):
        sha.update((", " + entry if i else entry).encode())
    sha.update(b"]}")
    return sha.hexdigest()


def entry_digest(entry: tuple[str, ...]) -> str:
    """A task's digest from its entry: SHA-256 (16 hex digits) of the JSON of ``[input, expected
    output, verifier name]`` (the input and expected output already JSON-encoded in the entry)."""
    return hashlib.sha256(f"[{entry[1]}, {entry[2]}, {json.dumps(entry[3])}]".encode()).hexdigest()[:16]
