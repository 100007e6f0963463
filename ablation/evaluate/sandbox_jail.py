"""The code process's private root: only the interpreter, the system libraries and its scratch.

:data:`JAIL` is part of the test process's source (:data:`ablation.evaluate.sandbox_harness.HARNESS`
includes it). Where the test process could enter new mount and PID namespaces, ``_build_jail``
mounts a small tmpfs over the temporary directory (in the test process's mount namespace only)
and bind-mounts into it, read-only: ``/usr`` and the ``/bin``, ``/sbin``, ``/lib*`` links or
directories, the interpreter's prefix (``sys.prefix``, ``sys.base_prefix``), ``/dev/null``,
``/dev/zero``, ``/dev/full``, ``/dev/random`` and ``/dev/urandom``; the scratch directory is bound
read-write at its own path. Nothing else of the host is there: not ``/etc``, not home directories,
not the run store, not the rest of ``/tmp``.

``_enter_jail`` runs in the code process between ``fork`` and ``exec`` (the test process has a
single thread, so this is safe): a mount namespace of its own, the jail moved onto ``/`` and
``chroot`` into it (the ``switch_root`` sequence, so the host's root has no path left), a fresh
``/proc`` of its PID namespace, every capability dropped from the bounding set (root inside keeps
its uid for file ownership but cannot mount, ``mknod``, ``chroot`` again, raise a resource limit,
trace or load modules) and ``no_new_privs`` set. A step that fails raises, so the run fails
loudly instead of running the code unconfined while claiming otherwise.
"""

from __future__ import annotations

__all__ = ["JAIL"]

# Part of the harness: executes inside the test process; standard library only.
JAIL = r"""
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
_MS_REMOUNT, _MS_BIND, _MS_MOVE, _MS_REC, _MS_PRIVATE = 0x20, 0x1000, 0x2000, 0x4000, 0x40000

def _mount(libc, src, dst, fstype, flags, data=None):
    enc = lambda x: None if x is None else x.encode()
    if libc.mount(enc(src), enc(dst), enc(fstype), flags, enc(data)) != 0:
        import ctypes
        raise OSError(ctypes.get_errno(), 'mount %s on %s failed' % (src, dst))

def _bind(libc, src, root, path, writable=False):
    dst = root + path
    if os.path.isdir(src):
        os.makedirs(dst, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        open(dst, 'a').close()
    _mount(libc, src, dst, None, _MS_BIND | _MS_REC)
    if not writable:
        _mount(libc, None, dst, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID)

def _build_jail(libc, workdir):
    root = os.path.dirname(workdir)
    _mount(libc, 'tmpfs', root, 'tmpfs', _MS_NOSUID | _MS_NODEV, 'size=1m,mode=0755')
    try:
        _fill_jail(libc, root, workdir)
    except BaseException:
        libc.umount2(root.encode(), 2)  # MNT_DETACH: the temporary directory is visible again
        raise
    return root

def _fill_jail(libc, root, workdir):
    for name in ('usr', 'bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'):
        path = '/' + name
        if os.path.islink(path):
            os.symlink(os.readlink(path), root + path)
        elif os.path.isdir(path):
            _bind(libc, path, root, path)
    exe = os.path.dirname(os.path.realpath(sys.executable))
    for prefix in sorted({sys.prefix, sys.base_prefix, exe}):
        real = os.path.realpath(prefix)
        if not real.startswith('/usr/') and os.path.isdir(real):
            _bind(libc, real, root, real)
    for dev in ('null', 'zero', 'full', 'random', 'urandom'):
        _bind(libc, '/dev/' + dev, root, '/dev/' + dev, writable=True)
    os.makedirs(root + '/proc')
    _bind(libc, '/proc/self/cwd', root, workdir, writable=True)
    _mount(libc, None, root, None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)

def _enter_jail(libc, root, workdir):
    if libc.unshare(0x20000) != 0:  # CLONE_NEWNS: the test process keeps its own view
        raise OSError('unshare(CLONE_NEWNS) failed')
    _mount(libc, None, '/', None, _MS_REC | _MS_PRIVATE)
    os.chdir(root)
    _mount(libc, root, '/', None, _MS_MOVE)
    os.chroot('.')
    os.chdir(workdir)
    _mount(libc, 'proc', '/proc', 'proc', _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    with open('/proc/sys/kernel/cap_last_cap') as fh:
        last = int(fh.read())
    for cap in range(last + 1):
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError('could not drop capability %d' % cap)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError('could not set no_new_privs')
"""
