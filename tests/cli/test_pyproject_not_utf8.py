"""A ``pyproject.toml`` that is not UTF-8 text (saved as Latin-1, or UTF-16 by a Windows editor) is
one line naming the file, exit 1, for every command that reads ``[tool.ablation]``: TOML is UTF-8
by its specification, and the decoder's own message named neither the file nor what to fix.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli_shared import run_here


@pytest.mark.parametrize(
    "content",
    [b"[tool.ablation]\nalpha = 0.1\n# caf\xe9\n", "[tool.ablation]\nalpha = 0.1\n".encode("utf-16")],
    ids=["latin-1", "utf-16"],
)
def test_a_pyproject_that_is_not_utf8_is_one_line_naming_it(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "pyproject.toml").write_bytes(content)
    for name, passed in (("a.jsonl", True), ("b.jsonl", False)):
        (tmp_path / name).write_text(json.dumps({"id": "t1", "passed": passed}) + "\n")
    for args in (["compare", "a.jsonl", "b.jsonl"], ["list"]):
        done = run_here(args, cwd=tmp_path)
        assert (done.returncode, done.stdout) == (1, ""), args
        assert done.stderr.startswith(f"ablation: error: {tmp_path / 'pyproject.toml'}: not UTF-8 text ("), args
        assert done.stderr.endswith("), as TOML must be\n") and done.stderr.count("\n") == 1, args
