"""The sandbox judges correct code as correct, and hostile code as failed, in corner cases.

Module globals keyed by the code's own objects, large private tables, a run started from ``/``,
scratch directories the code locked, orphans of a double fork, a fork bomb that ignores the
kernel's refusals, what the ``process`` confinement may claim, and ``io_uring``. Some of these
only happen to a user who is not root: as root (the CI setting), those tests run their sandbox in
a forked copy of the test process that has become uid/gid 65534 ("nobody").
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from helpers.procs import processes_with_arg

from ablation.evaluate.sandbox import SandboxLimits, SandboxResult, run_python_tests
from ablation.evaluate.sandbox_confinement import Bubblewrap
from ablation.evaluate.sandbox_process import remove_scratch

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the sandbox's process checks read /proc"
)

NOBODY = 65534


def _summary(result: SandboxResult) -> dict[str, Any]:
    return {
        "passed": result.passed,
        "kind": result.kind,
        "reason": result.reason,
        "isolation": list(result.isolation),
    }


@pytest.fixture
def private_tmp() -> Iterator[str]:
    """A fresh directory in the system's temporary folder, owned by uid 65534 when we are root."""
    path = tempfile.mkdtemp(prefix="ablation-test-")
    if os.geteuid() == 0:
        os.chown(path, NOBODY, NOBODY)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def unprivileged(fn: Callable[[], Any]) -> Any:
    """``fn()`` in a forked copy of this process that is not root; its JSON result.

    As root the copy drops to uid/gid 65534 first. It starts the sandbox with this interpreter
    when that user may run it, else with the system's ``/usr/bin/python3`` (the sandbox's
    processes need the standard library only).
    """
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the forked copy
        try:
            os.close(read_fd)
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            if not os.access(sys.executable, os.X_OK):
                sys.executable = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
            out = json.dumps({"ok": fn()})
        except BaseException as exc:
            out = json.dumps({"error": repr(exc)})
        os.write(write_fd, out.encode())
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    answer = json.loads(data)
    assert "error" not in answer, answer["error"]
    return answer["ok"]


def run_process(code: str, tests: str, folder: str, limits: SandboxLimits) -> dict[str, Any]:
    """Run under the ``process`` confinement with scratch directories made in ``folder``."""
    tempfile.tempdir = folder
    return _summary(run_python_tests(code, tests, limits, confinement="process"))


# ----------------------------------------------------- globals keyed by the code's own objects

ENUM_CODE = """
from enum import Enum

class Color(Enum):
    RED = 1
    GREEN = 2

NAMES = {Color.RED: "red", Color.GREEN: "green"}
SEEN = {Color.RED}
PAIRS = {(Color.RED, 1): "one"}
PLAIN = {"a": (1, 2)}

def color_name(c):
    return NAMES[Color[c]]
"""

ENUM_TESTS = """
assert color_name("RED") == "red"
assert NAMES[Color.RED] == "red"
assert (Color.RED in SEEN) is True
assert (Color.GREEN in SEEN) is False
assert PAIRS[(Color.RED, 1)] == "one"
assert PLAIN == {"a": (1, 2)}
"""


@pytest.mark.parametrize("confinement", ["bubblewrap", "process"])
def test_globals_keyed_by_the_codes_objects_stay_usable(confinement: str) -> None:
    result = run_python_tests(ENUM_CODE, ENUM_TESTS, confinement=confinement)
    assert (result.passed, result.kind) == (True, "passed"), result.reason


def _sends(entry: str) -> str:
    """Code whose ready message also carries ``BAD``, as a runner never would send it."""
    return (
        "import json\n"
        "_orig = json.JSONEncoder.iterencode\n"
        "def _iterencode(self, o, _one_shot=False):\n"
        "    if type(o) is dict and 'ready' in o:\n"
        f"        o['ready']['BAD'] = {entry}\n"
        "    return _orig(self, o, _one_shot)\n"
        "json.JSONEncoder.iterencode = _iterencode\n"
        "def f():\n    return 1\n"
    )


@pytest.mark.parametrize(
    "entry",
    [
        "{'value': {'$d': [[{'$h': 0, 'type': 'Color'}, 'red']]}}",
        "{'value': {'$s': [[1, 2]]}}",
        "{'value': {'$d': [[1]]}}",
        "{'value': {'$b': 'zz'}}",
        "{'exception': []}",
        "{'exception': [['Unhashable']]}",
    ],
)
def test_a_ready_message_that_cannot_be_read_is_bad_output(entry: str) -> None:
    result = run_python_tests(_sends(entry), "assert f() == 1\n", confinement="process")
    assert (result.passed, result.kind) == (False, "bad_output"), result.reason


# ------------------------------------------------------------------ large module-level values


def test_a_large_private_table_does_not_fill_the_reply() -> None:
    code = "_SIEVE = [True] * 3_000_000\n\ndef f():\n    return list(range(5))\n"
    tests = (
        "assert f() == [0, 1, 2, 3, 4]\n"
        "assert len(solution._SIEVE) == 3_000_000\n"
        "assert solution._SIEVE[7] is True\n"
    )
    result = run_python_tests(code, tests, confinement="process")
    assert (result.passed, result.kind) == (True, "passed"), result.reason


def test_many_medium_globals_do_not_fill_the_reply_together() -> None:
    # 40 strings of 600 kB: 24 MB in all, each well under the 16 MiB reply limit.
    code = "for _i in range(40):\n    globals()['T%d' % _i] = 'x' * 600_000\n"
    tests = "assert all(len(getattr(solution, 'T%d' % i)) == 600_000 for i in range(40))\n"
    result = run_python_tests(code, tests, confinement="process")
    assert (result.passed, result.kind) == (True, "passed"), result.reason


# ------------------------------------------------------------------------- started from / or ~


def test_bubblewrap_runs_from_the_root_directory_with_home_at_root(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir("/")
    monkeypatch.setenv("HOME", "/")
    assert "/" not in Bubblewrap().launch(1 << 20).hidden
    result = run_python_tests("def f():\n    return 1\n", "assert f() == 1\n")
    assert (result.passed, result.kind) == (True, "passed"), result.reason
    assert "private_root" in result.isolation


def test_a_real_home_directory_is_still_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir("/")
    monkeypatch.setenv("HOME", "/etc")
    assert "/etc" in Bubblewrap().launch(1 << 20).hidden


# ------------------------------------------------------------------------ the process sandbox


def test_a_scratch_directory_the_code_locked_is_removed(private_tmp: str) -> None:
    code = (
        "import os\n"
        "os.makedirs('keep/inner', exist_ok=True)\n"
        "open('keep/inner/data', 'w').write('left behind')\n"
        "os.chmod('keep/inner', 0o000)\n"
        "os.chmod('keep', 0o500)\n"
        "def f():\n    return 1\n"
    )
    limits = SandboxLimits(time_limit_s=10)
    done = unprivileged(lambda: run_process(code, "assert f() == 1\n", private_tmp, limits))
    assert (done["passed"], done["kind"]) == (True, "passed"), done["reason"]
    assert os.listdir(private_tmp) == []


def test_a_scratch_directory_that_cannot_be_removed_is_reported(private_tmp: str) -> None:
    def attempt() -> list[Any]:
        parent = os.path.join(private_tmp, "locked")
        scratch = os.path.join(parent, "ablation-sandbox-1-x")
        os.makedirs(scratch)
        os.chmod(parent, 0o555)  # its entries cannot be unlinked by a user who is not root
        try:
            return [remove_scratch(scratch), os.path.isdir(scratch)]
        finally:
            os.chmod(parent, 0o755)

    why, still_there = unprivileged(attempt)
    assert still_there is True
    assert isinstance(why, str) and why


def test_an_orphan_of_a_double_fork_fails_the_process_sandbox_run() -> None:
    arg = f"{os.getpid()}.{id(object())}".encode()
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        os.execv('/bin/sleep', ['sleep', {arg.decode()!r}])\n"
        "    os._exit(0)\n"
        "time.sleep(0.3)\n"
        "def f():\n    return 1\n"
    )
    result = run_python_tests(code, "assert f() == 1\n", confinement="process")
    assert (result.passed, result.kind) == (False, "leaked_processes"), result.reason
    assert processes_with_arg(arg) == []


def test_a_fork_bomb_that_ignores_refusals_is_a_process_limit(private_tmp: str) -> None:
    code = (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    limits = SandboxLimits(time_limit_s=2, max_processes=8)
    done = unprivileged(lambda: run_process(code, "assert True\n", private_tmp, limits))
    assert (done["passed"], done["kind"]) == (False, "process_limit"), done["reason"]


def test_the_process_sandbox_does_not_claim_a_read_only_file_system(private_tmp: str) -> None:
    limits = SandboxLimits(time_limit_s=10)
    done = unprivileged(lambda: run_process("x = 1\n", "assert x == 1\n", private_tmp, limits))
    assert done["passed"] is True, done["reason"]
    assert "read_only_fs" not in done["isolation"]
    assert "unprivileged_uid" in done["isolation"]


# ---------------------------------------------------------------------------------- seccomp


def test_io_uring_setup_is_denied_inside_bubblewrap() -> None:
    code = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "params = ctypes.create_string_buffer(120)\n"
        "ret = libc.syscall(425, 1, params)  # io_uring_setup\n"
        "err = ctypes.get_errno()\n"
    )
    result = run_python_tests(code, "assert (ret, err) == (-1, 1)\n", confinement="bubblewrap")
    assert (result.passed, result.kind) == (True, "passed"), result.reason


# ------------------------------------------------------- the test process, seen from the code


def test_the_process_sandbox_cannot_read_or_trace_the_test_process(private_tmp: str) -> None:
    # Same user, no namespaces: without PR_SET_DUMPABLE 0 the code could read the test
    # process's memory (the nonce), reopen its result file (/proc/<pid>/fd/1) or ptrace it.
    code = (
        "import os\nOPENED = []\n"
        "for name in ('mem', 'environ', 'fd/1'):\n"
        "    try:\n"
        "        open('/proc/%d/%s' % (os.getppid(), name), 'rb').close()\n"
        "        OPENED.append(name)\n"
        "    except OSError:\n"
        "        pass\n"
    )
    limits = SandboxLimits(time_limit_s=10)
    done = unprivileged(
        lambda: run_process(code, "assert OPENED == [], OPENED\n", private_tmp, limits)
    )
    assert (done["passed"], done["kind"]) == (True, "passed"), done["reason"]
