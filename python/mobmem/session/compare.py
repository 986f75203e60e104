"""One scenario under several named systems and seeds, side by side.

Each (system, seed) pair is one session; runs are independent and deterministic, so running them
in parallel worker processes gives the same results as running them one after another. From each
run :func:`metrics` extracts the compared numbers; :func:`aggregate` gives, per metric and system,
the mean across seeds with a 95% Student-t confidence interval (``mobmem.harness.stats``; none
with a single seed) and, against the first system, the ratio of means with Welch's test and
Fieller's interval ("no significant difference" rather than a noisy ratio).

Every interval follows one rule (:func:`stat`, :func:`versus`), and every table prints it with
one set of helpers (:func:`fmt_interval`, :func:`fmt_versus`, :func:`ci_legend`): an interval is
cut at the bounds of what the quantity can be (a count, a time, an energy or a ratio is never
below zero; :data:`BOUNDS`) and the cut bound is marked, since the t interval knows nothing of
them; an interval from fewer than :data:`MIN_N` values is flagged — with two values it rests on
one degree of freedom (t = 12.7) and says little.
"""

from __future__ import annotations

import json
import math
import statistics
import warnings
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
#: Per-app metrics: key, label, format.
PER_APP = [
    ("hot_p50_ms", "hot launch p50 ms", "{:.1f}"),
    ("hot_p90_ms", "hot launch p90 ms", "{:.1f}"),
    ("relaunches", "relaunches", "{:.1f}"),
]
PER_APP_METRICS = tuple(k for k, _, _ in PER_APP)


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


#: The fewest values whose interval is reported without a flag.
MIN_N = 3
#: What a metric can be, when not just "not below zero" (:data:`NONNEGATIVE`): (lower, upper).
BOUNDS: dict[str, tuple[float | None, float | None]] = {"jank_ratio": (0.0, 1.0)}
NONNEGATIVE: tuple[float | None, float | None] = (0.0, None)
#: An interval's flags: the mark a table puts on it, and what the mark means.
FEW, CUT_LOW, CUT_HIGH = "few-values", "cut-low", "cut-high"
CI_NOTES = {
    FEW: ("†", f"from fewer than {MIN_N} seeds: a t interval on one degree of freedom (t = 12.7), too wide to say much; use {MIN_N} or more seeds"),
    CUT_LOW: ("‡", "bound cut at what the quantity can be: the t interval reached past it (a count, time or energy is never negative, a share never above 1)"),
}
CI_NOTES[CUT_HIGH] = CI_NOTES[CUT_LOW]


def bounds(key: str) -> tuple[float | None, float | None]:
    """(lower, upper) of the compared metric ``key`` (every one is at least zero)."""
    return BOUNDS.get(key, NONNEGATIVE)


def stat(values: list[float | None], lower: float | None = 0.0, upper: float | None = None, confidence: float = 0.95) -> dict:
    """Mean, standard deviation and 95% Student-t CI of the non-missing values (no CI below two
    values). The interval is cut at ``lower``/``upper`` — what the quantity can be; the default
    is "never below zero", which holds for every number a session reports (``lower=None`` for a
    signed one) — and ``ci_flags`` says so (:data:`CUT_LOW`, :data:`CUT_HIGH`); an interval of
    fewer than :data:`MIN_N` values is flagged :data:`FEW`. Cutting keeps the coverage: the true
    mean lies within the bounds, so whenever the t interval holds it, the cut one does too."""
    from mobmem.harness.stats import t_interval

    xs = [v for v in values if v is not None]
    out: dict = {"n": len(xs), "mean": None, "sd": None, "ci_low": None, "ci_high": None, "ci_method": None, "ci_flags": [], "values": values}
    if not xs:
        return out
    out["mean"] = sum(xs) / len(xs)
    if len(xs) < 2:
        return out
    out["sd"] = statistics.stdev(xs)
    iv = t_interval(xs, confidence)
    lo, hi, flags = _cut(iv.low, iv.high, lower, upper)
    if len(xs) < MIN_N:
        flags.insert(0, FEW)
    out.update(ci_low=lo, ci_high=hi, ci_method=iv.method, ci_flags=flags)
    return out


def _cut(lo: float, hi: float, lower: float | None, upper: float | None) -> tuple[float, float, list[str]]:
    flags = []
    if lower is not None and lo < lower:
        lo = lower
        flags.append(CUT_LOW)
    if upper is not None and hi > upper:
        hi = upper
        flags.append(CUT_HIGH)
    return lo, hi, flags


def versus(base: list[float | None], other: list[float | None], lower: float | None = 0.0) -> dict | None:
    """``other`` against ``base``: ratio of means, Fieller CI, Welch p (None below 2 values each).
    For quantities not below zero (``lower`` ≥ 0) the ratio is not either: its interval is cut at
    zero and flagged as :func:`stat` does; fewer than :data:`MIN_N` values on a side are flagged."""
    from mobmem.harness.stats import compare

    a = [v for v in base if v is not None]
    b = [v for v in other if v is not None]
    if len(a) < 2 or len(b) < 2 or sum(a) == 0:
        return None
    with warnings.catch_warnings():
        # Seeds that agree to many digits (a deterministic model often gives them): scipy warns
        # of precision loss on a variance near zero; the test still answers, and the table says
        # what it found.
        warnings.filterwarnings("ignore", "Precision loss", RuntimeWarning)
        r = compare(a, b, 0.95)
    d = r.to_dict()
    for k in ("ratio", "p_value"):
        if isinstance(d[k], float) and math.isnan(d[k]):
            d[k] = None
    ci = d["ci"]
    flags: list[str] = []
    if not (math.isnan(ci["low"]) or math.isnan(ci["high"])):
        ci["low"], ci["high"], flags = _cut(ci["low"], ci["high"], 0.0 if lower is not None and lower >= 0 else None, None)
    if min(len(a), len(b)) < MIN_N:
        flags.insert(0, FEW)
    d["ci_flags"] = flags
    return d


def _num(x: float, fmt: str | Callable[[float], str]) -> str:
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return fmt(x) if callable(fmt) else fmt.format(x)


def fmt_interval(st: dict, fmt: str | Callable[[float], str]) -> str:
    """``[lo, hi]`` of a :func:`stat` (``""`` without one), each bound formatted with ``fmt`` (a
    format string or a function): ``‡`` on a bound cut at what the quantity can be, ``†`` after
    an interval of fewer than :data:`MIN_N` values."""
    if st.get("ci_low") is None:
        return ""
    flags = st.get("ci_flags") or []
    lo = _num(st["ci_low"], fmt) + (CI_NOTES[CUT_LOW][0] if CUT_LOW in flags else "")
    hi = _num(st["ci_high"], fmt) + (CI_NOTES[CUT_HIGH][0] if CUT_HIGH in flags else "")
    return f"[{lo}, {hi}]" + (CI_NOTES[FEW][0] if FEW in flags else "")


def fmt_stat(st: dict, fmt: str) -> str:
    """``mean [lo, hi]`` (``mean`` with one value, ``—`` with none)."""
    if st["mean"] is None:
        return "—"
    iv = fmt_interval(st, fmt)
    return fmt.format(st["mean"]) + (f" {iv}" if iv else "")


def fmt_p(p: float | None) -> str:
    """A p-value as a table prints it: ``p = 0.012``, ``p < 0.001``."""
    if p is None:
        return "p —"
    return "p < 0.001" if p < 0.001 else f"p = {p:.2g}"


def fmt_versus(st: dict, interval: bool = False) -> str:
    """A :func:`stat`'s ``vs_base``: ``×0.67 (p = 0.012)``, ``×1.02 (n.s., p = 0.41)`` when Welch's
    test finds no significant difference at 5 %, ``—`` without a test; with ``interval`` the
    ratio's Fieller interval after it (marked as :func:`fmt_interval` marks)."""
    v = st.get("vs_base")
    if not v or v.get("ratio") is None:
        return "—"
    s = "×" + _num(v["ratio"], "{:.2f}")
    if interval and v.get("ci") and not math.isnan(v["ci"]["low"]):
        s += " " + fmt_interval({"ci_low": v["ci"]["low"], "ci_high": v["ci"]["high"], "ci_flags": v.get("ci_flags")}, "{:.2f}")
    p = fmt_p(v.get("p_value"))
    return s + (f" ({p})" if v.get("significant") else f" (n.s., {p})")


def flags_in(doc) -> set[str]:
    """Every interval flag in a document of statistics (any nesting of dicts and lists)."""
    found: set[str] = set()
    if isinstance(doc, dict):
        found.update(doc.get("ci_flags") or [])
        for v in doc.values():
            if isinstance(v, (dict, list)):
                found |= flags_in(v)
    elif isinstance(doc, list):
        for v in doc:
            if isinstance(v, (dict, list)):
                found |= flags_in(v)
    return found


def ci_legend(flags: set[str]) -> list[str]:
    """What each mark in a table means, for the marks it has."""
    out = []
    if FEW in flags:
        out.append(" ".join(CI_NOTES[FEW]))
    if flags & {CUT_LOW, CUT_HIGH}:
        out.append(" ".join(CI_NOTES[CUT_LOW]))
    return out


def aggregate(systems: list[str], seeds: list[int], results: dict[tuple[str, int], dict]) -> dict:
    """Per metric and system: stat() across seeds; per app the same for hot p50/p90 and relaunches;
    ``vs_base`` compares each system with the first. A (system, seed) pair missing from
    ``results`` (a comparison still under way) counts as a run without the metric."""
    ms = {(s, seed): metrics(results[(s, seed)]) for s in systems for seed in seeds if (s, seed) in results}
    none: dict = {"overall": {}, "per_app": {}}
    overall: dict = {}
    for key, _, _ in METRICS:
        lo, hi = bounds(key)
        overall[key] = {}
        for s in systems:
            vals = [ms.get((s, seed), none)["overall"].get(key) for seed in seeds]
            overall[key][s] = stat(vals, lo, hi)
            if s != systems[0]:
                overall[key][s]["vs_base"] = versus(overall[key][systems[0]]["values"], vals, lo)
    apps: list[str] = []
    for m in ms.values():
        for a in m["per_app"]:
            if a not in apps:
                apps.append(a)
    per_app: dict = {}
    for a in apps:
        per_app[a] = {}
        for key in PER_APP_METRICS:
            lo, hi = bounds(key)
            by = {s: stat([ms.get((s, seed), none)["per_app"].get(a, {}).get(key) for seed in seeds], lo, hi) for s in systems}
            for s in systems[1:]:
                by[s]["vs_base"] = versus(by[systems[0]]["values"], by[s]["values"], lo)
            per_app[a][key] = by
    return {
        "confidence": 0.95,
        "interval": "student-t",
        "min_n": MIN_N,
        "seeds": seeds,
        "systems": systems,
        "overall": overall,
        "per_app": per_app,
    }


def _job(args: tuple) -> tuple[str, int, dict]:
    """One run in a worker process (picklable): (system, seed, result)."""
    scenario, system, seed, user, systems_file = args
    from mobmem import session

    res = session.run(scenario, user, seed=seed, system=system, systems_file=systems_file)
    return system, seed, res


def run_dir(out: Path, system: str, seed: int) -> Path:
    return Path(out) / "runs" / system / f"seed-{seed}"


#: The summary record under an ``--out`` directory (see :func:`keep_summary`).
SUMMARY_RECORD = "record"


def record_file(record: Path, system: str, seed: int) -> Path:
    """Where the summary record ``record`` keeps the run of ``system`` and ``seed``."""
    return Path(record) / system / f"seed-{seed}.json.gz"


def keep_summary(record: Path, system: str, seed: int, text: str) -> None:
    """Keep a finished run's ``summary.json`` text in the summary record: one gzipped file per run
    (a few tens of kB where its run directory holds megabytes; the gzip header holds no time).
    Copied into another machine's ``--out`` directory (or kept with the project), the record lets
    ``--resume`` reuse its runs there: reports need only the summaries."""
    import gzip

    from mobmem.errors import MobmemError
    from mobmem.files import atomic_write

    path = record_file(record, system, seed)
    data = gzip.compress(text.encode(), compresslevel=9, mtime=0)
    try:
        if path.read_bytes() == data:
            return
    except OSError:
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise MobmemError(f"{path.parent}: {e.strerror}") from None
    atomic_write(path, data)


def _recorded_summary(record: Path, system: str, seed: int) -> str | None:
    """A run's ``summary.json`` text from the summary record (None if absent or unreadable: the
    run is then redone)."""
    import gzip
    import zlib

    try:
        return gzip.decompress(record_file(record, system, seed).read_bytes()).decode()
    except (OSError, EOFError, zlib.error, UnicodeDecodeError):
        return None


def reusable_run(
    out: Path | None, scenario: Path, system: str, seed: int, user: list, systems_file: Path | None = None, record: Path | None = None
) -> dict | None:
    """A finished run's summary in ``out`` (or, failing that, in the summary record ``record``)
    with the same scenario, system, seed and settings, made by the same simulator code and data
    (a run without that record is redone)."""
    if out is None:
        return None
    p = run_dir(out, system, seed) / "summary.json"
    try:
        text = p.read_text()
    except OSError:
        text = _recorded_summary(record, system, seed) if record is not None else None
    if text is None:
        return None
    try:
        s = json.loads(text)
    except ValueError:
        return None
    if not isinstance(s, dict):
        return None
    from mobmem import session
    from mobmem.session.provenance import code_version

    if s.pop("code_version", None) != code_version(s.get("device")):  # (a record of the file, not of the run)
        return None
    if s.get("system_name") != system or s.get("seed") != seed or s.get("scenario_file") != session._display(scenario):
        return None
    if s.get("parameters") != run_parameters(scenario, system, user, systems_file):
        return None
    return s


def run_parameters(scenario: Path, system: str, user: list, systems_file: Path | None = None) -> list[list]:
    """The settings a run of ``scenario`` under ``system`` with the user's ``key=value`` settings
    records (its summary's ``parameters``): the system's, then the user's."""
    from mobmem import session
    from mobmem.session import systems as systems_mod

    pairs = session.parse_settings(user)
    return [list(p) for p in [*systems_mod.settings_for(system, scenario, pairs, systems_file), *pairs]]


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
    record: Path | None = None,
) -> dict[tuple[str, int], dict]:
    """Every (system, seed) run; results keyed by that pair. With ``out``, each run's files are
    written as soon as it finishes (``out/runs/SYSTEM/seed-N/``) and its summary is kept in the
    summary record ``record`` (default ``out/record/``, :func:`keep_summary`); with ``resume``,
    runs whose summary is already there or in the record (same scenario, system, seed, settings,
    simulator code) are not redone, and a reused run missing from the record is added to it.

    Ctrl-C (KeyboardInterrupt) stops the runs under way at once (worker processes are
    terminated) and propagates; the runs finished before it are on disk, so ``resume`` picks up
    after them."""
    from mobmem.files import deferred_interrupts
    from mobmem.session.output import write_outputs

    results: dict[tuple[str, int], dict] = {}
    if out is not None and record is None:
        record = Path(out) / SUMMARY_RECORD
    todo = []
    for seed in seeds:  # seeds outer, systems inner: a partial matrix still compares all systems
        for s in systems:
            prev = reusable_run(out, scenario, s, seed, user, systems_file, record) if resume else None
            if prev is not None:
                _keep_run(out, record, s, seed)  # (a no-op when the record has it already)
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
                _keep_run(out, record, s, seed)
            results[(s, seed)] = res
            if progress:
                progress(s, seed, res, False)

    from mobmem.session.executor import run_jobs

    run_jobs(_job, todo, lambda r: done(*r), jobs=jobs, executor=executor, address=address)
    return results


def _keep_run(out: Path, record: Path, system: str, seed: int) -> None:
    """Keep the run directory's ``summary.json`` in the summary record, byte for byte."""
    try:
        text = (run_dir(out, system, seed) / "summary.json").read_text()
    except OSError:
        return  # reused from the record itself
    keep_summary(record, system, seed, text)


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
    ``compare.json``, ``compare.csv`` (the statistics) and ``compare_runs.csv`` (one row per run)
    at the end. ``executor``/``address``: where the runs execute (:mod:`mobmem.session.executor`).
    Bad arguments raise MobmemError."""

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
        atomic_write(Path(out) / "compare.csv", csv_text(csv_rows(doc), csv_fields(doc)))
        atomic_write(Path(out) / "compare_runs.csv", csv_text(run_rows(doc), ["system", "seed", *(k for k, _, _ in METRICS)]))
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


#: compare.csv's columns before one ``seed_N`` column per seed (that seed's value).
CSV_FIELDS = [
    "metric",
    "label",
    "app",
    "system",
    "n",
    "mean",
    "sd",
    "ci_low",
    "ci_high",
    "ci_method",
    "ci_note",
    "baseline",
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "ratio_ci_note",
    "p_value",
    "significant",
    "test",
]


def _note(flags) -> str:
    return "; ".join(flags or [])


def csv_rows(doc: dict) -> list[dict]:
    """The statistics of a comparison document as CSV rows (:data:`CSV_FIELDS`): per metric, app
    ("" overall) and system the mean, standard deviation and 95% CI across seeds (``ci_note``:
    its flags, :data:`CI_NOTES`); against the baseline (the first system) the ratio of means,
    Fieller's interval and Welch's p-value; then each seed's value (``seed_N``)."""
    agg, names = doc["aggregate"], list(doc["systems"])
    seeds = agg["seeds"]
    labels = {**{k: label for k, label, _ in METRICS}, **{k: label for k, label, _ in PER_APP}}
    rows = []

    def row(key: str, app: str, n: str, st: dict) -> None:
        r = {
            "metric": key,
            "label": labels.get(key, key),
            "app": app,
            "system": n,
            **{k: st.get(k) for k in ("n", "mean", "sd", "ci_low", "ci_high", "ci_method")},
            "ci_note": _note(st.get("ci_flags")),
        }
        v = st.get("vs_base")
        if n != names[0]:
            r["baseline"] = names[0]
        if v:
            r.update(
                ratio=v["ratio"],
                ratio_ci_low=v["ci"]["low"],
                ratio_ci_high=v["ci"]["high"],
                ratio_ci_note=_note(v.get("ci_flags")),
                p_value=v["p_value"],
                significant=v["significant"],
                test=v["test"],
            )
        for seed, x in zip(seeds, st["values"]):
            r[f"seed_{seed}"] = x
        rows.append(r)

    for key, _label, _ in METRICS:
        for n in names:
            row(key, "", n, agg["overall"][key][n])
    for a, d in agg["per_app"].items():
        for key, by in d.items():
            for n in names:
                row(key, a, n, by[n])
    return rows


def csv_fields(doc: dict) -> list[str]:
    return [*CSV_FIELDS, *(f"seed_{s}" for s in doc["aggregate"]["seeds"])]


def run_rows(doc: dict) -> list[dict]:
    """One row per run of a comparison document: ``system, seed`` and every compared metric
    (:data:`METRICS`), as the Python API's frame."""
    return [{"system": r["system"], "seed": r["seed"], **metrics(r["summary"])["overall"]} for r in doc["runs"]]
