"""The Acclaim study (Liang et al., ATC '20) on the simulated phone: refaults and direct reclaim
while one app (A) runs in the foreground after 0, 3, 8 or 15 background apps (B), A's launch, its
frames, and a per-launch comparison — stock Android against Acclaim as the paper describes it
(``acclaim``: foreground-aware eviction and prediction-based kswapd sizing), each part alone
(``acclaim-fae``, ``acclaim-lwp``) and as its released code sets it (``acclaim-code``).

The foreground app is the app of a run's last launch (the scenarios launch A last); nothing here
knows a scenario's or an app's name. The relaunch experiment brings the background apps back after
A; the storage experiment has the foreground app read and write 512 MiB and 1 GiB files."""

from __future__ import annotations

import statistics
from pathlib import Path

from mobmem.session.fidelity import launch_stat
from mobmem.session.studies.study import FPS, SHARE, Experiment, Row, Study, experiment_lines, fps, header_lines, overall, per_app_lines


def _fg_app(res: dict) -> str | None:
    ls = res.get("launches", [])
    return ls[-1]["app"] if ls else None


def _needed_again(app: dict) -> float:
    """Evicted pages an app needed again: its swap-ins and its file refaults."""
    return float(app.get("swapin", 0) + app.get("refault_file", 0))


def _fg_needed(res: dict) -> float | None:
    a = _fg_app(res)
    return _needed_again(res["per_app"][a]) if a and a in res.get("per_app", {}) else None


def _others_needed(res: dict) -> float | None:
    a = _fg_app(res)
    return float(sum(_needed_again(v) for k, v in res.get("per_app", {}).items() if k != a)) if a else None


def _vm(key: str):
    return lambda res: float(res.get("vmstat", {}).get(key, 0))


def _needed_ratio(res: dict) -> float | None:
    """Pages needed again over pages evicted; 0 of 0 (nothing evicted, nothing needed again) is 0,
    as the simulator writes its reclaim ratios."""
    vm = res.get("vmstat", {})
    evicted = vm.get("pgsteal_kswapd", 0) + vm.get("pgsteal_direct", 0)
    needed = vm.get("pswpin", 0) + vm.get("workingset_refault_file", 0)
    if evicted == 0:
        return 0.0 if needed == 0 else None
    return needed / evicted


def _fg_activations(res: dict) -> float | None:
    """The foreground app's file refaults that activated their page: what Acclaim's instrumented
    kernel counts as refaults (one line per activating refault, each page tagged with its owner)."""
    a = _fg_app(res)
    app = res.get("per_app", {}).get(a) if a else None
    return float(app.get("activate_file", 0)) if app else None


def _activate_ratio(res: dict) -> float | None:
    """Activating file refaults over evicted file pages: Acclaim's refault ratio as its kernel counts it."""
    v = res.get("ratios", {}).get("file_activate_ratio")
    return None if v is None else float(v)


def _direct_share(res: dict) -> float | None:
    v = res.get("ratios", {}).get("direct_reclaim_ratio")
    return None if v is None else float(v)


def _fg_launch(key: str):
    def f(res: dict) -> float | None:
        ls = res.get("launches", [])
        if not ls:
            return None
        last = ls[-1]
        return last["ttid_ms"] if key == "ttid_ms" else last["breakdown"].get(key)

    return f


def _fg_fps(res: dict) -> float | None:
    """The FPS of the foreground app's frames."""
    a = _fg_app(res)
    fr = res.get("per_app", {}).get(a, {}).get("frames", {}) if a else {}
    return fps(fr.get("frames", 0), fr.get("missed_vsyncs", 0))


ROWS = (
    Row("fg_needed", "evicted pages the foreground app needed again (swap-ins + file refaults)", _fg_needed, "{:,.0f}"),
    Row("others_needed", "evicted pages the other apps needed again", _others_needed, "{:,.0f}"),
    Row("needed_ratio", "pages needed again / pages evicted", _needed_ratio, "{:.3f}"),
    Row("fg_activations", "file refaults of the foreground app that activated their page (what Acclaim's figures count)", _fg_activations, "{:,.0f}"),
    Row("activate_ratio", "activating file refaults / file pages evicted (Acclaim's refault ratio)", _activate_ratio, "{:.3f}"),
    Row("evicted", "pages evicted (pgsteal)", lambda r: _vm("pgsteal_kswapd")(r) + _vm("pgsteal_direct")(r), "{:,.0f}"),
    Row("allocstall", "direct reclaims (allocstall)", _vm("allocstall"), "{:,.0f}"),
    Row("direct_share", "share of evictions by direct reclaim", _direct_share, "{:.3f}", SHARE),
    Row("fg_ttid", "launch time of the foreground app (TTID), ms", _fg_launch("ttid_ms")),
    Row("fg_launch_stall", "reclaim stall in that launch, ms", _fg_launch("reclaim_stall_ms")),
    Row("fg_fps", "FPS of the foreground app", _fg_fps, "{:.2f}", FPS),
    Row("kswapd_cpu", "kswapd CPU, ms", lambda r: float(r.get("kswapd_cpu_ms", 0.0)), "{:,.0f}"),
)

PER_APP = (
    Row(
        "app_needed",
        "evicted pages the app needed again (swap-ins + file refaults)",
        lambda r: {a: _needed_again(v) for a, v in r.get("per_app", {}).items()},
        "{:,.0f}",
    ),
)


def _hot(stat: str):
    return lambda res: launch_stat(res, "*", "hot", stat)


RELAUNCH_ROWS = (
    Row("hot_p50", "relaunch time of the background apps (hot launches), median ms", _hot("p50")),
    Row("hot_p90", "relaunch time of the background apps (hot launches), p90 ms", _hot("p90")),
    Row("hot_n", "hot launches", overall("hot_launches"), "{:,.0f}"),
    Row("relaunches", "cold launches instead (the app was killed)", overall("relaunches"), "{:,.0f}"),
    Row("needed_ratio", "pages needed again / pages evicted", _needed_ratio, "{:.3f}"),
    Row("allocstall", "direct reclaims (allocstall)", _vm("allocstall"), "{:,.0f}"),
)


def _io(mode: str, mib: int, key: str = "mb_per_s"):
    """A storage test's number: the first `file_io` record of this mode and size."""

    def f(res: dict) -> float | None:
        r = next((r for r in res.get("file_io", []) if r["mode"] == mode and r["mib"] == mib), None)
        return None if r is None else float(r[key])

    return f


STORAGE_ROWS = tuple(
    row
    for mode, mib, label in (("read", 512, "512 MiB"), ("write", 512, "512 MiB"), ("read", 1024, "1 GiB"), ("write", 1024, "1 GiB"))
    for row in (
        Row(f"{mode}_{mib}", f"sequential 4 KiB {mode}s of a {label} file, MB/s", _io(mode, mib)),
        Row(f"{mode}_{mib}_stall", "… reclaim stall during it, ms", _io(mode, mib, "reclaim_stall_ms"), "{:,.0f}"),
    )
)

EXPERIMENTS = [
    *(
        Experiment(f"fg-refault-{case}", f"Foreground refaults and reclaim: {title}", f"fg_refault_{case.replace('-', '_')}", ROWS, per_app=PER_APP)
        for case, title in (
            ("A", "the foreground app alone"),
            ("3B-A", "after 3 background apps"),
            ("8B-A", "after 8 background apps"),
            ("15B-A", "after 15 background apps"),
        )
    ),
    # The paper's second memory size: 2.5 GB, made from the 3 GB phone by memtester holding 0.5 GB.
    *(
        Experiment(
            f"fg-refault-{case}-2.5GB",
            f"Foreground refaults and reclaim: {title}, 2.5 GB (memtester holds 0.5 GB)",
            f"fg_refault_{case.replace('-', '_')}",
            ROWS,
            settings=("system.memtester_mib=512",),
            per_app=PER_APP,
        )
        for case, title in (("8B-A", "after 8 background apps"), ("15B-A", "after 15 background apps"))
    ),
    Experiment("relaunch-8B", "Relaunch of the 8 background apps after the foreground app", "fg_refault_8B_A_relaunch", RELAUNCH_ROWS, per_app=PER_APP),
    Experiment("storage-8B", "Storage throughput of the foreground app with 8 background apps", "storage_io_8B", STORAGE_ROWS),
]


def launch_changes(exp: dict, systems: list[str], seeds: list[int]) -> list[str]:
    """Each launch's TTID under every system (mean over seeds, launches matched by their place in
    the script), with the change against the first system, and the distribution of changes."""
    base = systems[0]
    res = exp["results"]
    by = {s: [res[f"{s}/{sd}"].get("launches", []) for sd in seeds] for s in systems}
    n = min(len(x) for runs in by.values() for x in runs)
    if n == 0:
        return []

    def mean_ttid(s: str, i: int) -> float:
        return statistics.fmean(r[i]["ttid_ms"] for r in by[s])

    lines = ["", "Every launch, TTID in ms (mean over seeds) and its change against " + f"`{base}`:", ""]
    lines += ["| # | app | kind | " + " | ".join(f"`{s}`" for s in systems) + " | " + " | ".join(f"`{s}` change" for s in systems[1:]) + " |"]
    lines += ["|---" * (3 + len(systems) + len(systems) - 1) + "|"]
    changes: dict[str, list[float]] = {s: [] for s in systems[1:]}
    for i in range(n):
        first = by[base][0][i]
        vals = {s: mean_ttid(s, i) for s in systems}
        row = [str(i), first["app"], first["kind"], *(f"{vals[s]:,.1f}" for s in systems)]
        for s in systems[1:]:
            c = (vals[s] / vals[base] - 1.0) * 100.0 if vals[base] else 0.0
            changes[s].append(c)
            row.append(f"{c:+.1f} %")
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "| | " + " | ".join(f"`{s}`" for s in systems[1:]) + " |", "|---" * len(systems) + "|"]
    for label, fn in (("median change", statistics.median), ("best (most negative)", min), ("worst", max)):
        lines.append(f"| {label} | " + " | ".join(f"{fn(changes[s]):+.1f} %" for s in systems[1:]) + " |")
    lines.append(
        "| launches faster / slower | " + " | ".join(f"{sum(c < 0 for c in changes[s])} / {sum(c > 0 for c in changes[s])}" for s in systems[1:]) + " |"
    )
    return lines


def render(doc: dict, report: Path) -> str:
    systems, seeds = doc["systems"], doc["seeds"]
    lines = header_lines(doc, STUDY)
    lines += [
        "The systems: `stock` is the scenario as written; `acclaim` is Acclaim as the paper describes it",
        "(foreground-aware eviction and lightweight prediction-based kswapd sizing); `acclaim-fae` and",
        "`acclaim-lwp` each part alone; `acclaim-code` as its released code sets it. What each models:",
        "docs/kernel.md, row 'reclaim policies (Acclaim)'. The phone is the paper's: the Huawei-P9-class",
        "profile (`p9`: 3 GB, Android 7 with its mark-sweep collector, kernel 4.1, eMMC, zram), and its 2.5 GB",
        "setting is the same phone with a memtester holding 0.5 GB locked, as the paper made it. The foreground",
        "app is the app of each run's last launch. Kernels before 5.9 count no anon refaults, so evicted pages",
        "needed again are counted as swap-ins plus file refaults.",
    ]
    for exp in doc["experiments"]:
        lines += experiment_lines(exp, STUDY, systems)
        lines += launch_changes(exp, systems, seeds)
        lines += per_app_lines(exp, STUDY, systems)
    return "\n".join(lines) + "\n"


STUDY = Study(
    name="acclaim",
    title="Acclaim on the simulated phone",
    systems=["stock", "acclaim", "acclaim-fae", "acclaim-lwp", "acclaim-code"],
    quick_systems=["stock", "acclaim"],
    experiments=EXPERIMENTS,
    render=render,
    quick_time_scale=0.1,
)
