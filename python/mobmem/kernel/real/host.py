"""The host machine seen from a real replay: /proc and /sys readers and writers, swap on and off, zram, mincore, the environment report."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
import struct
from typing import Any

from mobmem.kernel.real.content import PAGE

WORK_PARENT = "/var/tmp"  # on the root (ext4) file system, not tmpfs


ZRAM = "/sys/block/zram0"


class Skipped(Exception):
    """The machine cannot run a real replay (not root, no memory cgroup, no zram…)."""


# ----------------------------------------------------------------------------------------
# small system helpers
# ----------------------------------------------------------------------------------------
def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _write(path: str, value: str | int) -> None:
    with open(path, "w") as f:
        f.write(str(value))


def _kv(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for ln in text.splitlines():
        parts = ln.split()
        if len(parts) == 2:
            try:
                out[parts[0]] = int(parts[1])
            except ValueError:
                pass
    return out


def read_vmstat() -> dict[str, int]:
    return _kv(_read("/proc/vmstat"))


def read_mm_stat() -> dict[str, int]:
    names = (
        "orig_data_size",
        "compr_data_size",
        "mem_used_total",
        "mem_limit",
        "mem_used_max",
        "same_pages",
        "pages_compacted",
        "huge_pages",
        "huge_pages_since",
    )
    vals = _read(os.path.join(ZRAM, "mm_stat")).split()
    return {n: int(v) for n, v in zip(names, vals)}


def _proc_swaps() -> list[str]:
    try:
        lines = _read("/proc/swaps").splitlines()[1:]
    except OSError:
        return []
    return [ln.split()[0] for ln in lines if ln.strip()]


_libc = None


def _libc_fn():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return _libc


def _swapon(path: str, prio: int = 32767) -> None:
    libc = _libc_fn()
    flags = 0x8000 | (prio & 0x7FFF)  # SWAP_FLAG_PREFER | prio
    if libc.swapon(path.encode(), flags) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"swapon {path}: {os.strerror(e)}")


def _swapoff(path: str) -> None:
    libc = _libc_fn()
    if libc.swapoff(path.encode()) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"swapoff {path}: {os.strerror(e)}")


def _write_swap_header(fd: int, size_bytes: int) -> None:
    """What mkswap writes: a version-1 swap header in page 0 with the SWAPSPACE2 magic."""
    npages = size_bytes // PAGE
    page = bytearray(PAGE)
    uuid = os.urandom(16)
    struct.pack_into("<III", page, 1024, 1, npages - 1, 0)
    page[1036:1052] = uuid
    page[1052:1068] = b"mobmem".ljust(16, b"\0")
    page[PAGE - 10 :] = b"SWAPSPACE2"
    os.pwrite(fd, bytes(page), 0)
    os.fsync(fd)


def _mincore_resident(path: str) -> int:
    """Pages of ``path`` resident in the page cache (mincore on a fresh read-only mapping)."""
    size = os.path.getsize(path)
    if size == 0:
        return 0
    libc = _libc_fn()
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED
    finally:
        os.close(fd)
    if addr in (None, ctypes.c_void_p(-1).value):
        return -1
    try:
        npages = (size + PAGE - 1) // PAGE
        vec = (ctypes.c_ubyte * npages)()
        if libc.mincore(addr, size, vec) != 0:
            return -1
        return sum(1 for x in vec if x & 1)
    finally:
        libc.munmap(addr, size)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_ahead_kb(path: str) -> int | None:
    """read_ahead_kb of the block device holding ``path`` (what mmap read-around uses)."""
    try:
        dev = os.stat(path).st_dev
        return int(_read(f"/sys/class/bdi/{os.major(dev)}:{os.minor(dev)}/read_ahead_kb").strip())
    except (OSError, ValueError):
        return None


def _fault_around_bytes() -> int:
    try:
        return int(_read("/sys/kernel/debug/fault_around_bytes").strip())
    except (OSError, ValueError):
        return 65536  # the kernel default (debugfs is not mounted to read it)


def machine_environment() -> dict:
    """The knobs the model needs to match this machine, read without changing anything."""
    env: dict[str, Any] = {"kernel": platform.release(), "page_cluster": 0, "fault_around_bytes": _fault_around_bytes()}
    try:
        env["swappiness"] = int(_read("/proc/sys/vm/swappiness").strip())
    except (OSError, ValueError):
        pass
    ra = _read_ahead_kb(WORK_PARENT if os.path.isdir(WORK_PARENT) else "/")
    if ra is not None:
        env["file_read_ahead_kb"] = ra
    return env


def _bracketed(path: str) -> str | None:
    try:
        s = _read(path)
    except OSError:
        return None
    if "[" in s:
        return s[s.index("[") + 1 : s.index("]")]
    return s.strip()


def _current_alg() -> str:
    return _bracketed(os.path.join(ZRAM, "comp_algorithm")) or ""


def _mglru_enabled() -> bool:
    try:
        v = _read("/sys/kernel/mm/lru_gen/enabled").strip()
    except OSError:
        return False
    try:
        return int(v, 16) & 1 == 1
    except ValueError:
        return v not in ("n", "0")


def _fs_of(path: str) -> str:
    best, fs = "", "?"
    try:
        for ln in _read("/proc/self/mounts").splitlines():
            parts = ln.split()
            if len(parts) >= 3 and path.startswith(parts[1]) and len(parts[1]) >= len(best):
                best, fs = parts[1], parts[2]
    except OSError:
        pass
    return fs
