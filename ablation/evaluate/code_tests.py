"""The code-test verifier: the agent's output is Python code, checked by the task's unit tests.

Owns :func:`code_tests` (the factory), :class:`CodeTestsVerifier` (the verifier, which can also
:meth:`~CodeTestsVerifier.explain` a verdict) and :func:`extract_code` (the Python source in an
agent output). The code runs in the subprocess sandbox of :mod:`ablation.evaluate.sandbox`; the
verdict contract and the other built-ins are in :mod:`ablation.evaluate.verifiers`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ablation.evaluate.sandbox import SandboxLimits, SandboxResult, run_python_tests
from ablation.evaluate.verifiers import BuiltinVerifier, VerifierError, note
from ablation.schema import AblationTask

__all__ = ["CodeTestsVerifier", "code_tests", "extract_code"]

_FENCE = re.compile(r"\A\s*```[A-Za-z0-9_+-]*[ \t]*\n(?P<body>.*?)\n?```\s*\Z", re.DOTALL)


def extract_code(output: Any) -> str | None:
    """The Python source in an agent output, or ``None`` if there is none.

    Accepts a string, or a mapping with a string ``"code"`` entry. A string wrapped as a whole in
    one Markdown code fence (```` ```python ... ``` ````) is unwrapped; nothing else is altered.
    """
    if isinstance(output, Mapping):
        output = output.get("code")
    if not isinstance(output, str):
        return None
    match = _FENCE.match(output)
    return match.group("body") if match else output


def _task_tests(task: AblationTask) -> str:
    tests = task.metadata.get("tests")
    if isinstance(tests, list | tuple) and all(isinstance(t, str) for t in tests):
        tests = "\n\n".join(tests)
    if not isinstance(tests, str) or not tests.strip():
        raise VerifierError(
            f"task {task.task_id!r}: code_tests needs Python test source in metadata['tests']"
        )
    return tests


class CodeTestsVerifier(BuiltinVerifier):
    """Runs the agent's Python code against ``task.metadata["tests"]`` in a sandbox.

    The verdict is ``True`` only when every test ran and passed (see
    :func:`ablation.evaluate.sandbox.run_python_tests` for the test format and the isolation). Every other
    outcome - failed assertion, syntax error, crash, timeout, memory or process limit, early
    exit, forged output, output that is not code - is ``False``. The engine only records the
    bool; call :meth:`explain` for the reason and the captured output.

    Tests that are missing or do not compile are a defect of the task and raise
    :class:`VerifierError` instead.
    """

    def __init__(self, limits: SandboxLimits) -> None:
        self.limits = limits
        extra = "".join(
            f", {field}={getattr(limits, field)!r}"
            for field in ("max_output_mb", "max_processes")
            if getattr(limits, field) != getattr(SandboxLimits, field)
        )
        self.name = (
            f"code_tests(time_limit_s={limits.time_limit_s!r}, memory_mb={limits.memory_mb!r}, "
            f"cpu_s={limits.cpu_s!r}{extra})"
        )

    def explain(self, output: Any, task: AblationTask) -> SandboxResult:
        """Run the sandbox and return the full :class:`~ablation.evaluate.sandbox.SandboxResult`."""
        tests = _task_tests(task)
        code = extract_code(output)
        if code is None:
            return SandboxResult(
                False,
                "bad_output",
                f"the output is {type(output).__name__}, not Python source "
                "(a string or a dict with a 'code' string)",
            )
        try:
            return run_python_tests(code, tests, self.limits)
        except ValueError as exc:
            raise VerifierError(f"task {task.task_id!r}: {exc}") from None

    inline = False  # a subprocess run: the engine calls it from a worker thread

    def __call__(self, output: Any, task: AblationTask) -> bool:
        result = self.explain(output, task)
        if not result.passed:
            note(f"{result.kind}: {result.reason}")
        return result.passed


def code_tests(
    time_limit_s: float = 10,
    memory_mb: int = 512,
    cpu_s: int | None = None,
    *,
    max_output_mb: int = 16,
    max_processes: int = 32,
) -> CodeTestsVerifier:
    """The code-test verifier: the agent's output is Python code checked by the task's tests.

    Args:
        time_limit_s: Wall-time limit of one run.
        memory_mb: Address-space limit of the child process.
        cpu_s: CPU-time limit; ``None`` means ``ceil(time_limit_s) + 1``.
        max_output_mb: Largest file (stdout and stderr included) the child may write.
        max_processes: Most processes the child's process group may hold.

    Returns:
        A sync :class:`CodeTestsVerifier` (it blocks while the subprocess runs; the engine runs
        sync verifiers in a worker thread).
    """
    return CodeTestsVerifier(
        SandboxLimits(
            time_limit_s=time_limit_s,
            memory_mb=memory_mb,
            cpu_s=cpu_s,
            max_output_mb=max_output_mb,
            max_processes=max_processes,
        )
    )
