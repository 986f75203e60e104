"""One scenario under several named systems and seeds, side by side.

Each (system, seed) pair is one session; runs are independent and deterministic, so running them
in parallel worker processes gives the same results as running them one after another. From each
run :func:`metrics` extracts the compared numbers; :func:`aggregate` gives, per metric and system,
the mean across seeds with a 95% Student-t confidence interval (``mobmem.harness.stats``; none
with a single seed) and, against the first system, the ratio of means with Welch's test and
Fieller's interval ("no significant difference" rather than a noisy ratio).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Callable

#: Overall metrics in table order: key, label, format.
METRICS = [
    ("hot_p50_ms", "hot launch p50 ms (all apps)", "{:.1f}"),
    ("hot_p90_ms", "hot launch p90 ms (all apps)", "{:.1f}"),
    ("hot_launches", "hot launches", "{:.1f}"),
    ("relaunches", "cold launches instead (relaunches)", "{:.1f}"),
    ("cold_p50_ms", "cold launch p50 ms (all apps)", "{:.1f}"),
    ("cached_max", "cached apps max", "{:.1f}"),
    ("cached_mean", "cached apps mean", "{:.2f}"),
    ("app_kills", "app kills", "{:.1f}"),
    ("kills", "kills (all processes)", "{:.1f}"),
    ("refaults", "refaults (workingset_refault)", "{:,.0f}"),
    ("refault", "evicted pages needed again (file refaults + swap-ins)", "{:,.0f}"),
    ("refault_ratio", "refault ratio (refaults/evictions)", "{:.3f}"),
    ("direct_reclaims", "direct reclaims (allocstall)", "{:,.0f}"),
    ("pswpin", "swap-ins (pswpin)", "{:,.0f}"),
    ("jank_ratio", "jank ratio", "{:.4f}"),
    ("gc_count", "GCs", "{:,.0f}"),
    ("energy_j", "CPU energy J", "{:,.1f}"),
    ("gc_energy_j", "CPU energy of GC threads J", "{:,.2f}"),
]
LABELS = {k: (label, fmt) for k, label, fmt in METRICS}


def _f(x) -> float | None:
    if x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def metrics(res: dict) -> dict:
    """The compared numbers of one run: overall metrics and per-app hot launch p50/p90 and
    relaunches (``None`` where a run has no such launch)."""
    ls = res.get("launch_stats", {})
    hot, cold = ls.get("hot", {}), ls.get("cold", {})
    launches = res.get("launches", [])
    vm = res.get("vmstat", {})
    out = {
        "hot_p50_ms": _f(hot.get("*", {}).get("p50")),
        "hot_p90_ms": _f(hot.get("*", {}).get("p90")),
        "hot_launches": float(sum(1 for l in launches if l["kind"] == "hot")),
        "relaunches": float(sum(1 for l in launches if l.get("relaunch"))),
        "cold_p50_ms": _f(cold.get("*", {}).get("p50")),
        "cached_max": _f(res.get("cached_apps", {}).get("max")),
        "cached_mean": _f(res.get("cached_apps", {}).get("mean")),
        "app_kills": float(sum(1 for k in res.get("kills", []) if k.get("is_app"))),
        "kills": float(len(res.get("kill_records", []))),
        "refaults": float(vm.get("workingset_refault_anon", 0) + vm.get("workingset_refault_file", 0)),
        "refault": _f(res.get("refaults", {}).get("refault")),
        "refault_ratio": _f(res.get("ratios", {}).get("refault_ratio")),
        "direct_reclaims": _f(res.get("direct_reclaims")),
        "pswpin": _f(res.get("swap", {}).get("pswpin")),
        "jank_ratio": _f(res.get("frames", {}).get("jank_ratio")),
        "gc_count": _f(res.get("gc", {}).get("count")),
        "energy_j": _f((res.get("energy") or {}).get("total_j")),
        "gc_energy_j": _f(((res.get("energy") or {}).get("by_category_j") or {}).get("gc")),
    }
    per_app = {}
    for app, pa in res.get("per_app", {}).items():
        h = hot.get(app, {})
        per_app[app] = {
            "hot_p50_ms": _f(h.get("p50")) if h.get("n") else None,
            "hot_p90_ms": _f(h.get("p90")) if h.get("n") else None,
            "relaunches": _f(pa.get("relaunches")),
        }
    return {"overall": out, "per_app": per_app}


def stat(values: list[float | None]) -> dict:
    """Mean and 95% Student-t CI of the non-missing values (no CI below two values)."""
    from mobmem.harness.stats import t_interval

    xs = [v for v in values if v is not None]
    if not xs:
        return {"n": 0, "mean": None, "ci_low": None, "ci_high": None, "values": values}
    mean = sum(xs) / len(xs)
    lo = hi = None
    if len(xs) >= 2:
        iv = t_interval(xs, 0.95)
        lo, hi = iv.low, iv.high
    return {"n": len(xs), "mean": mean, "ci_low": lo, "ci_high": hi, "values": values}


def versus(base: list[float | None], other: list[float | None]) -> dict | None:
    """``other`` against ``base``: ratio of means, Fieller CI, Welch p (None below 2 values each)."""
    from mobmem.harness.stats import compare

    a = [v for v in base if v is not None]
    b = [v for v in other if v is not None]
    if len(a) < 2 or len(b) < 2 or sum(a) == 0:
        return None
    r = compare(a, b, 0.95)
    d = r.to_dict()
    for k in ("ratio", "p_value"):
        if isinstance(d[k], float) and math.isnan(d[k]):
            d[k] = None
    return d


def aggregate(systems: list[str], seeds: list[int], results: dict[tuple[str, int], dict]) -> dict:
    """Per metric and system: stat() across seeds; per app the same for hot p50/p90 and relaunches;
    ``vs_base`` compares each system with the first."""
    ms = {(s, seed): metrics(results[(s, seed)]) for s in systems for seed in seeds}
    overall: dict = {}
    for key, _, _ in METRICS:
        overall[key] = {}
        for s in systems:
            vals = [ms[(s, seed)]["overall"][key] for seed in seeds]
            overall[key][s] = stat(vals)
            if s != systems[0]:
                overall[key][s]["vs_base"] = versus(overall[key][systems[0]]["values"], vals)
    apps: list[str] = []
    for m in ms.values():
        for a in m["per_app"]:
            if a not in apps:
                apps.append(a)
    per_app: dict = {}
    for a in apps:
        per_app[a] = {}
        for key in ("hot_p50_ms", "hot_p90_ms", "relaunches"):
            by = {s: stat([ms[(s, seed)]["per_app"].get(a, {}).get(key) for seed in seeds]) for s in systems}
            for s in systems[1:]:
                by[s]["vs_base"] = versus(by[systems[0]]["values"], by[s]["values"])
            per_app[a][key] = by
    return {"confidence": 0.95, "interval": "student-t", "seeds": seeds, "systems": systems, "overall": overall, "per_app": per_app}


def _job(args: tuple) -> tuple[str, int, dict]:
    """One run in a worker process (picklable): (system, seed, result)."""
    scenario, system, seed, user, systems_file = args
    from mobmem import session

    res = session.run(scenario, user, seed=seed, system=system, systems_file=systems_file)
    return system, seed, res


def run_dir(out: Path, system: str, seed: int) -> Path:
    return Path(out) / "runs" / system / f"seed-{seed}"


def reusable_run(out: Path | None, scenario: Path, system: str, seed: int, user: list, systems_file: Path | None = None) -> dict | None:
    """A finished run's summary in ``out`` with the same scenario, system, seed and settings,
    made by the same simulator code and data (a run without that record is redone)."""
    if out is None:
        return None
    p = run_dir(out, system, seed) / "summary.json"
    try:
        s = json.loads(p.read_text())
    except (OSError, ValueError):
        return None
    from mobmem import session
    from mobmem.session import systems as systems_mod
    from mobmem.session.provenance import code_version

    if s.pop("code_version", None) != code_version():  # (a record of the file, not of the run)
        return None
    if s.get("system_name") != system or s.get("seed") != seed or s.get("scenario_file") != session._display(scenario):
        return None
    pairs = session.parse_settings(user)
    expected = [*systems_mod.settings_for(system, scenario, pairs, systems_file), *pairs]
    if s.get("parameters") != [list(p) for p in expected]:
        return None
    return s


def run_matrix(
    scenario: Path,
    systems: list[str],
    seeds: list[int],
    user: list[str],
    jobs: int = 1,
    out: Path | None = None,
    resume: bool = False,
    systems_file: Path | None = None,
    progress: Callable[[str, int, dict, bool], None] | None = None,
    executor: str = "local",
    address: str | None = None,
) -> dict[tuple[str, int], dict]:
    """Every (system, seed) run; results keyed by that pair. With ``out``, each run's files are
    written as soon as it finishes (``out/runs/SYSTEM/seed-N/``); with ``resume``, runs whose
    summary is already there (same scenario, system, seed, settings) are not redone.

    Ctrl-C (KeyboardInterrupt) stops the runs under way at once (worker processes are
    terminated) and propagates; the runs finished before it are on disk, so ``resume`` picks up
    after them."""
    from mobmem.files import deferred_interrupts
    from mobmem.session.output import write_outputs

    results: dict[tuple[str, int], dict] = {}
    todo = []
    for seed in seeds:  # seeds outer, systems inner: a partial matrix still compares all systems
        for s in systems:
            prev = reusable_run(out, scenario, s, seed, user, systems_file) if resume else None
            if prev is not None:
                results[(s, seed)] = prev
                if progress:
                    progress(s, seed, prev, True)
            else:
                todo.append((str(scenario), s, seed, list(user), str(systems_file) if systems_file else None))

    def done(s: str, seed: int, res: dict) -> None:
        # A run on disk is a run reported: Ctrl-C waits until both are done.
        with deferred_interrupts():
            if out is not None:
                write_outputs(res, run_dir(out, s, seed))
            results[(s, seed)] = res
            if progress:
                progress(s, seed, res, False)

    from mobmem.session.executor import run_jobs

    run_jobs(_job, todo, lambda r: done(*r), jobs=jobs, executor=executor, address=address)
    return results


def compare(
    scenario: Path,
    systems: list[str],
    seeds: int = 3,
    seed: int | None = None,
    settings: list[str] | None = None,
    jobs: int = 1,
    out: Path | None = None,
    resume: bool = False,
    progress: Callable[[str, int, dict, bool], None] | None = None,
    executor: str = "local",
    address: str | None = None,
) -> dict:
    """Run ``scenario`` under every system for ``seeds`` seeds (``seed`` or the scenario's seed,
    + 0 … seeds−1) and return the comparison document: the scenario, the systems with their
    settings, the seeds, :func:`aggregate`'s statistics, every run's summary and the wall time.
    With ``out``, each run's files are written as it finishes (see :func:`run_matrix`) and
    ``compare.json`` and ``compare.csv`` at the end. ``executor``/``address``: where the runs
    execute (:mod:`mobmem.session.executor`). Bad arguments raise MobmemError."""

    from mobmem import session

    user = list(settings or [])
    pairs = session.parse_settings(user)
    check_arguments(systems, seeds, seed, jobs, out, resume)
    base = session.scenario_seed(scenario) if seed is None else seed
    seed_list = [base + i for i in range(seeds)]
    for s in seed_list:
        session.check_seed(s)
    from mobmem.files import out_dir_lock

    with out_dir_lock(out):
        return _compare(scenario, systems, seed_list, user, pairs, jobs, out, resume, progress, executor, address)


def _compare(scenario, systems, seed_list, user, pairs, jobs, out, resume, progress, executor="local", address=None) -> dict:
    """:func:`compare`'s runs and document, with ``out`` locked."""
    import time

    from mobmem import session
    from mobmem.session import systems as systems_mod
    from mobmem.session.output import atomic_write, csv_text

    t0 = time.perf_counter()
    results = run_matrix(scenario, systems, seed_list, user, jobs=jobs, out=out, resume=resume, progress=progress, executor=executor, address=address)
    agg = aggregate(systems, seed_list, results)
    first = results[(systems[0], seed_list[0])]
    doc = {
        "scenario": first["scenario"],
        "scenario_file": first["scenario_file"],
        "device": first["device"],
        "settings": [list(p) for p in pairs],
        "systems": {n: {"description": systems_mod.get(n).description, "settings": list(systems_mod.get(n).settings)} for n in systems},
        "seeds": seed_list,
        "aggregate": agg,
        "runs": [{"system": n, "seed": sd, "summary": session.summary(results[(n, sd)])} for sd in seed_list for n in systems],
        "wall_seconds": time.perf_counter() - t0,
    }
    if out is not None:
        atomic_write(Path(out) / "compare.csv", csv_text(csv_rows(doc)))
        atomic_write(Path(out) / "compare.json", json.dumps(doc, indent=1) + "\n")
    return doc


def check_arguments(systems: list[str], seeds: int, seed: int | None, jobs: int, out: Path | None, resume: bool) -> None:
    """:func:`compare`'s checks of its arguments (MobmemError naming the option)."""
    from mobmem import session
    from mobmem.errors import MobmemError
    from mobmem.session.output import check_out_dir

    session.check_seed(seed)
    if not systems:
        raise MobmemError("no systems to compare")
    if not 1 <= seeds <= 1000:
        raise MobmemError(f"--seeds must be within [1, 1000], got {seeds}")
    if not 1 <= jobs <= 64:
        raise MobmemError(f"--jobs must be within [1, 64], got {jobs}")
    if resume and out is None:
        raise MobmemError("--resume needs --out (where the finished runs are)")
    if out is not None:
        check_out_dir(out)


def csv_rows(doc: dict) -> list[dict]:
    """The aggregates of a comparison document as CSV rows: metric, app ("" overall), system,
    n, mean, 95% CI."""
    agg, names = doc["aggregate"], list(doc["systems"])
    rows = []

    def row(key: str, app: str, n: str, st: dict) -> None:
        rows.append({"metric": key, "app": app, "system": n, "n": st["n"], "mean": st["mean"], "ci_low": st["ci_low"], "ci_high": st["ci_high"]})

    for key, _label, _ in METRICS:
        for n in names:
            row(key, "", n, agg["overall"][key][n])
    for a, d in agg["per_app"].items():
        for key, by in d.items():
            for n in names:
                row(key, a, n, by[n])
    return rows
