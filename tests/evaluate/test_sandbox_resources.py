"""What the code can hold outside the limits it is given: host disk, memory, threads.

Each test measures with the kernel's own numbers (a file's allocated blocks, the bytes a
socket took, the sandbox's ``/proc``), never with what the sandbox says of itself: the host disk
behind the code's stdout and stderr (``fallocate`` with ``FALLOC_FL_KEEP_SIZE`` allocates blocks
that ``RLIMIT_FSIZE`` does not see), memory that is in no address space (``memfd_create`` files,
SysV shared memory segments left detached, socket buffers behind many descriptors), and threads,
which ``RLIMIT_NPROC`` does not count for root (the CI setting).
"""

from __future__ import annotations

import os
import sys

import pytest

from ablation.evaluate.sandbox import SandboxLimits, run_python_tests

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the sandbox's process checks read /proc"
)


def user_tasks(uid: int) -> int:
    """Threads of every process of ``uid`` on this machine, read from ``/proc``."""
    total = 0
    for pid in (e for e in os.listdir("/proc") if e.isdigit()):
        try:
            with open(f"/proc/{pid}/status") as fh:
                info = dict(line.split(":", 1) for line in fh if ":" in line)
            if int(info["Uid"].split()[0]) == uid:
                total += int(info["Threads"])
        except (OSError, KeyError, ValueError):
            pass
    return total


FALLOCATE = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long)
libc.fallocate({fd}, 1, 0, 1 << 30)  # FALLOC_FL_KEEP_SIZE: 1 GiB, the size left unchanged
HELD = os.fstat({fd}).st_blocks * 512
"""


@pytest.mark.parametrize("fd", [1, 2])
def test_the_code_cannot_reserve_host_disk_behind_its_output(fd: int) -> None:
    # stdout and stderr are files on the host's disk: RLIMIT_FSIZE bounds their size, not the
    # blocks that fallocate(FALLOC_FL_KEEP_SIZE) reserves past it.
    limits = SandboxLimits(time_limit_s=10, max_output_mb=4)
    result = run_python_tests(FALLOCATE.format(fd=fd), "assert HELD <= 4 << 20, HELD\n", limits)
    assert (result.passed, result.kind) == (True, "passed"), result.reason


def test_posix_fallocate_still_works_within_the_limits() -> None:
    code = (
        "import os\nfd = os.open('data.bin', os.O_CREAT | os.O_RDWR)\n"
        "os.posix_fallocate(fd, 0, 1 << 20)\nSIZE = os.fstat(fd).st_size\n"
    )
    result = run_python_tests(code, "assert SIZE == 1 << 20\n", SandboxLimits(time_limit_s=10))
    assert (result.passed, result.kind) == (True, "passed"), result.reason


MEMFD = """
import os
HELD = 0
try:
    for i in range(12):
        fd = os.memfd_create('held%d' % i)
        for _ in range(15):
            os.write(fd, b'x' * (1 << 20))
        HELD += os.fstat(fd).st_blocks * 512
except OSError:
    pass
"""

SYSV = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmget.argtypes = (ctypes.c_int, ctypes.c_size_t, ctypes.c_int)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_int)
libc.shmdt.argtypes = (ctypes.c_void_p,)
HELD = 0
for _ in range(6):  # 32 MiB attached at a time, each segment left behind, detached
    sid = libc.shmget(0, 32 << 20, 0o1000 | 0o600)
    if sid < 0:
        break
    addr = libc.shmat(sid, None, 0)
    if addr is None or addr == ctypes.c_void_p(-1).value:
        break
    ctypes.memset(addr, 1, 32 << 20)
    libc.shmdt(ctypes.c_void_p(addr))
    HELD += 32 << 20
"""

SOCKETS = """
import resource, socket
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
HELD, pairs = 0, []
try:
    for _ in range(3000):
        a, b = socket.socketpair()
        a.setblocking(False)
        try:
            while True:
                HELD += a.send(b'x' * 65536)
        except BlockingIOError:
            pass
        pairs.append((a, b))
except OSError:
    pass
"""


@pytest.mark.parametrize(
    ("attack", "bound_mb"),
    [(MEMFD, 64), (SYSV, 64), (SOCKETS, 256)],
    ids=["memfd", "sysv", "sockets"],
)
def test_memory_outside_the_address_space_is_bounded(attack: str, bound_mb: int) -> None:
    # memory_mb bounds the address space; these hold memory in none: memfd files (each up to
    # the file size limit), detached SysV segments, and socket buffers (as many as descriptors).
    limits = SandboxLimits(time_limit_s=10, memory_mb=64)
    result = run_python_tests(attack, f"assert HELD < {bound_mb} << 20, HELD\n", limits)
    assert (result.passed, result.kind) == (True, "passed"), result.reason


@pytest.mark.skipif(os.geteuid() != 0, reason="RLIMIT_NPROC bounds threads for other users")
def test_a_thread_bomb_is_stopped_for_root_too() -> None:
    # As root RLIMIT_NPROC counts nothing (the kernel exempts uid 0, also mapped from a user
    # namespace), and the process count sees processes, not threads: the code could take the
    # host's pids (kernel.pid_max) one thread at a time.
    many = 8 + user_tasks(os.getuid()) + 200
    code = (
        "import threading, time\nthreading.stack_size(65536)\nstop = threading.Event()\n"
        f"for _ in range({many}):\n    threading.Thread(target=stop.wait, daemon=True).start()\n"
        "time.sleep(5)\n"
    )
    # The address space is not what this checks: under the default 512 MiB the code cannot start
    # more than ~500 such threads ("can't start new thread", a crash verdict, before the count is
    # read), and ``many`` passes 500 on a host whose root runs ~300 tasks.
    limits = SandboxLimits(time_limit_s=10, max_processes=8, memory_mb=2048)
    result = run_python_tests(code, "assert True\n", limits)
    assert (result.passed, result.kind) == (False, "process_limit"), result.reason
    assert result.duration_s < 5


def test_a_thread_pool_within_the_limit_still_passes() -> None:
    code = (
        "from concurrent.futures import ThreadPoolExecutor\n"
        "with ThreadPoolExecutor(8) as pool:\n"
        "    SQUARES = list(pool.map(lambda x: x * x, range(100)))\n"
    )
    result = run_python_tests(code, "assert SQUARES[9] == 81\n", SandboxLimits(time_limit_s=10))
    assert (result.passed, result.kind) == (True, "passed"), result.reason


# Empty files, directories and links take no bytes of the scratch's tmpfs, whose size is all
# its mount counts, but an inode each (about 1 KiB of kernel memory): the tmpfs's own inode
# limit is half the machine's memory pages (millions). Counted as processes are, past one
# file per 4 KiB page of max_disk_mb (as many as non-empty files fit) the run is killed.
# The code prints how many it made when it is done: the count reaches the tests only if the
# run was not stopped first.
INODES = """
import os
made = 0
for i in range({n}):
    {make}
    made += 1
"""


@pytest.mark.parametrize("make", ["open('f%d' % i, 'w').close()", "os.mkdir('d%d' % i)", "os.symlink('x', 'l%d' % i)"])
def test_files_that_take_no_bytes_are_bounded_in_number(make: str) -> None:
    limits = SandboxLimits(time_limit_s=20, max_disk_mb=4)
    code = INODES.format(n=40 * limits.max_files, make=make)
    result = run_python_tests(code, f"assert made == {40 * limits.max_files}\n", limits)
    assert (result.passed, result.kind) == (False, "output_limit"), result.reason
    assert f"more than {limits.max_files} files" in result.reason


def test_as_many_small_files_as_the_scratch_holds_still_pass() -> None:
    limits = SandboxLimits(max_disk_mb=4)
    n = limits.max_files // 2  # a byte each: a 4 KiB page each, half the scratch
    code = INODES.format(n=n, make="open('f%d' % i, 'w').write('x')")
    result = run_python_tests(code, f"assert made == {n}\n", limits)
    assert result.passed, result.reason
