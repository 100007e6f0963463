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

from ablation.errors import ConfigError
from ablation.evaluate.sandbox import SandboxLimits, SandboxResult, run_python_tests
from ablation.evaluate.sandbox_confinement import CONFINEMENTS, current_confinement
from ablation.evaluate.verifiers import BuiltinVerifier, VerifierError, note
from ablation.schema import AblationTask

__all__ = ["CodeTestsVerifier", "SandboxError", "SandboxUnavailable", "code_tests", "extract_code"]


class SandboxError(VerifierError):
    """The sandbox could not judge the code (it did not start, its self-check failed, or the
    test process ended without a result): the trial's error at the verifier stage, never a
    verdict."""


class SandboxUnavailable(SandboxError):
    """The chosen confinement cannot run on this machine; the message names the fix."""

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
    :func:`ablation.evaluate.sandbox.run_python_tests` for the test format and the isolation).
    Every outcome of the code's own behaviour - failed assertion, syntax error, crash, timeout,
    memory, output or process limit, early exit, forged output, output that is not code - is
    ``False``, with the reason as the trial's note (:meth:`explain` gives the whole
    :class:`~ablation.evaluate.sandbox.SandboxResult`).

    A run that could not judge the code raises :class:`SandboxUnavailable` (the confinement
    cannot run here) or :class:`SandboxError` (it did not start, its self-check failed, the test
    process died), so the trial is an error at the verifier stage: it reaches the errors
    section and the completeness gate instead of counting as a failure or a pass. Tests that
    are missing or do not compile are a defect of the task and raise :class:`VerifierError`.
    Under the weaker ``process`` confinement every trial's note says so.
    """

    def __init__(self, limits: SandboxLimits, confinement: str | None = None) -> None:
        if confinement is not None and confinement not in CONFINEMENTS:
            raise ConfigError(
                f"unknown confinement {confinement!r}; choose one of {sorted(CONFINEMENTS)}"
            )
        self.limits = limits
        self.confinement = confinement
        extra = "".join(
            f", {field}={getattr(limits, field)!r}"
            for field in ("max_output_mb", "max_processes", "max_disk_mb")
            if getattr(limits, field) != getattr(SandboxLimits, field)
        )
        if confinement is not None:
            extra += f", confinement={confinement!r}"
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
        confinement = self.confinement or current_confinement()
        try:
            return run_python_tests(code, tests, self.limits, confinement=confinement)
        except ValueError as exc:
            raise VerifierError(f"task {task.task_id!r}: {exc}") from None

    inline = False  # a subprocess run: the engine calls it from a worker thread

    def __call__(self, output: Any, task: AblationTask) -> bool:
        result = self.explain(output, task)
        if result.error:
            error = SandboxUnavailable if result.kind == "unavailable" else SandboxError
            raise error(f"task {task.task_id!r}: {result.kind}: {result.reason}")
        if result.confinement == "process":
            note("confinement=process (no namespaces, no seccomp: docs/SECURITY.md)")
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
    max_disk_mb: int = 64,
    confinement: str | None = None,
) -> CodeTestsVerifier:
    """The code-test verifier: the agent's output is Python code checked by the task's tests.

    Args:
        time_limit_s: Wall-time limit of one run.
        memory_mb: Address-space limit of the child process.
        cpu_s: CPU-time limit; ``None`` means ``ceil(time_limit_s) + 1``.
        max_output_mb: Largest file (stdout and stderr included) the code may write, and largest
            value it may send to the tests, in MiB.
        max_processes: Most processes the code may hold.
        max_disk_mb: Total scratch space of the code in MiB (bubblewrap's size-capped tmpfs).
        confinement: ``"bubblewrap"`` or ``"process"`` (weaker: resource limits only; the
            report names it); ``None`` (default): the campaign's choice
            (``CampaignConfig.sandbox``, ``ablation run --sandbox``), else bubblewrap.

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
            max_disk_mb=max_disk_mb,
        ),
        confinement,
    )
