"""GC, CPU frequency and energy on a Snapdragon-800-class phone (the questions of Hussein's thesis,
Purdue 2017): what a collector costs in energy under a frequency governor, what the GC-aware
governor (a frequency cap on GC threads) saves, and how the placement of GC work — on the daemon
(``bg``), in the allocating mutator (``fg``), on a pinned and capped core (``pin``) — trades
pauses and mutator utilisation against energy.

The workloads are the thesis's: GC-intensive benchmarks run as apps on the phone (DaCapo lusearch
and xalan, SPECjvm98 jack and javac, with the heaps and allocation rates measured on its board) and
apps. Each experiment is one mark-sweep configuration (generational CMS, non-generational, on-the-fly
root scanning) on the device ``sd800``; the systems are governors and concurrency policies
(``data/systems.toml``). The pinned core's cap is an experiment setting (an operating point of
that device; an estimate, not the thesis's value).

The last experiment is a many-app session (apps launched one after another while the earlier ones
stay cached, on the same phone) with and without the global GC service (``gc-service``): kills,
collections, trims and energy.

The utilisation experiments sweep ART's target heap utilisation (``heaptargetutilization``, live
bytes over the heap's size after a collection) from 10 % to 90 % under the top frequency and the
GC-aware governor. ART clamps the growth a utilisation asks for to ``heapmaxfree`` (8 MiB on this
profile), which would make every utilisation below ~85 % the same for these heaps; the sweep lifts
that clamp (``heapmaxfree=512m``) so that the utilisation alone sets the growth.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from mobmem.session.studies.study import FPS, SHARE, Experiment, Row, Study, experiment_lines, header_lines, overall, run_fps

#: MMU window lengths reported, ms.
MMU_WINDOWS = (10.0, 100.0, 1000.0)
#: The pinned GC core's frequency cap on the sd800 (the operating point nearest half its top).
PIN_MHZ = 1190


def _mutator_energy(res: dict) -> float | None:
    return ((res.get("energy") or {}).get("by_category_j") or {}).get("mutator")


def _ttid_mean(res: dict) -> float | None:
    ls = res.get("launches", [])
    return statistics.fmean(l["ttid_ms"] for l in ls) if ls else None


def _pause_per_gc(res: dict) -> float | None:
    g = res.get("gc", {})
    return g["pause_total_ms"] / g["count"] if g.get("count") else None


def _per_app_sum(key: str):
    return lambda res: float(sum(p.get(key, 0) for p in res.get("per_app", {}).values()))


def _service(key: str):
    return lambda res: float((res.get("gc_service") or {}).get(key, 0))


def _mmu(window_ms: float):
    """The worst app's MMU at this window (apps whose main thread was never stopped are at 1)."""

    def f(res: dict) -> float | None:
        vals = [r["mmu"] for r in res.get("mmu", []) if r["window_ms"] == window_ms and r["mmu"] is not None]
        return min(vals) if vals else None

    return f


FOOTPRINT = (
    Row("java_heap_mean", "Java heaps of the live apps together (resident), mean MiB", lambda r: (r.get("java_heap") or {}).get("mean_mib"), "{:,.1f}"),
    Row("java_heap_max", "… largest, MiB", lambda r: (r.get("java_heap") or {}).get("max_mib"), "{:,.1f}"),
)

# Rows that both tables have.
ENERGY = Row("energy", "CPU energy, J", overall("energy_j"), "{:,.1f}")
GC_ENERGY = Row("gc_energy", "… of GC threads, J", overall("gc_energy_j"), "{:,.2f}")
TTID = Row("ttid", "launch time (TTID), mean of all launches, ms", _ttid_mean)
GCS = Row("gcs", "collections", overall("gc_count"), "{:,.0f}")
GC_CPU = Row("gc_cpu", "GC-thread CPU time, ms", lambda r: r.get("gc", {}).get("gc_cpu_ms"), "{:,.0f}")
PAUSE_MAX = Row("pause_max", "longest GC pause, ms", lambda r: r.get("gc", {}).get("pause_max_ms"), "{:,.1f}")

ROWS = (
    ENERGY,
    GC_ENERGY,
    Row("mutator_energy", "… of app threads' own work, J", _mutator_energy, "{:,.1f}"),
    Row("power", "mean CPU power, mW", lambda r: (r.get("energy") or {}).get("mean_power_mw"), "{:,.0f}"),
    Row("mhz", "mean frequency, MHz", lambda r: statistics.fmean((r.get("energy") or {}).get("mean_mhz", {}).values() or [0.0]), "{:,.0f}"),
    TTID,
    Row("fps", "frames per second delivered (60 Hz vsync)", run_fps, "{:.2f}", FPS),
    Row("jank", "jank ratio", overall("jank_ratio"), "{:.4f}", SHARE),
    GCS,
    GC_CPU,
    Row("pause_mean", "GC pause time per collection, ms", _pause_per_gc, "{:,.2f}"),
    PAUSE_MAX,
    *(Row(f"mmu_{int(w)}", f"MMU at {w:g} ms (worst app)", _mmu(w), "{:.3f}", SHARE) for w in MMU_WINDOWS),
    *FOOTPRINT,
)

# A benchmark is a batch of work, not a UI: its units of work run back to back on the main
# thread, each longer than a vsync period, so every "frame" is late and the frame rows (jank
# ratio 1) would describe the workload, not the collector.
BENCHMARK_ROWS = tuple(r for r in ROWS if r.key not in ("fps", "jank"))

MANY_APP_ROWS = (
    Row("app_kills", "app kills", overall("app_kills"), "{:,.1f}"),
    Row("relaunches", "cold launches of killed apps (relaunches)", overall("relaunches"), "{:,.1f}"),
    Row("cached_mean", "apps cached, mean", overall("cached_mean"), "{:.2f}"),
    GCS,
    Row("service_gcs", "… started by the GC service (compactions included)", lambda r: _service("collections")(r) + _service("compactions")(r), "{:,.0f}"),
    Row("trims", "heap trims", _per_app_sum("trims"), "{:,.0f}"),
    GC_CPU,
    Row("service_cpu", "GC service CPU time, ms", _service("cpu_ms"), "{:,.1f}"),
    ENERGY,
    GC_ENERGY,
    TTID,
    PAUSE_MAX,
    *FOOTPRINT,
)

SCENARIO = "demo_hot_launch"
DEVICE = ("session.device=sd800", f"runtime.gc_pin_mhz={PIN_MHZ}")

EXPERIMENTS = [
    Experiment(
        "benchmarks",
        "GC-intensive benchmarks (DaCapo lusearch and xalan, SPECjvm98 jack and javac, 30 s each), generational concurrent mark-sweep",
        "gc_benchmarks",
        BENCHMARK_ROWS,
        settings=(*DEVICE, "system.collector=ms"),
    ),
    Experiment("cms", "Generational concurrent mark-sweep (sticky and full collections)", SCENARIO, ROWS, settings=(*DEVICE, "system.collector=ms")),
    Experiment(
        "cms-nongen",
        "Non-generational concurrent mark-sweep (full collections only)",
        SCENARIO,
        ROWS,
        settings=(*DEVICE, "system.collector=ms", "runtime.generational=false"),
    ),
    Experiment("cms-otf", "Concurrent mark-sweep with on-the-fly root scanning (checkpoints)", SCENARIO, ROWS, settings=(*DEVICE, "system.collector=ms-otf")),
    *(
        Experiment(
            f"utilization-{int(u * 100)}",
            f"Target heap utilisation {int(u * 100)} % (generational concurrent mark-sweep)",
            SCENARIO,
            ROWS,
            settings=(*DEVICE, "system.collector=ms", f"heaptargetutilization={u}", "heapmaxfree=512m"),
            systems=("ondemand", "gc-aware"),
        )
        for u in (0.1, 0.3, 0.5, 0.7, 0.9)
    ),
    Experiment(
        "many-apps",
        "Many apps: kills, collections and trims with and without the GC service",
        "demo_caching",
        MANY_APP_ROWS,
        settings=(*DEVICE, "system.collector=ms"),
    ),
]


def utilization_lines(doc: dict) -> list[str]:
    """The utilisation sweep in one table: per utilisation and system, energy, GC CPU, collections
    and the Java heaps' mean size (means over seeds)."""
    exps = [e for e in doc["experiments"] if e["id"].startswith("utilization-")]
    if not exps:
        return []
    keys = (("energy", "{:,.1f}"), ("gc_energy", "{:,.2f}"), ("gcs", "{:,.0f}"), ("gc_cpu", "{:,.0f}"), ("ttid", "{:,.0f}"), ("java_heap_mean", "{:,.1f}"))
    head = "| utilisation | system | CPU energy J | GC energy J | collections | GC CPU ms | TTID ms | Java heaps MiB |"
    lines = [
        "",
        "## Target heap utilisation, side by side",
        "",
        "Means over seeds, from the experiments above (`heapmaxfree` lifted to 512 MiB so that the utilisation sets the growth).",
        "",
        head,
        "|---" * 8 + "|",
    ]
    rows: dict[str, list[str]] = {}
    for e in exps:
        u = e["id"].split("-")[1]
        for s in e["systems"]:
            cells = []
            for k, fmt in keys:
                m = e["rows"][k][s].get("mean")
                cells.append("—" if m is None else fmt.format(m))
            rows.setdefault(u, []).append(" | ".join(cells))
            lines.append(f"| {u} % | `{s}` | " + " | ".join(cells) + " |")
    # Utilisations whose rows are the same in every column for every system.
    same: dict[tuple[str, ...], list[str]] = {}
    for u, r in rows.items():
        same.setdefault(tuple(r), []).append(u)
    for group in (g for g in same.values() if len(g) > 1):
        names = " and ".join(f"{u} %" for u in group)
        lines += [
            "",
            f"The rows at {names} are the same in every column for every system. After a full collection ART sets",
            "a heap's target to its live bytes divided by the utilisation, but never above the growth limit",
            "(`heapgrowthlimit`): once the utilisation is low enough that every app's target reaches that cap,",
            "a lower one gives the same heaps.",
        ]
    return lines


def render(doc: dict, report: Path) -> str:
    systems = doc["systems"]
    lines = header_lines(doc, STUDY)
    lines += [
        "",
        "The phone is the `sd800` profile (four Krait cores with per-core frequency scaling; operating points and",
        "voltages from its kernel's clock tables, power C·V²·f with an estimated coefficient). The baseline is the",
        "thesis's: the board's `ondemand` governor. `gc-aware` is ondemand with the frequency of the core running",
        f"GC threads' work capped for each GC cycle; `gc-pin` runs the GC daemon on one core capped at {PIN_MHZ} MHz;",
        "`gc-fg` makes the allocating mutator do every collection before it continues; `gc-service` lets one system",
        "service decide every app's collections, heap growth and trims (each under ondemand). What the",
        "power model and the governors leave out: docs/kernel.md, 'CPU frequency and energy'. MMU is the worst app's",
        "minimum mutator utilisation over windows of that length (1: never stopped).",
    ]
    for exp in doc["experiments"]:
        lines += experiment_lines(exp, STUDY, systems)
    lines += utilization_lines(doc)
    return "\n".join(lines) + "\n"


STUDY = Study(
    name="thesis",
    title="GC, frequency governors and energy on a Snapdragon-800-class phone",
    # The thesis's baseline is the board's ondemand governor; the GC-aware governor is ondemand with
    # the cap. Every other system runs under ondemand too, so each differs from the baseline in one thing.
    systems=["ondemand", "gc-aware", "ondemand+gc-pin", "ondemand+gc-fg", "ondemand+gc-service"],
    quick_systems=["ondemand", "gc-aware", "ondemand+gc-service"],
    experiments=EXPERIMENTS,
    render=render,
    quick_time_scale=0.05,
)
