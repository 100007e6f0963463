"""Code that writes on the sandbox's pipes and files itself is judged, never makes the run an error.

The code process can find its reply pipe (its configuration is its own command line) and write
any line there, and it shares the offset of its stderr with the test process. Whatever it writes,
the run ends with a verdict on the code (a failure), the reason stays short, and the parent reads
a bounded part of each file.
"""

from __future__ import annotations

import sys

import pytest

from ablation.evaluate.sandbox import SandboxLimits, run_python_tests

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the sandbox's process checks read /proc"
)

#: The code process's configuration (its reply pipe, the reply limit), read from its command line.
CONFIG = (
    "import json, os\n"
    "cfg = json.loads(open('/proc/self/cmdline', 'rb').read().split(b'\\0')[-2])\n"
)


def test_a_reply_the_test_process_cannot_hold_is_an_output_limit() -> None:
    # Within the reply limit, but 3 bytes of JSON ('[],') cost about 80 bytes as a list object:
    # 24 MiB of them do not fit in the test process's address space (24 + 512 MiB).
    code = CONFIG + (
        "chunk = b'[],' * (1 << 18)\n"
        "os.write(cfg['rep'], b'{\"pid\": %d, \"ready\": {\"x\": {\"value\": [' % os.getpid())\n"
        "for _ in range(cfg['reply_bytes'] // len(chunk) - 1):\n"
        "    os.write(cfg['rep'], chunk)\n"
        "os.write(cfg['rep'], b'[]]}}}\\n')\n"
        "os._exit(0)\n"
    )
    limits = SandboxLimits(time_limit_s=30, memory_mb=24, max_output_mb=24)
    result = run_python_tests(code, "assert x == []\n", limits)
    assert (result.passed, result.kind, result.error) == (False, "output_limit", False), result
    assert "can hold in memory" in result.reason


def test_a_forged_report_of_how_the_worker_ended_is_bad_output() -> None:
    # A child writes, as pid 1 would, an 'ended' report that is not [exit code, signal], over
    # and over, so one arrives after the real one: the test process once died unpacking it.
    code = CONFIG + (
        "import time\n"
        "if os.fork() == 0:\n"
        "    while True:\n"
        "        try:\n"
        "            os.write(cfg['rep'], b'{\"ended\": \"xyz\", \"pid\": 1}\\n')\n"
        "        except OSError:\n"
        "            os._exit(0)\n"
        "time.sleep(0.1)\n"
        "os._exit(0)\n"
    )
    result = run_python_tests(code, "assert x == 1\n", SandboxLimits(time_limit_s=10))
    assert (result.passed, result.kind, result.error) == (False, "bad_output", False), result
    assert "malformed message" in result.reason


def test_a_long_exception_name_leaves_a_short_reason() -> None:
    code = "class E(Exception):\n    pass\nE.__name__ = 'x' * 3_000_000\nraise E('boom')\n"
    result = run_python_tests(code, "assert True\n")
    assert (result.passed, result.kind) == (False, "crash")
    assert result.reason.startswith("running the code raised xxx")
    assert len(result.reason) <= 2003  # 2,000 characters and '...'


def test_stderr_moved_far_past_the_file_limit_is_read_in_bounds() -> None:
    # The code moves the offset of the stderr it shares with the test process to 64 GiB; the
    # tests then print a line there. The parent once read the whole sparse file into memory.
    code = "import os\nos.lseek(2, 1 << 36, 0)\nx = 1\n"
    tests = "import sys\nsys.stderr.write('diagnostic from the tests\\n')\nassert x == 1\n"
    result = run_python_tests(code, tests)
    assert (result.passed, result.kind) == (True, "passed"), result.reason
    assert result.stderr_tail.endswith("diagnostic from the tests\n")
