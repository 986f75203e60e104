"""The two simulation grains compared: the judge of the unit grain.

The runtime simulates the objects of an allocation unit either one by one (``runtime.grain =
object``, the reference) or stored together as one unit cell (``runtime.grain = unit``, the
default, faster). The unit grain changes host work only, so a session must give the same
page-level and user-level results in both. :func:`run_suite` runs each scenario of a suite over
several seeds in both grains; :func:`compare` checks, per metric, that the unit grain's mean
across seeds is within ±3 % of the reference's mean or inside the reference's 95 % confidence
interval across seeds, and that the counts of Java objects allocated, marked and copied are
identical run by run. It also counts the runs whose whole result (everything but wall-clock
time and the grain setting itself) is identical.

The suite (:data:`SUITE`) covers the shipped experiments: the two demos, the hot-launch and
caching-capacity experiments at a tenth of their length, the small synthetic caching scenario
and a foreground-refault scenario. :data:`QUICK` is a short version for a quick check.
"""

from __future__ import annotations

import math
from typing import Callable

#: (scenario, settings) of the full comparison.
SUITE: list[tuple[str, tuple[str, ...]]] = [
    ("demo_hot_launch", ("session.time_scale=0.1",)),
    ("demo_caching", ("session.time_scale=0.1",)),
    ("hot_launch", ("session.time_scale=0.1",)),
    ("caching_capacity", ("session.time_scale=0.1",)),
    ("caching_capacity_synthetic_small", ()),
    ("fg_refault_8B_A", ()),
]
#: A short check: the demos at a tenth of their length.
QUICK: list[tuple[str, tuple[str, ...]]] = SUITE[:2]

GRAINS = ("object", "unit")
#: Relative tolerance on the mean of every compared metric.
TOLERANCE = 0.03

#: Compared metrics: key, label.
METRICS = [
    ("pswpin", "swap-ins (pswpin)"),
    ("pswpout", "swap-outs (pswpout)"),
    ("refault_anon", "anon refaults (workingset)"),
    ("refault_file", "file refaults (workingset)"),
    ("pgmajfault", "major faults (pgmajfault)"),
    ("allocstall", "direct reclaims (allocstall)"),
    ("gc_pages_touched", "GC pages touched"),
    ("gc_count", "GCs"),
    ("ttid_mean_ms", "TTID mean ms (all launches)"),
    ("kills", "kills"),
    ("cached_mean", "cached apps mean"),
]
#: Counts that must be identical run by run.
COUNTS = [
    ("objects_allocated", "Java objects allocated"),
    ("objects_marked", "Java objects marked (traced)"),
    ("objects_copied", "Java objects copied"),
]


def metrics(res: dict) -> dict:
    """The compared numbers of one run, and the per-launch TTIDs and cached-apps curve. Every
    number is read from a key the session result has (a missing key is an error, not a zero)."""
    vm, gc, swap, refaults = res["vmstat"], res["gc"], res["swap"], res["refaults"]
    ttids = [float(l["ttid_ms"]) for l in res["launches"]]
    out = {
        "pswpin": float(swap["pswpin"]),
        "pswpout": float(swap["pswpout"]),
        "refault_anon": float(refaults["anon"]),
        "refault_file": float(refaults["file"]),
        "pgmajfault": float(vm["pgmajfault"]),
        "allocstall": float(res["direct_reclaims"]),
        "gc_pages_touched": float(gc["gc_pages_touched"]),
        "gc_count": float(gc["count"]),
        "ttid_mean_ms": sum(ttids) / len(ttids) if ttids else 0.0,
        "kills": float(len(res["kill_records"])),
        "cached_mean": float(res["cached_apps"]["mean"] or 0.0),
    }
    counts = {k: int(gc[k]) for k, _ in COUNTS}
    curve = [float(x) for x in res["cached_apps"]["alive_after_launch"]]
    return {"metrics": out, "counts": counts, "ttids": ttids, "cached_curve": curve}


def comparable(res: dict) -> dict:
    """A result without what may differ between grains by design: wall-clock time and the grain
    setting itself (in ``parameters`` and the runtime settings of ``system``)."""
    from mobmem.session import deterministic_view

    d = deterministic_view(res)
    d["parameters"] = [p for p in d.get("parameters", []) if p[0] != "runtime.grain"]
    system = d.get("system")
    if isinstance(system, dict) and isinstance(system.get("runtime_settings"), list):
        system["runtime_settings"] = [p for p in system["runtime_settings"] if p[0] not in ("runtime.grain", "grain")]
    return d


def _job(args: tuple) -> tuple[str, int, str, dict]:
    """One run in a worker process: (scenario, seed, grain, extracted numbers, the comparable
    result's digest)."""
    scenario, settings, seed, grain = args
    import hashlib
    import json

    from mobmem import session

    res = session.run(scenario, [*settings, f"runtime.grain={grain}"], seed=seed)
    digest = hashlib.sha256(json.dumps(comparable(res), sort_keys=True).encode()).hexdigest()
    m = metrics(res)
    m["digest"] = digest
    m["sim_seconds"] = res.get("sim_seconds", 0.0)
    m["wall_seconds"] = res.get("wall_seconds", 0.0)
    return scenario, seed, grain, m


def seeds_of(scenario: str, n: int) -> list[int]:
    """The scenario's seed + 0 … n−1."""
    from mobmem import session

    base = session.scenario_seed(session.resolve_scenario(scenario))
    return [base + i for i in range(n)]


def run_suite(
    suite: list[tuple[str, tuple[str, ...]]], seeds: int, extra: list[str], jobs: int, on_run: Callable[[str, int, str, dict], None] | None = None
) -> dict:
    """Every (scenario, seed, grain) run of ``suite``; returns ``{scenario: {(seed, grain):
    numbers}}``. ``extra`` settings apply to every run (after the suite's)."""
    todo = []
    for scenario, settings in suite:
        for seed in seeds_of(scenario, seeds):
            for g in GRAINS:
                todo.append((scenario, (*settings, *extra), seed, g))
    results: dict = {s: {} for s, _ in suite}

    def done(r: tuple) -> None:
        scenario, seed, grain, m = r
        results[scenario][(seed, grain)] = m
        if on_run:
            on_run(scenario, seed, grain, m)

    from mobmem.session.pool import run_all

    run_all(_job, todo, jobs, done)
    return results


def _ci(xs: list[float]) -> tuple[float | None, float | None]:
    if len(xs) < 2:
        return None, None
    from mobmem.harness.stats import t_interval

    iv = t_interval(xs, 0.95)
    return iv.low, iv.high


def _agree(ref: list[float], new: list[float]) -> tuple[float, float, float | None, bool]:
    """(reference mean, unit mean, relative difference, within tolerance or the reference's CI)."""
    a, b = sum(ref) / len(ref), sum(new) / len(new)
    if a == b:
        return a, b, 0.0, True
    rel = (b - a) / abs(a) if a != 0 else None
    lo, hi = _ci(ref)
    ok = (rel is not None and abs(rel) <= TOLERANCE) or (lo is not None and lo <= b <= hi)
    return a, b, rel, ok


def _curve(ref: list[list[float]], new: list[list[float]]) -> tuple[float | None, bool]:
    """Point by point (a launch, or the cached apps after a launch) over the points all runs have:
    the largest relative difference between the means, and whether every point agrees (within
    the tolerance or the reference's CI). (None, True) when there are no points; curves of
    different lengths disagree."""
    if len({len(c) for c in ref + new}) > 1:
        return math.inf, False
    n = len(ref[0]) if ref else 0
    worst, ok = (0.0 if n else None), True
    for i in range(n):
        a, b, rel, agree = _agree([c[i] for c in ref], [c[i] for c in new])
        ok = ok and agree
        if a != b:
            worst = max(worst, abs(rel) if rel is not None else math.inf)
    return worst, ok


def compare(results: dict) -> dict:
    """Per scenario: each metric's means in both grains, the relative difference and the verdict;
    the counts' identity run by run; the worst per-launch TTID and cached-curve differences; the
    number of runs with identical results."""
    out: dict = {}
    for scenario, runs in results.items():
        seeds = sorted({s for s, _ in runs})
        pairs = [(runs[(s, "object")], runs[(s, "unit")]) for s in seeds if (s, "object") in runs and (s, "unit") in runs]
        if not pairs:
            continue
        rows = []
        for key, label in METRICS:
            a, b, rel, ok = _agree([p[0]["metrics"][key] for p in pairs], [p[1]["metrics"][key] for p in pairs])
            rows.append({"metric": key, "label": label, "object": a, "unit": b, "rel_diff": rel, "ok": ok})
        # Per launch: each launch's TTID (mean across seeds) and the cached apps after it.
        ttid_worst, ttid_ok = _curve([p[0]["ttids"] for p in pairs], [p[1]["ttids"] for p in pairs])
        curve_worst, curve_ok = _curve([p[0]["cached_curve"] for p in pairs], [p[1]["cached_curve"] for p in pairs])
        counts = []
        for key, label in COUNTS:
            same = all(p[0]["counts"][key] == p[1]["counts"][key] for p in pairs)
            counts.append(
                {
                    "count": key,
                    "label": label,
                    "object": sum(p[0]["counts"][key] for p in pairs),
                    "unit": sum(p[1]["counts"][key] for p in pairs),
                    "identical": same,
                }
            )
        out[scenario] = {
            "seeds": seeds,
            "metrics": rows,
            "ttid_worst_launch_rel_diff": ttid_worst,
            "cached_curve_worst_rel_diff": curve_worst,
            "counts": counts,
            "identical_runs": sum(1 for p in pairs if p[0]["digest"] == p[1]["digest"]),
            "runs": len(pairs),
            "wall_seconds": {g: sum(runs[(s, g)]["wall_seconds"] for s in seeds if (s, g) in runs) for g in GRAINS},
            "sim_seconds": sum(p[0]["sim_seconds"] for p in pairs),
        }
        per = out[scenario]
        per["ttid_per_launch_ok"], per["cached_curve_ok"] = ttid_ok, curve_ok
        per["ok"] = all(r["ok"] for r in rows) and all(c["identical"] for c in counts) and ttid_ok and curve_ok
    return out


def markdown(cmp: dict, command: str) -> str:
    """The comparison as a Markdown table (one row per scenario and metric)."""
    lines = [f"`{command}`", "", "| scenario | metric | object grain (mean) | unit grain (mean) | difference | agrees |", "|---|---|---:|---:|---:|:-:|"]

    def pct(x):
        return "—" if x is None else ("∞" if math.isinf(x) else f"{100 * x:+.2f} %")

    for scenario, per in cmp.items():
        for r in per["metrics"]:
            lines.append(f"| {scenario} | {r['label']} | {r['object']:,.2f} | {r['unit']:,.2f} | {pct(r['rel_diff'])} | {'yes' if r['ok'] else 'NO'} |")
        yes = {True: "yes", False: "NO"}
        lines.append(f"| {scenario} | TTID per launch, worst launch | | | {pct(per['ttid_worst_launch_rel_diff'])} | {yes[per['ttid_per_launch_ok']]} |")
        lines.append(
            f"| {scenario} | cached apps after each launch, worst point | | | {pct(per['cached_curve_worst_rel_diff'])} | {yes[per['cached_curve_ok']]} |"
        )
        for c in per["counts"]:
            lines.append(
                f"| {scenario} | {c['label']} (sum over seeds) | {c['object']:,} | {c['unit']:,} | | {'identical' if c['identical'] else 'DIFFERENT'} |"
            )
        w = per["wall_seconds"]
        lines.append(f"| {scenario} | runs with identical results | | | {per['identical_runs']} of {per['runs']} | |")
        lines.append(f"| {scenario} | wall s, all seeds | {w['object']:.1f} | {w['unit']:.1f} | ×{w['object'] / max(w['unit'], 1e-9):.2f} | |")
    return "\n".join(lines) + "\n"
