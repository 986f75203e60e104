"""Running one command as a measured child process.

``run_process`` starts an argv list (never a shell string) in its own process group, waits for it
with an optional timeout (a pidfd, so no polling loop), and returns what the kernel says about it:
exit status or signal, wall-clock time, and the ``wait4`` resource usage of the process tree
(user and system CPU — whose sum is the task clock —, minor/major page faults, peak RSS, context
switches). Only descendants that were waited for are included in the rusage, as with ``time(1)``.

When perf_event counters are requested, the child is forked and held on a pipe until the parent has
opened the counters on it (``enable_on_exec``, ``inherit``), exactly like ``perf stat``; otherwise
the faster ``posix_spawn`` is used. Counters that the kernel refuses are reported as unavailable
with the reason, never estimated. Left out: cgroup accounting, orphaned grandchildren.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import select
import signal
import struct
import time
from dataclasses import dataclass, field

# ---------------------------------------------------------------------------------- perf_event

PERF_TYPE_HARDWARE = 0
PERF_TYPE_SOFTWARE = 1
PERF_EVENTS = {
    "cycles": (PERF_TYPE_HARDWARE, 0),
    "instructions": (PERF_TYPE_HARDWARE, 1),
    "task-clock": (PERF_TYPE_SOFTWARE, 1),
    "page-faults": (PERF_TYPE_SOFTWARE, 2),
    "context-switches": (PERF_TYPE_SOFTWARE, 3),
}
_SYSCALL_NR = {"x86_64": 298, "aarch64": 241, "arm64": 241}
_FLAG_DISABLED, _FLAG_INHERIT, _FLAG_EXCLUDE_KERNEL, _FLAG_EXCLUDE_HV, _FLAG_ENABLE_ON_EXEC = 1 << 0, 1 << 1, 1 << 5, 1 << 6, 1 << 12
_READ_FORMAT = 1 | 2  # TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING
_PERF_FLAG_FD_CLOEXEC = 1 << 3

_libc = None


def _syscall():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc.syscall


def perf_event_open(event: str, pid: int, *, enable_on_exec: bool, exclude_kernel: bool = False) -> int:
    """Opens one counting event on ``pid`` (0 = this thread) with inheritance; returns the fd.
    Raises OSError with the kernel's errno when refused."""
    nr = _SYSCALL_NR.get(platform.machine())
    if nr is None:
        raise OSError(errno.ENOSYS, f"perf_event_open: unknown syscall number on {platform.machine()}")
    typ, cfg = PERF_EVENTS[event]
    flags = _FLAG_INHERIT | _FLAG_EXCLUDE_HV
    if enable_on_exec:
        flags |= _FLAG_DISABLED | _FLAG_ENABLE_ON_EXEC
    if exclude_kernel:
        flags |= _FLAG_EXCLUDE_KERNEL
    attr = bytearray(64)  # PERF_ATTR_SIZE_VER0
    struct.pack_into("<IIQQQQQ", attr, 0, typ, 64, cfg, 0, 0, _READ_FORMAT, flags)
    buf = ctypes.create_string_buffer(bytes(attr), 64)
    fd = _syscall()(ctypes.c_long(nr), buf, ctypes.c_int(pid), ctypes.c_int(-1), ctypes.c_int(-1), ctypes.c_ulong(_PERF_FLAG_FD_CLOEXEC))
    if fd < 0:
        e = ctypes.get_errno()
        raise OSError(e, f"perf_event_open({event}): {os.strerror(e)}")
    return fd


def read_counter(fd: int) -> float:
    value, enabled, running = struct.unpack("<QQQ", os.read(fd, 24))
    if 0 < running < enabled:
        return value * enabled / running
    return float(value)


_AVAIL: dict[str, str | None] = {}


def perf_event_status(event: str) -> str | None:
    """None when ``event`` can be counted here, else the kernel's reason (cached per process)."""
    if event not in _AVAIL:
        try:
            fd = perf_event_open(event, 0, enable_on_exec=False)
            os.close(fd)
            _AVAIL[event] = None
        except OSError as e:
            if e.errno in (errno.EACCES, errno.EPERM):
                try:
                    os.close(perf_event_open(event, 0, enable_on_exec=False, exclude_kernel=True))
                    _AVAIL[event] = None
                    return None
                except OSError:
                    pass
            reason = {
                errno.ENOENT: "not supported by this CPU/kernel (ENOENT; e.g. a VM without a virtual PMU)",
                errno.EOPNOTSUPP: "not supported (EOPNOTSUPP)",
                errno.EACCES: "refused: perf_event_paranoid too high (EACCES)",
                errno.EPERM: "refused (EPERM)",
            }.get(e.errno or 0, str(e))
            _AVAIL[event] = reason
    return _AVAIL[event]


# ---------------------------------------------------------------------------------- processes

STATUSES = ("ok", "failed", "crashed", "timeout", "error")


@dataclass
class ProcessResult:
    status: str  # ok | failed (non-zero exit) | crashed (killed by a signal) | timeout | error (could not start)
    exit_code: int | None
    signal: int | None
    wall_ns: int
    user_s: float = 0.0
    sys_s: float = 0.0
    minflt: int = 0
    majflt: int = 0
    maxrss_kb: int = 0
    nvcsw: int = 0
    nivcsw: int = 0
    counters: dict[str, float] = field(default_factory=dict)
    counter_errors: dict[str, str] = field(default_factory=dict)
    error: str | None = None

    @property
    def task_clock_s(self) -> float:
        return self.user_s + self.sys_s


def _open_target(path: str | None) -> str:
    return path if path is not None else os.devnull


def run_process(
    argv: list[str],
    *,
    timeout: float | None = None,
    stdout: str | None = None,
    stderr: str | None = None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    perf_events: tuple[str, ...] = (),
    inherit_output: bool = False,
) -> ProcessResult:
    """Runs ``argv`` to completion. ``stdout``/``stderr`` are file paths (None: /dev/null) unless
    ``inherit_output``. ``timeout`` in seconds kills the whole process group."""
    if not argv:
        raise ValueError("empty argv")
    environ = dict(os.environ if env is None else env)
    want = [e for e in perf_events if perf_event_status(e) is None]
    errors = {e: perf_event_status(e) or "" for e in perf_events if perf_event_status(e) is not None}
    t0 = time.perf_counter_ns()
    try:
        if want:
            pid, fds = _fork_gated(argv, environ, cwd, stdout, stderr, inherit_output, want, errors)
        else:
            fds = {}
            actions = []
            if not inherit_output:
                flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
                actions = [
                    (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                    (os.POSIX_SPAWN_OPEN, 1, _open_target(stdout), flags, 0o644),
                    (os.POSIX_SPAWN_OPEN, 2, _open_target(stderr), flags, 0o644),
                ]
            exe = argv[0]
            if cwd is not None:
                # posix_spawn has no chdir action before Python 3.13: fall back to a fork.
                pid, fds = _fork_gated(argv, environ, cwd, stdout, stderr, inherit_output, [], errors)
            else:
                pid = os.posix_spawnp(exe, argv, environ, file_actions=actions, setpgroup=0)
    except OSError as e:
        return ProcessResult("error", None, None, time.perf_counter_ns() - t0, error=f"cannot start {argv[0]!r}: {e.strerror or e}")
    timed_out = False
    if timeout is not None:
        try:
            pfd = os.pidfd_open(pid)
        except OSError:
            pfd = None
        if pfd is not None:
            poller = select.poll()
            poller.register(pfd, select.POLLIN)
            if not poller.poll(max(0, int(timeout * 1000))):
                timed_out = True
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            os.close(pfd)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter_ns() - t0
    counters = {}
    for ev, fd in fds.items():
        try:
            counters[ev] = read_counter(fd)
        except OSError as e:
            errors[ev] = str(e)
        finally:
            os.close(fd)
    if timed_out:
        st, code, sig = "timeout", None, signal.SIGKILL
    elif os.WIFSIGNALED(status):
        st, code, sig = "crashed", None, os.WTERMSIG(status)
    else:
        code = os.WEXITSTATUS(status)
        st, sig = ("ok" if code == 0 else "failed"), None
    return ProcessResult(
        status=st,
        exit_code=code,
        signal=sig,
        wall_ns=wall,
        user_s=ru.ru_utime,
        sys_s=ru.ru_stime,
        minflt=ru.ru_minflt,
        majflt=ru.ru_majflt,
        maxrss_kb=ru.ru_maxrss,
        nvcsw=ru.ru_nvcsw,
        nivcsw=ru.ru_nivcsw,
        counters=counters,
        counter_errors=errors,
    )


def _fork_gated(argv, environ, cwd, stdout, stderr, inherit_output, events, errors):
    """fork; the child waits on a pipe until the parent has attached the counters, then execs."""
    r, w = os.pipe()
    er, ew = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:  # child: only async-signal-safe-ish work, then exec
        try:
            os.close(w)
            os.close(er)
            os.setpgid(0, 0)
            os.read(r, 1)
            os.close(r)
            if cwd is not None:
                os.chdir(cwd)
            if not inherit_output:
                fl = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
                for fd, path, mode in ((0, os.devnull, os.O_RDONLY), (1, _open_target(stdout), fl), (2, _open_target(stderr), fl)):
                    nfd = os.open(path, mode, 0o644)
                    os.dup2(nfd, fd)
                    os.close(nfd)
            os.execvpe(argv[0], argv, environ)
        except BaseException as e:  # noqa: BLE001 - report exec failure to the parent
            try:
                os.write(ew, str(getattr(e, "strerror", None) or e).encode()[:200])
            finally:
                os._exit(127)
    os.close(r)
    os.close(ew)
    fds = {}
    for ev in events:
        try:
            fds[ev] = perf_event_open(ev, pid, enable_on_exec=True)
        except OSError as e:
            if e.errno in (errno.EACCES, errno.EPERM):
                try:
                    fds[ev] = perf_event_open(ev, pid, enable_on_exec=True, exclude_kernel=True)
                    continue
                except OSError:
                    pass
            errors[ev] = str(e)
    os.write(w, b"x")
    os.close(w)
    msg = os.read(er, 256)
    os.close(er)
    if msg:
        os.waitpid(pid, 0)
        for fd in fds.values():
            os.close(fd)
        raise OSError(errno.ENOENT, msg.decode(errors="replace"))
    return pid, fds
