"""Stock-Android fidelity: the simulated stock phone against published measurements.

A *fact* (``data/fidelity.toml``) is one published number of stock Android — cached apps when lmkd
starts killing, a hot-launch mean, a GC's traced objects — with its source, the shipped scenario
and named system that reproduce its setting, and the metric of a session result that measures the
same thing. :func:`run` runs every (scenario, system) the chosen facts need over several seeds
(each run once, however many facts read it) and :func:`evaluate` gives, per fact, the model's
mean with a 95 % Student-t interval across seeds, the relative error against the published value
and whether it is within the tolerance (±30 %).

Nothing here feeds back into the model: facts are checked, never used as inputs. Metrics read the
result's own fields; a field a result lacks (no hot launch of that app, no kill) is reported as
missing, not as zero.
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from mobmem.errors import MobmemError
from mobmem.paths import DATA

FACTS_FILE = DATA / "fidelity.toml"
#: A fact agrees when |model mean − published| ≤ tolerance × published: a fit-set fact within
#: FIT_TOLERANCE (the calibration's goal), a held-out fact within TOLERANCE. A fact published as
#: zero (a bar at zero in a figure) has no relative error: it gives the figure's ``full_scale``
#: (the largest published value of the same series), and its error is taken against that, as an
#: instrument's accuracy is stated as a share of its full scale.
TOLERANCE = 0.30
FIT_TOLERANCE = 0.15
SETS = ("fit", "held-out")
#: ``--quick``: every fact, two seeds, every use and wait duration scaled by this (a smoke run:
#: its numbers are not comparable with the published ones).
QUICK_TIME_SCALE = 0.02
QUICK_SEEDS = 2


def launch_stat(res: dict, app: str, kind: str, stat: str) -> float | None:
    s = res.get("launch_stats", {}).get(kind, {}).get(app)
    return float(s[stat]) if s and s.get("n") else None


def cached_at_first_kill(res: dict) -> float | None:
    c = res["cached_apps"]
    i = c.get("first_kill_launch")
    return None if i is None else float(c["alive_after_launch"][i])


def cached_max_after_launch(res: dict) -> float | None:
    c = res["cached_apps"]
    return float(c["alive_after_launch_max"]) if c["alive_after_launch"] else None


def first_drop(res: dict) -> float | None:
    """The launch (1-based) after which the count of apps alive is first lower than after the
    launch before it; one past the last launch when it never drops (the run ended first)."""
    a = res["cached_apps"]["alive_after_launch"]
    if not a:
        return None
    for i in range(1, len(a)):
        if a[i] < a[i - 1]:
            return float(i + 1)
    return float(len(a) + 1)


def curve_level(res: dict, from_launch: int) -> float | None:
    """The mean count of apps alive after launches ``from_launch`` (1-based) to the last."""
    a = res["cached_apps"]["alive_after_launch"][from_launch - 1 :]
    return sum(a) / len(a) if a else None


def java_share(res: dict, app: str) -> float | None:
    """The Java heap's share (%) of the app's PSS while in the foreground (``per_app.APP.java_share_fg``:
    Java-heap PSS over total PSS in each per-app memory sample taken then, averaged), as
    ``dumpsys meminfo PACKAGE`` reads it with the app open."""
    v = res.get("per_app", {}).get(app, {}).get("java_share_fg")
    return None if v is None else float(v)


def ratio(res: dict, name: str) -> float | None:
    """One of the result's vmstat ratios (``refault_ratio``, ``direct_reclaim_ratio``, …), in %.
    A run that evicted nothing reads 0 (the simulator writes 0 of 0 as 0: no reclaim at all, so a
    fact published above 0 is missed by its whole value instead of looking unmeasured)."""
    v = res.get("ratios", {}).get(name)
    return None if v is None else 100.0 * float(v)


def case_ratio(res: dict, name: str) -> float | None:
    """One of the case's ratios (``case.ratios``: counted from the script's first launch to the
    end, as a phone's per-case log counts them), in %; 0 when the case evicted nothing."""
    v = ((res.get("case") or {}).get("ratios") or {}).get(name)
    return None if v is None else 100.0 * float(v)


def case_count(res: dict, name: str) -> float | None:
    """One of the case's counts (``case.direct_reclaims`` or ``case.evictions``: from the script's
    first launch to the end)."""
    v = (res.get("case") or {}).get(name)
    return None if v is None else float(v)


def _fg_share(res: dict, total: str, by_app: str, refaults: dict | None = None) -> float | None:
    """The foreground app's (the app of the last launch) share (%) of the refault count
    ``refaults[total]``, its part taken from ``refaults[by_app]`` (``refaults``: the result's whole
    run unless given)."""
    launches = res.get("launches", [])
    r = res.get("refaults", {}) if refaults is None else refaults
    n = r.get(total)
    if not launches or n is None:
        return None
    if n == 0:
        # No refault at all: the foreground app's part of them reads 0, so a fact published
        # above 0 counts as missed (as a ratio over nothing evicted does), not as unmeasured.
        return 0.0
    return 100.0 * r.get(by_app, {}).get(launches[-1]["app"], 0) / n


def fg_refault_share(res: dict) -> float | None:
    """The share (%) of all refaults that are the foreground app's (the app of the last launch)."""
    return _fg_share(res, "total", "by_app")


def fg_activation_share(res: dict) -> float | None:
    """The share (%) of the activating file refaults (``workingset_activate_file``) that are the
    foreground app's (the app of the last launch), as a kernel instrumented at that activation
    and tagging each page with its owner counts them."""
    return _fg_share(res, "activate_file", "activate_file_by_app")


def case_fg_activation_share(res: dict) -> float | None:
    """[`fg_activation_share`] over the case (from the script's first launch to the end)."""
    case = res.get("case")
    return None if not case else _fg_share(res, "activate_file", "activate_file_by_app", case.get("refaults", {}))


def launch_objects_share(res: dict, classes: str) -> float | None:
    """Of the objects the run's measured hot launches read, the share (%) in ``classes``
    (``near_root``, ``foreground_young``, or both joined with ``+``)."""
    want = classes.split("+")
    total = part = 0
    for launch in measured_launches(res, "hot"):
        o = launch.get("objects") or {}
        total += sum(o.values())
        part += sum(o.get(c, 0) for c in want)
    return 100.0 * part / total if total else None


def measured_launches(res: dict, kind: str | None = None) -> list[dict]:
    """The result's launches of ``kind`` (every kind when None) without the scenario's warm-up
    launches, which happen as any other but are left out of every statistic (as ``launch_stats``)."""
    return [l for l in res.get("launches", []) if not l.get("warmup") and (kind is None or l["kind"] == kind)]


def _gc_objects(res: dict, app: str, state: str, type: str) -> float | None:
    xs = [g["objects_touched"] for g in res["gcs"] if g["app"] == app and g["state"] == state and g["type"] == type]
    return sum(xs) / len(xs) if xs else None


#: Breakdown parts of a launch that are blocking I/O on the flash (file reads and flash swap-ins;
#: zram swap-ins are decompression, not I/O). A major fault's time includes its few µs of kernel
#: CPU (``major_fault_overhead``), a slight overstatement of the I/O.
_IO_PARTS = ("file_read_wait_ms", "major_fault_file_ms", "major_fault_flash_swap_ms")


def _cold_io_share(res: dict, quantile: float) -> float | None:
    """Per app, the mean share (%) of its measured cold launches' TTID spent blocked on I/O; the
    ``quantile`` of those shares across apps (linear interpolation)."""
    per_app: dict[str, list[float]] = {}
    for launch in measured_launches(res, "cold"):
        if launch["ttid_ms"] > 0:
            bd = launch["breakdown"]
            per_app.setdefault(launch["app"], []).append(100.0 * sum(bd[k] for k in _IO_PARTS) / launch["ttid_ms"])
    if not per_app:
        return None
    import numpy as np

    return float(np.quantile([sum(v) / len(v) for v in per_app.values()], quantile))


@dataclass(frozen=True)
class Metric:
    fn: Callable[..., float | None]
    params: tuple[str, ...]
    help: str


#: The metrics a fact may name: function of (result, **params), its parameters, what it measures.
METRICS: dict[str, Metric] = {
    "launch": Metric(launch_stat, ("app", "kind", "stat"), "launch time of one app (kind hot|cold; stat mean|p50|p90|p10|max|min), ms"),
    "cached_at_first_kill": Metric(cached_at_first_kill, (), "apps alive after the last launch before lmkd's first kill of an app"),
    "cached_max": Metric(cached_max_after_launch, (), "most apps alive after a launch"),
    "first_drop": Metric(first_drop, (), "launch after which the count of apps alive first drops (one past the last launch if it never does)"),
    "curve_level": Metric(curve_level, ("from_launch",), "mean count of apps alive after launches from_launch (1-based) to the last"),
    "java_share": Metric(java_share, ("app",), "the Java heap's share (%) of one app's PSS while in the foreground"),
    "ratio": Metric(
        ratio,
        ("name",),
        "a vmstat ratio of the run (refault_ratio, file_activate_ratio, direct_reclaim_ratio, anon_share_of_evictions), %; 0 when nothing was evicted",
    ),
    "launch_objects_share": Metric(
        launch_objects_share,
        ("classes",),
        "of the objects hot launches read, the share (%) in these classes (near_root, foreground_young, or near_root+foreground_young)",
    ),
    "fg_refault_share": Metric(fg_refault_share, (), "the foreground app's (last launched) share of all refaults, %"),
    "fg_activation_share": Metric(fg_activation_share, (), "the foreground app's (last launched) share of the activating file refaults, %"),
    "case_ratio": Metric(
        case_ratio, ("name",), "a vmstat ratio counted from the script's first launch to the end (the case, without the boot), %; 0 when nothing was evicted"
    ),
    "case_count": Metric(case_count, ("name",), "a count from the script's first launch to the end: direct_reclaims (allocstall) or evictions (pages)"),
    "case_fg_activation_share": Metric(
        case_fg_activation_share, (), "the foreground app's share of the activating file refaults from the script's first launch to the end, %"
    ),
    "cold_io_share": Metric(
        _cold_io_share,
        ("quantile",),
        "per app, the share (%) of cold-launch time blocked on flash I/O (mean over its cold launches); this quantile (0-1) across apps",
    ),
    "gc_objects": Metric(
        _gc_objects, ("app", "state", "type"), "objects a collection of one app traces, mean over its collections of that state (fg|bg) and type (full|sticky)"
    ),
}


@dataclass(frozen=True)
class Fact:
    id: str
    claim: str
    published: float
    unit: str
    source: str
    scenario: str
    system: str
    metric: str
    set: str = "held-out"
    group: str = ""
    params: dict = field(default_factory=dict)
    line: int = 0
    full_scale: float | None = None

    @property
    def tolerance(self) -> float:
        return FIT_TOLERANCE if self.set == "fit" else TOLERANCE

    def measure(self, res: dict) -> float | None:
        if isinstance(res, Measured):
            return res.values.get(self.id)
        return METRICS[self.metric].fn(res, **self.params)

    @property
    def definition(self) -> str:
        """What the fact's value on a run depends on besides the run itself: its metric and
        parameters (the run's key holds the scenario, system and seed). A run record keeps it
        beside each value, so a value is reused only for the same definition, while an edit of
        the facts' file that leaves it alone (a new fact, a source, a published value) keeps every
        run."""
        return json.dumps([self.metric, self.params], sort_keys=True)


class Measured(dict):
    """A run known only by what the facts measured on it (from a :class:`RunRecord`): its
    simulated and wall seconds as a result's keys, the facts' values in ``values``."""

    def __init__(self, values: dict[str, float | None], info: dict):
        super().__init__(info)
        self.values = values


#: The run record under an ``--out`` directory (:class:`RunRecord`).
RECORD_FILE = "runs.jsonl"
#: What a run record keeps of a run besides the facts' values.
RECORDED = ("sim_seconds", "wall_seconds")


class RunRecord:
    """A compact record of finished runs, one JSON line each: the run's key (simulator code,
    scenario, system, seed, settings) and every fact's value on it, with the fact's definition
    (:attr:`Fact.definition`). Unlike the runs' directories
    it is small enough to keep with the project, and it does not depend on the machine: copied
    into another machine's ``--out`` directory, it lets ``--resume`` reuse the runs there (the
    simulator code is identified by its sources, not by the compiled library)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.runs: dict[str, dict] = {}
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            text = ""
        except OSError as e:
            raise MobmemError(f"{self.path}: {e.strerror}") from None
        if text and not text.endswith("\n"):
            # A line cut short by a killed process: drop it (its run is redone), so that the next
            # line is not appended to it.
            text = text[: text.rfind("\n") + 1]
            self.path.write_text(text)
        lines = text.splitlines()
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
            except ValueError:
                doc = None
            if not isinstance(doc, dict) or "key" not in doc or not isinstance(doc.get("values"), dict):
                raise MobmemError(f"{self.path}:{n}: not a run record (expected a JSON object with 'key' and 'values')")
            self.runs[self._key(doc["key"])] = doc

    @staticmethod
    def _key(key: dict) -> str:
        return json.dumps(key, sort_keys=True)

    @staticmethod
    def key(scenario: Path, system: str, seed: int, user: list[str]) -> dict:
        from mobmem import session
        from mobmem.session.compare import run_parameters
        from mobmem.session.provenance import code_version, run_device

        # A shipped scenario by its place in the package (the same in every checkout).
        try:
            name = "data/" + str(Path(scenario).resolve().relative_to(Path(DATA).resolve()))
        except ValueError:
            name = session._display(scenario)
        return {
            "code": code_version(run_device(Path(scenario), session.parse_settings(user))),
            "scenario": name,
            "system": system,
            "seed": seed,
            "parameters": run_parameters(scenario, system, user),
        }

    def get(self, key: dict, facts: list[Fact]) -> Measured | None:
        """The run's values, if the record has every one of ``facts`` as defined now."""
        doc = self.runs.get(self._key(key))
        defs = {} if doc is None else doc.get("facts") or {}
        if doc is None or any(f.id not in doc["values"] or defs.get(f.id) != f.definition for f in facts):
            return None
        return Measured(doc["values"], {k: doc.get(k) for k in RECORDED})

    def add(self, key: dict, facts: list[Fact], res: dict) -> None:
        """Measure ``facts`` on the run ``res`` and append the line (at once: a record on disk is
        a run kept)."""
        doc = {
            "key": key,
            "values": {f.id: f.measure(res) for f in facts},
            "facts": {f.id: f.definition for f in facts},
            **{k: res.get(k) for k in RECORDED},
        }
        k = self._key(key)
        old = self.runs.get(k)
        if old is not None and old["values"] == doc["values"] and old.get("facts") == doc["facts"]:
            return
        self.runs[k] = doc
        with open(self.path, "a") as fh:
            fh.write(json.dumps(doc, sort_keys=True) + "\n")


_FIELDS = ("id", "claim", "published", "unit", "source", "scenario", "system", "metric", "set")
_OPTIONAL = ("group", "full_scale")


def load(path: Path | None = None) -> list[Fact]:
    """Every fact of the file, checked: unknown fields, metrics, scenarios and systems, missing or
    extra metric parameters and duplicate ids raise ``FILE:LINE: fact ID: problem``."""
    from mobmem import session
    from mobmem.session import systems as systems_mod

    path = Path(path or FACTS_FILE)
    try:
        text = path.read_text()
        doc = tomllib.loads(text)
    except OSError as e:
        raise MobmemError(f"{path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise MobmemError(f"{path}: {e}") from None
    headers = [i + 1 for i, ln in enumerate(text.splitlines()) if ln.strip() == "[[fact]]"]
    scenarios, systems = set(session.scenario_names()), systems_mod.load()
    facts: list[Fact] = []
    for n, raw in enumerate(doc.get("fact", [])):
        line = headers[n] if n < len(headers) else 0
        where = f"{path}:{line}: fact {raw.get('id', n + 1)!s}"
        missing = [f for f in _FIELDS if f not in raw]
        if missing:
            raise MobmemError(f"{where}: missing field(s) {', '.join(missing)}")
        metric = METRICS.get(raw["metric"])
        if metric is None:
            raise MobmemError(f"{where}: metric: unknown metric {raw['metric']!r}; known: {', '.join(METRICS)}")
        params = {k: v for k, v in raw.items() if k not in _FIELDS and k not in _OPTIONAL}
        if raw["set"] not in SETS:
            raise MobmemError(f"{where}: set: expected one of {', '.join(SETS)}, got {raw['set']!r}")
        if set(params) != set(metric.params):
            raise MobmemError(f"{where}: metric {raw['metric']} takes {', '.join(metric.params) or 'no parameters'}; got {', '.join(params) or 'none'}")
        q = params.get("quantile", 0.0)
        if not isinstance(q, (int, float)) or isinstance(q, bool) or not 0.0 <= q <= 1.0:
            raise MobmemError(f"{where}: quantile: {q!r} is not a number from 0 to 1")
        if raw["scenario"] not in scenarios:
            raise MobmemError(f"{where}: scenario: unknown scenario {raw['scenario']!r}")
        if raw["system"] not in systems:
            raise MobmemError(f"{where}: system: unknown system {raw['system']!r}; known: {', '.join(systems)}")
        pub = raw["published"]
        fs = raw.get("full_scale")
        if fs is not None and (isinstance(fs, bool) or not isinstance(fs, (int, float)) or not fs > 0):
            raise MobmemError(f"{where}: full_scale: expected a positive number, got {fs!r}")
        if isinstance(pub, bool) or not isinstance(pub, (int, float)) or pub < 0 or (pub == 0 and fs is None):
            raise MobmemError(f"{where}: published: expected a positive number (or 0 with a full_scale), got {pub!r}")
        if fs is not None and pub != 0:
            raise MobmemError(f"{where}: full_scale: only a fact published as 0 takes one (its error is relative otherwise)")
        if any(f.id == raw["id"] for f in facts):
            raise MobmemError(f"{where}: id: {raw['id']!r} is used twice")
        fl = raw.get("from_launch", 1)
        if "from_launch" in params and (isinstance(fl, bool) or not isinstance(fl, int) or fl < 1):
            raise MobmemError(f"{where}: from_launch: expected a launch number from 1, got {fl!r}")
        facts.append(Fact(**{k: raw[k] for k in _FIELDS}, group=raw.get("group", raw["id"]), params=params, line=line, full_scale=fs))
    if not facts:
        raise MobmemError(f"{path}: no [[fact]] entries")
    return facts


def select(facts: list[Fact], ids: list[str]) -> list[Fact]:
    """The facts named by ``ids`` (all when empty), in file order; an unknown id is an error."""
    known = {f.id for f in facts}
    for i in ids:
        if i not in known:
            raise MobmemError(f"unknown fact {i!r}; known: {', '.join(f.id for f in facts)}")
    return [f for f in facts if not ids or f.id in ids]


def check_arguments(seeds: int, time_scale: float, jobs: int, out: Path | None = None, resume: bool = False) -> None:
    if seeds < 1:
        raise MobmemError(f"--seeds must be at least 1, got {seeds}")
    if not (time_scale > 0 and math.isfinite(time_scale)):
        raise MobmemError(f"--time-scale must be a positive number, got {time_scale}")
    if jobs < 1:
        raise MobmemError(f"--jobs must be at least 1, got {jobs}")
    if resume and out is None:
        raise MobmemError("--resume needs --out (where the finished runs are)")
    if out is not None:
        from mobmem.session.output import check_out_dir

        check_out_dir(out)


def runs_needed(facts: list[Fact]) -> list[tuple[str, str]]:
    """The distinct (scenario, system) pairs of ``facts``, in first-use order."""
    out: list[tuple[str, str]] = []
    for f in facts:
        if (f.scenario, f.system) not in out:
            out.append((f.scenario, f.system))
    return out


def scenario_device(scenario: str) -> str:
    """The device a shipped scenario runs on (its ``device``, from the catalogue)."""
    from mobmem import catalog

    return next(s["device"] for s in catalog.catalog()["scenarios"] if s["name"] == scenario)


def for_device(facts: list[Fact], device: str) -> list[Fact]:
    """The facts whose scenario runs on ``device``."""
    return [f for f in facts if scenario_device(f.scenario) == device]


def run(
    facts: list[Fact],
    seeds: int,
    time_scale: float = 1.0,
    jobs: int = 1,
    progress: Callable[[str, str, int, dict, bool], None] | None = None,
    out: Path | None = None,
    resume: bool = False,
    settings: list[str] | None = None,
) -> dict[tuple[str, str, int], dict]:
    """Every run the facts need: (scenario, system, seed) → result, seeds = each scenario's own
    seed + 0 … seeds−1; ``settings`` (``key=value``) are added to every run, after each fact's
    system. With ``out``, each run's files are written as soon as it finishes
    (``out/SCENARIO/runs/SYSTEM/seed-N/``, the layout of a comparison); with ``resume``, runs
    already there (same scenario, system, seed, settings and simulator code) are not redone,
    nor those in ``out/runs.jsonl`` (:class:`RunRecord`, a line per finished run: copied into
    another machine's ``out``, it carries the runs there). ``progress(scenario, system, seed,
    result, reused)`` after each. Ctrl-C stops the runs under
    way (KeyboardInterrupt propagates); the finished ones are on disk."""
    from mobmem.files import out_dir_lock

    check_arguments(seeds, time_scale, jobs, out, resume)
    prog = None if progress is None else (lambda _i, *a: progress(*a))
    with out_dir_lock(out):
        record = RunRecord(Path(out) / RECORD_FILE) if out is not None else None
        return run_points(facts, [list(settings or [])], seeds, time_scale, jobs, prog, [out], resume, record)[0]


def run_points(
    facts: list[Fact],
    points: list[list[str]],
    seeds: int,
    time_scale: float,
    jobs: int,
    progress: Callable[..., None] | None,
    outs: list[Path | None],
    resume: bool,
    record: RunRecord | None = None,
) -> list[dict[tuple[str, str, int], dict]]:
    """:func:`run` for several points at once, all their runs in one pool: ``points[i]`` is a list
    of ``key=value`` settings added to every run of point ``i`` (a calibration's knob values),
    ``outs[i]`` where its runs are kept. Returns one result map per point; ``progress(i, scenario,
    system, seed, result, reused)`` after each run. With a ``record``, every finished run's values
    are added to it, and with ``resume`` a run the record has (with every fact of its scenario and
    system) is not redone: its result is a :class:`Measured`. Arguments are the caller's to check."""
    from mobmem import session
    from mobmem.files import deferred_interrupts
    from mobmem.session.compare import reusable_run, run_dir
    from mobmem.session.output import write_outputs
    from mobmem.session.pool import run_all

    scale = [] if time_scale == 1.0 else [f"session.time_scale={time_scale!r}"]
    results: list[dict[tuple[str, str, int], dict]] = [{} for _ in points]
    todo = []
    to_record: dict[tuple[int, tuple[str, str, int]], tuple[dict, list[Fact]]] = {}
    for i, point in enumerate(points):
        user = [*scale, *point]
        out = outs[i]
        for scenario, system in runs_needed(facts):
            path = session.resolve_scenario(scenario)
            first = session.scenario_seed(path)
            for k in range(seeds):
                key = (scenario, system, first + k)
                prev = reusable_run(Path(out) / scenario, path, system, first + k, user) if resume and out is not None else None
                mine = [f for f in facts if (f.scenario, f.system) == (scenario, system)]
                rkey = RunRecord.key(path, system, first + k, user) if record is not None else None
                if prev is not None and record is not None:
                    record.add(rkey, mine, prev)
                if prev is None and resume and record is not None:
                    prev = record.get(rkey, mine)
                if prev is not None:
                    results[i][key] = prev
                    if progress:
                        progress(i, *key, prev, True)
                else:
                    todo.append(((i, key), (str(path), system, first + k, user, None)))
                    to_record[(i, key)] = (rkey, mine)

    def done(r: tuple[tuple[int, tuple[str, str, int]], dict]) -> None:
        (i, key), res = r
        # A run on disk is a run reported: Ctrl-C waits until both are done.
        with deferred_interrupts():
            if outs[i] is not None:
                write_outputs(res, run_dir(Path(outs[i]) / key[0], key[1], key[2]))
            if record is not None:
                record.add(*to_record[(i, key)], res)
            results[i][key] = res
            if progress:
                progress(i, *key, res, False)

    run_all(_job, todo, jobs, done)
    return results


def _job(item: tuple) -> tuple[tuple, dict]:
    """One run in a worker process (picklable): (key, result)."""
    from mobmem import session

    key, (scenario, system, seed, user, systems_file) = item
    return key, session.run(scenario, user, seed=seed, system=system, systems_file=systems_file)


def calibration_files(devices: list[str]) -> dict[str, dict | None]:
    """Per device, its calibration file's path, revision, command and knobs (None without one)."""
    out: dict[str, dict | None] = {}
    for d in devices:
        p = DATA / "calibration" / f"{d}.toml"
        try:
            doc = tomllib.loads(p.read_text())
        except (OSError, tomllib.TOMLDecodeError):
            out[d] = None
            continue
        out[d] = {
            "file": f"python/mobmem/data/calibration/{d}.toml",
            "revision": doc.get("revision"),
            "command": doc.get("command"),
            "knobs": doc.get("knobs", {}),
        }
    return out


def calibration_lines(calibration: dict[str, dict | None]) -> list[str]:
    """A report header's line per device (in the mapping's order): the calibration file its stock
    inputs came from (the file, the revision and command that made it, its knobs), or none."""
    out = []
    for d, c in calibration.items():
        if c is None:
            out.append(f"- calibration of `{d}`: none (every calibration knob at its default)")
        else:
            knobs = ", ".join(f"{k} = {v:g}" for k, v in c["knobs"].items())
            out.append(f"- calibration of `{d}`: `{c['file']}` (revision `{c['revision']}`, made by `{c['command']}`): {knobs}")
    return out


def evaluate(facts: list[Fact], results: dict[tuple[str, str, int], dict]) -> list[dict]:
    """Per fact: the model's values per seed, mean, 95 % CI, relative error of the mean and
    whether it is within :data:`TOLERANCE` (None when no run measured it)."""
    from mobmem.session.compare import stat

    rows = []
    for f in facts:
        vals = [f.measure(res) for (sc, sy, _), res in sorted(results.items(), key=lambda kv: kv[0][2]) if (sc, sy) == (f.scenario, f.system)]
        s = stat(vals)
        err = None if s["mean"] is None else (s["mean"] - f.published) / (f.full_scale or f.published)
        rows.append(
            {
                "id": f.id,
                "claim": f.claim,
                "unit": f.unit,
                "published": f.published,
                "source": f.source,
                "scenario": f.scenario,
                "system": f.system,
                "metric": f.metric,
                "params": f.params,
                **{k: s[k] for k in ("n", "mean", "ci_low", "ci_high", "ci_flags", "values")},
                "rel_error": err,
                "full_scale": f.full_scale,
                "set": f.set,
                "group": f.group,
                "tolerance": f.tolerance,
                "within": None if err is None else abs(err) <= f.tolerance,
            }
        )
    return rows


def fidelity(
    facts: list[Fact],
    seeds: int = 3,
    time_scale: float = 1.0,
    jobs: int = 1,
    progress=None,
    out: Path | None = None,
    resume: bool = False,
    settings: list[str] | None = None,
) -> dict:
    """Run and evaluate ``facts`` (from :func:`load`, :func:`select`); the document the command
    prints and writes: settings, per-fact rows, the count within tolerance, wall time. ``out``,
    ``resume``: where the runs are kept and whether finished ones are reused (:func:`run`);
    ``settings``: ``key=value`` added to every run (a sensitivity check of the page, not the
    stock baseline)."""
    import time

    t0 = time.monotonic()
    reused: set[tuple[str, str, int]] = set()

    def note(scenario: str, system: str, seed: int, res: dict, was_reused: bool) -> None:
        if was_reused:
            reused.add((scenario, system, seed))
        if progress:
            progress(scenario, system, seed, res, was_reused)

    results = run(facts, seeds, time_scale, jobs, note, out, resume, settings)
    rows = evaluate(facts, results)
    by_set = {
        s: {
            "facts": sum(1 for r in rows if r["set"] == s),
            "within": sum(1 for r in rows if r["set"] == s and r["within"]),
            "measured": sum(1 for r in rows if r["set"] == s and r["within"] is not None),
        }
        for s in SETS
    }
    return {
        "by_set": by_set,
        "devices": sorted({scenario_device(f.scenario) for f in facts}),
        "calibration": calibration_files(sorted({scenario_device(f.scenario) for f in facts})),
        "tolerance": TOLERANCE,
        "fit_tolerance": FIT_TOLERANCE,
        "confidence": 0.95,
        "seeds": seeds,
        "time_scale": time_scale,
        "settings": list(settings or []),
        "facts": rows,
        "within": sum(1 for r in rows if r["within"]),
        "measured": sum(1 for r in rows if r["within"] is not None),
        "runs": [
            {"scenario": sc, "system": sy, "seed": sd, "sim_seconds": r["sim_seconds"], "wall_seconds": r["wall_seconds"], "reused": (sc, sy, sd) in reused}
            for (sc, sy, sd), r in sorted(results.items())
        ],
        "reused_runs": len(reused),
        "wall_seconds": time.monotonic() - t0,
    }
