"""A refusal of an ``ablation report --export-jsonl`` row names the field as the file calls it.

The export's task id is ``task_id`` (or the ``--key`` path), not the plain reader's ``id``: an
error about it must name a field the file has. The words are otherwise the plain reader's
(checked by reading the same value from a plain row). The export comes from a real campaign.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_here

from ablation import AblationTask, run_ablation_campaign
from ablation.errors import InputError
from ablation.sources.result_files import load_results
from ablation.store.run_store import RunStore

NAME = "export.jsonl"
ARMS = ["--baseline-where", "arm=baseline", "--where", "arm=candidate", "--format", "json"]
ERROR = re.compile(rf"ablation: error: {re.escape(NAME)}:(\d+): (.*)")
MISSING = object()


def _same(x: dict[str, int]) -> int:
    return x["n"]


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The rows of a real campaign's export (header first): 4 tasks, both arms."""
    folder = tmp_path_factory.mktemp("campaign")
    tasks = [AblationTask(task_id=f"t{i}", input_data={"n": i}, expected_output=i) for i in range(4)]
    run_ablation_campaign(_same, _same, tasks, store=folder / "runs.db")
    with RunStore(folder / "runs.db") as runs:
        campaign = runs.latest_campaign()
        assert campaign is not None
        runs.export_jsonl(campaign.campaign_id, folder / NAME)
    return [json.loads(line) for line in (folder / NAME).read_text().splitlines()]


def _plain_words(value: Any, folder: Path) -> str:
    """What the plain JSON-lines reader says of ``value`` as its id (its column ``id``)."""
    row = {"passed": True} if value is MISSING else {"id": value, "passed": True}
    path = folder / "plain.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(InputError) as caught:
        load_results(path)
    return str(caught.value).removeprefix(f"{path}:1: ")


def _refusal(rows: list[dict[str, Any]], folder: Path, extra: tuple[str, ...] = ()) -> tuple[int, str]:
    """``ablation compare`` of the export against itself: the refused line and the words."""
    (folder / NAME).write_text("".join(json.dumps(row) + "\n" for row in rows))
    done = run_here(["compare", NAME, NAME, *ARMS, *extra], cwd=folder)
    assert (done.returncode, done.stdout) == (1, ""), done
    match = ERROR.fullmatch(done.stderr.strip())
    assert match is not None, done.stderr
    return int(match[1]), match[2]


@pytest.mark.parametrize(
    "value", [MISSING, None, "", ["t1"], {"a": 1}, True, 1.5],
    ids=["missing", "null", "empty", "list", "object", "boolean", "float"],
)  # fmt: skip
def test_an_id_error_names_task_id_not_id(
    export: list[dict[str, Any]], tmp_path: Path, value: Any
) -> None:
    index = next(i for i, row in enumerate(export) if row.get("arm") == "candidate")
    row = {k: v for k, v in export[index].items() if k != "task_id"}
    if value is not MISSING:
        row["task_id"] = value
    line, words = _refusal([*export[:index], row, *export[index + 1 :]], tmp_path)
    assert line == index + 1
    plain = _plain_words(value, tmp_path)
    assert plain.startswith(("'id' ", "no 'id' "))  # the plain reader's name for its own column
    assert words == plain.replace("'id'", "'task_id'", 1)
    assert "'id'" not in words


def test_an_id_error_under_key_names_the_key(export: list[dict[str, Any]], tmp_path: Path) -> None:
    rows = [export[0], *({**row, "ref": {"tid": row["task_id"]}} for row in export[1:])]
    index = next(i for i, row in enumerate(rows) if row.get("arm") == "candidate")
    rows[index] = {**rows[index], "ref": {}}
    line, words = _refusal(rows, tmp_path, ("--key", "ref.tid"))
    assert line == index + 1
    assert words.startswith("no 'ref.tid' field") and "'id'" not in words
