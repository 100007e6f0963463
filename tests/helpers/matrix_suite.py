"""The fault matrix's suite: one task per fault (``tests/faults/test_fault_matrix.py``)."""

from __future__ import annotations

from ablation import AblationTask
from ablation.verifiers import code_tests

KINDS = (
    "ok", "raise", "sys_exit", "os_exit", "segfault", "hang", "http_hang", "busy", "flood",
    "surrogate", "unrepresentable", "sb_kill_parent", "sb_escape", "sb_frames", "sb_eq",
)  # fmt: skip

_CODE = code_tests(time_limit_s=5, memory_mb=256)
_TESTS = "assert add(2, 3) == 5\nassert add(-1, 1) == 0\n"

tasks = [
    AblationTask(
        task_id=kind,
        input_data={"kind": kind},
        expected_output=None if kind.startswith("sb_") else "ok",
        verifier=_CODE if kind.startswith("sb_") else None,
        metadata={"tests": _TESTS} if kind.startswith("sb_") else {},
    )
    for kind in KINDS
]
