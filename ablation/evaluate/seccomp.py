"""The sandbox's seccomp filter, compiled to BPF by libseccomp.

:func:`sandbox_filter` returns the classic-BPF program that bubblewrap installs (``bwrap --seccomp
FD``) just before it starts the code process. The program is built by **libseccomp** (the library
behind systemd's, Docker's, Flatpak's and Podman's filters), called through :mod:`ctypes`: the
library resolves syscall names to numbers for this architecture, checks the architecture word of
every syscall (a syscall from another ABI, such as ``int 0x80`` on x86-64, kills the process) and
emits the program. Only the rule list below is ours.

Why not a Python package: Debian's ``python3-seccomp`` binds the system interpreter only (not a
virtualenv or a pyenv interpreter), and ``pyseccomp`` on PyPI is the same ctypes calls, unreleased
since 2021. libseccomp itself (``libseccomp.so.2``) is on every Debian, Ubuntu and Fedora system
that has systemd.

The filter allows everything but the calls a confined program has no use for and that widen the
kernel's attack surface or leave the sandbox's view: new or other namespaces (``unshare``,
``setns``, ``clone`` with a ``CLONE_NEW*`` flag; ``clone3``, whose flags live in memory a filter
cannot read, answers ``ENOSYS`` so the C library falls back to ``clone``), mounts, ``chroot`` and
``pivot_root``, tracing and reading other processes' memory (``ptrace``, ``process_vm_*``),
kernel keyrings, ``bpf``, ``perf_event_open``, ``userfaultfd``, module and kexec loading, reboot,
swap, accounting, quotas, the kernel log, file handles that bypass path checks
(``open_by_handle_at``) and ``io_uring`` (whose queued operations no filter sees). Denied calls
fail with ``EPERM`` (the program sees an ordinary error).

It also denies what would hold memory or disk outside the limits the code is given: memory in
no address space (``memfd_create`` files, each up to the file size limit and as many as there
are descriptors; SysV shared memory segments, which outlive a detach, and message queues) and
``fallocate``, whose ``FALLOC_FL_KEEP_SIZE`` reserves blocks of a file without growing it, so
``RLIMIT_FSIZE`` does not see them: on the code's stdout and stderr, host files, that is the
host's disk. ``fallocate`` answers ``EOPNOTSUPP`` (what a file system without it answers), so
``posix_fallocate`` falls back to writing, within the file size limit and the scratch's size.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os

from ablation.errors import AblationError

__all__ = ["DENIED_CALLS", "UNSUPPORTED_CALLS", "SeccompUnavailable", "sandbox_filter"]

#: Calls the sandboxed code may not make (``EPERM``), by name; unknown names on this
#: architecture are skipped.
DENIED_CALLS = (
    "unshare", "setns", "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount",
    "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog",
    "open_by_handle_at", "name_to_handle_at", "lookup_dcookie", "vhangup", "personality",
    "iopl", "ioperm", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "memfd_create", "memfd_secret", "shmget", "msgget",
)  # fmt: skip

#: Calls answered ``EOPNOTSUPP``, as a file system without them answers: the C library then does
#: the same with ordinary writes (``posix_fallocate``), which ``RLIMIT_FSIZE`` bounds.
UNSUPPORTED_CALLS = ("fallocate",)

#: ``clone`` flags that create namespaces; a ``clone`` with any of them is denied.
_CLONE_NAMESPACE_FLAGS = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)

_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_CMP_MASKED_EQ = 7


def _errno_action(code: int) -> int:
    return 0x00050000 | (code & 0x0000FFFF)  # SCMP_ACT_ERRNO(code)


class SeccompUnavailable(AblationError, OSError):
    """libseccomp cannot be loaded or refused the filter (the message says how to fix it)."""


class _ArgCmp(ctypes.Structure):
    _fields_ = (
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    )


def _library() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as exc:
        raise SeccompUnavailable(
            f"libseccomp is not installed ({exc}); install it (Debian/Ubuntu: apt-get install "
            "libseccomp2) or choose the weaker --sandbox process"
        ) from None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = (ctypes.c_uint32,)
    lib.seccomp_release.argtypes = (ctypes.c_void_p,)
    lib.seccomp_syscall_resolve_name.argtypes = (ctypes.c_char_p,)
    lib.seccomp_rule_add_array.argtypes = (
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    )
    lib.seccomp_export_bpf.argtypes = (ctypes.c_void_p, ctypes.c_int)
    return lib


def _add(lib: ctypes.CDLL, ctx: int, action: int, call: str, cmps: list[_ArgCmp]) -> None:
    number = lib.seccomp_syscall_resolve_name(call.encode())
    if number < 0:  # __NR_SCMP_ERROR: no such call on this architecture
        return
    array = (_ArgCmp * len(cmps))(*cmps) if cmps else None
    rc = lib.seccomp_rule_add_array(ctx, action, number, len(cmps), array)
    if rc < 0:
        raise SeccompUnavailable(f"libseccomp refused the rule for {call}: {os.strerror(-rc)}")


@functools.cache
def sandbox_filter() -> bytes:
    """The sandbox's seccomp program as classic BPF, ready for ``bwrap --seccomp FD``.

    Returns:
        The program's bytes (``struct sock_filter`` records for this machine's architecture).

    Raises:
        SeccompUnavailable: libseccomp is missing or failed to build the program.
    """
    lib = _library()
    ctx = lib.seccomp_init(_SCMP_ACT_ALLOW)
    if not ctx:
        raise SeccompUnavailable("libseccomp could not allocate a filter")
    try:
        deny = _errno_action(errno.EPERM)
        for call in DENIED_CALLS:
            _add(lib, ctx, deny, call, [])
        for call in UNSUPPORTED_CALLS:
            _add(lib, ctx, _errno_action(errno.EOPNOTSUPP), call, [])
        for flag in _CLONE_NAMESPACE_FLAGS:
            _add(lib, ctx, deny, "clone", [_ArgCmp(0, _SCMP_CMP_MASKED_EQ, flag, flag)])
        _add(lib, ctx, _errno_action(errno.ENOSYS), "clone3", [])
        fd = os.memfd_create("ablation-seccomp")
        try:
            rc = lib.seccomp_export_bpf(ctx, fd)
            if rc < 0:
                raise SeccompUnavailable(f"libseccomp could not export the filter: {os.strerror(-rc)}")
            size = os.lseek(fd, 0, os.SEEK_END)
            return os.pread(fd, size, 0)
        finally:
            os.close(fd)
    finally:
        lib.seccomp_release(ctx)
