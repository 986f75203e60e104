"""Deterministic generators of "mobmem page trace v1" traces for the validation and benchmarks.

Every generator takes a path and keyword parameters, draws all randomness from one seeded
``numpy.random.Generator`` (same parameters and seed → byte-identical file), writes the trace
and returns a summary dict (path, lines, touched pages, …).

Shapes:

* :func:`seq_scan` — one process scanning a mapping larger than RAM, front to back, several
  passes: a file (page cache only, no swap needed) or anonymous memory (written on the first
  pass, read afterwards; needs swap).
* :func:`zipf_hot` — one process with an anonymous working set larger than RAM under zram,
  touched with Zipf-distributed popularity (hot pages scattered over the mapping).
* :func:`app_switch` — a persistent system process plus several apps, each with an anonymous
  heap, executable code pages and resource file pages; the user switches between apps: the
  foreground app (adj 0) works on its pages in bursts separated by ticks, the previous one goes
  to adj 700 and the older ones to cached adjs (900 …), apps are launched on first use.
* :func:`bench_large` — ≥ 10 million page touches by several processes under memory pressure,
  for the benchmark (touches come in short runs so the file stays ~1.5 M lines).

Anonymous pages are always written before they are read (a real read of a never-written
anonymous page maps the shared zero page, which is not what a heap does).
"""

from __future__ import annotations

import os
from typing import Callable

import numpy as np

PAGES_PER_MIB = 256


class _Writer:
    def __init__(self, path: str | os.PathLike, title: str):
        self.path = os.fspath(path)
        d = os.path.dirname(self.path)
        if d:
            os.makedirs(d, exist_ok=True)
        # Streamed into a temporary renamed over the path by close(): an interrupted generation
        # leaves no half trace under the real name.
        from mobmem.files import atomic_file

        self._file = atomic_file(self.path)
        self.f = self._file.__enter__()
        self.buf: list[str] = []
        self.lines = 0
        self.touch_pages = 0
        self.touch_lines = 0
        self.write_pages = 0
        self.f.write("# mobmem page trace v1\n")
        for ln in title.strip().splitlines():
            self.f.write(f"# {ln}\n")

    def line(self, s: str) -> None:
        self.buf.append(s)
        self.lines += 1
        if len(self.buf) >= 100_000:
            self.flush()

    def touch(self, pid: int, vma: str, first: int, count: int = 1, mode: str = "r") -> None:
        if count == 1:
            self.line(f"touch {pid} {vma} {first} {mode}")
        else:
            self.line(f"touch {pid} {vma} {first} {count} {mode}")
        self.touch_pages += count
        self.touch_lines += 1
        if mode == "w":
            self.write_pages += count

    def touches(self, pid: int, vma: str, pages: np.ndarray, writes: np.ndarray | None = None, counts: np.ndarray | None = None) -> None:
        """Many touches at once (vectorised formatting)."""
        n = len(pages)
        if n == 0:
            return
        modes = np.where(writes, "w", "r") if writes is not None else np.full(n, "r")
        prefix = f"touch {pid} {vma} "
        if counts is None:
            out = [f"{prefix}{p} {m}" for p, m in zip(pages.tolist(), modes.tolist())]
            self.touch_pages += n
            if writes is not None:
                self.write_pages += int(np.count_nonzero(writes))
        else:
            out = [f"{prefix}{p} {m}" if c == 1 else f"{prefix}{p} {c} {m}" for p, c, m in zip(pages.tolist(), counts.tolist(), modes.tolist())]
            self.touch_pages += int(counts.sum())
            if writes is not None:
                self.write_pages += int(counts[writes].sum())
        self.touch_lines += n
        self.buf.extend(out)
        self.lines += n
        if len(self.buf) >= 100_000:
            self.flush()

    def flush(self) -> None:
        if self.buf:
            self.f.write("\n".join(self.buf))
            self.f.write("\n")
            self.buf.clear()

    def close(self, **extra) -> dict:
        self.flush()
        self._file.__exit__(None, None, None)
        return {
            "path": self.path,
            "lines": self.lines,
            "touch_lines": self.touch_lines,
            "touched_pages": self.touch_pages,
            "written_pages": self.write_pages,
            **extra,
        }


def _swap_line(swap: str, swap_mib: int, ratio: float | None) -> str:
    if swap == "none":
        return "swap none"
    if swap == "zram":
        return f"swap zram {swap_mib}" + (f" ratio={ratio}" if ratio is not None else "")
    if swap == "file":
        return f"swap file {swap_mib}"
    raise ValueError(f"swap must be zram, file or none, not {swap!r}")


def zipf_probabilities(n: int, alpha: float) -> np.ndarray:
    """p_k ∝ 1 / k^alpha for ranks k = 1..n (a bounded Zipf law; alpha may be ≤ 1)."""
    w = 1.0 / np.power(np.arange(1, n + 1, dtype=np.float64), alpha)
    return w / w.sum()


def _zipf_pages(rng: np.random.Generator, n_pages: int, alpha: float, size: int) -> np.ndarray:
    """``size`` page numbers in [0, n_pages) with Zipf popularity, hot pages scattered."""
    ranks = rng.choice(n_pages, size=size, p=zipf_probabilities(n_pages, alpha))
    perm = rng.permutation(n_pages)  # rank → page
    return perm[ranks].astype(np.int64)


# ------------------------------------------------------------------------------------------
# (1) sequential scan larger than RAM
# ------------------------------------------------------------------------------------------
def seq_scan(
    path,
    *,
    kind: str = "file",
    ram_mib: int = 64,
    size_mib: int = 96,
    passes: int = 3,
    chunk_pages: int = 32,
    swap: str | None = None,
    swap_mib: int | None = None,
    ratio: float | None = 3.0,
    tick_us: int = 0,
    seed: int = 1,
) -> dict:
    """One process scans a ``size_mib`` mapping (> ``ram_mib``) ``passes`` times, front to back.

    ``kind="file"``: a shared file mapping, read; default swap none. ``kind="anon"``: a private
    anonymous mapping, written on the first pass and read on the others; default swap zram of
    ``2 × size_mib``. Touches go ``chunk_pages`` pages a line. ``seed`` is unused (the shape is
    deterministic) but kept for a uniform signature.
    """
    if kind not in ("file", "anon"):
        raise ValueError("kind must be 'file' or 'anon'")
    if size_mib <= ram_mib:
        raise ValueError("a scan larger than RAM needs size_mib > ram_mib")
    swap = swap or ("none" if kind == "file" else "zram")
    swap_mib = swap_mib or (2 * size_mib if swap != "none" else 0)
    pages = size_mib * PAGES_PER_MIB
    w = _Writer(path, f"sequential {kind} scan: {size_mib} MiB, {passes} passes, ram {ram_mib} MiB")
    w.line(f"ram {ram_mib}")
    w.line(_swap_line(swap, swap_mib, ratio if swap == "zram" else None))
    w.line("proc 1 scanner adj=0")
    if kind == "file":
        w.line(f"map 1 data file scan.dat {pages}")
    else:
        w.line(f"map 1 data anon {pages}")
    starts = np.arange(0, pages, chunk_pages, dtype=np.int64)
    counts = np.minimum(chunk_pages, pages - starts)
    for p in range(passes):
        write = kind == "anon" and p == 0
        w.touches(1, "data", starts, np.full(len(starts), write), counts)
        if tick_us:
            w.line(f"tick {tick_us}")
    w.line("exit 1")
    return w.close(shape="seq-scan", kind=kind, ram_mib=ram_mib, size_mib=size_mib, passes=passes, swap=swap)


# ------------------------------------------------------------------------------------------
# (2) Zipf-hot anonymous working set under zram
# ------------------------------------------------------------------------------------------
def zipf_hot(
    path,
    *,
    ram_mib: int = 64,
    wss_mib: int = 96,
    touches: int = 500_000,
    alpha: float = 0.9,
    write_frac: float = 0.3,
    swap_mib: int | None = None,
    ratio: float | None = 3.0,
    tick_every: int = 0,
    tick_us: int = 1000,
    seed: int = 1,
) -> dict:
    """An anonymous working set of ``wss_mib`` (> ``ram_mib``) under zram swap.

    All pages are written once (in order), then ``touches`` single-page touches with Zipf
    (``alpha``) popularity over a random permutation of the pages, a ``write_frac`` of them
    writes. ``tick_every`` > 0 inserts ``tick <tick_us>`` every that many touches.
    """
    rng = np.random.default_rng(seed)
    pages = wss_mib * PAGES_PER_MIB
    swap_mib = swap_mib or 2 * wss_mib
    w = _Writer(path, f"Zipf(alpha={alpha}) hot anonymous working set: {wss_mib} MiB, ram {ram_mib} MiB, zram {swap_mib} MiB, {touches} touches, seed {seed}")
    w.line(f"ram {ram_mib}")
    w.line(_swap_line("zram", swap_mib, ratio))
    w.line("proc 1 app adj=0")
    w.line(f"map 1 heap anon {pages}")
    w.touch(1, "heap", 0, pages, "w")
    pg = _zipf_pages(rng, pages, alpha, touches)
    wr = rng.random(touches) < write_frac
    step = tick_every if tick_every > 0 else touches
    for s in range(0, touches, step):
        w.touches(1, "heap", pg[s : s + step], wr[s : s + step])
        if tick_every > 0:
            w.line(f"tick {tick_us}")
    w.line("exit 1")
    return w.close(shape="zipf-hot", ram_mib=ram_mib, wss_mib=wss_mib, alpha=alpha, swap_mib=swap_mib, seed=seed)


# ------------------------------------------------------------------------------------------
# (3) app switching with several processes
# ------------------------------------------------------------------------------------------
def app_switch(
    path,
    *,
    ram_mib: int = 256,
    swap: str = "zram",
    swap_mib: int = 512,
    ratio: float | None = 3.0,
    apps: int = 6,
    switches: int = 30,
    touches: int = 300_000,
    heap_mib: tuple[int, int] = (24, 64),
    code_mib: tuple[int, int] = (4, 12),
    res_mib: tuple[int, int] = (2, 8),
    alpha: float = 0.9,
    write_frac: float = 0.25,
    burst: int = 2000,
    burst_tick_us: int = 16_000,
    switch_tick_us: int = 200_000,
    system_mib: int = 24,
    pageout_cached: bool = False,
    seed: int = 1,
) -> dict:
    """A phone's app switching: a system process and ``apps`` apps, ``switches`` app switches.

    Each app has an anonymous heap (uniform in ``heap_mib``), an executable code file (``code_mib``)
    and a resource file (``res_mib``). An app is launched on first use (proc adj=0, maps, reads
    its code, writes its heap once). While in the foreground it does Zipf-popular touches over
    its heap (``write_frac`` writes), code and resources, in bursts of ``burst`` page touches
    followed by ``tick <burst_tick_us>``. On a switch the old foreground app goes to adj 700 and
    the others in the background age to 900, 910, … (cached); ``pageout_cached`` also sends
    ``madvise pageout`` over the heap of an app when it becomes cached (Android's
    CachedAppOptimizer). The ``touches`` budget is spread over the foreground periods; the
    total is a bit larger because of launches. The system process (adj -900) touches its own
    pages a little in every burst.
    """
    rng = np.random.default_rng(seed)
    w = _Writer(path, f"app switching: {apps} apps, {switches} switches, ~{touches} touches, ram {ram_mib} MiB, {swap} {swap_mib} MiB, seed {seed}")
    w.line(f"ram {ram_mib}")
    w.line(_swap_line(swap, swap_mib, ratio if swap == "zram" else None))
    # system process: persistent, touches a small hot set
    sys_pid = 1
    sys_heap = system_mib * PAGES_PER_MIB
    w.line(f"proc {sys_pid} system_server adj=-900")
    w.line(f"map {sys_pid} heap anon {sys_heap}")
    w.line(f"map {sys_pid} framework file framework.jar {8 * PAGES_PER_MIB} exec")
    w.touch(sys_pid, "framework", 0, 8 * PAGES_PER_MIB, "r")
    w.touch(sys_pid, "heap", 0, sys_heap, "w")
    names = ["launcher", "chat", "browser", "maps", "camera", "music", "mail", "game", "social", "video"]
    spec = []
    for i in range(apps):
        spec.append(
            {
                "pid": 100 + i,
                "name": names[i % len(names)] + ("" if i < len(names) else str(i)),
                "heap": int(rng.integers(heap_mib[0], heap_mib[1] + 1)) * PAGES_PER_MIB,
                "code": int(rng.integers(code_mib[0], code_mib[1] + 1)) * PAGES_PER_MIB,
                "res": int(rng.integers(res_mib[0], res_mib[1] + 1)) * PAGES_PER_MIB,
            }
        )
    # per-app popularity (fixed permutations): hot parts of heap/code/res
    perms = {}
    probs_cache: dict[int, np.ndarray] = {}

    def probs(n: int) -> np.ndarray:
        if n not in probs_cache:
            probs_cache[n] = zipf_probabilities(n, alpha)
        return probs_cache[n]

    for s in spec:
        perms[s["pid"]] = {k: rng.permutation(s[k]) for k in ("heap", "code", "res")}
    sys_perm = rng.permutation(sys_heap)
    running: list[int] = []  # most recent first (index 0 = foreground)
    launched: set[int] = set()
    # app sequence: Markov-ish: mostly recently used apps, sometimes a new one
    seq = []
    recent: list[int] = []
    for _ in range(switches + 1):
        if recent and rng.random() < 0.6:
            cand = recent[1:4] if len(recent) > 1 else recent
            nxt = int(cand[int(rng.integers(0, len(cand)))])
        else:
            nxt = int(rng.integers(0, apps))
        if seq and nxt == seq[-1]:
            nxt = (nxt + 1) % apps
        seq.append(nxt)
        if nxt in recent:
            recent.remove(nxt)
        recent.insert(0, nxt)
    per_period = max(burst, touches // len(seq))
    adj_of: dict[int, int] = {}

    def set_adj(pid: int, adj: int) -> None:
        if adj_of.get(pid) != adj:
            w.line(f"adj {pid} {adj}")
            adj_of[pid] = adj

    for ai in seq:
        s = spec[ai]
        pid = s["pid"]
        # background ranks
        if pid in running:
            running.remove(pid)
        prev = running[0] if running else None
        running.insert(0, pid)
        if prev is not None:
            set_adj(prev, 700)
        for rank, other in enumerate(running[2:]):
            new_adj = min(999, 900 + 10 * rank)
            was_cached = adj_of.get(other, 0) >= 900
            set_adj(other, new_adj)
            if pageout_cached and not was_cached:
                so = spec[other - 100]
                w.line(f"madvise {other} heap 0 {so['heap']} pageout")
        if pid not in launched:
            launched.add(pid)
            w.line(f"proc {pid} {s['name']} adj=0")
            adj_of[pid] = 0
            w.line(f"map {pid} heap anon {s['heap']}")
            w.line(f"map {pid} code file {s['name']}.odex {s['code']} exec")
            w.line(f"map {pid} res file {s['name']}.apk {s['res']}")
            # launch: read a third of the code, write the heap once, read some resources
            w.touch(pid, "code", 0, s["code"] // 3, "r")
            w.touch(pid, "heap", 0, s["heap"], "w")
            w.touch(pid, "res", 0, s["res"] // 4, "r")
        else:
            set_adj(pid, 0)
        # foreground bursts
        done = 0
        while done < per_period:
            n = min(burst, per_period - done)
            which = rng.random(n)
            n_heap = int(np.count_nonzero(which < 0.7))
            n_code = int(np.count_nonzero((which >= 0.7) & (which < 0.92)))
            n_res = n - n_heap - n_code
            hp = perms[pid]["heap"][rng.choice(s["heap"], size=n_heap, p=probs(s["heap"]))]
            cp = perms[pid]["code"][rng.choice(s["code"], size=n_code, p=probs(s["code"]))]
            rp = perms[pid]["res"][rng.choice(s["res"], size=n_res, p=probs(s["res"]))]
            # interleave: sort by a random key so the three streams are mixed in time
            order = np.argsort(rng.random(n), kind="stable")
            kinds = np.concatenate([np.zeros(n_heap, np.int8), np.ones(n_code, np.int8), np.full(n_res, 2, np.int8)])[order]
            pgs = np.concatenate([hp, cp, rp]).astype(np.int64)[order]
            wr = (rng.random(n) < write_frac) & (kinds == 0)
            # group consecutive same-kind touches into lines of one vma each
            vmas = np.array(["heap", "code", "res"])
            brk = np.flatnonzero(np.diff(kinds)) + 1
            for a, b in zip(np.concatenate(([0], brk)).tolist(), np.concatenate((brk, [n])).tolist()):
                w.touches(pid, str(vmas[kinds[a]]), pgs[a:b], wr[a:b])
            # the system process does a little work every burst
            sp = sys_perm[rng.choice(sys_heap, size=max(1, n // 20), p=probs(sys_heap))]
            w.touches(sys_pid, "heap", sp.astype(np.int64), rng.random(len(sp)) < 0.3)
            w.line(f"tick {burst_tick_us}")
            done += n
        w.line(f"tick {switch_tick_us}")
    return w.close(shape="app-switch", ram_mib=ram_mib, apps=apps, switches=switches, seed=seed, launched=len(launched))


# ------------------------------------------------------------------------------------------
# (4) large benchmark trace
# ------------------------------------------------------------------------------------------
def bench_large(
    path,
    *,
    touches: int = 10_000_000,
    ram_mib: int = 256,
    procs: int = 4,
    wss_mib: int = 384,
    swap_mib: int = 768,
    ratio: float | None = 3.0,
    alpha: float = 0.8,
    max_run: int = 16,
    write_frac: float = 0.2,
    switch_every: int = 50_000,
    tick_us: int = 1000,
    seed: int = 1,
) -> dict:
    """≥ ``touches`` page touches by ``procs`` processes whose anonymous working sets total
    ``wss_mib`` (> ``ram_mib``) under zram: memory pressure throughout.

    Touches come in runs of 1..``max_run`` consecutive pages starting at Zipf-popular "objects"
    (groups of ``max_run`` pages); the active process changes every ``switch_every`` touches.
    """
    rng = np.random.default_rng(seed)
    per = wss_mib * PAGES_PER_MIB // procs
    n_obj = per // max_run
    w = _Writer(
        path, f"benchmark: >= {touches} page touches, {procs} processes x {per // PAGES_PER_MIB} MiB anon, ram {ram_mib} MiB, zram {swap_mib} MiB, seed {seed}"
    )
    w.line(f"ram {ram_mib}")
    w.line(_swap_line("zram", swap_mib, ratio))
    for i in range(procs):
        w.line(f"proc {10 + i} worker{i} adj={100 * i}")
        w.line(f"map {10 + i} heap anon {per}")
        w.touch(10 + i, "heap", 0, per, "w")
    p = zipf_probabilities(n_obj, alpha)
    perms = [rng.permutation(n_obj) for _ in range(procs)]
    cur = 0
    while w.touch_pages < touches:
        # one period of one process
        budget = min(switch_every, touches - w.touch_pages)
        mean_run = (1 + max_run) / 2
        n = max(1, int(budget / mean_run) + 1)
        obj = perms[cur][rng.choice(n_obj, size=n, p=p)]
        runs = rng.integers(1, max_run + 1, size=n)
        offs = rng.integers(0, max_run, size=n) % (max_run - runs + 1)
        first = obj.astype(np.int64) * max_run + offs
        wr = rng.random(n) < write_frac
        w.touches(10 + cur, "heap", first, wr, runs)
        w.line(f"tick {tick_us}")
        cur = (cur + 1 + int(rng.integers(0, procs - 1))) % procs if procs > 1 else 0
    for i in range(procs):
        w.line(f"exit {10 + i}")
    return w.close(shape="bench", ram_mib=ram_mib, procs=procs, wss_mib=wss_mib, seed=seed)


GENERATORS: dict[str, Callable[..., dict]] = {
    "seq-scan": lambda path, **kw: seq_scan(path, **{"kind": "file", **kw}),
    "seq-scan-anon": lambda path, **kw: seq_scan(path, **{"kind": "anon", **kw}),
    "zipf": zipf_hot,
    "app-switch": app_switch,
    "bench": bench_large,
}
