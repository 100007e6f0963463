"""The sandbox's isolation: a forged verdict, a signal to the framework, the network, the disk.

Issue 11 items 2, 7 and 8. The tests run the real sandbox (two interpreters per run). Which
protections hold depends on the platform; as root on Linux with namespaces (CI and this
project's development machines) all of them do, and :func:`test_isolation_held_here` says so
first, so a platform where they do not hold fails loudly instead of passing vacuously.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.matrix_agents import HOSTILE_CODE

from ablation.evaluate.sandbox import SandboxLimits, SandboxResult, run_python_tests

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the sandbox's process checks read /proc"
)

FAST = SandboxLimits(time_limit_s=5)
ADD_TESTS = "assert add(1, 2) == 3\n\ndef test_add():\n    assert add(2, 2) == 4\n"


def run(code: str, tests: str = ADD_TESTS) -> SandboxResult:
    return run_python_tests(code, tests, FAST)


def test_isolation_held_here() -> None:
    result = run("def add(a, b):\n    return a + b\n")
    assert result.passed, result.reason
    assert "subreaper" in result.isolation
    if os.geteuid() == 0:  # root may create namespaces; so may users where user namespaces are on
        expected = {"pid_namespace", "network_namespace", "private_root", "read_only_fs"}
        assert expected <= set(result.isolation), result.isolation


# ------------------------------------------------------------------ item 8: forged verdicts

FRAME_WALK = HOSTILE_CODE["sb_frames"]


def test_walking_frames_to_the_harness_cannot_forge_a_pass() -> None:
    # No add() at all: only a forged verdict could pass. (Passed 32/32 codegen tasks before.)
    result = run(FRAME_WALK)
    assert result.passed is False
    assert result.kind == "failed", result.reason
    assert "add" in result.reason


@pytest.mark.parametrize(
    "code",
    [
        "class E:\n    def __eq__(self, other):\n        return True\n\n"
        "def add(a, b):\n    return E()\n",
        "class I(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n\n"
        "def add(a, b):\n    return I(0)\n",
        "class S(str):\n    def __eq__(self, other):\n        return True\n    __hash__ = str.__hash__\n\n"
        "def add(a, b):\n    return S('x')\n",
    ],
    ids=["always-equal object", "int subclass", "str subclass"],
)
def test_always_equal_objects_cannot_satisfy_an_assertion(code: str) -> None:
    result = run(code)
    assert (result.passed, result.kind) == (False, "failed"), result.reason
    assert "plain data only" in result.reason


def test_an_object_cannot_pass_as_true() -> None:
    code = "class T:\n    def __bool__(self):\n        return True\n\ndef ok():\n    return T()\n"
    result = run(code, "assert ok()\n")
    assert (result.passed, result.kind) == (False, "failed")


HONEST = """
class Stack:
    def __init__(self):
        self.items = []
    def push(self, x):
        self.items.append(x)
    def pop(self):
        return self.items.pop()
    def __len__(self):
        return len(self.items)

class Empty(ValueError):
    pass

def first(xs):
    if not xs:
        raise Empty('empty list')
    return xs[0]

def echo(x, *, twice=False):
    return (x, x) if twice else x

LIMIT = {'max': 3, 'names': ('a', 'b')}
"""

HONEST_TESTS = """
s = Stack()
s.push(1)
s.push((2, 3))
assert len(s) == 2
assert s.pop() == (2, 3)
assert s.items == [1]
assert list(s.items) == [1]
try:
    first([])
except Empty as exc:
    assert 'empty' in str(exc)
else:
    raise AssertionError('no exception')
assert isinstance(Empty('x'), ValueError)
assert first([7, 8]) == 7
value = {'a': (1, {2, 3}), b'k': frozenset([1]), 4: [None, True, 1.5, 'x']}
assert echo(value) == value
assert echo(float('inf')) == float('inf')
assert echo(2 ** 200) == 2 ** 200
assert echo('\\ud800') == '\\ud800'
assert echo(5, twice=True) == (5, 5)
assert LIMIT == {'max': 3, 'names': ('a', 'b')}
"""


def test_honest_classes_exceptions_and_plain_data_cross_intact() -> None:
    result = run(HONEST, HONEST_TESTS)
    assert result.passed, result.reason


def test_passing_a_non_plain_value_to_the_code_is_a_clear_failure() -> None:
    result = run("def apply(f, x):\n    return f(x)\n", "assert apply(len, 'ab') == 2\n")
    assert (result.passed, result.kind) == (False, "failed")
    assert "only plain data can be passed" in result.reason


# ------------------------------------------------------------------ item 2: signals


def test_the_code_cannot_signal_its_parents() -> None:
    # The codegen candidate: os.kill(os.getppid(), 9). The run fails; pytest survives.
    code = "import os\nos.kill(os.getppid(), 9)\ndef add(a, b):\n    return a + b\n"
    result = run(code)
    assert result.kind in ("passed", "crash", "no_result"), result.reason


def test_code_that_kills_its_test_process_is_a_crash_under_the_process_confinement() -> None:
    # Without a PID namespace the code can signal the test process: its death by that signal
    # after the code started is the code's doing, a failed verdict, never a sandbox error.
    code = "import os\nos.kill(os.getppid(), 9)\ndef add(a, b):\n    return a + b\n"
    result = run_python_tests(code, ADD_TESTS, FAST, confinement="process")
    assert (result.passed, result.kind, result.error) == (False, "crash", False), result.reason
    assert "killed by signal 9 after the code started" in result.reason


def test_the_code_cannot_see_or_signal_outside_processes() -> None:
    sentinel = subprocess.Popen(["sleep", "271.5"])
    try:
        code = (
            "import os, signal\n"
            "found = []\n"
            "for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
            "    try:\n"
            "        if b'271.5' in open('/proc/%s/cmdline' % pid, 'rb').read():\n"
            "            found.append(int(pid))\n"
            "            os.kill(int(pid), signal.SIGKILL)\n"
            "    except OSError:\n"
            "        pass\n"
            "def add(a, b):\n    return a + b\n"
        )
        result = run(code, ADD_TESTS + "assert found == []\n")
        assert result.passed, result.reason
        assert sentinel.poll() is None  # still running
    finally:
        sentinel.kill()
        sentinel.wait()


# ------------------------------------------------------------------ network and disk


def test_no_network_by_default() -> None:
    # A listening socket completes a TCP handshake without an accept() call: a connection that
    # got through would wait in its queue, where a non-blocking accept finds it afterwards.
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    code = (
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=1).close()\n"
        "    reached = True\n"
        "except OSError:\n"
        "    reached = False\n"
    )
    result = run(code, "assert reached is False\n")
    server.setblocking(False)
    with server, pytest.raises(BlockingIOError):  # nothing connected
        server.accept()
    assert result.passed, result.reason


def test_the_code_cannot_read_the_run_store_or_other_files(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    store.write_text("secret trials")
    code = (
        "found = {}\n"
        f"for path in ({str(store)!r}, '/etc/passwd', '/etc/shadow', '/root/.bashrc'):\n"
        "    try:\n"
        "        found[path] = open(path).read()[:20]\n"
        "    except OSError:\n"
        "        pass\n"
    )
    result = run(code, "assert found == {}, found\n")
    assert result.passed, result.reason


def test_the_code_cannot_write_outside_its_scratch_directory(tmp_path: Path) -> None:
    targets = [str(tmp_path / "escape"), "/usr/escape", f"{sys.prefix}/escape", "/escape",
               "/dev/escape", "/proc/escape", "/proc/sys/kernel/domainname"]  # fmt: skip
    code = (
        "import os\n"
        "open('mine.txt', 'w').write('ok')\n"
        "mine = open('mine.txt').read()\n"
        "wrote = []\n"
        f"for target in {targets!r}:\n"
        "    try:\n"
        "        with open(target, 'a') as fh:\n"
        "            fh.write('escaped')\n"
        "        wrote.append(target)\n"
        "    except OSError:\n"
        "        pass\n"
    )
    result = run(code, "assert wrote == [], wrote\nassert mine == 'ok'\n")
    assert result.passed, result.reason
    assert not any(os.path.exists(t) for t in targets[:4])
