"""Tests of the code-test sandbox: every failure kind is a failed run, never a pass or a hang."""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest
from helpers.procs import processes_with_arg

from ablation.evaluate.sandbox import SandboxLimits, SandboxResult, run_python_tests
from ablation.evaluate.sandbox_process import live_processes

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the sandbox's process checks read /proc"
)

FAST = SandboxLimits(time_limit_s=3)
ADD = "def add(a, b):\n    return a + b\n"


def run(code: str, tests: str = "assert True\n", limits: SandboxLimits = FAST) -> SandboxResult:
    return run_python_tests(code, tests, limits)


def assert_group_gone(result: SandboxResult) -> None:
    assert result.process_group is not None
    assert live_processes(result.process_group, None) == []


def test_passing_code_counts_module_asserts_and_test_functions() -> None:
    tests = "assert add(1, 2) == 3\n\ndef test_a():\n    assert add(2, 2) == 4\n\nasync def test_b():\n    assert add(0, 0) == 0\n"
    result = run(ADD, tests)
    assert result.passed is True
    assert (result.kind, result.tests_run, result.tests_passed) == ("passed", 3, 3)
    assert result.returncode == 0
    assert_group_gone(result)


def test_failed_assertion_is_a_failure_with_the_line() -> None:
    tests = (
        "def test_ok():\n    assert add(1, 1) == 2\n\ndef test_bad():\n    assert add(2, 2) == 5\n"
    )
    result = run(ADD, tests)
    assert result.passed is False
    assert result.kind == "failed"
    assert (result.tests_run, result.tests_passed) == (2, 1)
    assert "test_bad" in result.reason and "tests.py:5" in result.reason


def test_module_level_assertion_failure() -> None:
    result = run(ADD, "assert add(1, 2) == 4\n")
    assert (result.passed, result.kind, result.tests_run, result.tests_passed) == (
        False,
        "failed",
        1,
        0,
    )


def test_syntax_error_in_code() -> None:
    result = run("def add(a, b) return a + b\n", "assert add(1, 2) == 3\n")
    assert (result.passed, result.kind) == (False, "syntax_error")
    assert "SyntaxError" in result.reason


def test_exception_while_importing_code_is_a_crash() -> None:
    result = run("raise RuntimeError('boom')\n")
    assert (result.passed, result.kind) == (False, "crash")
    assert "RuntimeError: boom" in result.reason


def test_interpreter_crash_by_signal() -> None:
    result = run("import ctypes\nctypes.string_at(0)\n")
    assert (result.passed, result.kind) == (False, "crash")
    assert result.returncode is not None and result.returncode < 0


def test_infinite_loop_hits_the_wall_time_limit() -> None:
    start = time.monotonic()
    result = run("import time\ntime.sleep(100)\n", limits=SandboxLimits(time_limit_s=1))
    elapsed = time.monotonic() - start
    assert (result.passed, result.kind) == (False, "timeout")
    assert 0.9 <= elapsed < 5
    assert_group_gone(result)


def test_busy_loop_hits_the_cpu_limit() -> None:
    # A generous wall limit, so only the 1 s CPU limit can stop the loop even on a loaded machine.
    result = run("while True:\n    pass\n", limits=SandboxLimits(time_limit_s=20, cpu_s=1))
    assert (result.passed, result.kind) == (False, "cpu_limit")
    assert result.duration_s < 15


def test_ten_gib_allocation_is_a_memory_failure() -> None:
    result = run("x = bytearray(10 * 2**30)\n")
    assert (result.passed, result.kind) == (False, "memory")


def test_fork_bomb_is_stopped_and_its_process_group_is_gone() -> None:
    # 2**10 = 1024 processes if nothing stopped it; each would then sleep for 30 s. The wall
    # limit is long, so only the process count can end the run early.
    code = "import os, time\nfor _ in range(10):\n    os.fork()\ntime.sleep(30)\n"
    start = time.monotonic()
    result = run(code, limits=SandboxLimits(time_limit_s=20, max_processes=16))
    assert time.monotonic() - start < 15
    assert (result.passed, result.kind) == (False, "process_limit")
    assert_group_gone(result)


# For a user that is not root, RLIMIT_NPROC refuses the fork bomb's forks (BlockingIOError) before
# the process count above is reached, and the forked copy that was refused reports its error. The
# run must then say the process limit stopped it, as it does for root, not that a copy "forged" a
# result. These two simulate the refusal so that they hold whoever runs the suite.
def test_a_forked_copy_refused_a_process_is_a_process_limit_failure() -> None:
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    raise BlockingIOError(11, 'Resource temporarily unavailable')\n"
        "time.sleep(1)\n"
    )
    result = run(code)
    assert (result.passed, result.kind) == (False, "process_limit")
    assert "process limit" in result.reason
    assert_group_gone(result)


def test_the_code_process_refused_a_process_is_a_process_limit_failure() -> None:
    result = run("raise BlockingIOError(11, 'Resource temporarily unavailable')\n")
    assert (result.passed, result.kind) == (False, "process_limit")
    assert "Resource temporarily unavailable" in result.reason


def test_forked_children_left_running_fail_the_run_and_are_killed() -> None:
    code = (
        "import os, time\n"
        "for _ in range(5):\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(60)\n"
        "        os._exit(0)\n"
    )
    result = run(code, "assert True\n", SandboxLimits(time_limit_s=3, max_processes=64))
    assert (result.passed, result.kind) == (False, "leaked_processes")
    assert_group_gone(result)


def test_setsid_double_fork_exec_with_a_fresh_environment_leaves_nothing_behind() -> None:
    # Issue 11 item 7: the escapee drops the HOME marker with execve(..., {'X': '1'}).
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        os.execve('/bin/sleep', ['sleep', '317.25'], {'X': '1'})\n"
        "    os._exit(0)\n"
        "time.sleep(0.3)\n"
        "def add(a, b):\n"
        "    return a + b\n"
    )
    result = run(code, "assert add(1, 2) == 3\n")
    assert (result.passed, result.kind) == (False, "leaked_processes"), result.reason
    assert processes_with_arg(b"317.25") == []


def test_forked_copies_that_report_are_detected() -> None:
    # The parent waits for its forked copy, which runs the tests and reports first.
    result = run("import os\npid = os.fork()\nif pid:\n    os.waitpid(pid, 0)\n")
    assert (result.passed, result.kind) == (False, "forged")


def test_os_exit_before_the_tests_is_a_failure() -> None:
    result = run(ADD + "import os\nos._exit(0)\n", "assert add(1, 2) == 3\n")
    assert result.returncode == 0
    assert (result.passed, result.kind) == (False, "no_result")


def test_sys_exit_before_the_tests_is_a_failure() -> None:
    result = run("import sys\nsys.exit(0)\n")
    assert (result.passed, result.kind) == (False, "exit")


def test_printed_fake_results_cannot_forge_a_pass() -> None:
    fake = '{"passed": true, "kind": "passed", "reason": "", "tests_run": 1, "tests_passed": 1}'
    code = f"import sys\nfor arg in sys.argv:\n    print(arg, {fake!r}, flush=True)\nprint({fake!r}, flush=True)\n"
    result = run(code + "import os\nos._exit(0)\n")
    assert (result.passed, result.kind) == (False, "no_result")
    assert '"passed": true' in result.stdout_tail  # it printed the fake, and it did not count
    # Printing a fake line and then failing the real tests is still a failure.
    result = run(code + ADD, "assert add(1, 1) == 3\n")
    assert (result.passed, result.kind) == (False, "failed")


def test_the_nonce_never_reaches_the_code_process(monkeypatch: pytest.MonkeyPatch) -> None:
    nonce = "5eed" * 8
    monkeypatch.setattr("ablation.evaluate.sandbox.secrets.token_hex", lambda n: nonce)
    code = (
        "import os, sys\n"
        "seen = []\n"
        "for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
        "    for part in ('cmdline', 'environ'):\n"
        "        try:\n"
        "            seen.append(open('/proc/%s/%s' % (pid, part), 'rb').read().decode('latin-1'))\n"
        "        except OSError:\n"
        "            pass\n"
        "seen.append(' '.join(sys.argv))\n"
    )
    tests = f"assert not [s for s in seen if {nonce!r} in s]\nassert seen[-1] == 'solution.py'\n"
    result = run(code, tests)
    assert result.passed, result.reason


def test_parent_secrets_are_not_inherited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ABLATION_FAKE_SECRET", "hunter2")
    code = "import os\nenv = dict(os.environ)\n"
    tests = (
        "assert 'ABLATION_FAKE_SECRET' not in env\n"
        # PWD: bubblewrap sets it when it changes into the scratch directory.
        "assert sorted(set(env) - {'PWD'}) == ['HOME', 'LANG', 'PATH', 'PYTHONHASHSEED'], sorted(env)\n"
        "assert env['PATH'] == '/usr/bin:/bin' and env['PYTHONHASHSEED'] == '0'\n"
    )
    assert run(code, tests).passed
    # The same check the other way round fails: the child really cannot see it.
    assert not run(code, "assert env.get('ABLATION_FAKE_SECRET') == 'hunter2'\n").passed


@pytest.mark.parametrize("confinement", ["bubblewrap", "process"])
def test_fresh_working_directory_is_home_and_is_deleted(confinement: str) -> None:
    code = (
        "import os\nprint('cwd=' + os.getcwd())\nhome = os.environ['HOME']\n"
        "open('f.txt', 'w').write('x')\nsame = home == os.getcwd()\nlisted = 'f.txt' in os.listdir('.')\n"
    )
    result = run_python_tests(
        code, "assert same is True\nassert listed is True\n", FAST, confinement=confinement
    )
    assert result.passed, result.reason
    workdir = result.stdout_tail.split("cwd=")[1].split()[0]
    if confinement == "process":  # a host directory, removed afterwards
        assert "ablation-sandbox-" in workdir
        assert not os.path.exists(workdir)
    else:  # the sandbox's own size-capped tmpfs: nothing of it on the host
        assert workdir == "/tmp"
        assert not os.path.exists("/tmp/f.txt")


def test_stdin_is_empty_and_framework_is_not_importable() -> None:
    code = "import sys, importlib.util\ndata = sys.stdin.read()\nspec = importlib.util.find_spec('ablation')\n"
    result = run(code, "assert data == ''\nassert spec is None\n")
    assert result.passed, result.reason


def test_output_flood_hits_the_file_size_limit() -> None:
    code = "import sys\nsys.stdout.write('x' * (3 * 2**20))\nsys.stdout.flush()\n"
    result = run(code, limits=SandboxLimits(time_limit_s=3, max_output_mb=1))
    assert (result.passed, result.kind) == (False, "output_limit")
    assert len(result.stdout_tail) <= 2000


def test_no_tests_at_all_is_not_a_vacuous_pass() -> None:
    result = run(ADD, "x = 1\n")
    assert (result.passed, result.kind) == (False, "no_tests")


def test_main_guard_does_not_run_and_prints_are_captured() -> None:
    code = "print('hello from code')\nif __name__ == '__main__':\n    raise SystemExit(3)\n"
    result = run(code)
    assert result.passed and "hello from code" in result.stdout_tail


def test_tests_that_do_not_compile_raise_value_error() -> None:
    with pytest.raises(ValueError, match="do not compile"):
        run(ADD, "assert (\n")


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError):
        SandboxLimits(time_limit_s=0)
    with pytest.raises(ValueError):
        SandboxLimits(memory_mb=0)
    assert SandboxLimits(time_limit_s=2.5).effective_cpu_s == 4


def test_concurrent_runs_from_threads_do_not_interfere() -> None:
    results: list[SandboxResult] = []
    lock = threading.Lock()

    def worker(i: int) -> None:
        r = run(ADD, f"assert add({i}, 1) == {i + 1}\n")
        with lock:
            results.append(r)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 6 and all(r.passed for r in results)


WRONG_ADD = "def add(a, b):\n    return a - b\n"
PATCHES = {
    "json_dumps": (
        "import json\n_d = json.dumps\n"
        "json.dumps = lambda d, **k: _d({**d, 'passed': True, 'kind': 'passed'})\n"
    ),
    "json_encoder": "import json\njson._default_encoder = None\n",
    "os_write": (
        "import os\n_w = os.write\nos.write = lambda fd, b: _w(fd, b.replace(b' 0 ', b' 1 '))\n"
    ),
    "os_exit": "import os\nos._exit = lambda code: None\n",
    "builtin_exec": "import builtins\nbuiltins.exec = lambda *a, **k: None\n",
    "builtin_callable": "import builtins\nbuiltins.callable = lambda x: False\n",
    "builtin_getattr": "import builtins\nbuiltins.getattr = lambda *a: ''\n",
    "builtin_list": "import builtins\nbuiltins.list = lambda x: []\n",
}


@pytest.mark.parametrize("patch", sorted(PATCHES))
def test_monkeypatching_the_harness_cannot_turn_a_failure_into_a_pass(patch: str) -> None:
    tests = "assert True\n\ndef test_add():\n    assert add(1, 1) == 2\n"
    result = run(PATCHES[patch] + WRONG_ADD, tests)
    assert result.passed is False
    assert result.kind == "failed", result.reason


def test_tests_see_the_real_builtins() -> None:
    code = "import builtins\nbuiltins.len = lambda x: 3\n\ndef f():\n    return [1]\n"
    assert not run(code, "assert len(f()) == 3\n").passed
    assert run(code, "assert len(f()) == 1\n").passed
