"""Replay a page trace on the real Linux kernel of this machine and read its counters.

``mobmem kernel replay --real TRACE`` ends here (:func:`replay_real`). The trace is executed
by real processes under a memory cgroup whose limit is the trace's ``ram``, with real swap of
the trace's kind, and the kernel's own counter deltas are printed beside the model's.

How a trace becomes real work
-----------------------------
* One real child process per trace ``proc``. The children are small stdlib-only Python
  programs (``python3 -I -S``, see ``_CHILD_SRC``) started a few ahead of their ``proc`` event
  (``SPAWN_AHEAD``); each builds its page-content bank and its receive buffer, says it is
  ready, and only at its ``proc`` event is it moved into the cgroup, so interpreter memory
  stays charged outside. A coordinator (this process) feeds each child its ops over a pipe in
  trace order (runs of one process's consecutive ops, ≤ ``MAX_BATCH`` per message) and waits
  for the child's acknowledgement before going on, so the global order of the trace is kept.
  A child that dies (the memcg OOM killer) is recorded in ``kills`` with the lines being
  executed when it was noticed; its later events are skipped.
* ``map … anon N`` → ``mmap(MAP_PRIVATE|MAP_ANONYMOUS)`` of N pages; ``map … file F N [exec]``
  → ``mmap(MAP_SHARED)`` of a real file F (PROT_EXEC added for ``exec``) created beforehand
  in a directory on the root file system, filled with content, fsync'd and evicted from the
  page cache with ``POSIX_FADV_DONTNEED`` (checked with mincore) before the replay.
* ``touch … r`` reads one 8-byte word of each page, in page order; ``touch … w`` writes the
  whole page (4096 bytes) with content of the trace's compressibility (below).
* ``madvise`` → the real ``madvise(2)`` (DONTNEED=4, COLD=20, PAGEOUT=21, WILLNEED=3).
* ``adj`` / ``proc adj=`` → ``/proc/<pid>/oom_score_adj`` (a negative value needs
  CAP_SYS_RESOURCE; without it 0 is written and a note says so); ``tick`` → sleep (scaled by
  ``time_scale``); ``exit`` → the child exits and is waited for (its memory is freed).
* Before the replay: ``page-cluster`` is set to 0 (Android's and the model's default; restored
  afterwards); on cgroup v1 the cgroup's ``memory.swappiness`` is left at its inherited value
  unless ``RealOptions.swappiness`` is given. ``swap none`` also caps the cgroup's swap at 0.

Page content (what the lead's model needs as its compressed-size input)
-----------------------------------------------------------------------
Every written page is a copy of one of ``BANK_PAGES`` = 256 template pages (page ``p`` of
mapping ``v`` uses template ``(p + 37·v) mod 256``). Template ``i`` is ``k_i`` bytes from a
seeded PRNG (``random.Random(seed).randbytes``) followed by zeros, with
``k_i = round(U(0.8, 1.2) · max(1, 4096/ratio − 32))`` clamped to [1, 4096]. LZ4 (and lzo)
store the random prefix verbatim and the zero run in a few bytes, so a page compresses to
≈ ``k_i + 32`` bytes: the compressed sizes are uniform on ±20 % around ``4096/ratio``. No
template is a same-filled page. The default ratio (no ``ratio=`` in the trace) is
:data:`DEFAULT_RATIO`. Files are filled the same way with :data:`FILE_RATIO`. The measured
ratio (zram ``orig_data_size / compr_data_size``) is reported in ``real.zram``.

Where counters come from
------------------------
The cgroup's ``memory.stat`` where it has the counter (per cgroup: free of other activity on
the machine), else the global ``/proc/vmstat`` (noted per counter in ``real.sources``). Memory
cgroup limit reclaim is neither kswapd nor "direct reclaim" in the global counters: the kernel
counts its scans only in the memcg (``pgscan_direct`` etc. in cgroup v2's memory.stat) and in
the global ``pgscan_anon``/``pgscan_file``; on cgroup v1 the canonical ``pgscan_direct`` /
``pgsteal_direct`` are therefore derived from the latter (sources say so), and ``allocstall``
stays 0 (it counts only global direct reclaim).

Restoration
-----------
Everything done to the machine is recorded step by step in a state file under ``/run`` and
undone in reverse (children killed, swapoff, zram reset and its algorithm restored, cgroup
removed, files deleted, sysctls restored) on success, on error, on exception, on SIGINT,
SIGTERM and SIGHUP; a run killed with SIGKILL is cleaned up by the next run
(:func:`restore_stale`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import json
import math
import os
import platform
import signal
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from mobmem.errors import MobmemError

PAGE = 4096
BANK_PAGES = 256
DEFAULT_RATIO = 3.0  # lz4 on Android heap pages is ~2.5-3:1 (design/kernel.md)
FILE_RATIO = 2.0
LZ4_OVERHEAD = 32  # bytes lz4 adds to a (random prefix + zero run) page, measured on zram
CONTENT_SEED = 0x6D6F626D  # "mobm"
VMA_SALT = 37

STATE_DIR = "/run/mobmem"
STATE_FILE = os.path.join(STATE_DIR, "real-state.json")
WORK_PARENT = "/var/tmp"  # on the root (ext4) file system, not tmpfs
CG_PREFIX = "mobmem-real-"
ZRAM = "/sys/block/zram0"
MAX_BATCH = 4096  # ops per message to a child (its receive buffer is preallocated)
SPAWN_AHEAD = 8  # children started ahead of their 'proc' event
OP_STRUCT = "<BBxxiqq"  # op, flag, vma, a, b  (24 bytes)

MADV = {0: 4, 1: 20, 2: 21, 3: 3}  # trace advice code -> MADV_DONTNEED, COLD, PAGEOUT, WILLNEED

# Canonical counters printed and compared, in order.
COUNTERS = (
    "pgfault",
    "pgmajfault",
    "pswpin",
    "pswpout",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "pgscan_anon",
    "pgscan_file",
    "pgsteal_anon",
    "pgsteal_file",
    "allocstall",
    "workingset_refault_anon",
    "workingset_refault_file",
    "workingset_activate_anon",
    "workingset_activate_file",
    "workingset_restore_anon",
    "workingset_restore_file",
    "workingset_activate",
    "workingset_restore",
    "pgactivate",
    "pgdeactivate",
    "pgrefill",
    "pgrotated",
    "pgpgin",
    "pgpgout",
    "oom_kill",
)
# memory.stat keys that mean the same as the /proc/vmstat counter of that name
_MEMCG_V1_SAME = ("pgfault", "pgmajfault", "workingset_refault_anon", "workingset_refault_file")
_MEMCG_V2_SAME = (
    "pgfault",
    "pgmajfault",
    "pswpin",
    "pswpout",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "pgscan_anon",
    "pgscan_file",
    "pgsteal_anon",
    "pgsteal_file",
    "workingset_refault_anon",
    "workingset_refault_file",
    "workingset_activate_anon",
    "workingset_activate_file",
    "workingset_restore_anon",
    "workingset_restore_file",
    "pgactivate",
    "pgdeactivate",
    "pgrefill",
)


class Skipped(Exception):
    """The machine cannot run a real replay (not root, no memory cgroup, no zram…)."""


class _Interrupted(BaseException):
    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


# ----------------------------------------------------------------------------------------
# Page content
# ----------------------------------------------------------------------------------------
# The child program. Stdlib only, so it starts in ~20 ms and its interpreter is small; it is
# also exec'd here (``_child_namespace``) so that the coordinator builds identical content.
_CHILD_SRC = r"""
import os, sys, struct, mmap, random

PAGE = 4096

def make_bank(ratio, seed, n, overhead):
    rnd = random.Random(seed)
    k = max(1.0, PAGE / ratio - overhead)
    out = bytearray(n * PAGE)
    for i in range(n):
        ki = min(PAGE, max(1, round(k * rnd.uniform(0.8, 1.2))))
        out[i * PAGE:i * PAGE + ki] = rnd.randbytes(ki)
    return out

def child_main():
    rd = sys.stdin.buffer
    wr = sys.stdout.buffer
    def send(kind, payload=b""):
        wr.write(struct.pack("<cI", kind, len(payload)) + payload)
        wr.flush()
    def read_exact(mv):
        got = 0
        while got < len(mv):
            r = rd.readinto(mv[got:])
            if not r:
                os._exit(0)  # coordinator gone
            got += r
    hdr = bytearray(5)
    hmv = memoryview(hdr)
    read_exact(hmv)
    kind, n = struct.unpack("<cI", hdr)
    import ast
    cfg = ast.literal_eval(bytes(rd.read(n)).decode())  # a dict literal written by the coordinator
    nbank = cfg["bank_pages"]
    bank = make_bank(cfg["ratio"], cfg["seed"], nbank, cfg["overhead"])
    fbank = make_bank(cfg["file_ratio"], cfg["file_seed"], nbank, cfg["overhead"])
    bankmv = memoryview(bank)
    fbankmv = memoryview(fbank)
    buf = bytearray(cfg["max_batch"] * 24)
    bmv = memoryview(buf)
    unpack = struct.Struct("<BBxxiqq").iter_unpack
    madv = cfg["madv"]
    vmas = cfg["vmas"]  # index -> (kind, pages, path, exec)
    maps = {}
    sink = 0
    send(b"R", str(os.getpid()).encode())
    while True:
        read_exact(hmv)
        kind, n = struct.unpack("<cI", hdr)
        if kind == b"Q":
            os._exit(0)
        read_exact(bmv[:n])
        i = -1
        try:
            for i, (op, flag, vma, a, b) in enumerate(unpack(bmv[:n])):
                if op == 2:  # touch
                    m = maps[vma]
                    if flag:
                        mv, src, salt = m[0], m[2], m[3]
                        p = a
                        end = a + b
                        while p < end:
                            q = (p + salt) % nbank
                            c = min(end - p, nbank - q)
                            mv[p * PAGE:(p + c) * PAGE] = src[q * PAGE:(q + c) * PAGE]
                            p += c
                    else:
                        w = m[1]
                        if b == 1:
                            sink ^= w[a * 512]
                        else:
                            for x in w[a * 512:(a + b) * 512:512]:
                                sink ^= x
                elif op == 1:  # map
                    kind_, pages, path, ex = vmas[vma]
                    size = pages * PAGE
                    if kind_ == "anon":
                        mm = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
                                       prot=mmap.PROT_READ | mmap.PROT_WRITE)
                        src = bankmv
                    else:
                        fd = os.open(path, os.O_RDWR)
                        prot = mmap.PROT_READ | mmap.PROT_WRITE | (mmap.PROT_EXEC if ex else 0)
                        mm = mmap.mmap(fd, size, flags=mmap.MAP_SHARED, prot=prot)
                        os.close(fd)
                        if cfg["file_advice"]:
                            mm.madvise(cfg["file_advice"])  # MADV_RANDOM / MADV_SEQUENTIAL
                        src = fbankmv
                    mv = memoryview(mm)
                    maps[vma] = (mv, mv.cast("Q"), src, (vma * 37) % nbank, mm)
                elif op == 3:  # madvise
                    maps[vma][4].madvise(madv[flag], a * PAGE, b * PAGE)
        except BaseException as e:  # report which op failed, then wait for the coordinator
            msg = "%d\t%s: %s" % (i, type(e).__name__, e)
            send(b"E", msg.encode())
            continue
        send(b"K")

if __name__ == "__main__":
    child_main()
"""


def _child_namespace() -> dict:
    ns: dict = {"__name__": "mobmem_real_child"}
    exec(compile(_CHILD_SRC, "<mobmem-real-child>", "exec"), ns)
    return ns


def make_bank(ratio: float, seed: int = CONTENT_SEED, n: int = BANK_PAGES) -> bytearray:
    """The template pages written for a trace of compression ``ratio`` (see module doc)."""
    return _child_namespace()["make_bank"](float(ratio), seed, n, LZ4_OVERHEAD)


def content_sigma(ratio: float) -> float:
    """Log-normal sigma with the same coefficient of variation as the written pages' compressed
    sizes (uniform on [0.8k, 1.2k] + overhead, k = 4096/ratio − overhead)."""
    k = max(1.0, PAGE / ratio - LZ4_OVERHEAD)
    lo, hi = min(PAGE, 0.8 * k) + LZ4_OVERHEAD, min(PAGE, 1.2 * k) + LZ4_OVERHEAD
    mean, sd = (lo + hi) / 2, (hi - lo) / math.sqrt(12)
    return math.sqrt(math.log(1 + (sd / mean) ** 2))


def content_description(ratio: float) -> dict:
    k = max(1.0, PAGE / ratio - LZ4_OVERHEAD)
    return {
        "template_pages": BANK_PAGES,
        "page_of_template": f"(page + {VMA_SALT}*vma_index) mod {BANK_PAGES}",
        "template": "k random bytes (seeded PRNG) then zeros; k = round(U(0.8,1.2) * max(1, 4096/ratio - 32)) in [1, 4096]",
        "ratio_target": ratio,
        "random_prefix_mean_bytes": round(min(PAGE, k), 1),
        "expected_compressed_bytes": f"~k+{LZ4_OVERHEAD}, uniform on about [{round(0.8 * k + LZ4_OVERHEAD)}, {round(min(PAGE, 1.2 * k) + LZ4_OVERHEAD)}]",
        "file_ratio": FILE_RATIO,
        "lognormal_sigma_equivalent": round(content_sigma(ratio), 4),
        "read_touch": "reads one 8-byte word of each page",
        "write_touch": "writes the whole 4096-byte page with its template",
    }


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


# ----------------------------------------------------------------------------------------
# cgroups
# ----------------------------------------------------------------------------------------
@dataclass
class CgroupInfo:
    version: int  # 1 or 2
    root: str  # the hierarchy mount holding the memory controller


def find_memory_cgroup(mounts_text: str | None = None, controllers=None) -> CgroupInfo | None:
    """Where the memory controller is: a cgroup2 mount that has it, else a v1 ``memory``
    hierarchy (a hybrid machine may mount cgroup2 without the memory controller)."""
    if mounts_text is None:
        try:
            mounts_text = _read("/proc/self/mounts")
        except OSError:
            return None
    if controllers is None:

        def controllers(mnt: str) -> list[str]:
            try:
                return _read(os.path.join(mnt, "cgroup.controllers")).split()
            except OSError:
                return []

    v1 = v2 = None
    for ln in mounts_text.splitlines():
        parts = ln.split()
        if len(parts) < 4:
            continue
        fstype, mnt, opts = parts[2], parts[1], parts[3].split(",")
        if fstype == "cgroup" and "memory" in opts and v1 is None:
            v1 = mnt
        elif fstype == "cgroup2" and v2 is None and "memory" in controllers(mnt):
            v2 = mnt
    if v2 is not None:
        return CgroupInfo(2, v2)
    if v1 is not None:
        return CgroupInfo(1, v1)
    return None


# ----------------------------------------------------------------------------------------
# machine state: every change recorded, undone in reverse
# ----------------------------------------------------------------------------------------
def _save_state(state: dict) -> None:
    os.makedirs(STATE_DIR, exist_ok=True)
    tmp = STATE_FILE + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f)
    os.replace(tmp, STATE_FILE)


def _undo(state: dict, log: list[str]) -> list[str]:
    """Undo the steps of ``state`` (in reverse); returns problems that remain."""
    problems: list[str] = []
    # 1. processes we started (their pids), then any task left in our cgroup
    for pid in state.get("children", []):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    for pid in state.get("children", []):
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    cg = state.get("cgroup")
    if cg and os.path.isdir(cg):
        for _ in range(50):
            try:
                tasks = [int(x) for x in _read(os.path.join(cg, "cgroup.procs")).split()]
            except OSError:
                tasks = []
            if not tasks:
                break
            for pid in tasks:  # only ever our own children (the cgroup is ours)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)
    # 2. swap
    swap = state.get("swap_path")
    if swap and swap in _proc_swaps():
        try:
            _swapoff(swap)
            log.append(f"swapoff {swap}")
        except OSError as e:
            problems.append(str(e))
    if state.get("zram_used"):
        try:
            _write(os.path.join(ZRAM, "reset"), 1)
            log.append("zram0 reset")
            alg = state.get("zram_alg_orig")
            if alg:
                try:
                    _write(os.path.join(ZRAM, "comp_algorithm"), alg)
                except OSError:
                    pass
        except OSError as e:
            problems.append(f"zram reset: {e}")
    # 3. cgroup
    if cg and os.path.isdir(cg):
        for i in range(100):
            try:
                os.rmdir(cg)
                log.append(f"rmdir {cg}")
                break
            except OSError as e:
                if e.errno == errno.ENOENT:
                    break
                if i == 99:
                    problems.append(f"rmdir {cg}: {e.strerror}")
                time.sleep(0.05)
    # 4. files
    wd = state.get("workdir")
    if wd and os.path.isdir(wd):
        for name in os.listdir(wd):
            try:
                os.unlink(os.path.join(wd, name))
            except OSError as e:
                problems.append(f"unlink {name}: {e.strerror}")
        try:
            os.rmdir(wd)
            log.append(f"rm -r {wd}")
        except OSError as e:
            problems.append(f"rmdir {wd}: {e.strerror}")
    sub = state.get("v2_subtree_memory_enabled")
    if sub:
        try:
            _write(sub, "-memory")
        except OSError:
            pass  # in use by other cgroups by now: leave it on
    # 5. sysctls
    for path, value in state.get("sysctl_orig", {}).items():
        try:
            _write(path, value)
        except OSError as e:
            problems.append(f"restore {path}: {e}")
    return problems


def _running_owner() -> int | None:
    """The pid of a live replay that owns the state file, if any."""
    try:
        owner = json.loads(_read(STATE_FILE)).get("pid")
    except (OSError, ValueError, AttributeError):
        return None
    if owner and owner != os.getpid() and _pid_alive(owner):
        return int(owner)
    return None


def restore_stale() -> list[str]:
    """Undo what a previous real replay left behind (it was killed before it could)."""
    log: list[str] = []
    try:
        state = json.loads(_read(STATE_FILE))
    except (OSError, ValueError):
        state = None
    if state is not None:
        owner = state.get("pid")
        if owner and owner != os.getpid() and _pid_alive(owner):
            return log  # another replay is running; leave it alone
        _undo(state, log)
        try:
            os.unlink(STATE_FILE)
        except OSError:
            pass
    return log


def machine_is_clean() -> tuple[bool, list[str]]:
    """No swap of ours on, zram0 reset, no mobmem cgroup, no state file (used by the tests)."""
    why: list[str] = []
    for s in _proc_swaps():
        if "zram0" in s or "mobmem" in s:
            why.append(f"swap on: {s}")
    try:
        if int(_read(os.path.join(ZRAM, "disksize")).strip() or 0) != 0:
            why.append("zram0 disksize is not 0")
    except OSError:
        pass
    info = find_memory_cgroup()
    if info is not None:
        for name in os.listdir(info.root):
            if name.startswith(CG_PREFIX):
                why.append(f"cgroup left: {name}")
    if os.path.exists(STATE_FILE):
        why.append(f"state file left: {STATE_FILE}")
    for name in os.listdir(WORK_PARENT) if os.path.isdir(WORK_PARENT) else []:
        if name.startswith(CG_PREFIX):
            why.append(f"work dir left: {os.path.join(WORK_PARENT, name)}")
    return (not why, why)


# ----------------------------------------------------------------------------------------
# the replay
# ----------------------------------------------------------------------------------------
@dataclass
class RealOptions:
    comp_algorithm: str = "lz4"  # what Android uses
    swappiness: int | None = None  # None: leave the machine's value (recorded)
    page_cluster: int | None = 0  # Android's and the model's default: no swap readahead
    time_scale: float = 1.0  # real seconds slept per trace second of ticks
    file_advice: str = "normal"  # "random": MADV_RANDOM on file mappings (no read-around)
    inject_error_after_setup: bool = False  # tests: raise once the machine is set up
    inject_signal_after_setup: int | None = None  # tests: send ourselves this signal then
    _notes: list = field(default_factory=list)  # filled during a run


@dataclass
class _Child:
    proc_index: int
    pid_trace: int
    name: str
    popen: subprocess.Popen
    pid: int = 0
    alive: bool = True  # not exited / killed
    started: bool = False  # its 'proc' event happened
    base_stat: tuple[int, int] = (0, 0)
    base_status: dict = field(default_factory=dict)
    final: dict = field(default_factory=dict)


def _proc_faults(pid: int) -> tuple[int, int]:
    s = _read(f"/proc/{pid}/stat")
    rest = s[s.rindex(")") + 2 :].split()
    # fields after comm: state(3) ppid pgrp session tty tpgid flags minflt(10) cminflt majflt(12)
    return int(rest[7]), int(rest[9])


def _proc_status(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for ln in _read(f"/proc/{pid}/status").splitlines():
        k, _, v = ln.partition(":")
        if k in ("VmRSS", "RssAnon", "RssFile", "RssShmem", "VmSwap"):
            out[k] = int(v.split()[0])  # kB
    return out


def _preflight(trace) -> tuple[CgroupInfo, list[str]]:
    if sys.platform != "linux":
        raise Skipped(f"not Linux ({sys.platform})")
    if os.geteuid() != 0:
        raise Skipped("needs root (cgroups, swapon, zram)")
    info = find_memory_cgroup()
    if info is None:
        raise Skipped("no memory cgroup controller (neither a cgroup v1 'memory' hierarchy nor cgroup2 with memory)")
    notes: list[str] = []
    if trace.swap_kind == "zram":
        if not os.path.isdir(ZRAM):
            raise Skipped("no /dev/zram0 (zram module not loaded)")
        if "/dev/zram0" in _proc_swaps():
            raise Skipped("/dev/zram0 is in use as swap by someone else")
        if int(_read(os.path.join(ZRAM, "disksize")).strip() or 0) != 0:
            raise Skipped("/dev/zram0 is initialised (disksize != 0): in use by someone else")
    if trace.swap_kind in ("zram", "file"):
        if not os.path.exists("/proc/swaps"):
            raise Skipped("kernel without swap support")
    others = _proc_swaps()
    if others:
        notes.append(f"other swap devices were on: {others}")
    return info, notes


def run_real(trace_path: str, opts: RealOptions | None = None, trace=None) -> dict:
    """Replay ``trace_path`` on this machine; return the real measurements (a dict).

    Raises :class:`Skipped` when the machine cannot do it, :class:`MobmemError` when the
    trace cannot be executed (the machine is restored first), and ``KeyboardInterrupt`` /
    ``_Interrupted`` on a signal (after restoring).
    """
    from mobmem.kernel import trace as tr

    opts = opts or RealOptions()
    if trace is None:
        trace = tr.parse_trace(trace_path)
    owner = _running_owner()
    if owner is not None:
        raise Skipped(f"another real replay is running (pid {owner})")
    restore_stale()
    info, notes = _preflight(trace)
    if trace.swap_kind == "zram":
        algs = _read(os.path.join(ZRAM, "comp_algorithm")).replace("[", " ").replace("]", " ").split()
        if opts.comp_algorithm not in algs:
            raise Skipped(f"zram has no {opts.comp_algorithm} (has {', '.join(algs)})")

    state: dict[str, Any] = {"pid": os.getpid(), "children": [], "sysctl_orig": {}}
    log: list[str] = []
    children: list[_Child] = []
    env: dict[str, Any] = {}
    old_handlers: dict = {}
    cleaning = False
    late_signal: list[int] = []
    t_start = time.monotonic()

    def on_signal(signum, frame):
        if cleaning:  # restoring: finish that first, report the signal afterwards
            late_signal.append(signum)
            return
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise _Interrupted(signum)

    if _in_main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            old_handlers[sig] = signal.signal(sig, on_signal)
    try:
        _save_state(state)
        return _setup_and_replay(trace, trace_path, opts, info, notes, state, children, env)
    finally:
        cleaning = True  # from here on a signal cannot cut the restoration short
        try:
            for c in children:
                if c.popen.poll() is None:
                    try:
                        c.popen.kill()
                    except ProcessLookupError:
                        pass
                try:
                    c.popen.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
                for fobj in (c.popen.stdin, c.popen.stdout):
                    try:
                        if fobj:
                            fobj.close()
                    except OSError:
                        pass
            problems = _undo(state, log)
            if not problems:
                try:
                    os.unlink(STATE_FILE)
                except OSError:
                    pass
            else:  # keep the state file: the next run retries
                print(f"warning: machine not fully restored: {'; '.join(problems)}", file=sys.stderr)
            env["restore_seconds"] = round(time.monotonic() - t_start - env.get("run_seconds", 0), 3)
        finally:
            for sig, h in old_handlers.items():
                signal.signal(sig, h)
        if late_signal and sys.exc_info()[0] is None:
            if late_signal[0] == signal.SIGINT:
                raise KeyboardInterrupt
            raise _Interrupted(late_signal[0])


def _in_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _setup_and_replay(trace, trace_path, opts, info, notes, state, children, env) -> dict:
    t0 = time.monotonic()
    ratio = trace.zram_ratio if trace.zram_ratio is not None else DEFAULT_RATIO
    # -- work dir (files, swap file) on the root file system
    wd = os.path.join(WORK_PARENT, f"{CG_PREFIX}{os.getpid()}")
    os.makedirs(wd, exist_ok=True)
    state["workdir"] = wd
    _save_state(state)

    # -- sysctls
    if opts.page_cluster is not None:
        pc = "/proc/sys/vm/page-cluster"
        state["sysctl_orig"][pc] = _read(pc).strip()
        _save_state(state)
        _write(pc, opts.page_cluster)

    # -- files for the file mappings, content written, then evicted from the page cache
    file_paths: dict[str, str] = {}
    ns = _child_namespace()
    fbank = ns["make_bank"](FILE_RATIO, CONTENT_SEED + 1, BANK_PAGES, LZ4_OVERHEAD)
    for i, (fname, pages) in enumerate(trace.files.items()):
        path = os.path.join(wd, f"file{i}")
        file_paths[fname] = path
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            chunk = bytes(fbank)
            done = 0
            try:
                while done < pages:
                    n = min(pages - done, BANK_PAGES)
                    os.write(fd, chunk[: n * PAGE])
                    done += n
                os.fsync(fd)
            except OSError as e:
                raise MobmemError(f"{trace_path}: file '{fname}' of {pages} pages cannot be created: {e.strerror}") from None
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    cached_left = {f: _mincore_resident(p) for f, p in file_paths.items()}

    # -- cgroup
    if info.version == 2:  # the memory controller must be enabled for the root's children
        sub = os.path.join(info.root, "cgroup.subtree_control")
        if "memory" not in _read(sub).split():
            _write(sub, "+memory")
            state["v2_subtree_memory_enabled"] = sub
            _save_state(state)
    cg = os.path.join(info.root, f"{CG_PREFIX}{os.getpid()}")
    os.mkdir(cg)
    state["cgroup"] = cg
    _save_state(state)
    swappiness_used = None
    if info.version == 1:
        if trace.ram_mib is not None:
            _write(os.path.join(cg, "memory.limit_in_bytes"), trace.ram_mib << 20)
        if opts.swappiness is not None:
            _write(os.path.join(cg, "memory.swappiness"), opts.swappiness)
        swappiness_used = int(_read(os.path.join(cg, "memory.swappiness")).strip())
        if trace.swap_kind in (None, "none") and os.path.exists(os.path.join(cg, "memory.memsw.limit_in_bytes")) and trace.ram_mib is not None:
            _write(os.path.join(cg, "memory.memsw.limit_in_bytes"), trace.ram_mib << 20)
    else:
        if not os.path.exists(os.path.join(cg, "memory.max")):
            raise Skipped(f"cgroup2 at {info.root} does not delegate the memory controller to its children")
        if trace.ram_mib is not None:
            _write(os.path.join(cg, "memory.max"), trace.ram_mib << 20)
        if trace.swap_kind in (None, "none") and os.path.exists(os.path.join(cg, "memory.swap.max")):
            _write(os.path.join(cg, "memory.swap.max"), 0)
        sw = "/proc/sys/vm/swappiness"
        if opts.swappiness is not None:
            state["sysctl_orig"][sw] = _read(sw).strip()
            _save_state(state)
            _write(sw, opts.swappiness)
        swappiness_used = int(_read(sw).strip())

    # -- swap
    swap_desc: dict[str, Any] = {"kind": trace.swap_kind or "none"}
    if trace.swap_kind == "zram":
        state["zram_used"] = True
        state["zram_alg_orig"] = _current_alg()
        _save_state(state)
        _write(os.path.join(ZRAM, "reset"), 1)
        _write(os.path.join(ZRAM, "comp_algorithm"), opts.comp_algorithm)
        _write(os.path.join(ZRAM, "disksize"), trace.swap_mib << 20)
        fd = os.open("/dev/zram0", os.O_RDWR)
        try:
            _write_swap_header(fd, trace.swap_mib << 20)
        finally:
            os.close(fd)
        state["swap_path"] = "/dev/zram0"
        _save_state(state)
        _swapon("/dev/zram0")
        swap_desc.update(device="/dev/zram0", disksize_mib=trace.swap_mib, comp_algorithm=_current_alg(), priority=32767)
    elif trace.swap_kind == "file":
        path = os.path.join(wd, "swapfile")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            try:
                os.posix_fallocate(fd, 0, trace.swap_mib << 20)
            except OSError as e:
                raise MobmemError(f"{trace_path}: swap file of {trace.swap_mib} MiB cannot be created: {e.strerror}") from None
            _write_swap_header(fd, trace.swap_mib << 20)
        finally:
            os.close(fd)
        state["swap_path"] = path
        _save_state(state)
        _swapon(path)
        swap_desc.update(path=path, size_mib=trace.swap_mib, priority=32767, filesystem=_fs_of(path))

    # -- children: started, ready (bank + buffers built), then moved into the cgroup
    cfg_base = {
        "bank_pages": BANK_PAGES,
        "ratio": float(ratio),
        "seed": CONTENT_SEED,
        "file_ratio": FILE_RATIO,
        "file_seed": CONTENT_SEED + 1,
        "overhead": LZ4_OVERHEAD,
        "max_batch": MAX_BATCH,
        "madv": MADV,
        "file_advice": {"normal": 0, "random": 1, "sequential": 2}[opts.file_advice],
    }
    vmas_of: dict[int, dict] = {}
    for v in trace.vmas:
        vmas_of.setdefault(v.proc, {})[v.index] = (v.kind, v.pages, file_paths.get(v.file or "", ""), v.exec)
    spawner = _Spawner(trace, trace_path, cfg_base, vmas_of, os.path.join(cg, "cgroup.procs"), state, children)
    spawner.ensure(SPAWN_AHEAD)

    if opts.inject_error_after_setup:
        raise RuntimeError("injected error after setup (test)")
    if opts.inject_signal_after_setup is not None:
        os.kill(os.getpid(), opts.inject_signal_after_setup)
        time.sleep(1.0)  # the handler raises here

    setup_s = time.monotonic() - t0
    # -- baselines
    vm0 = read_vmstat()
    mc0 = _kv(_read(os.path.join(cg, "memory.stat")))
    zr0 = read_mm_stat() if trace.swap_kind == "zram" else None
    oom0 = _oom_kills(cg, info.version)

    # -- the replay
    t1 = time.monotonic()
    zram_peak: dict[str, Any] = {}

    def sample_zram() -> None:
        if zr0 is None:
            return
        z = read_mm_stat()
        if z["orig_data_size"] >= zram_peak.get("orig_data_size", -1):
            zram_peak.clear()
            zram_peak.update(z)

    kills, slept = _drive(trace, trace_path, spawner, opts, before_exit=sample_zram, sample=sample_zram)
    sample_zram()
    replay_s = time.monotonic() - t1

    # -- measurements at the end of the trace (before remaining processes are torn down)
    vm1 = read_vmstat()
    mc1 = _kv(_read(os.path.join(cg, "memory.stat")))
    zr1 = read_mm_stat() if trace.swap_kind == "zram" else None
    oom1 = _oom_kills(cg, info.version)
    per_process = {}
    for c in children:
        if c.alive and c.started:
            c.final = _final_stats(c)
        if c.final:
            per_process[str(c.pid_trace)] = dict(c.final, name=c.name)
    usage = _cg_usage(cg, info.version)

    vm_delta = {k: vm1[k] - vm0.get(k, 0) for k in vm1 if not k.startswith("nr_") and vm1[k] - vm0.get(k, 0) != 0}
    mc_delta = {k: mc1[k] - mc0.get(k, 0) for k in mc1}
    values, sources = canonical_counters(vm_delta, mc1, mc0, info.version)
    values["oom_kill"] = oom1 - oom0
    sources["oom_kill"] = "memcg"
    meminfo = _cg_meminfo(mc1, info.version, usage)
    zram = None
    if zr1 is not None:
        zram = {k: zr1[k] - (zr0 or {}).get(k, 0) for k in ("orig_data_size", "compr_data_size", "mem_used_total", "same_pages", "huge_pages")}
        zram["mem_used_max"] = zr1["mem_used_max"]
        zram["ratio"] = round(zram["orig_data_size"] / zram["compr_data_size"], 3) if zram["compr_data_size"] > 0 else None
        zram["stored_pages"] = zram["orig_data_size"] // PAGE
        # the fullest moment seen (sampled every 10 ms of replay, before every exit and at the end)
        pk = {k: zram_peak[k] - (zr0 or {}).get(k, 0) for k in ("orig_data_size", "compr_data_size", "mem_used_total", "same_pages", "huge_pages")}
        pk["ratio"] = round(pk["orig_data_size"] / pk["compr_data_size"], 3) if pk["compr_data_size"] > 0 else None
        pk["stored_pages"] = pk["orig_data_size"] // PAGE
        zram["peak"] = pk
    env.update(
        {
            "kernel": platform.release(),
            "cpus": os.cpu_count(),
            "cgroup_version": info.version,
            "cgroup": cg,
            "memory_limit_mib": trace.ram_mib,
            "reclaim_path": "memcg limit reclaim (try_to_free_mem_cgroup_pages, run by the faulting task): no kswapd, no watermarks"
            if trace.ram_mib
            else "none (no ram limit: no reclaim expected)",
            "zram_pool_charged_to_cgroup": False,
            "lru": "multi-gen LRU" if _mglru_enabled() else "classic active/inactive two-list LRU (no MGLRU)",
            "swappiness": swappiness_used,
            "page_cluster": int(_read("/proc/sys/vm/page-cluster").strip()),
            "file_read_ahead_kb": _read_ahead_kb(wd if os.path.isdir(wd) else WORK_PARENT),
            "fault_around_bytes": _fault_around_bytes(),
            "thp": _bracketed("/sys/kernel/mm/transparent_hugepage/enabled"),
            "zswap": _read("/sys/module/zswap/parameters/enabled").strip() if os.path.exists("/sys/module/zswap/parameters/enabled") else "absent",
            "swap": swap_desc,
            "content": content_description(ratio),
            "files_left_in_page_cache_after_evict": cached_left,
            "time_scale": opts.time_scale,
            "file_advice": opts.file_advice,
            "tick_seconds_slept": round(slept, 3),
            "setup_seconds": round(setup_s, 3),
            "replay_seconds": round(replay_s, 3),
            "run_seconds": round(time.monotonic() - t0, 3),
            "processes": len(trace.procs),
            "touched_pages": trace.n_touch_pages,
            "counter_notes": {
                "memcg": "the cgroup's memory.stat: only the replay's processes",
                "vmstat": "global /proc/vmstat delta: includes other activity on the machine during the replay",
                "pgscan_direct/pgsteal_direct (v1)": "memory cgroup limit reclaim is counted in the global pgscan_anon/pgscan_file (and pgsteal_*) but not in the global pgscan_direct/pgsteal_direct (those go to the memcg, which cgroup v1 does not show): derived as pgscan_anon + pgscan_file - pgscan_kswapd - pgscan_direct - pgscan_khugepaged - pgscan_proactive (+ the global pgscan_direct)",
                "allocstall": "counts only global direct reclaim: memcg limit reclaim leaves it at 0",
                "pgrefill": "the global counter leaves out memcg limit reclaim (counted only in the memcg, not shown by cgroup v1): 0 here; pgdeactivate is counted globally",
                "pgpgin/pgpgout": "global vmstat: KiB read from / written to block devices (zram included)",
            },
            "notes": notes
            + opts._notes
            + [
                "counters from /proc/vmstat are global: activity of other processes on the machine during the replay is included",
                "a read touch of a never-written anonymous page maps the shared zero page (no memory used); the first write then faults again",
                "file faults map up to 16 neighbouring page-cache pages (fault-around) and major file faults read ahead (read-around) unless the kernel is configured otherwise",
                "page tables and other kernel memory of the children are charged to the cgroup",
            ],
        }
    )
    return {
        "trace": trace_path,
        "vmstat": values,
        "sources": sources,
        "vmstat_global": vm_delta,
        "memcg": {"delta": {k: v for k, v in mc_delta.items() if not k.startswith(("total_", "hierarchical_"))}, "end": mc1},
        "meminfo": meminfo,
        "zram": zram,
        "kills": kills,
        "per_process": per_process,
        "environment": env,
    }


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


def _oom_kills(cg: str, version: int) -> int:
    try:
        if version == 1:
            return _kv(_read(os.path.join(cg, "memory.oom_control"))).get("oom_kill", 0)
        return _kv(_read(os.path.join(cg, "memory.events"))).get("oom_kill", 0)
    except OSError:
        return 0


def _cg_usage(cg: str, version: int) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        if version == 1:
            out["usage_bytes"] = int(_read(os.path.join(cg, "memory.usage_in_bytes")))
            out["max_usage_bytes"] = int(_read(os.path.join(cg, "memory.max_usage_in_bytes")))
            ms = os.path.join(cg, "memory.memsw.usage_in_bytes")
            if os.path.exists(ms):
                out["swap_bytes"] = int(_read(ms)) - out["usage_bytes"]
        else:
            out["usage_bytes"] = int(_read(os.path.join(cg, "memory.current")))
            if os.path.exists(os.path.join(cg, "memory.peak")):
                out["max_usage_bytes"] = int(_read(os.path.join(cg, "memory.peak")))
            if os.path.exists(os.path.join(cg, "memory.swap.current")):
                out["swap_bytes"] = int(_read(os.path.join(cg, "memory.swap.current")))
    except (OSError, ValueError):
        pass
    return out


def _cg_meminfo(mc: dict[str, int], version: int, usage: dict[str, int]) -> dict[str, int]:
    """A meminfo-like snapshot of the cgroup, in kB like /proc/meminfo."""
    kb = lambda b: int(b) // 1024  # noqa: E731
    if version == 1:
        names = {
            "Active(anon)": "active_anon",
            "Inactive(anon)": "inactive_anon",
            "Active(file)": "active_file",
            "Inactive(file)": "inactive_file",
            "Unevictable": "unevictable",
            "Shmem": "shmem",
            "Mapped": "mapped_file",
            "Cached": "cache",
            "AnonPages": "rss",
            "SwapCached": "swapcached",
            "Dirty": "dirty",
        }
    else:
        names = {
            "Active(anon)": "active_anon",
            "Inactive(anon)": "inactive_anon",
            "Active(file)": "active_file",
            "Inactive(file)": "inactive_file",
            "Unevictable": "unevictable",
            "Shmem": "shmem",
            "Mapped": "file_mapped",
            "Cached": "file",
            "AnonPages": "anon",
            "SwapCached": "swapcached",
            "Dirty": "file_dirty",
        }
    out = {k: kb(mc[v]) for k, v in names.items() if v in mc}
    if "usage_bytes" in usage:
        out["MemUsed"] = kb(usage["usage_bytes"])
    if "max_usage_bytes" in usage:
        out["MemUsedMax"] = kb(usage["max_usage_bytes"])
    if "swap_bytes" in usage:
        out["SwapUsed"] = kb(usage["swap_bytes"])
    return out


def canonical_counters(vm: dict[str, int], mc1: dict[str, int], mc0: dict[str, int], version: int) -> tuple[dict[str, int], dict[str, str]]:
    """Pick each canonical counter from the cgroup where it has it, else global vmstat."""
    values: dict[str, int] = {}
    sources: dict[str, str] = {}
    same = _MEMCG_V1_SAME if version == 1 else _MEMCG_V2_SAME
    for name in COUNTERS:
        if name in same and name in mc1:
            values[name] = mc1[name] - mc0.get(name, 0)
            sources[name] = "memcg"
        elif name == "allocstall":
            values[name] = sum(v for k, v in vm.items() if k.startswith("allocstall_"))
            sources[name] = "vmstat: sum of allocstall_*"
        elif name in ("workingset_activate", "workingset_restore"):
            continue  # summed below
        elif name == "oom_kill":
            continue
        else:
            values[name] = vm.get(name, 0)
            sources[name] = "vmstat"
    if version == 1:
        # memcg limit reclaim counts its scans only in pgscan_{anon,file} globally; its
        # pgscan_direct/pgsteal_direct live in the memcg, which v1 does not show.
        for kind in ("pgscan", "pgsteal"):
            total = vm.get(f"{kind}_anon", 0) + vm.get(f"{kind}_file", 0)
            others = sum(vm.get(f"{kind}_{r}", 0) for r in ("kswapd", "direct", "khugepaged", "proactive"))
            values[f"{kind}_direct"] = values.get(f"{kind}_direct", 0) + max(0, total - others)
            sources[f"{kind}_direct"] = f"vmstat: {kind}_anon+{kind}_file-{kind}_kswapd-…"
    for name in ("workingset_activate", "workingset_restore"):
        values[name] = values.get(f"{name}_anon", 0) + values.get(f"{name}_file", 0)
        sources[name] = "_anon + _file"
    return values, sources


def _recv(c: _Child) -> tuple[bytes | None, bytes]:
    out = c.popen.stdout
    hdr = out.read(5)
    if len(hdr) < 5:
        return None, b""
    kind, n = struct.unpack("<cI", hdr)
    payload = out.read(n) if n else b""
    return kind, payload


def _final_stats(c: _Child) -> dict:
    try:
        minflt, majflt = _proc_faults(c.pid)
        st = _proc_status(c.pid)
    except (OSError, ValueError):
        return {}
    return {
        "pgfault": minflt + majflt - c.base_stat[0] - c.base_stat[1],
        "pgmajfault": majflt - c.base_stat[1],
        "rss_kb": st.get("VmRSS", 0),
        "rss_anon_kb": st.get("RssAnon", 0),
        "rss_file_kb": st.get("RssFile", 0),
        "swap_kb": st.get("VmSwap", 0),
        "interpreter_rss_kb": c.base_status.get("VmRSS", 0),
        "note": "faults counted from the move into the cgroup; rss_kb includes the child interpreter (interpreter_rss_kb, charged outside the cgroup)",
    }


class _Spawner:
    """Starts the children a little ahead of their ``proc`` events (at most ``SPAWN_AHEAD``
    idle ones), and moves each into the cgroup when its ``proc`` event comes."""

    def __init__(self, trace, trace_path, cfg_base, vmas_of, procs_file, state, children):
        self.trace, self.trace_path, self.cfg_base = trace, trace_path, cfg_base
        self.vmas_of, self.procs_file, self.state, self.children = vmas_of, procs_file, state, children
        self.by_index: dict[int, _Child] = {}
        self.next = 0  # next proc index to spawn

    def ensure(self, upto: int) -> None:
        while self.next < min(upto, len(self.trace.procs)):
            p = self.trace.procs[self.next]
            popen = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _CHILD_SRC],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                start_new_session=True,
                close_fds=True,
            )
            self.state["children"].append(popen.pid)
            _save_state(self.state)
            c = _Child(p.index, p.pid, p.name, popen, pid=popen.pid)
            self.children.append(c)
            self.by_index[p.index] = c
            payload = repr(dict(self.cfg_base, vmas=self.vmas_of.get(p.index, {}))).encode()
            popen.stdin.write(struct.pack("<cI", b"C", len(payload)) + payload)
            popen.stdin.flush()
            self.next += 1

    def activate(self, index: int) -> _Child:
        self.ensure(index + 1 + SPAWN_AHEAD)
        c = self.by_index[index]
        kind, _ = _recv(c)
        if kind != b"R":
            raise MobmemError(f"{self.trace_path}: real replay: the process for pid {c.pid_trace} failed to start")
        _write(self.procs_file, c.pid)  # into the cgroup only now: the interpreter stays charged outside
        c.base_stat = _proc_faults(c.pid)
        c.base_status = _proc_status(c.pid)
        c.started = True
        return c


def _drive(trace, trace_path, spawner: "_Spawner", opts: RealOptions, before_exit=None, sample=None) -> tuple[list[dict], float]:
    """Execute the op list in order. Returns (kills, seconds slept).

    ``before_exit`` is called before every exit, ``sample`` after child batches (at most every
    10 ms): both read the zram state to find its fullest moment.
    """
    last_sample = [0.0]
    import numpy as np

    from mobmem.kernel import trace as tr

    n = len(trace)
    op, flag, procc, vma, a, b, line = trace.op, trace.flag, trace.proc, trace.vma, trace.a, trace.b, trace.line
    packed = np.zeros(n, dtype=np.dtype([("op", "u1"), ("flag", "u1"), ("pad", "u2"), ("vma", "<i4"), ("a", "<i8"), ("b", "<i8")]))
    packed["op"], packed["flag"], packed["vma"], packed["a"], packed["b"] = op, flag, vma, a, b
    is_child = (op == tr.OP_MAP) | (op == tr.OP_TOUCH) | (op == tr.OP_MADVISE)
    # run boundaries: a new run where the op is not a child op, or the process changes
    brk = np.ones(n, dtype=bool)
    if n > 1:
        brk[1:] = ~is_child[1:] | ~is_child[:-1] | (procc[1:] != procc[:-1])
    starts = np.flatnonzero(brk)
    ends = np.append(starts[1:], n)
    kills: list[dict] = []
    adj_clamped: dict[int, list[int]] = {}
    slept = 0.0
    adj_now: dict[int, int] = {}

    def set_adj(c: _Child, adj: int) -> None:
        try:
            _write(f"/proc/{c.pid}/oom_score_adj", adj)
        except OSError:
            # lowering oom_score_adj below 0 needs CAP_SYS_RESOURCE, which a container may lack
            _write(f"/proc/{c.pid}/oom_score_adj", max(0, adj))
            adj_clamped.setdefault(c.pid_trace, []).append(adj)

    def killed(c: _Child, i: int, j: int) -> None:
        """The child died while executing ops [i, j) (one batch): record where."""
        c.alive = False
        rc = c.popen.wait()
        kills.append(
            {
                "pid": c.pid_trace,
                "name": c.name,
                "adj": adj_now.get(c.proc_index, 0),
                "reason": f"killed by signal {-rc}" + (" (memcg OOM killer)" if rc == -signal.SIGKILL else "") if rc < 0 else f"exited with {rc}",
                "line": int(line[i]),  # first line of the batch it was executing
                "line_end": int(line[j - 1]),
            }
        )

    def reap(i: int, j: int) -> None:
        """Notice children killed while another one ran ops [i, j) (the OOM killer's victim
        need not be the allocating process)."""
        for other in spawner.children:
            if other.alive and other.started and other.popen.poll() is not None:
                killed(other, i, j)

    for s, e in zip(starts.tolist(), ends.tolist()):
        o = int(op[s])
        if o == tr.OP_TICK:
            dt = int(a[s]) / 1e6 * opts.time_scale
            if dt > 0:
                time.sleep(dt)
                slept += dt
            continue
        if o == tr.OP_PROC:
            c = spawner.activate(int(procc[s]))
        else:
            c = spawner.by_index[int(procc[s])]
        if not c.alive:
            continue  # killed earlier: its remaining events are skipped
        if o == tr.OP_PROC or o == tr.OP_ADJ:
            adj_now[c.proc_index] = int(a[s])
            set_adj(c, int(a[s]))
            continue
        if o == tr.OP_EXIT:
            if c.popen.poll() is not None:  # died before its exit: not an exit
                killed(c, s, s + 1)
                continue
            if before_exit is not None:
                before_exit()
            c.final = _final_stats(c)
            try:
                c.popen.stdin.write(struct.pack("<cI", b"Q", 0))
                c.popen.stdin.flush()
            except BrokenPipeError:
                pass
            c.popen.wait()
            c.alive = False
            continue
        # a run of map/touch/madvise of one process, in chunks of MAX_BATCH ops
        for cs in range(s, e, MAX_BATCH):
            ce = min(e, cs + MAX_BATCH)
            data = packed[cs:ce].tobytes()
            try:
                c.popen.stdin.write(struct.pack("<cI", b"B", len(data)) + data)
                c.popen.stdin.flush()
            except BrokenPipeError:
                killed(c, cs, ce)
                break
            kind, payload = _recv(c)
            if kind is None:
                killed(c, cs, ce)
                reap(cs, ce)
                break
            reap(cs, ce)
            if sample is not None:
                now = time.monotonic()
                if now - last_sample[0] >= 0.01:
                    last_sample[0] = now
                    sample()
            if kind == b"E":
                idx_s, _, msg = payload.decode(errors="replace").partition("\t")
                k = cs + max(0, int(idx_s))
                raise MobmemError(f"{trace_path}:{int(line[k])}: {_describe(trace, k)} failed on the real kernel: {msg}")
    if adj_clamped:
        opts._notes.append(
            "negative oom_score_adj could not be set (no CAP_SYS_RESOURCE): 0 was used instead for pids "
            + ", ".join(f"{p} (asked {sorted(set(v))})" for p, v in adj_clamped.items())
        )
    return kills, slept


def _describe(trace, k: int) -> str:
    from mobmem.kernel import trace as tr

    o = int(trace.op[k])
    v = trace.vmas[int(trace.vma[k])] if trace.vma[k] >= 0 else None
    if o == tr.OP_MAP and v is not None:
        what = f"mmap of {v.pages} pages ({v.pages * PAGE / 2**20:.1f} MiB)"
        return f"map '{v.name}': {what}" + (f" of file '{v.file}'" if v.file else "")
    if o == tr.OP_TOUCH and v is not None:
        return f"touch of '{v.name}' pages [{int(trace.a[k])}, {int(trace.a[k] + trace.b[k])})"
    if o == tr.OP_MADVISE and v is not None:
        return f"madvise({tr.ADVICE_NAMES[int(trace.flag[k])]}) of '{v.name}' pages [{int(trace.a[k])}, {int(trace.a[k] + trace.b[k])})"
    return tr.OP_NAMES[o]


# ----------------------------------------------------------------------------------------
# comparison and printing
# ----------------------------------------------------------------------------------------
def diff_pct(model: dict | None, real: dict) -> dict[str, float | None]:
    """(model − real) / real × 100 per counter both have; 0 when both are 0, None when real is 0."""
    out: dict[str, float | None] = {}
    if not model:
        return out
    mv = model.get("vmstat", model)
    for k, r in real.items():
        if k not in mv or not isinstance(mv[k], (int, float)):
            continue
        m = mv[k]
        if r == 0:
            out[k] = 0.0 if m == 0 else None
        else:
            out[k] = round((m - r) / r * 100.0, 2)
    return out


def build_report(real: dict, model: dict | None) -> dict:
    env = dict(real["environment"])
    env["zram"] = real.get("zram")
    env["counter_sources"] = real.get("sources")
    return {
        "real": {
            "vmstat": real["vmstat"],
            "vmstat_global": real["vmstat_global"],
            "memcg": real["memcg"],
            "meminfo": real["meminfo"],
            "zram": real["zram"],
            "kills": real["kills"],
            "per_process": real["per_process"],
        },
        "model": model,
        "diff_pct": diff_pct(model, real["vmstat"]),
        "environment": env,
    }


def _print_table(report: dict, trace_path: str) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    real = report["real"]["vmstat"]
    model = (report.get("model") or {}).get("vmstat", {}) if report.get("model") else {}
    diffs = report["diff_pct"]
    sources = report["environment"].get("counter_sources", {})
    env = report["environment"]
    t = Table(title=f"real kernel vs model: {trace_path}")
    t.add_column("counter")
    t.add_column("model", justify="right")
    t.add_column("real", justify="right")
    t.add_column("diff %", justify="right")
    t.add_column("real source", style="dim")
    names = list(real) + [k for k in model if k not in real]
    for k in names:
        m = model.get(k)
        r = real.get(k)
        d = diffs.get(k)
        t.add_row(
            k,
            "—" if m is None else f"{m:,}" if isinstance(m, int) else str(m),
            "—" if r is None else f"{r:,}",
            "—" if k not in diffs else ("n/a" if d is None else f"{d:+.1f}"),
            sources.get(k, ""),
        )
    console.print(t)
    z = report["real"].get("zram")
    if z:
        pk = z.get("peak") or z
        console.print(
            f"zram ({env['swap'].get('comp_algorithm')}) at its fullest: stored {pk['stored_pages']} pages, "
            f"orig {pk['orig_data_size']:,} B, compressed {pk['compr_data_size']:,} B (ratio {pk['ratio']}), "
            f"pool {pk['mem_used_total']:,} B, same-filled {pk['same_pages']}; at the end: {z['stored_pages']} pages"
        )
    mi = report["real"]["meminfo"]
    console.print("cgroup meminfo (kB): " + ", ".join(f"{k} {v:,}" for k, v in mi.items()))
    if report["real"]["kills"]:
        for k in report["real"]["kills"]:
            console.print(f"kill: pid {k['pid']} {k['name']} adj {k['adj']}: {k['reason']} (lines {k['line']}-{k['line_end']})")
    console.print(
        f"[dim]cgroup v{env['cgroup_version']}, {env['reclaim_path']}; {env['lru']}; swappiness {env['swappiness']}, "
        f"page-cluster {env['page_cluster']}; replay {env['replay_seconds']} s (ticks slept {env['tick_seconds_slept']} s)[/dim]"
    )


def replay_real(trace_path: str, as_json: bool = False, model: dict | None = None, *, options: RealOptions | None = None) -> int:
    """``mobmem kernel replay --real``: run, print (table or one JSON object), return the exit code.

    Prints ``skipped: <why>`` and returns 0 where the machine cannot do it; bad input or a
    trace the kernel refuses raises :class:`MobmemError` (exit 2) after restoring.
    """
    from mobmem.kernel import trace as tr

    trace = tr.parse_trace(trace_path)  # bad input: MobmemError before touching the machine
    try:
        real = run_real(str(trace_path), options, trace=trace)
    except Skipped as e:
        print(f"skipped: {e}")
        return 0
    except _Interrupted as e:
        print(f"interrupted ({e}); machine restored", file=sys.stderr)
        return 128 + e.signum
    except KeyboardInterrupt:
        print("interrupted (SIGINT); machine restored", file=sys.stderr)
        return 130
    report = build_report(real, model)
    if as_json:
        print(json.dumps(report, indent=2, sort_keys=False, default=_json_default))
    else:
        _print_table(report, str(trace_path))
    return 0


def _json_default(o):
    try:
        import numpy as np

        if isinstance(o, np.integer):
            return int(o)
        if isinstance(o, np.floating):
            return float(o)
    except ImportError:  # pragma: no cover
        pass
    if isinstance(o, float) and not math.isfinite(o):
        return None
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
