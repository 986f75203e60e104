"""The Fleet study (Huang et al., ASPLOS '24) on the simulated phone: caching capacity with
synthetic large- and small-object apps and the 18 commercial apps, hot launch, the GC working set
in the background, frames and background GC CPU — stock Android against Fleet as the paper
describes it (``fleet``), as its released code sets it (``fleet-code``), runtime-guided swap
alone (``fleet-rgs``, an ablation) and Marvin, the object-granularity swap Fleet compares against
(``marvin``), with the bytes each app swapped at object grain (the runtime) and page grain (the
kernel)."""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path

from mobmem.session.fidelity import cached_at_first_kill, cached_max_after_launch, curve_level, first_drop, launch_stat, measured_launches
from mobmem.session.studies.study import FPS, SHARE, Experiment, Row, Study, experiment_lines, header_lines, overall, per_app_lines, run_fps


def _per_app_launch(stat: str):
    def f(res: dict) -> dict:
        return {a: launch_stat(res, a, "hot", stat) for a in res.get("per_app", {})}

    return f


def _gcs(res: dict, state: str) -> list[dict]:
    return [g for g in res.get("gcs", []) if g["state"] == state]


def _per_gc(key: str, state: str):
    def f(res: dict) -> float | None:
        xs = [g[key] for g in _gcs(res, state)]
        return sum(xs) / len(xs) if xs else None

    return f


#: Causes of the one compacting collection that follows going to the background: ART's collector
#: transition (stock) or Fleet's grouping GC — a trace of the whole heap either way.
_BG_COMPACTION = ("CollectorTransition", "RGS")


def _later_bg(key: str):
    """Mean ``key`` of the background collections other than the compaction after going there."""

    def f(res: dict) -> float | None:
        xs = [g[key] for g in _gcs(res, "bg") if g["cause"] not in _BG_COMPACTION]
        return sum(xs) / len(xs) if xs else None

    return f


def _gc_sum(key: str, state: str):
    def f(res: dict) -> float | None:
        return float(sum(g[key] for g in _gcs(res, state)))

    return f


MIB = float(1 << 20)


def _object_swap(key: str, scale: float = 1.0):
    """A counter of the runtime's object swap summed over the apps (zero without such a policy)."""
    return lambda res: sum(a.get("object_swap", {}).get(key, 0) for a in res.get("per_app", {}).values()) * scale


def _per_app(fn):
    return lambda res: {a: fn(v) for a, v in res.get("per_app", {}).items()}


#: Swapping at two grains: what the runtime released object by object (Marvin) and what the
#: kernel swapped out page by page.
SWAP_GRAIN_ROWS = (
    Row("kernel_swapout_mib", "MiB swapped out by the kernel (page grain)", lambda r: r.get("vmstat", {}).get("pswpout", 0) * 4096 / MIB, "{:,.0f}"),
    Row("object_stubs", "objects given stubs (object swap)", _object_swap("stubs_created"), "{:,.0f}"),
    Row("object_released_mib", "MiB of objects released by the runtime (object grain)", _object_swap("bytes_reclaimed", 1 / MIB), "{:,.0f}"),
    Row("object_released_pages_mib", "MiB of pages those releases freed", _object_swap("pages_reclaimed", 4096 / MIB), "{:,.0f}"),
    Row("object_read_back_mib", "MiB of objects read back (object swap-ins)", _object_swap("bytes_swapped_in", 1 / MIB), "{:,.0f}"),
    Row("object_writes_refused", "object writes refused (the app's swap file full)", _object_swap("writes_refused"), "{:,.0f}"),
)

#: Per app: the bytes swapped at each grain.
SWAP_GRAIN_PER_APP = (
    Row(
        "app_kernel_swapout_mib", "MiB of the app's memory the kernel swapped out (page grain)", _per_app(lambda a: a.get("swapout", 0) * 4096 / MIB), "{:,.0f}"
    ),
    Row(
        "app_object_released_mib",
        "MiB of the app's objects the runtime released (object grain)",
        _per_app(lambda a: a.get("object_swap", {}).get("bytes_reclaimed", 0) / MIB),
        "{:,.0f}",
    ),
)


def _hot_object_swap_in_ms(res: dict) -> float | None:
    xs = [l["breakdown"].get("object_swap_in_ms", 0.0) for l in measured_launches(res, "hot")]
    return sum(xs) / len(xs) if xs else None


CACHING_ROWS = (
    Row("first_drop", "launch after which the count of apps alive first drops", first_drop, "{:,.1f}"),
    Row("first_kill", "apps alive when an app is first killed", cached_at_first_kill),
    Row("cached_max", "apps alive after a launch, most", cached_max_after_launch),
    Row("level", "apps alive after a launch, mean over launches 19 to the last", lambda r: curve_level(r, 19), "{:,.2f}"),
    Row("cached_mean", "apps cached, mean", overall("cached_mean"), "{:,.2f}"),
    Row("app_kills", "app kills", overall("app_kills")),
    Row("relaunches", "cold launches caused by kills", overall("relaunches")),
    Row("hot_launches", "hot launches", overall("hot_launches")),
    Row("hot_p50", "hot launch median, ms", lambda r: launch_stat(r, "*", "hot", "p50")),
    Row("pswpin", "swap-ins (pswpin)", overall("pswpin"), "{:,.0f}"),
    *SWAP_GRAIN_ROWS,
)

HOT_ROWS = (
    Row("hot_p50", "hot launch median, ms (all apps)", lambda r: launch_stat(r, "*", "hot", "p50")),
    Row("hot_p90", "hot launch p90, ms (all apps)", lambda r: launch_stat(r, "*", "hot", "p90")),
    Row("relaunches", "cold launches caused by kills", overall("relaunches")),
    Row("app_kills", "app kills", overall("app_kills")),
    Row("cached_mean", "apps cached, mean", overall("cached_mean"), "{:,.2f}"),
    Row("pswpin", "swap-ins (pswpin)", overall("pswpin"), "{:,.0f}"),
    Row("jank", "jank ratio (foreground frames)", overall("jank_ratio"), "{:.4f}", SHARE),
    Row("fps", "FPS of the foreground app", run_fps, "{:.2f}", FPS),
    Row("bg_gc_cpu", "GC CPU in background, s", lambda r: _gc_sum("gc_cpu_ms", "bg")(r) / 1000.0, "{:,.1f}"),
    Row("bg_gc_objects", "objects touched per background GC", _per_gc("objects_touched", "bg"), "{:,.0f}"),
    Row("bg_later_objects", "objects touched per background GC after the transition / grouping GC", _later_bg("objects_touched"), "{:,.0f}"),
    Row("hot_object_swap_in", "object swap-in time per hot launch, ms (mean)", _hot_object_swap_in_ms, "{:,.1f}"),
    *SWAP_GRAIN_ROWS,
)

GCWS_ROWS = (
    Row("bg_gc_objects", "objects touched per background GC", _per_gc("objects_touched", "bg"), "{:,.0f}"),
    Row("bg_gc_pages", "pages touched per background GC", _per_gc("pages_touched", "bg"), "{:,.0f}"),
    Row("bg_later_objects", "objects touched per background GC after the transition / grouping GC", _later_bg("objects_touched"), "{:,.0f}"),
    Row("bg_later_pages", "pages touched per background GC after the transition / grouping GC", _later_bg("pages_touched"), "{:,.0f}"),
    Row("bg_gc_faults", "major faults of background GCs", _gc_sum("major_faults", "bg"), "{:,.0f}"),
    Row("bg_gcs", "background GCs", lambda r: float(len(_gcs(r, "bg"))), "{:,.0f}"),
    Row("bg_gc_cpu", "GC CPU in background, ms", _gc_sum("gc_cpu_ms", "bg"), "{:,.0f}"),
    Row("fg_gc_objects", "objects touched per foreground GC", _per_gc("objects_touched", "fg"), "{:,.0f}"),
)

EXPERIMENTS = [
    Experiment(
        "caching-large",
        "Caching capacity: synthetic apps of large objects (2 KiB)",
        "caching_capacity_synthetic_large",
        CACHING_ROWS,
        per_app=SWAP_GRAIN_PER_APP,
    ),
    Experiment(
        "caching-small", "Caching capacity: synthetic apps of small objects", "caching_capacity_synthetic_small", CACHING_ROWS, per_app=SWAP_GRAIN_PER_APP
    ),
    Experiment("caching-commercial", "Caching capacity: the 18 commercial apps", "caching_capacity", CACHING_ROWS, per_app=SWAP_GRAIN_PER_APP),
    # The protocol of the script that measured the paper's per-app hot launches (its artifact's
    # run-launch.py): all apps started, then groups of three brought back in turn.
    Experiment(
        "hot-launch",
        "Hot launch, frames and background GC: the 18 commercial apps, brought back in groups of three",
        "hot_launch_groups",
        HOT_ROWS,
        per_app=(Row("hot_p50", "hot launch median, ms", _per_app_launch("p50")), Row("hot_p90", "hot launch p90, ms", _per_app_launch("p90"))),
    ),
    Experiment("gc-working-set", "GC working set: one app in the foreground, the background, the foreground", "gc_working_set", GCWS_ROWS),
]


def curve_figure(exp: dict, systems: list[str], seeds: list[int]):
    """Apps alive after each launch (mean across seeds), one line per system (a matplotlib Figure)."""
    from mobmem.session.plots import _plt, integer_axis

    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 3.2))
    styles = ["-", "--", ":", "-."]
    for i, s in enumerate(systems):
        curves = [exp["results"][f"{s}/{sd}"]["cached_apps"]["alive_after_launch"] for sd in seeds]
        n = min(len(c) for c in curves)
        if n:
            ys = [sum(c[j] for c in curves) / len(curves) for j in range(n)]
            ax.plot(range(1, n + 1), ys, label=s, drawstyle="steps-post", linestyle=styles[i % len(styles)], linewidth=1.6)
    ax.set_xlabel("launch (number in the scenario)")
    ax.set_ylabel("apps alive after it (count)")
    integer_axis(ax.xaxis)
    integer_axis(ax.yaxis)
    ax.set_title(exp["title"] + (f" (mean of {len(seeds)} seeds)" if len(seeds) > 1 else ""), fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def _curve_figure(exp: dict, systems: list[str], seeds: list[int], path: Path) -> list[str]:
    """:func:`curve_figure` as PNG and SVG next to ``path``; the files' names."""
    from mobmem.session.plots import _plt

    fig = curve_figure(exp, systems, seeds)
    names = []
    for ext in ("png", "svg"):
        p = path.with_suffix("." + ext)
        fig.savefig(p, dpi=120, metadata={"Date": None} if ext == "svg" else None)
        names.append(p.name)
    _plt().close(fig)
    return names


def explain(exp: dict, systems: list[str], seeds: list[int]) -> list[str]:
    """For the scenario's first app: its heap pages by region class at its hot launches (in swap
    at the start, brought back during the launch, resident at the start) and its background GCs'
    work, per system — where Fleet's win (or loss) comes from."""
    first = next(iter(exp["results"].values()))
    app = next((x["app"] for x in first.get("launches", [])), None)
    if app is None:
        return []
    lines = [
        "",
        f"### Where the difference comes from: {app}",
        "",
        f"{app}'s heap pages by region class at its hot launches (per launch, mean over launches and seeds):",
        "in swap when the launch started, brought back from swap by the time its first frame was drawn",
        "(net: in swap before minus in swap after), and resident when it started. Under `stock` every",
        "region is of the default class; Fleet's grouping GC sorts objects into launch, working-set and cold",
        "regions and the background-object GC puts new background objects in their own.",
        "",
        "| system | region class | pages | in swap at start | brought back during launch | resident at start |",
        "|---|---|---|---|---|---|",
    ]
    for s in systems:
        per_class: dict[str, list[float]] = {}
        n = 0
        for sd in seeds:
            for launch in measured_launches(exp["results"][f"{s}/{sd}"], "hot"):
                if launch["app"] != app:
                    continue
                n += 1
                for c in launch.get("heap_pages", []):
                    acc = per_class.setdefault(c["class"], [0.0, 0.0, 0.0, 0.0])
                    acc[0] += c["pages"]
                    acc[1] += c["swapped_before"]
                    acc[2] += c["swapped_before"] - c["swapped_after"]
                    acc[3] += c["resident_before"]
        for cls, acc in per_class.items():
            if acc[0] > 0:
                lines.append(f"| `{s}` | {cls} | " + " | ".join(f"{x / n:,.0f}" for x in acc) + " |")
    lines += [
        "",
        f"{app}'s background GCs (mean over seeds): collections, objects and pages touched, and major faults",
        "(pages the GC had to bring back from swap).",
        "",
        "| system | background GCs | objects touched | pages touched | major faults |",
        "|---|---|---|---|---|",
    ]
    for s in systems:
        tot = [0.0, 0.0, 0.0, 0.0]
        for sd in seeds:
            for g in exp["results"][f"{s}/{sd}"].get("gcs", []):
                if g["app"] == app and g["state"] == "bg":
                    tot = [tot[0] + 1, tot[1] + g["objects_touched"], tot[2] + g["pages_touched"], tot[3] + g["major_faults"]]
        lines.append(f"| `{s}` | " + " | ".join(f"{x / len(seeds):,.0f}" for x in tot) + " |")
    return lines


def _mib_spread(kb: list[float]) -> str:
    """Median and range of values in kB, in MiB."""
    if not kb:
        return "—"
    v = sorted(x / 1024 for x in kb)
    return f"{statistics.median(v):,.0f} [{v[0]:,.0f}–{v[-1]:,.0f}]"


def kill_lines(exp: dict, systems: list[str], seeds: list[int]) -> list[str]:
    """Who ended the apps in a caching run and what the phone had left when it did: per system,
    the kills of apps (system processes left out) of all seeds by killer and reason, and the swap
    in use and the free memory when each kill was decided — a kill with the swap device full is a
    different mechanism from one with swap to spare."""
    from mobmem.session.output import kill_rows

    lines = [
        "",
        "Who ended the apps (all seeds): the apps' kills by killer and reason, and the phone's swap in",
        "use and free memory when each kill was decided (median [range] over the kills, MiB).",
        "",
        "| system | kills | by killer and reason | swap in use at the kills | free memory at the kills |",
        "|---|---|---|---|---|",
    ]
    for s in systems:
        recs = [r for sd in seeds for r in kill_rows(exp["results"][f"{s}/{sd}"]) if r["is_app"]]
        by = Counter(f"{r.get('reason')} ({r.get('killer')})" for r in recs)
        reasons = ", ".join(f"{k}: {n}" for k, n in sorted(by.items(), key=lambda kv: (-kv[1], kv[0]))) or "—"
        swap = [r["swap_used_kb"] for r in recs if r.get("swap_used_kb") is not None]
        free = [r["free_kb"] for r in recs if r.get("free_kb") is not None]
        lines.append(f"| `{s}` | {len(recs)} | {reasons} | {_mib_spread(swap)} | {_mib_spread(free)} |")
    return lines


def render(doc: dict, report: Path) -> str:
    """The report page; figures go to a folder named after the page (``fleet/``)."""
    systems, seeds = doc["systems"], doc["seeds"]
    figdir = report.parent / report.stem
    figdir.mkdir(parents=True, exist_ok=True)
    lines = header_lines(doc, STUDY)
    lines += [
        "The systems: `stock` is the scenario as written; `fleet` is Fleet with the paper's parameters",
        "(runtime-guided swap and the background-object GC); `fleet-code` as its released code sets it;",
        "`fleet-rgs` runtime-guided swap alone; `marvin` is Marvin (object-granularity swap) as the Fleet paper",
        "compares it. What each models: docs/runtime.md, sections Fleet and Marvin.",
        "",
        "Every experiment runs as the Fleet artifact ran it, for every system: the Pixel 3 with its 2 GB swap file",
        "on flash, the build's heap settings, and lmkd unable to kill, so that only the ActivityManager's process",
        "limits and the kernel OOM killer end apps; the caching curves count, after each launch, the apps whose",
        "process is alive, the one just launched included (the artifact's count of package names in `dumpsys",
        "meminfo`). The stock inputs nobody measured are the device's calibration (above): fitted to the stock",
        "phone's measurements only (docs/fidelity.md), never to a policy's result.",
    ]
    for exp in doc["experiments"]:
        lines += experiment_lines(exp, STUDY, systems)
        if exp["id"].startswith("caching"):
            names = _curve_figure(exp, systems, seeds, figdir / exp["id"])
            lines += ["", f"![apps alive after each launch]({figdir.name}/{names[0]}) ([SVG]({figdir.name}/{names[1]}))"]
            lines += kill_lines(exp, systems, seeds)
        if exp["id"] == "hot-launch":
            lines += explain(exp, systems, seeds)
        lines += per_app_lines(exp, STUDY, systems)
    return "\n".join(lines) + "\n"


STUDY = Study(
    name="fleet",
    title="Fleet on the simulated phone",
    systems=["stock", "fleet", "fleet-code", "fleet-rgs", "marvin"],
    quick_systems=["stock", "fleet", "marvin"],
    experiments=EXPERIMENTS,
    render=render,
)
