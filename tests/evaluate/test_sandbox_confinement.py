"""The bubblewrap confinement: what agent-written code cannot do to the host, and what it verifies.

Each test runs the real sandbox (bubblewrap, the seccomp filter, the self-check) on hostile code
and checks the outcome on the host (the sysctl's value, files, the address space of the test
process), not only what the sandbox claims. A run that cannot judge the code is an error kind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest.mock
from pathlib import Path

import pytest
from helpers.cli import REPO, cli_env

from ablation import verifiers
from ablation.evaluate import sandbox_confinement
from ablation.evaluate.code_tests import SandboxError, SandboxUnavailable
from ablation.evaluate.sandbox import SandboxLimits, SandboxResult, run_python_tests
from ablation.evaluate.sandbox_confinement import SELF_CHECKS, Bubblewrap, Launch
from ablation.schema import AblationTask
from ablation.sources.suites import load_suite

FAST = SandboxLimits(time_limit_s=10)


def run(code: str, tests: str, limits: SandboxLimits = FAST) -> SandboxResult:
    return run_python_tests(code, tests, limits, confinement="bubblewrap")


def test_every_self_check_holds_under_bubblewrap() -> None:
    result = run("x = 1\n", "assert x == 1\n")
    assert result.passed, result.reason
    assert result.confinement == "bubblewrap"
    assert set(SELF_CHECKS) <= set(result.isolation), result.isolation


# ------------------------------------------------------------------ sysctls, ptrace, namespaces

SYSCTL = "/proc/sys/kernel/domainname"


def test_the_code_cannot_write_a_sysctl_of_the_host() -> None:
    with open(SYSCTL) as fh:
        before = fh.read()
    code = (
        "try:\n"
        f"    with open({SYSCTL!r}, 'w') as fh:\n"
        "        fh.write('ablation-escaped')\n"
        "    opened = True\n"
        "except OSError as exc:\n"
        "    opened = type(exc).__name__\n"
    )
    result = run(code, "assert opened is not True, opened\n")
    assert result.passed, result.reason
    with open(SYSCTL) as fh:
        assert fh.read() == before


CALLS = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def errno_of(rc):
    return 0 if rc == 0 else ctypes.get_errno()
attach = errno_of(libc.ptrace(16, 1, None, None))   # PTRACE_ATTACH to pid 1
user = errno_of(libc.unshare(0x10000000))           # CLONE_NEWUSER
mounted = errno_of(libc.mount(b'none', b'/tmp', b'tmpfs', 0, None))
setns = errno_of(libc.setns(0, 0))
chroot = errno_of(libc.chroot(b'/tmp'))
"""


def test_ptrace_unshare_mount_and_setns_are_refused() -> None:
    tests = (
        "assert attach == 1, attach\nassert user == 1, user\nassert mounted == 1, mounted\n"
        "assert setns == 1, setns\nassert chroot == 1, chroot\n"
    )  # EPERM from the seccomp filter, each
    result = run(CALLS, tests)
    assert result.passed, result.reason


#: The raw ``clone(2)`` number by machine (its flags are the first argument on each of these).
_CLONE = {"x86_64": 56, "aarch64": 220, "riscv64": 220}


def test_a_nested_user_namespace_cannot_be_had_through_clone() -> None:
    number = _CLONE[os.uname().machine]  # a machine not listed fails here: add its number
    code = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "SIGCHLD, NEWUSER = 17, 0x10000000\n"
        f"rc = libc.syscall({number}, NEWUSER | SIGCHLD, 0, 0, 0, 0)\n"
        "if rc == 0:\n    os._exit(0)\n"
        "refused = rc < 0 and ctypes.get_errno() == 1\n"
    )
    result = run(code, "assert refused is True\n")
    assert result.passed, result.reason


# ------------------------------------------------------------------ the tests call real builtins


def _codegen_task(task_id: str) -> AblationTask:
    return next(t for t in load_suite(str(REPO / "tasks" / "codegen.py")) if t.task_id == task_id)


@pytest.mark.parametrize(
    ("task_id", "forgery"),
    [
        ("algorithm-binary-search", "enumerate = lambda x: []\n\ndef binary_search(items, t):\n    return 0 if items == [5] else -1\n"),
        ("algorithm-primes-below", "def len(x):\n    return 9592\n\ndef primes_below(n):\n    return [2, 3, 5, 7, 11, 13, 17, 19] if n >= 20 else []\n"),
    ],
)  # fmt: skip
def test_shadowing_a_builtin_cannot_forge_a_codegen_pass(task_id: str, forgery: str) -> None:
    task = _codegen_task(task_id)
    assert task.verifier is not None
    assert task.verifier(forgery, task) is False
    # The same wrong answers without the shadowing fail too, and the reference passes.
    body = forgery.split("\n\n", 1)[1]
    assert task.verifier(body, task) is False


def test_the_tests_reach_a_shadowing_name_only_through_solution() -> None:
    code = "def len(x):\n    return 42\n"
    result = run(code, "assert len([1]) == 1\nassert solution.len([1]) == 42\n")
    assert result.passed, result.reason


def test_a_name_the_tests_define_is_theirs() -> None:
    code = "def helper():\n    return 'code'\n\ndef f():\n    return 1\n"
    tests = "def helper():\n    return 'tests'\n\nassert helper() == 'tests'\nassert f() == 1\n"
    assert run(code, tests).passed


# ------------------------------------------------------------------ resources


def test_the_scratch_space_is_capped_in_total_not_per_file() -> None:
    code = (
        "total = 0\n"
        "for i in range(60):\n"
        "    try:\n"
        "        with open('f%d' % i, 'wb') as fh:\n"
        "            fh.write(b'x' * (15 << 20))\n"
        "        total += 15 << 20\n"
        "    except OSError:\n"
        "        break\n"
    )
    limits = SandboxLimits(time_limit_s=20, max_disk_mb=32, max_output_mb=16)
    result = run(code, "assert total <= 32 << 20, total\n", limits)
    assert result.passed, result.reason


@pytest.mark.parametrize("confinement", ["bubblewrap", "process"])
def test_a_deep_directory_tree_is_removed(
    confinement: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = None
    if confinement == "process" and os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        # This confinement's scratch lives in the temporary folder: on a disk mounted with
        # ``discard`` each of the 3,000 rmdirs can take milliseconds (~10 s in all), the disk's
        # time, not the removal's; in memory (as bubblewrap's tmpfs) the removal is what is timed.
        memory = tempfile.mkdtemp(dir="/dev/shm")
        monkeypatch.setattr(tempfile, "tempdir", memory)
    code = (
        "import os\n"
        "for i in range(3000):\n"
        "    os.mkdir('d')\n"
        "    os.chdir('d')\n"
        "depth = 3000\n"
    )
    try:
        result = run_python_tests(code, "assert depth == 3000\n", FAST, confinement=confinement)
        assert result.passed, result.reason
        assert not [p for p in os.listdir(tempfile.gettempdir()) if p.startswith(f"ablation-sandbox-{os.getpid()}-")]
    finally:
        if memory is not None:
            subprocess.run(["rm", "-rf", "--", memory], check=False)


def test_a_large_reply_is_a_bounded_failure_in_a_bounded_test_process() -> None:
    # In a fresh interpreter, so ru_maxrss of its children is this run's test process alone.
    script = (
        "import json, resource, time\n"
        "from ablation.evaluate.sandbox import SandboxLimits, run_python_tests\n"
        "code = 'def big(n):\\n    return \"x\" * n\\n'\n"
        "limits = SandboxLimits(time_limit_s=30, max_output_mb=16)\n"
        "t = time.monotonic()\n"
        "over = run_python_tests(code, 'assert len(big(20_000_000)) == 20_000_000\\n', limits)\n"
        "under = run_python_tests(code, 'assert len(big(12_000_000)) == 12_000_000\\n', limits)\n"
        "print(json.dumps({'over': over.kind, 'under': under.kind, 's': time.monotonic() - t,\n"
        "    'rss_kib': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=cli_env(), timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (seen["over"], seen["under"]) == ("output_limit", "passed"), seen
    assert seen["s"] < 20, seen
    assert seen["rss_kib"] < 400 * 1024, seen  # the 20 MB reply was never held whole


# ------------------------------------------------------------------ errors, never verdicts


def _weakened(monkeypatch: pytest.MonkeyPatch, drop: str) -> None:
    """Register a bubblewrap whose launch lacks ``drop`` (a word and its value)."""

    class Weak(Bubblewrap):
        def launch(self, disk_bytes: int) -> Launch:
            full = super().launch(disk_bytes)
            words = list(full.prefix)
            at = words.index(drop)
            del words[at : at + 2]
            return Launch(**{**full.__dict__, "prefix": tuple(words)})

    monkeypatch.setitem(sandbox_confinement.CONFINEMENTS, "bubblewrap", Weak())


def test_a_sandbox_without_its_seccomp_filter_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    _weakened(monkeypatch, "--seccomp")
    result = run("import os\nos.makedirs('/tmp/ran', exist_ok=True)\nx = 1\n", "assert x == 1\n")
    assert (result.passed, result.kind, result.error) == (False, "sandbox_check", True)
    assert "seccomp" in result.reason and "seccomp" not in result.isolation


def test_a_sandbox_that_cannot_start_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken(Bubblewrap):
        def launch(self, disk_bytes: int) -> Launch:
            full = super().launch(disk_bytes)
            return Launch(**{**full.__dict__, "prefix": (*full.prefix[:-1], "--bogus-flag", "--")})

    monkeypatch.setitem(sandbox_confinement.CONFINEMENTS, "bubblewrap", Broken())
    result = run("x = 1\n", "assert x == 1\n")
    assert (result.kind, result.error) == ("sandbox_start", True)
    assert "bogus" in result.reason


def _code_task() -> AblationTask:
    return AblationTask(task_id="t1", input_data={}, metadata={"tests": "assert x == 1\n"})


def test_missing_bubblewrap_raises_an_error_naming_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    verifier = verifiers.code_tests(time_limit_s=5)
    with pytest.raises(SandboxUnavailable, match=r"install bubblewrap.*--sandbox process"):
        verifier("x = 1\n", _code_task())
    # The weaker confinement, chosen explicitly, runs and says so.
    weak = verifiers.code_tests(time_limit_s=5, confinement="process")
    assert weak("x = 1\n", _code_task()) is True


def test_a_sandbox_error_is_a_verifier_error() -> None:
    assert issubclass(SandboxUnavailable, SandboxError)
    assert issubclass(SandboxError, verifiers.VerifierError)


def test_limits_of_the_test_process_are_set() -> None:
    # The test process runs under its own address-space limit: a test that allocates far more
    # than the code's limit plus the headroom fails with MemoryError instead of growing.
    limits = SandboxLimits(time_limit_s=10, memory_mb=128)
    result = run("x = 1\n", "buf = bytearray(4 << 30)\n", limits)
    assert (result.passed, result.kind) == (False, "memory"), result.reason


# ------------------------------------------------------------------ equals is not fooled


@pytest.mark.parametrize(
    "output",
    [unittest.mock.ANY, type("Eq", (), {"__eq__": lambda s, o: True, "__hash__": None})()],
    ids=["mock.ANY", "always-equal"],
)
def test_equals_is_not_fooled_by_an_always_equal_object(output: object) -> None:
    for expected in (14, "refuse", [1, 2], {"a": 1}, None, 2.5):
        task = AblationTask(task_id="t", input_data=1, expected_output=expected)
        assert verifiers.equals(output, task) is False


def test_equals_compares_subclasses_of_plain_types_by_their_value() -> None:
    class LyingInt(int):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = int.__hash__

    class LyingStr(str):
        def __eq__(self, other: object) -> bool:
            return True

        def strip(self, chars: str | None = None) -> str:
            return "refuse"

        __hash__ = str.__hash__

    assert verifiers.equals(LyingInt(3), AblationTask(task_id="t", input_data=1, expected_output=14)) is False
    assert verifiers.equals(LyingInt(14), AblationTask(task_id="t", input_data=1, expected_output=14)) is True
    task = AblationTask(task_id="t", input_data=1, expected_output="refuse")
    assert verifiers.equals(LyingStr("allow"), task) is False
    assert verifiers.equals(LyingStr(" refuse "), task) is True


def test_the_confinement_names_agree_everywhere_they_are_written() -> None:
    # The registry is the source; the configuration, [tool.ablation] and the flag repeat its
    # names (the command line's parser imports nothing heavy at start-up), so they are tied here.
    from typing import get_args

    from ablation.cli.parser import build_parser
    from ablation.cli.tool_settings import ToolSettings
    from ablation.config import CampaignConfig

    names = set(sandbox_confinement.CONFINEMENTS)
    assert set(get_args(CampaignConfig.model_fields["sandbox"].annotation)) == names
    assert set(get_args(get_args(ToolSettings.model_fields["sandbox"].annotation)[0])) == names
    run_parser = build_parser("run")._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr]
    flag = next(a for a in run_parser._actions if "--sandbox" in a.option_strings)
    assert set(flag.choices) == names
    assert CampaignConfig().sandbox == sandbox_confinement.DEFAULT_CONFINEMENT
