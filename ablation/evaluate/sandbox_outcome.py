"""What one sandbox run may use and what its outcome means.

Owns :class:`SandboxLimits` (the limits of one run), :class:`SandboxResult` (its outcome),
:data:`ERROR_KINDS` (the outcomes that mean the code could not be judged) and :func:`interpret`,
which turns what the parent observed of a finished test process (:class:`Finished`) into the
result: the test process's one result line carrying the run's nonce, its exit, the parent's own
limits (wall time, process count) and the processes left behind.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "ERROR_KINDS",
    "START_LIMIT_S",
    "Finished",
    "SandboxLimits",
    "SandboxResult",
    "interpret",
]

_TAIL_CHARS = 2000

#: Outcomes that mean the code could not be judged (an error of the check, never a verdict).
ERROR_KINDS = frozenset({"unavailable", "sandbox_start", "sandbox_check", "harness_error"})
#: The least time, in seconds, the sandbox is given to start: from the test process's start until
#: the code process's self-check arrives (no code has run yet).
START_LIMIT_S = 10.0


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of one sandbox run.

    Attributes:
        time_limit_s: Wall-clock limit of the code, counted from the moment the sandbox's
            self-check arrived (the code starts then); the process group is killed when it is
            reached, and the run fails as ``"timeout"``.
        memory_mb: Address-space limit (``RLIMIT_AS``) in MiB; a larger allocation raises
            ``MemoryError`` in the child.
        cpu_s: CPU-time limit (``RLIMIT_CPU``) in whole seconds; ``None`` means
            ``ceil(time_limit_s) + 1``.
        max_output_mb: Largest file the code may write (``RLIMIT_FSIZE``), stdout and stderr
            included, and largest value it may send to the tests, in MiB.
        max_disk_mb: Total size of the code's scratch directory in MiB (the bubblewrap
            confinement's ``tmpfs``, whose files the parent also counts: :attr:`max_files`; the
            ``process`` confinement writes to the host's disk and has only the per-file limit).
        max_processes: Most processes the child's process group may hold; the parent counts
            them every 50 ms and kills the group above it (this works for root too). Also the
            ``RLIMIT_NPROC`` headroom (threads count) over what the user already runs, which the
            kernel enforces for users other than root and the parent counts for every user
            (threads of the run above it: ``"process_limit"``).
        start_limit_s: Wall-clock limit of the sandbox's start-up, from the test process's start
            until the code process's self-check arrives; ``None`` means
            ``max(START_LIMIT_S, time_limit_s)``. A start-up that does not end in time is a
            ``"sandbox_start"`` error, never a verdict: no code has run yet.
    """

    time_limit_s: float = 10.0
    memory_mb: int = 512
    cpu_s: int | None = None
    max_output_mb: int = 16
    max_processes: int = 32
    max_disk_mb: int = 64
    start_limit_s: float | None = None

    def __post_init__(self) -> None:
        if not self.time_limit_s > 0:
            raise ValueError(f"time_limit_s must be > 0, got {self.time_limit_s!r}")
        if self.start_limit_s is not None and not self.start_limit_s > 0:
            raise ValueError(f"start_limit_s must be > 0 or None, got {self.start_limit_s!r}")
        for field in ("memory_mb", "max_output_mb", "max_processes", "max_disk_mb"):
            if getattr(self, field) < 1:
                raise ValueError(f"{field} must be >= 1, got {getattr(self, field)!r}")
        if self.cpu_s is not None and self.cpu_s < 1:
            raise ValueError(f"cpu_s must be >= 1 or None, got {self.cpu_s!r}")

    @property
    def effective_cpu_s(self) -> int:
        """The CPU limit actually applied, in seconds."""
        return self.cpu_s if self.cpu_s is not None else math.ceil(self.time_limit_s) + 1

    @property
    def max_files(self) -> int:
        """The most files (inodes) the scratch may hold: one per 4 KiB page of ``max_disk_mb``,
        as many as non-empty files fit; a ``tmpfs`` does not count empty ones against its size."""
        return self.max_disk_mb * 256

    @property
    def effective_start_limit_s(self) -> float:
        """The start-up limit actually applied, in seconds."""
        if self.start_limit_s is not None:
            return self.start_limit_s
        return max(START_LIMIT_S, self.time_limit_s)


@dataclass(frozen=True)
class SandboxResult:
    """What happened in one sandbox run.

    Attributes:
        passed: True only when the harness reported, with the run's nonce, that every test ran
            and passed, exited normally and left no process behind.
        kind: Machine-readable outcome. Verdicts on the code: ``"passed"``, ``"failed"``,
            ``"syntax_error"``, ``"crash"``, ``"exit"``, ``"memory"``, ``"timeout"``,
            ``"cpu_limit"``, ``"output_limit"``, ``"process_limit"``, ``"no_result"``,
            ``"forged"``, ``"leaked_processes"``, ``"no_tests"`` or ``"bad_output"``. The code
            could not be judged (:data:`ERROR_KINDS`, :attr:`error`): ``"unavailable"`` (the
            confinement cannot run here), ``"sandbox_start"``, ``"sandbox_check"`` (a
            protection the confinement requires did not hold) or ``"harness_error"`` (the test
            process ended without a result).
        reason: One human-readable sentence explaining ``kind``.
        stdout_tail: Last characters of the child's stdout (result line removed).
        stderr_tail: Last characters of the child's stderr.
        duration_s: Wall time from start to the harness's exit (or the kill).
        tests_run: Tests started (the module-level code counts as one test; when it fails, the
            ``test_*`` functions are not run).
        tests_passed: Tests that passed.
        returncode: The code process's exit status when it ended before the tests completed,
            else the test process's (negative: killed by that signal); ``None`` if no process
            was started.
        process_group: Id of the test process's group (equal to its pid), for audits.
        isolation: The protections the code process verified about itself before the code
            ran (:data:`~ablation.evaluate.sandbox_confinement.SELF_CHECKS`), plus
            ``subreaper`` when the test process is one (see ``docs/SECURITY.md``).
        confinement: The confinement that ran the code (``"bubblewrap"`` or ``"process"``).
    """

    passed: bool
    kind: str
    reason: str
    stdout_tail: str = ""
    stderr_tail: str = ""
    duration_s: float = 0.0
    tests_run: int = 0
    tests_passed: int = 0
    returncode: int | None = None
    process_group: int | None = None
    isolation: tuple[str, ...] = ()
    confinement: str = ""

    @property
    def error(self) -> bool:
        """True when the code could not be judged (``kind`` in :data:`ERROR_KINDS`)."""
        return self.kind in ERROR_KINDS


@dataclass(frozen=True)
class Finished:
    """What the parent observed of one finished child, before its stdout is interpreted."""

    state: str  # what supervise() returned: "exited", "start_timeout", "timeout", ...
    returncode: int
    process_group: int
    duration_s: float
    leaked: int  # processes still alive after a normal exit
    verdict: str  # the test process's own stdout: where the result line is
    stdout: str  # the code process's stdout
    stderr: str
    output_full: bool  # stdout or stderr reached the file size limit
    signalable: bool = False  # the code could signal the test process (no PID namespace)


def _tail(text: str) -> str:
    return text[-_TAIL_CHARS:]


def interpret(
    finished: Finished, nonce: str, limits: SandboxLimits, confinement: str
) -> SandboxResult:
    """Interpret the child's output and exit into the :class:`SandboxResult` of the run."""
    reports, rest = _parse_reports(finished.verdict, nonce)
    rest = "\n".join(part for part in (rest.strip("\n"), finished.stdout) if part)
    passed, kind, reason, run, ok = _verdict(finished, reports, limits)
    if kind in ("sandbox_start", "harness_error") and finished.stderr.strip():
        reason += "; it said: " + " ".join(finished.stderr.split())[-500:]
    item = reports[0] if len(reports) == 1 else {}
    held = item.get("isolation", ())
    isolation = tuple(str(x) for x in held) if isinstance(held, tuple) else ()
    code_status = item.get("code_status")
    returncode = code_status if type(code_status) is int else finished.returncode
    return SandboxResult(
        passed,
        kind,
        reason,
        stdout_tail=_tail(rest),
        stderr_tail=_tail(finished.stderr),
        duration_s=finished.duration_s,
        tests_run=run,
        tests_passed=ok,
        returncode=returncode,
        process_group=finished.process_group,
        isolation=isolation,
        confinement=confinement,
    )


def _parse_reports(stdout: str, nonce: str) -> tuple[list[dict[str, object]], str]:
    """Result lines carrying the nonce.

    Each is ``passed kind tests_run tests_passed reason-hex isolation code-status`` where
    ``isolation`` is the comma-separated protections that held (``-`` for none) and
    ``code-status`` how the code process ended when it ended before the tests completed.
    """
    reports: list[dict[str, object]] = []
    kept: list[str] = []
    for line in stdout.splitlines():
        at = line.find(nonce)
        if at < 0:
            kept.append(line)
            continue
        item: dict[str, object] = {}
        fields = line[at + len(nonce) :].split()
        try:
            if len(fields) == 7:
                reason = "" if fields[4] == "-" else bytes.fromhex(fields[4]).decode()
                item = {
                    "isolation": tuple(x for x in fields[5].split(",") if x != "-"),
                    "code_status": None if fields[6] == "-" else int(fields[6]),
                    "passed": fields[0] == "1",
                    "kind": fields[1],
                    "tests_run": int(fields[2]),
                    "tests_passed": int(fields[3]),
                    "reason": reason,
                }
        except ValueError:
            item = {}
        reports.append(item)
    return reports, "\n".join(kept)


def _verdict(
    finished: Finished, reports: list[dict[str, object]], limits: SandboxLimits
) -> tuple[bool, str, str, int, int]:
    """``(passed, kind, reason, tests_run, tests_passed)`` of a finished run.

    ``finished.state`` is what :func:`~ablation.evaluate.sandbox_process.supervise` returned: a
    limit reached before the self-check arrived (``"start_*"``) is the sandbox's, never the
    code's. A test process that a signal killed after the code started, where the code can
    signal it (``finished.signalable``), was killed by the code: its ``crash``, not an error.
    """
    state, returncode, leaked = finished.state, finished.returncode, finished.leaked
    killed = {  # the parent killed the process group: state -> (kind, reason)
        "start_timeout": ("sandbox_start", (
            f"the sandbox did not reach its self-check within the start-up limit of "
            f"{limits.effective_start_limit_s:g} s (the code never ran)")),
        "start_process_limit": ("sandbox_start", (
            f"the sandbox held more than {limits.max_processes} processes before its self-check "
            "(the code never ran)")),
        "timeout": ("timeout", f"wall-time limit of {limits.time_limit_s:g} s reached after the code started"),
        "process_limit": ("process_limit", f"the process limit of {limits.max_processes} was reached (fork bomb?)"),
        "file_limit": ("output_limit", f"the scratch directory held more than {limits.max_files} files (max_disk_mb={limits.max_disk_mb})"),
    }  # fmt: skip
    if state in killed:
        kind, reason = killed[state]
        return False, kind, f"{reason}; process group killed", 0, 0
    if len(reports) > 1:
        reason = f"{len(reports)} result lines carry the run's nonce (a forked copy reported)"
        return False, "forged", reason, 0, 0
    if not reports or not reports[0]:  # the test process died without a (well-formed) result
        how = f"signal {-returncode}" if returncode < 0 else f"status {returncode}"
        if returncode < 0 and state == "exited" and finished.signalable:
            reason = (f"the test process was killed by {how} after the code started (this "
                      "confinement lets the code signal it)")  # fmt: skip
            return False, "crash", reason, 0, 0
        said = "a malformed result line" if reports else "no result"
        return False, "harness_error", f"the test process ended ({how}) with {said}", 0, 0
    item = reports[0]
    run, ok = item.get("tests_run"), item.get("tests_passed")
    run = run if type(run) is int else 0
    ok = ok if type(ok) is int else 0
    kind, reason = str(item.get("kind", "no_result")), str(item.get("reason", ""))
    passed = item.get("passed") is True and kind == "passed" and run > 0 and ok == run
    if passed and returncode != 0:
        passed, kind = False, "crash"
        reason = f"the harness exited with status {returncode} after reporting"
    if not passed and finished.output_full and kind not in ("timeout", "process_limit"):
        kind, reason = "output_limit", f"the output reached the {limits.max_output_mb} MiB file size limit"
    if passed and leaked:
        passed, kind = False, "leaked_processes"
        reason = f"{leaked} process(es) were still running after the tests; killed"
    return passed, kind, reason, run, ok
