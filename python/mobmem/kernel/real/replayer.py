"""The real replayer: preflight checks, the setup (cgroup, swap, files, sysctls), child processes fed the trace's ops in order, and the measurement."""

from __future__ import annotations

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
from mobmem.kernel.real.cgroup import CG_PREFIX, CgroupInfo, _cg_meminfo, _cg_usage, _oom_kills, find_memory_cgroup
from mobmem.kernel.real.content import (
    _CHILD_SRC,
    BANK_PAGES,
    CONTENT_SEED,
    DEFAULT_RATIO,
    FILE_RATIO,
    LZ4_OVERHEAD,
    PAGE,
    _child_namespace,
    content_description,
)
from mobmem.kernel.real.counters import canonical_counters
from mobmem.kernel.real.host import (
    WORK_PARENT,
    ZRAM,
    Skipped,
    _bracketed,
    _current_alg,
    _fault_around_bytes,
    _fs_of,
    _kv,
    _mglru_enabled,
    _mincore_resident,
    _proc_swaps,
    _read,
    _read_ahead_kb,
    _swapon,
    _write,
    _write_swap_header,
    read_mm_stat,
    read_vmstat,
)
from mobmem.kernel.real.restore import STATE_DIR, STATE_FILE, _running_owner, _save_state, _undo, restore_stale

MAX_BATCH = 4096  # ops per message to a child (its receive buffer is preallocated)


SPAWN_AHEAD = 8  # children started ahead of their 'proc' event


OP_STRUCT = "<BBxxiqq"  # op, flag, vma, a, b  (24 bytes)


#: madvise(2) advice numbers of the Linux uapi (include/uapi/asm-generic/mman-common.h) by the
#: trace's advice name.
MADV_NUMBER = {"dontneed": 4, "cold": 20, "pageout": 21, "willneed": 3}


def madv_codes() -> dict[int, int]:
    """Trace advice code → MADV_* number, for every advice the trace language has."""
    from mobmem.kernel import trace as tr

    missing = sorted(set(tr.ADVICE_NAMES.values()) - set(MADV_NUMBER))
    if missing:
        raise MobmemError(f"madvise advice without a Linux number in the real replayer: {', '.join(missing)}")
    return {code: MADV_NUMBER[name] for code, name in tr.ADVICE_NAMES.items()}


class _Interrupted(BaseException):
    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


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

    Raises :class:`Skipped` when the machine cannot do it (also while another real replay runs:
    swap, zram and sysctls are machine-wide, so replays take a machine-wide lock),
    :class:`MobmemError` when the trace cannot be executed (the machine is restored first), and
    ``KeyboardInterrupt`` / ``_Interrupted`` on a signal (after restoring).
    """
    import fcntl

    try:
        os.makedirs(STATE_DIR, exist_ok=True)
        lock = open(os.path.join(STATE_DIR, "real.lock"), "a")
    except OSError as e:
        raise Skipped(f"cannot take the real-replay lock in {STATE_DIR}: {e.strerror or e}") from None
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            owner = _running_owner()
            raise Skipped("another real replay is running" + (f" (pid {owner})" if owner else "")) from None
        return _run_real_locked(trace_path, opts, trace)


def _run_real_locked(trace_path: str, opts: RealOptions | None, trace) -> dict:
    from mobmem.kernel import trace as tr

    opts = opts or RealOptions()
    if trace is None:
        trace = tr.parse_trace(trace_path)
    hints = (trace.op == tr.OP_HINT).nonzero()[0]
    if len(hints):
        k = int(hints[0])
        raise MobmemError(
            f"{trace.path}:{int(trace.line[k])}: madvise hint:{trace.hints[int(trace.flag[k])]} is a hint to the model; the real kernel has no such advice"
        )
    restore_stale()  # what a replay killed earlier left (a live one holds the lock taken above)
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
        "madv": madv_codes(),
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
            if c.popen.wait() < 0:
                # Killed before it could exit: an OOM victim whose SIGKILL was still being
                # delivered when the allocating process died (a busy host frees the victim's
                # memory slowly), so the reap after that batch did not see it yet.
                c.final = {}
                killed(c, s, s + 1)
                continue
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
