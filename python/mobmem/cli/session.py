"""``mobmem run`` / ``mobmem compare`` / ``mobmem scenarios`` / ``mobmem systems`` and
``mobmem bench session``: user sessions on the simulated phone (docs/sessions.md).

- ``mobmem run SCENARIO [--system NAME] [--set key=value]… [--seed N] [--out DIR] [--json]`` —
  one session: tables of launches and their breakdowns, launch statistics, cached apps, kills,
  memory pressure, GC and frames; ``--json`` prints the summary (no timeline/events), ``--out``
  writes summary.json and CSV files.
- ``mobmem compare SCENARIO --systems A,B… [--seeds K] [--set …] [--jobs J] [--out DIR] [--json]``
  — the scenario under each named system (``data/systems.toml``) for K seeds, side by side with
  95% confidence intervals across seeds.
- ``mobmem bench session [--scenario NAME | --quick]`` — simulated seconds per wall second.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table

from mobmem.cli import options
from mobmem.errors import Interrupted, MobmemError

# Piped output (files, pagers, tests) gets wide tables rather than 80 truncated columns.
console = Console(width=None if sys.stdout.isatty() else 220)


# ---------------------------------------------------------------------------- formatting


def _num(v, fmt: str = "{:.1f}") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return fmt.format(v)


def _nf(n, ms) -> str:
    """A fault count and its time: ``12 / 3.4`` (blank when zero)."""
    if not n:
        return ""
    return f"{n:,} / {ms:.1f}"


def _short(app: str, width: int = 28) -> str:
    return app if len(app) <= width else app[: width - 1] + "…"


def _kind(l: dict) -> str:
    k = "relaunch" if l.get("relaunch") else l["kind"]
    return f"{k} (warm-up)" if l.get("warmup") else k


def header_line(res: dict) -> str:
    s = res["system"]
    parts = [f"collector {s['collector']}", f"lmkd {s['lmkd']}", f"swap {s['swap']}"]
    if s.get("cached_app_compaction"):
        parts.append("cached-app compaction")
    if s.get("freezer"):
        parts.append("freezer")
    if s.get("cached_app_work") is False:
        parts.append("cached apps idle")
    if s.get("trim_levels") is False:
        parts.append("no trim levels")
    if s.get("policies"):
        parts.append("policies " + ",".join(s["policies"]))
    sysname = f"system {res['system_name']} · " if res.get("system_name") else ""
    params = " ".join(f"{k}={v}" for k, v in res.get("parameters", [])) or "none"
    return f"{res['scenario']} ({res['scenario_file']}) · device {res['device']} · seed {res['seed']} · {sysname}{', '.join(parts)} · settings: {params}"


def launches_table(res: dict, title: str = "launches") -> Table:
    t = Table(
        title=title,
        show_edge=False,
        title_justify="left",
        caption="times in ms; system … idle sum to TTID; major faults, read waits (file pages still being read by readahead) and object swap-ins (reads of the app's own swap file) as count / ms (blank: none); alive: apps alive after the launch",
        caption_justify="left",
    )
    cols = [
        "#",
        "t s",
        "app",
        "kind",
        "TTID",
        "system",
        "cpu",
        "cpu wait",
        "minor",
        "maj zram",
        "maj flash",
        "maj file",
        "read wait",
        "reclaim stall",
        "gc wait",
        "idle",
        "GCs",
        "alive",
    ]
    # Reads of the app's own swap file (object-granularity swap): a column only when there are some.
    oswap = any(l["breakdown"].get("object_swap_ins", 0) for l in res["launches"])
    if oswap:
        cols.insert(cols.index("reclaim stall"), "obj swap-in")
    for c in cols:
        t.add_column(c, justify="left" if c in ("app", "kind") else "right", no_wrap=True)
    for l in res["launches"]:
        b = l["breakdown"]
        cells = [
            str(l["index"]),
            f"{l['t_s']:.1f}",
            _short(l["app"], 22),
            _kind(l),
            f"{l['ttid_ms']:.1f}",
            f"{b['system_ms']:.1f}",
            f"{b['cpu_ms']:.1f}",
            f"{b['cpu_wait_ms']:.1f}",
            f"{b['minor_fault_ms']:.1f}",
            _nf(b["major_faults_zram"], b["major_fault_zram_ms"]),
            _nf(b["major_faults_flash_swap"], b["major_fault_flash_swap_ms"]),
            _nf(b["major_faults_file"], b["major_fault_file_ms"]),
            _nf(b.get("file_read_waits", 0), b.get("file_read_wait_ms", 0.0)),
            f"{b['reclaim_stall_ms']:.1f}",
            f"{b['gc_wait_ms']:.1f}",
            f"{b.get('idle_ms', 0.0):.1f}",
            str(b["gcs"]),
            str(l["alive_after"]),
        ]
        if oswap:
            cells.insert(cols.index("obj swap-in"), _nf(b.get("object_swap_ins", 0), b.get("object_swap_in_ms", 0.0)))
        t.add_row(*cells)
    return t


def launch_stats_table(res: dict, kinds=("hot", "cold"), title: str = "launch time (TTID ms) by kind and app") -> Table:
    t = Table(title=title, show_edge=False, title_justify="left")
    for c in ("kind", "app", "n", "p10", "p50", "p90", "mean", "min", "max"):
        t.add_column(c, justify="left" if c in ("kind", "app") else "right")
    ls = res.get("launch_stats", {})
    for kind in kinds:
        st = ls.get(kind, {})
        apps = sorted(a for a in st if a != "*")
        for a in apps + (["*"] if "*" in st else []):
            d = st[a]
            if not d.get("n"):
                continue
            label = "[bold]all apps[/bold]" if a == "*" else _short(a)
            t.add_row(kind, label, str(d["n"]), *(f"{d[k]:.1f}" for k in ("p10", "p50", "p90", "mean", "min", "max")))
        if not st:
            t.add_row(kind, "—", "0", "", "", "", "", "", "")
    return t


def relaunch_line(res: dict) -> str:
    rel = [l for l in res["launches"] if l.get("relaunch")]
    if not rel:
        return "cold launches instead of hot (relaunches after a kill): none"
    by: dict[str, int] = {}
    for l in rel:
        by[l["app"]] = by.get(l["app"], 0) + 1
    return f"cold launches instead of hot (relaunches after a kill): {len(rel)} — " + ", ".join(f"{a} {n}" for a, n in sorted(by.items()))


def cached_lines(res: dict) -> list[str]:
    c = res["cached_apps"]
    curve = c.get("alive_after_launch", [])
    if c.get("first_kill_s") is not None:
        fk = f"first app killed at {c['first_kill_s']:.1f} s (after launch #{c['first_kill_launch']})"
    else:
        fk = "no app killed"
    return [
        f"cached apps: max {c['max']:.0f}, mean {c['mean']:.2f} (over the timeline); {fk}",
        "apps alive after each launch: " + " ".join(str(x) for x in curve),
    ]


def curve_table(res: dict, title: str = "apps alive after each launch") -> Table:
    t = Table(title=title, show_edge=False, title_justify="left")
    for c in ("#", "t s", "app", "kind", "TTID ms", "alive after", "cached after"):
        t.add_column(c, justify="left" if c in ("app", "kind") else "right")
    for l in res["launches"]:
        t.add_row(str(l["index"]), f"{l['t_s']:.1f}", _short(l["app"]), _kind(l), f"{l['ttid_ms']:.1f}", str(l["alive_after"]), str(l["cached_after"]))
    return t


def _mib_or_dash(kb) -> str:
    """kB as whole MiB; a dash for a value the result does not have (saved before it was recorded)."""
    return "—" if kb is None else f"{kb / 1024:.0f}"


def kills_table(res: dict) -> Table | None:
    from mobmem.session.output import kill_rows

    rows = kill_rows(res)
    if not rows:
        return None
    t = Table(title="kills", show_edge=False, title_justify="left")
    # The last two: the whole phone's swap in use and free memory when the kill was decided.
    for c in ("t s", "app / process", "reason", "by", "adj", "RSS MiB", "swap MiB", "swap in use MiB", "free MiB"):
        t.add_column(c, justify="left" if c in ("app / process", "reason", "by") else "right")
    for r in rows:
        t.add_row(
            f"{r['t_s']:.1f}",
            _short(str(r["app"])),
            str(r["reason"]),
            str(r["killer"]),
            str(r["oom_score_adj"]),
            f"{(r['rss_kb'] or 0) / 1024:.1f}",
            f"{(r['swap_kb'] or 0) / 1024:.1f}",
            _mib_or_dash(r.get("swap_used_kb")),
            _mib_or_dash(r.get("free_kb")),
        )
    return t


def file_refaults_only(res: dict) -> bool:
    """Whether the run's kernel followed the rules before Linux 5.9 (``kernel.semantics`` 4.19 and
    earlier): only evicted file pages leave shadow entries then, so its refault counters count
    file pages only — an anon page read back from swap is a swap-in, never a refault."""
    sem = None
    for k, v in res.get("system", {}).get("kernel_settings", []):
        if k == "kernel.semantics":
            sem = str(v)  # the last one is in force
    try:
        return sem is not None and tuple(int(x) for x in sem.split(".")[:2]) < (5, 9)
    except ValueError:
        return False


#: The note beside refault numbers of a kernel before 5.9 (see :func:`file_refaults_only`).
FILE_ONLY = "file only before 5.9"
FILE_ONLY_WHY = (
    "refaults: kernel.semantics {sem} follows the rules before Linux 5.9, where only evicted file pages leave shadow entries: "
    "anon pages read back from swap count as swap-ins, not refaults"
)


def _semantics(res: dict) -> str:
    return next((str(v) for k, v in reversed(res.get("system", {}).get("kernel_settings", [])) if k == "kernel.semantics"), "?")


def pressure_table(res: dict) -> Table:
    vm, ra = res.get("vmstat", {}), res.get("ratios", {})
    file_only = file_refaults_only(res)
    t = Table(
        title="memory pressure",
        show_edge=False,
        title_justify="left",
        caption=FILE_ONLY_WHY.format(sem=_semantics(res)) if file_only else None,
        caption_justify="left",
    )
    t.add_column("")
    t.add_column("value", justify="right")
    refaults = vm.get("workingset_refault_anon", 0) + vm.get("workingset_refault_file", 0)
    evictions = vm.get("pgsteal_kswapd", 0) + vm.get("pgsteal_direct", 0)
    rows = [
        (f"refaults ({FILE_ONLY})", f"{refaults:,}")
        if file_only
        else ("refaults (anon / file)", f"{refaults:,} ({vm.get('workingset_refault_anon', 0):,} / {vm.get('workingset_refault_file', 0):,})"),
        ("evictions (pgsteal kswapd + direct)", f"{evictions:,}"),
        (
            "refault ratio (file refaults / evictions)" if file_only else "refault ratio (refaults / evictions)",
            _num(ra.get("refault_ratio"), "{:.3f}"),
        ),
        ("direct reclaims (allocstall)", f"{res.get('direct_reclaims', 0):,}"),
        ("direct-reclaim ratio (pgsteal_direct / evictions)", _num(ra.get("direct_reclaim_ratio"), "{:.3f}")),
        ("anon share of evictions (pgsteal_anon / pgsteal)", _num(ra.get("anon_share_of_evictions"), "{:.3f}")),
        ("swap in / out (pages)", f"{res['swap']['pswpin']:,} / {res['swap']['pswpout']:,}"),
        ("major faults (pgmajfault)", f"{vm.get('pgmajfault', 0):,}"),
        ("kswapd CPU ms", f"{res.get('kswapd_cpu_ms', 0):.1f}"),
    ]
    rows += fragmentation_rows(res)
    for k, v in rows:
        t.add_row(k, v)
    return t


def fragmentation_rows(res: dict) -> list[tuple[str, str]]:
    """With the buddy allocator (kernel.buddy): compaction, order-2 OOM kills and the free lists
    the apps' thread stacks met; nothing otherwise."""
    f = res.get("fragmentation")
    if not f:
        return []
    vm = res.get("vmstat", {})
    return [
        ("compaction stalls / pages migrated", f"{vm.get('compact_stall', 0):,} / {vm.get('pgmigrate_success', 0):,}"),
        ("OOM kills by high-order allocations", f"{vm.get('oom_kill_high_order', 0):,}"),
        (
            "at thread starts: least free MiB / fewest order≥2 blocks (share of free)",
            f"{f['min_free_pages'] / 256:.1f} / {f['min_blocks_order2']:,} ({f['min_share_in_order2']:.0%})",
        ),
        ("most unmovable pageblocks / page-table pages", f"{f['max_unmovable_pageblocks']:,} of {f['pageblocks']:,} / {f['max_pagetable_pages']:,}"),
    ]


def refault_notes(runs: list[dict]) -> list[str]:
    """For a set of runs (a comparison's), one line per kernel before 5.9 among them, naming its
    systems: their refault rows count file pages only."""
    by_sem: dict[str, list[str]] = {}
    for r in runs:
        if file_refaults_only(r):
            names = by_sem.setdefault(_semantics(r), [])
            name = r.get("system_name") or "the scenario's system"
            if name not in names:
                names.append(name)
    return [f"{FILE_ONLY_WHY.format(sem=sem)} (systems {', '.join(names)}: their refault rows count file pages only)" for sem, names in by_sem.items()]


def gc_frames_table(res: dict) -> Table:
    g, f = res["gc"], res["frames"]
    t = Table(title="GC and frames", show_edge=False, title_justify="left")
    t.add_column("")
    t.add_column("value", justify="right")
    rows = [
        ("GCs (sticky / full)", f"{g['count']:,} ({g['sticky']:,} / {g['full']:,})"),
        ("GC pauses total / max ms", f"{g['pause_total_ms']:.1f} / {g['pause_max_ms']:.2f}"),
        ("GC-thread CPU ms", f"{g['gc_cpu_ms']:.1f}"),
        ("GC pages / objects touched", f"{g['gc_pages_touched']:,} / {g['gc_objects_touched']:,}"),
        ("GC major faults", f"{g['gc_major_faults']:,}"),
        ("frames (janky)", f"{f['total']:,} ({f['janky']:,})"),
        ("jank ratio", _num(f.get("jank_ratio"), "{:.4f}")),
        ("missed vsyncs", f"{f['missed_vsyncs']:,}"),
        ("longest frame ms", f"{f['max_frame_ms']:.1f}"),
    ]
    os_ = {}
    for p in res.get("per_app", {}).values():
        for k, v in p.get("object_swap", {}).items():
            os_[k] = os_.get(k, 0) + v
    if os_.get("stubs_created"):
        mib = 1 << 20
        rows += [
            ("object swap: stubs made / writes refused", f"{os_['stubs_created']:,} / {os_['writes_refused']:,}"),
            ("object swap: MiB released (pages freed, MiB)", f"{os_['bytes_reclaimed'] / mib:,.1f} ({os_['pages_reclaimed'] * 4096 / mib:,.1f})"),
            ("object swap: objects / MiB read back", f"{os_['objects_swapped_in']:,} / {os_['bytes_swapped_in'] / mib:,.1f}"),
        ]
    for k, v in rows:
        t.add_row(k, v)
    return t


def energy_line(res: dict) -> str | None:
    """CPU energy by category and mean cluster frequencies (None without a power model)."""
    e = res.get("energy")
    if not e:
        return None
    freq = ", ".join(f"{c} {f:,.0f} MHz" for c, f in e.get("mean_mhz", {}).items())
    if e.get("total_j") is None:
        return f"CPU ({e['governor']} governor): mean frequency {freq}; this device gives no power model"
    parts = ", ".join(f"{k} {v:,.1f}" for k, v in e["by_category_j"].items())
    return f"CPU energy ({e['governor']} governor): {e['total_j']:,.1f} J, mean {e['mean_power_mw']:,.0f} mW ({parts} J); mean frequency {freq}"


def per_app_table(res: dict) -> Table:
    t = Table(title="per app", show_edge=False, title_justify="left")
    file_only = file_refaults_only(res)
    refaults = f"refaults ({FILE_ONLY})" if file_only else "refaults anon/file"
    for c in ("app", "cold", "hot", "relaunch", "kills", refaults, "majflt", "swap-ins", "GCs", "jank", "alive at end"):
        t.add_column(c, justify="left" if c == "app" else "right")
    for app, p in res.get("per_app", {}).items():
        t.add_row(
            _short(app),
            str(p["cold_launches"]),
            str(p["hot_launches"]),
            str(p["relaunches"]),
            str(p["kills"]),
            f"{p['refault_anon'] + p['refault_file']:,}" if file_only else f"{p['refault_anon']:,} / {p['refault_file']:,}",
            f"{p['majflt']:,}",
            f"{p['swapin']:,}",
            f"{p['gc_count']:,}",
            _num(p.get("jank_ratio"), "{:.4f}"),
            "yes" if p.get("alive_at_end") else "no",
        )
    return t


def footer_line(res: dict) -> str:
    return f"simulated {res['sim_seconds']:.1f} s in {res['wall_seconds']:.1f} s wall ({res['sim_speed']:.1f} simulated s per wall s)"


def print_result(res: dict) -> None:
    console.rule(f"[bold]{res['scenario']}")
    console.print(header_line(res), highlight=False)
    console.print(launches_table(res))
    console.print(launch_stats_table(res))
    console.print(relaunch_line(res), highlight=False)
    for ln in cached_lines(res):
        console.print(ln, highlight=False)
    kt = kills_table(res)
    if kt is None:
        console.print("kills: none")
    else:
        console.print(kt)
        console.print("kills by reason: " + ", ".join(f"{k} {v}" for k, v in res.get("kills_by_reason", {}).items()), highlight=False)
    console.print(pressure_table(res))
    console.print(gc_frames_table(res))
    el = energy_line(res)
    if el:
        console.print(el, highlight=False)
    console.print(per_app_table(res))
    console.print(footer_line(res), highlight=False)


# ---------------------------------------------------------------------------- commands


def run(
    scenario: str = typer.Argument(..., metavar="SCENARIO", help="A scenario file, or a shipped scenario's name (see `mobmem scenarios`)."),
    system: Optional[str] = typer.Option(None, "--system", metavar="NAME", help="A named system configuration (see `mobmem systems`), applied before --set."),
    set_: List[str] = typer.Option([], "--set", metavar="KEY=VALUE", help="key=value (repeatable): kernel.*, system.*, session.*, or a runtime setting."),
    seed: Optional[int] = typer.Option(None, "--seed", metavar="N", help="Seed (default: the scenario's)."),
    out: Optional[Path] = typer.Option(
        None, "--out", metavar="DIR", help="Write summary.json and the run's tables as CSV files (launches, timeline, events, kills, per_app, gcs, …) here."
    ),
    trace: Optional[Path] = typer.Option(
        None,
        "--trace",
        metavar="FILE",
        help="Write the session's timeline for Perfetto UI: FILE.perfetto-trace, .pftrace or .pb (protobuf) or FILE.json (Chrome trace events).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the summary JSON (everything but timeline and events)."),
) -> None:
    """Run a scenario on the simulated phone: launches, cached apps, kills, memory pressure, GC, frames."""
    from mobmem import session
    from mobmem.session.output import check_out_dir, write_outputs

    if trace is not None:
        from mobmem.files import check_out_file
        from mobmem.session.trace import trace_format

        if not trace.is_dir():  # a directory: check_out_file says so
            trace_format(trace)
        check_out_file(trace, "--trace")
    path = session.resolve_scenario(scenario)
    pairs = session.parse_settings(set_)
    session.check_seed(seed)
    if system:
        from mobmem.session import systems

        systems.get(system)
    if out is not None:
        check_out_dir(out)
    from mobmem.files import out_dir_lock

    with out_dir_lock(out):  # from the start: a second writer is refused before it runs
        res = _run_session(path, pairs, seed, system, as_json, out)
        if out is not None:
            write_outputs(res, out)
    if trace is not None:
        from mobmem.files import deferred_interrupts
        from mobmem.session.trace import write_trace

        with deferred_interrupts():
            write_trace(res, trace)
    if as_json:
        sys.stdout.write(json.dumps(session.summary(res)) + "\n")
        return
    print_result(res)
    if out is not None:
        console.print(f"wrote {out}/ (summary.json and the tables as CSV)", highlight=False)
    if trace is not None:
        console.print(f"wrote {trace} (open it in https://ui.perfetto.dev)", highlight=False)


def _run_session(path: Path, pairs, seed: Optional[int], system: Optional[str], as_json: bool, out: Optional[Path], what: str = "") -> dict:
    """One session with a progress bar on a terminal; Ctrl-C or SIGTERM → :class:`Interrupted`
    saying how far it got (nothing has been written: files are written after the run)."""
    from mobmem import session
    from mobmem.cli.progress import SimProgress, plain, wanted

    prog = SimProgress(path.stem, wanted(as_json), plain(as_json))
    try:
        with prog:
            return session.run(path, pairs, seed=seed, system=system, progress=prog)
    except KeyboardInterrupt:
        raise prog.interrupted(f"{what}{path.stem}", out) from None


def compare_tables(agg: dict, title: str) -> list[Table]:
    """The comparison's tables: per system the mean across seeds and its 95% interval, and against
    the first system the ratio of means with Welch's p (:mod:`mobmem.session.compare`'s helpers)."""
    from mobmem.session.compare import METRICS, PER_APP, fmt_interval, fmt_versus

    systems = agg["systems"]
    ci = len(agg["seeds"]) >= 2

    def new(title_: str) -> Table:
        t = Table(title=title_, show_edge=False, title_justify="left")
        t.add_column("")
        for i, s in enumerate(systems):
            t.add_column(s, justify="right")
            if ci:
                t.add_column("95% CI", justify="right", style="dim")
                if i > 0:
                    t.add_column(f"vs {systems[0]}", justify="right")
        return t

    def row(t: Table, label: str, stats: dict, fmt: str) -> None:
        cells = []
        for i, s in enumerate(systems):
            st = stats[s]
            cells.append("—" if st["mean"] is None else fmt.format(st["mean"]))
            if ci:
                cells.append(fmt_interval(st, fmt))
                if i > 0:
                    cells.append(fmt_versus(st))
        t.add_row(label, *cells)

    t = new(title)
    for key, label, fmt in METRICS:
        row(t, label, agg["overall"][key], fmt)
    tables = [t]
    pa = agg["per_app"]
    hot_apps = [a for a in pa if any(pa[a]["hot_p50_ms"][s]["n"] for s in systems)]
    if hot_apps:
        h = new("hot launch per app (ms): p50, p90; relaunches")
        for a in hot_apps:
            for key, label, fmt in PER_APP:
                row(h, f"{_short(a)} {label.removeprefix('hot launch ').removesuffix(' ms')}", pa[a][key], fmt)
        tables.append(h)
    return tables


def compare_legend(agg: dict) -> list[str]:
    """The lines under the comparison's tables: how to read them, and what their marks mean."""
    from mobmem.session.compare import ci_legend, flags_in

    systems, n = agg["systems"], len(agg["seeds"])
    if n < 2:
        return ["one seed: means of a single run, no confidence intervals and no tests (use --seeds 3 or more)"]
    return [
        f"95% CI: Student-t interval of the mean across {n} seeds; vs {systems[0]}: ratio of means and Welch's test "
        "(n.s.: no significant difference, p ≥ 0.05)",
        *ci_legend(flags_in(agg)),
    ]


def compare(
    scenario: str = typer.Argument(..., metavar="SCENARIO", help="A scenario file or a shipped scenario's name."),
    systems_: str = typer.Option(..., "--systems", metavar="A,B,…", help="Comma-separated system names (see `mobmem systems`); the first is the baseline."),
    seeds: int = typer.Option(3, "--seeds", metavar="K", help="Seeds per system: the scenario's seed (or --seed) + 0 … K−1."),
    seed: Optional[int] = typer.Option(None, "--seed", metavar="N", help="First seed (default: the scenario's)."),
    set_: List[str] = typer.Option([], "--set", metavar="KEY=VALUE", help="key=value applied to every run, after the system's settings (repeatable)."),
    jobs_: str = options.jobs("2"),
    executor: str = options.executor(),
    address: Optional[str] = options.address(),
    out: Optional[Path] = typer.Option(
        None, "--out", metavar="DIR", help="Write compare.json, compare.csv, each run's files (runs/SYSTEM/seed-N/) and its summary (record/)."
    ),
    resume: bool = typer.Option(
        False, "--resume", help="With --out: reuse finished runs found there (same scenario, system, seed, settings), in runs/ or record/."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the per-run summaries and the aggregates as one JSON object."),
) -> None:
    """Run a scenario under several named systems and seeds; compare them with 95% confidence intervals."""
    from mobmem import session
    from mobmem.cli.progress import RunsProgress, run_done, runs_interrupted, wanted
    from mobmem.session import compare as cmp
    from mobmem.session import systems as systems_mod
    from mobmem.session.executor import check as check_executor

    jobs = check_executor(jobs_, executor)

    path = session.resolve_scenario(scenario)
    names = systems_mod.parse_names(systems_)
    pairs = session.parse_settings(set_)
    cmp.check_arguments(names, seeds, seed, jobs, out, resume)  # before the progress bar
    total = len(names) * seeds
    bar = RunsProgress(f"compare {path.stem}", total, wanted(as_json))

    def progress(system: str, sd: int, res: dict, was_reused: bool) -> None:
        bar.advance()
        bar.log(f"[{bar.done}/{total}] {system} seed {sd}: {run_done(res, was_reused)}")

    try:
        with bar:
            doc = cmp.compare(path, names, seeds, seed, list(set_), jobs=jobs, out=out, resume=resume, progress=progress, executor=executor, address=address)
    except KeyboardInterrupt:
        raise runs_interrupted(f"compare {path.stem}", bar.done, total, out, f"{out}/runs/") from None
    agg, seed_list, first = doc["aggregate"], doc["seeds"], doc
    if as_json:
        sys.stdout.write(json.dumps(doc) + "\n")
        return
    console.rule(f"[bold]{first['scenario']}: {' vs '.join(names)}")
    console.print(
        f"{first['scenario_file']} · device {first['device']} · seeds {', '.join(map(str, seed_list))}"
        + (f" · settings: {' '.join(f'{k}={v}' for k, v in pairs)}" if pairs else ""),
        highlight=False,
    )
    for n in names:
        console.print(f"  {n}: {systems_mod.get(n).description}", highlight=False, style="dim")
    for t in compare_tables(agg, "mean across seeds"):
        console.print(t)
    for line in compare_legend(agg):
        console.print(line, highlight=False)
    for line in refault_notes([r["summary"] for r in doc["runs"]]):
        console.print(line, highlight=False)
    console.print(f"{total} runs in {doc['wall_seconds']:.1f} s wall" + (f"; files in {out}/" if out else ""), highlight=False)


def scenarios() -> None:
    """List the shipped scenarios."""
    from mobmem import catalog

    for s in catalog.catalog()["scenarios"]:
        console.print(f"[bold]{s['name']}[/bold]  {s['description'].split('. ')[0]}", highlight=False)


def systems() -> None:
    """List the named system configurations (python/mobmem/data/systems.toml)."""
    from mobmem.session import systems as systems_mod

    for s in systems_mod.load().values():
        console.print(f"[bold]{s.name}[/bold]  {s.description}", highlight=False)
        console.print(f"    {' '.join(s.settings) or '(no settings)'}", highlight=False, style="dim")


# ---------------------------------------------------------------------------- benchmark


def bench_session(
    scenario: str = typer.Option("hot_launch", "--scenario", help="Scenario to run (default: the full hot-launch experiment)."),
    quick: bool = typer.Option(False, "--quick", help="Run demo_hot_launch instead (a short version)."),
    set_: List[str] = typer.Option([], "--set", metavar="KEY=VALUE", help="key=value (repeatable), as for `mobmem run`."),
    seed: Optional[int] = typer.Option(None, "--seed"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Benchmark the session simulator: host time per object operation (goal ≤ 100 ns), simulated
    seconds per wall second, and the wall-time goals of hot_launch_groups (≤ 120 s) and the full
    hot_launch (≤ 10 min, peak memory ≤ 2 GB) on a two-core machine."""
    from mobmem import session
    from mobmem.session.speed import measure

    name = "demo_hot_launch" if quick else scenario
    path = session.resolve_scenario(name)
    pairs = session.parse_settings(set_)
    session.check_seed(seed)
    out = measure(path, pairs, seed, run=lambda p, s, sd: _run_session(p, s, sd, None, as_json, None, what="bench session "))
    wall, objects, alloc_rate = out["wall_seconds"], out["objects_allocated"], out["allocation_benchmark_objects_per_s"]
    if as_json:
        sys.stdout.write(json.dumps(out) + "\n")
        return
    if out["debug_build"]:
        console.print("warning: debug build of the core; numbers are not representative", style="yellow")
    console.print(
        f"session {out['scenario']}: {out['sim_seconds']:.0f} simulated s ({out['launches']} launches) in "
        f"{wall:.1f} s wall → [bold]{out['sim_seconds_per_wall_second']:.1f} simulated s per wall s[/bold]",
        highlight=False,
    )
    console.print(
        f"work: {objects:,} Java objects allocated ({out['bytes_allocated'] / 2**20:,.0f} MiB), "
        f"{out['gc_objects_touched']:,} objects touched by GCs, {out['objects_read']:,} objects read; allocating alone at the "
        f"allocation benchmark's {alloc_rate / 1e6:.1f} M objects/s would take {out['allocation_only_floor_wall_seconds']:.1f} s wall",
        highlight=False,
    )
    if out["ns_per_object_op"] is not None:
        console.print(
            f"host time per object operation: [bold]{out['ns_per_object_op']:.0f} ns[/bold] "
            f"(goal ≤ {out['goal_ns_per_object_op']:.0f} ns: {'met' if out['meets_ns_goal'] else 'NOT met'})",
            highlight=False,
        )
    if out["goal_wall_seconds"] is not None:
        rss = out["goal_peak_rss_bytes"]
        console.print(
            f"goal for {out['scenario']}: ≤ {out['goal_wall_seconds']:.0f} s wall"
            + (f" and ≤ {rss / 2**30:.0f} GB peak memory (this run: {out['peak_rss_bytes'] / 2**30:.2f} GB)" if rss else "")
            + f" on a two-core machine: {'met' if out['meets_goal'] else 'NOT met'}",
            highlight=False,
        )


def bench_grain(
    scenario: List[str] = typer.Option(
        [], "--scenario", help="Compare on this scenario (repeatable; default: the whole suite, see the command's description)."
    ),
    quick: bool = typer.Option(False, "--quick", help="The short suite: the two demos at a tenth of their length."),
    seeds: int = typer.Option(5, "--seeds", metavar="K", help="Seeds per scenario: the scenario's seed + 0 … K−1."),
    set_: List[str] = typer.Option([], "--set", metavar="KEY=VALUE", help="key=value applied to every run (repeatable)."),
    jobs_: str = options.jobs("auto"),
    markdown: Optional[Path] = typer.Option(None, "--markdown", help="Also write the table as Markdown to this file."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Compare the two simulation grains (runtime.grain=object, the reference, and unit, the
    default) on the shipped experiments over several seeds: every page- and user-level metric
    must agree (±3 % of the mean or inside the reference's 95 % CI) and the Java objects
    allocated, marked and copied must be identical. The suite: demo_hot_launch, demo_caching,
    hot_launch and caching_capacity at session.time_scale=0.1, caching_capacity_synthetic_small,
    fg_refault_8B_A. Exits 1 if any metric disagrees."""
    from mobmem import session
    from mobmem.session import grain
    from mobmem.session.executor import parse_jobs

    if not 1 <= seeds <= 100:
        raise MobmemError(f"--seeds must be within [1, 100], got {seeds}")
    jobs = parse_jobs(jobs_)
    for p in set_:
        if p.split("=", 1)[0].strip() in ("runtime.grain", "grain"):
            raise MobmemError(f"--set {p}: the grain is what this command varies")
    session.parse_settings(set_)
    if scenario:
        suite = [(str(session.resolve_scenario(s)), ()) for s in scenario]
    else:
        suite = [(str(session.resolve_scenario(s)), st) for s, st in (grain.QUICK if quick else grain.SUITE)]
    if markdown is not None and markdown.parent and not markdown.parent.is_dir():
        raise MobmemError(f"--markdown {markdown}: directory {markdown.parent} does not exist")
    total = len(suite) * seeds * len(grain.GRAINS)
    from mobmem.cli.progress import RunsProgress, wanted

    bar = RunsProgress("bench grain", total, wanted(as_json))

    def on_run(sc: str, sd: int, g: str, m: dict) -> None:
        bar.advance()
        bar.log(f"[{bar.done}/{total}] {Path(sc).stem} seed {sd} grain={g}: {m['sim_seconds']:.0f} simulated s in {m['wall_seconds']:.1f} s")

    t0 = time.perf_counter()
    try:
        with bar:
            results = grain.run_suite(suite, seeds, list(set_), jobs, on_run)
    except KeyboardInterrupt:
        raise Interrupted(f"bench grain after {bar.done} of {total} runs; nothing written") from None
    cmp = {Path(k).stem: v for k, v in grain.compare(results).items()}
    wall = time.perf_counter() - t0
    argv = " ".join(
        ["mobmem bench grain", *(["--quick"] if quick else []), *[f"--scenario {s}" for s in scenario], f"--seeds {seeds}", *[f"--set {p}" for p in set_]]
    )
    ok = all(v["ok"] for v in cmp.values())
    if markdown is not None:
        from mobmem.session.output import atomic_write

        atomic_write(markdown, grain.markdown(cmp, argv))
    if as_json:

        def finite(x):
            if isinstance(x, float) and not math.isfinite(x):
                return None
            if isinstance(x, dict):
                return {k: finite(v) for k, v in x.items()}
            if isinstance(x, list):
                return [finite(v) for v in x]
            return x

        sys.stdout.write(json.dumps(finite({"command": argv, "ok": ok, "wall_seconds": wall, "scenarios": cmp})) + "\n")
    else:
        for name, per in cmp.items():
            t = Table(title=f"{name}: seeds {', '.join(map(str, per['seeds']))}", title_justify="left")
            for c in ("metric", "object grain", "unit grain", "difference", "agrees"):
                t.add_column(c, justify="left" if c == "metric" else "right")
            for r in per["metrics"]:
                t.add_row(r["label"], f"{r['object']:,.2f}", f"{r['unit']:,.2f}", _pct(r["rel_diff"]), "yes" if r["ok"] else "[red]NO[/red]")
            t.add_row("TTID per launch (worst)", "", "", _pct(per["ttid_worst_launch_rel_diff"]), "yes" if per["ttid_per_launch_ok"] else "[red]NO[/red]")
            t.add_row(
                "cached apps after each launch (worst)", "", "", _pct(per["cached_curve_worst_rel_diff"]), "yes" if per["cached_curve_ok"] else "[red]NO[/red]"
            )
            for c in per["counts"]:
                t.add_row(c["label"], f"{c['object']:,}", f"{c['unit']:,}", "", "identical" if c["identical"] else "[red]DIFFERENT[/red]")
            w = per["wall_seconds"]
            t.add_row("wall s (all seeds)", f"{w['object']:.1f}", f"{w['unit']:.1f}", f"×{w['object'] / max(w['unit'], 1e-9):.2f}", "")
            console.print(t)
            console.print(f"  runs with identical results (all but wall time): {per['identical_runs']} of {per['runs']}", highlight=False)
        console.print(
            f"{'all metrics agree' if ok else 'DISAGREEMENT'}: {total} runs in {wall:.1f} s wall" + (f"; table in {markdown}" if markdown else ""),
            highlight=False,
        )
    if not ok:
        raise typer.Exit(1)


def bench_identical(
    save: Optional[Path] = typer.Option(None, "--save", help="Run the fixed set and save each result (wall-clock fields left out) to this directory."),
    check: Optional[Path] = typer.Option(None, "--check", help="Run the fixed set and compare each result with the one saved in this directory."),
    scenario: List[str] = typer.Option([], "--scenario", help="Instead of the fixed set, this scenario with its own settings (repeatable)."),
    jobs_: str = options.jobs("auto"),
) -> None:
    """Check that a change of the simulator leaves results bit-identical: --save DIR before the
    change, --check DIR after it. The fixed set covers every collector but the no-GC baseline, memory pressure, zram,
    breadth-first tracing and a runtime policy on the demos at a tenth of their length. --check
    exits 1 and names the first differing fields of each run that changed."""
    from mobmem import session
    from mobmem.session import identity
    from mobmem.session.executor import parse_jobs

    if (save is None) == (check is None):
        raise MobmemError("give exactly one of --save DIR and --check DIR")
    jobs = parse_jobs(jobs_)
    if check is not None and not check.is_dir():
        raise MobmemError(f"--check {check}: no such directory (save the reference first with --save)")
    runs = [(Path(s).stem, str(session.resolve_scenario(s)), ()) for s in scenario] if scenario else identity.RUNS
    from mobmem.cli.progress import RunsProgress, wanted

    bar = RunsProgress("bench identical", len(runs), wanted(False))

    def on_run(label: str) -> None:
        bar.advance()
        bar.log(f"[{bar.done}/{len(runs)}] {label}")

    try:
        with bar:
            results = identity.record(runs, jobs, on_run)
    except KeyboardInterrupt:
        raise Interrupted(f"bench identical after {bar.done} of {len(runs)} runs; nothing written") from None
    if save is not None:
        identity.save(save, results)
        console.print(f"saved {len(results)} results to {save}", highlight=False)
        return
    diff = identity.differences(check, results)
    for label in results:
        console.print(f"{label}: {'identical' if label not in diff else 'DIFFERENT'}", highlight=False)
        for d in diff.get(label, []):
            console.print(f"    {d}", highlight=False)
    console.print(f"{len(results) - len(diff)} of {len(results)} runs identical to {check}", highlight=False)
    if diff:
        raise typer.Exit(1)


def _pct(x: Optional[float]) -> str:
    if x is None:
        return "—"
    return "∞" if math.isinf(x) else f"{100 * x:+.2f} %"


def sweep(
    scenario: str = typer.Argument(..., metavar="SCENARIO", help="A scenario file or a shipped scenario's name."),
    grid: List[str] = typer.Option(..., "--grid", metavar="KEY=V1,V2,…", help="KEY=V1,V2,… (repeatable): one axis of the grid; every combination runs."),
    systems_: str = typer.Option("stock", "--systems", metavar="A,B,…", help="Comma-separated system names (see `mobmem systems`)."),
    devices: Optional[str] = typer.Option(None, "--devices", metavar="A,B,…", help="Comma-separated device profiles (default: the scenario's own)."),
    seeds: int = typer.Option(1, "--seeds", metavar="K", help="Seeds per point: the scenario's seed (or --seed) + 0 … K−1."),
    seed: Optional[int] = typer.Option(None, "--seed", metavar="N", help="First seed (default: the scenario's)."),
    set_: List[str] = typer.Option([], "--set", metavar="KEY=VALUE", help="key=value applied to every run (repeatable); the grid's values win."),
    jobs: str = options.jobs("1"),
    executor: str = options.executor(),
    address: Optional[str] = options.address(),
    out: Optional[Path] = typer.Option(None, "--out", metavar="DIR", help="Write sweep.csv, sweep.json and each run's files (runs/KEY/)."),
    resume: bool = typer.Option(False, "--resume", help="With --out: reuse the runs already there whose inputs and code are the same."),
    as_json: bool = typer.Option(False, "--json", help="Print the table as JSON records."),
) -> None:
    """Sweep a scenario over a grid of settings × systems × devices × seeds; one tidy table."""
    from mobmem.cli.progress import RunsProgress, wanted
    from mobmem.session import sweep as sw
    from mobmem.session import systems as systems_mod
    from mobmem.session.executor import check as check_executor

    g = sw.parse_grid(grid)
    names = systems_mod.parse_names(systems_)
    devs = [d.strip() for d in devices.split(",") if d.strip()] if devices else None
    njobs = check_executor(jobs, executor)
    total = len(sw.points(g)) * len(names) * len(devs or [None]) * max(1, seeds)
    bar = RunsProgress("sweep", total, wanted(as_json))

    def progress(row: dict, reused: bool) -> None:
        bar.advance()
        what = ", ".join(f"{k}={row[k]}" for k in g)
        bar.log(f"[{bar.done}/{total}] {row['system']} {row['device']} seed {row['seed']} {what}: " + ("reused" if reused else "done"))

    try:
        with bar:
            df = sw.sweep(
                scenario, g, names, devs, seeds, seed, list(set_), jobs=njobs, executor=executor, address=address, out=out, resume=resume, progress=progress
            )
    except KeyboardInterrupt:
        kept = f"; the finished ones are in {out}/runs/ (the same command with --resume runs the rest)" if out and bar.done else ""
        raise Interrupted(f"sweep after {bar.done} of {total} runs{kept}") from None
    if as_json:
        sys.stdout.write(df.to_json(orient="records") + "\n")
        return
    shown = [c for c in ["device", "system", "seed", *g, "hot_p50_ms", "hot_p90_ms", "cached_max", "app_kills", "pswpin", "direct_reclaims"] if c in df.columns]
    t = Table(title=f"sweep: {len(df)} runs")
    for c in shown:
        t.add_column(c, justify="left" if c in ("device", "system", *g) else "right")
    for _, r in df[shown].iterrows():
        t.add_row(*("—" if v is None or v != v else (f"{v:,.1f}" if isinstance(v, float) else str(v)) for v in r))
    console.print(t)
    if out is not None:
        console.print(f"wrote {out}/sweep.csv, sweep.json and runs/", highlight=False)


def plot(
    run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="A run or compare directory (--out of `mobmem run` or `mobmem compare`)."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="DIR", help="Where to write the figures (default: RUN_DIR/plots)."),
    formats: str = typer.Option("png,svg", "--format", metavar="png,svg,pdf", help="Comma-separated image formats (png, svg, pdf)."),
) -> None:
    """Plot a run: cached apps, memory per app by meminfo category, launch times, GC and reclaim."""
    from mobmem.session.plots import plot_dir

    fmts = tuple(f.strip().lower() for f in formats.split(",") if f.strip())
    bad = [f for f in fmts if f not in ("png", "svg", "pdf")]
    if not fmts or bad:
        raise MobmemError(f"--format: expected png, svg or pdf, got {formats!r}")
    written = plot_dir(run_dir, out, fmts)
    console.print(f"wrote {len(written)} files in {written[0].parent}/", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("run")(run)
    app.command("plot")(plot)
    app.command("compare")(compare)
    app.command("sweep")(sweep)
    app.command("scenarios")(scenarios)
    app.command("systems")(systems)


def register_bench(bench_app: typer.Typer) -> None:
    """Add ``mobmem bench session`` to the bench group."""
    bench_app.command("session")(bench_session)
    bench_app.command("grain")(bench_grain)
    bench_app.command("identical")(bench_identical)
