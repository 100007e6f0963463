"""Export and import of the run store: a campaign as one JSONL file and back.

:class:`JsonlTransfer` owns :meth:`JsonlTransfer.export_jsonl` (a header line, then one trial
per line, written beside the destination and renamed into place) and
:meth:`JsonlTransfer.import_jsonl` (one transaction: a bad file leaves the store unchanged). The
line format and its parsing are in :mod:`ablation.store.format`; campaigns are created through
:class:`~ablation.store.campaigns.CampaignStore` and trials streamed through
:class:`~ablation.store.reads.TrialReader`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import sqlite3
from pathlib import Path

from ablation.errors import InputError, StoreError
from ablation.store.campaigns import CampaignStore
from ablation.store.format import (
    INSERT_TRIAL,
    SCHEMA_VERSION,
    decode_line,
    parse_trial,
    read_header,
    trial_params,
)
from ablation.store.reads import TrialReader

__all__ = ["JsonlTransfer"]


class JsonlTransfer(CampaignStore, TrialReader):
    """The JSONL export and import of :class:`~ablation.store.run_store.RunStore`."""

    def export_jsonl(self, campaign_id: str, path: str | os.PathLike[str]) -> int:
        """Write a campaign as JSONL: a ``{"campaign": {...}}`` header, then one trial per line.

        The file is written beside its destination and renamed into place, so a failed export
        leaves no half-written file. Returns the number of trials written.

        Raises:
            StoreError: for an unknown campaign or an unwritable path.
        """
        rec = self.get_campaign(campaign_id)
        header = {f.name: getattr(rec, f.name) for f in dataclasses.fields(rec)}
        header.update(
            config=json.loads(rec.config.model_dump_json()), schema_version=SCHEMA_VERSION,
            task_digests=dict(rec.task_digests),
        )
        target = Path(path)
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        n = 0
        try:
            with tmp.open("w", encoding="utf-8", newline="\n") as fh:
                fh.write(json.dumps({"campaign": header}, sort_keys=True) + "\n")
                for page in self._pages("result_json", campaign_id):
                    fh.writelines(row[3] + "\n" for row in page)
                    n += len(page)
            os.replace(tmp, target)
        except BaseException as exc:
            tmp.unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise StoreError(
                    f"cannot export campaign {campaign_id!r} to {target}: {exc}"
                ) from exc
            raise
        return n

    def import_jsonl(self, path: str | os.PathLike[str]) -> str:
        """Create a campaign from a file written by :meth:`export_jsonl`; return its id.

        The original id is kept when it is free in this store, else a new one is made; status,
        provenance and timestamps are kept. The import is one transaction: a bad file leaves the
        store unchanged. Blank lines are skipped.

        Raises:
            InputError: naming the file and line of a malformed header or trial or a duplicate
                trial, or naming the file when its trial count differs from its header's.
            StoreError: if the file cannot be read.
        """
        source = Path(path)
        try:
            fh = source.open("rb")  # bytes: each line is decoded alone, for exact line numbers
        except OSError as exc:
            raise StoreError(f"cannot read {source}: {exc}") from exc
        with fh, self._op("import a campaign", transaction=True) as conn:
            header = read_header(source, decode_line(source, 1, fh.readline()))
            wanted = header.get("campaign_id")
            free = (
                isinstance(wanted, str) and bool(wanted.strip()) and not self._exists(conn, wanted)
            )
            try:
                campaign_id = self._insert_campaign(conn, wanted if free else None, header)
            except (ValueError, TypeError, AttributeError) as exc:
                raise InputError(f"{source}, line 1: invalid campaign header: {exc}") from None
            n = 0
            for lineno, raw in enumerate(fh, start=2):
                if not raw.strip():
                    continue
                result = parse_trial(source, lineno, raw)
                try:
                    conn.execute(INSERT_TRIAL, trial_params(campaign_id, result))
                except sqlite3.IntegrityError:
                    raise InputError(
                        f"{source}, line {lineno}: duplicate trial (task_id={result.task_id!r}, "
                        f"arm={result.arm!r}, run={result.run})"
                    ) from None
                n += 1
            declared = header.get("n_trials")
            if isinstance(declared, int) and declared != n:
                raise InputError(
                    f"{source}: the header declares {declared} trials but the file holds {n} "
                    "(truncated or edited?)"
                )
        return campaign_id
