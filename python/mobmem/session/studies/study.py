"""The study engine: experiments, their rows, the runs of a study and their statistics (see the
package's documentation)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from mobmem.errors import MobmemError
from mobmem.session.provenance import reused_runs_line


@dataclass(frozen=True)
class Row:
    """One reported number of a run: ``fn(summary) -> float | None``; ``bounds``: what it can be
    (lower, upper; the interval of its mean is cut there, :func:`mobmem.session.compare.stat`)."""

    key: str
    label: str
    fn: Callable[[dict], float | None]
    fmt: str = "{:,.1f}"
    bounds: tuple[float | None, float | None] = (0.0, None)


@dataclass(frozen=True)
class Experiment:
    id: str
    title: str
    scenario: str
    rows: tuple[Row, ...]
    #: Per-app rows (app → value), reported as one table per row.
    per_app: tuple[Row, ...] = ()
    #: Extra ``--set`` settings of every run of this experiment.
    settings: tuple[str, ...] = ()
    #: Only these of the study's systems (in the study's order; empty: all of them).
    systems: tuple[str, ...] = ()

    def systems_of(self, systems: list[str]) -> list[str]:
        """The systems this experiment runs, of the study's ``systems``."""
        return [s for s in systems if not self.systems or s in self.systems]


@dataclass
class Study:
    name: str
    title: str
    systems: list[str]
    quick_systems: list[str]
    experiments: list[Experiment]
    #: Writes the report's Markdown (and its figures next to it) from the result document.
    render: Callable[[dict, Path], str]
    quick_time_scale: float = 0.05
    quick_seeds: int = 1
    extra: dict = field(default_factory=dict)


#: Bounds of a share (a part over its whole) and of frames per second at a 60 Hz vsync.
SHARE: tuple[float | None, float | None] = (0.0, 1.0)
FPS: tuple[float | None, float | None] = (0.0, 60.0)


def overall(key: str) -> Callable[[dict], float | None]:
    """One of ``compare``'s overall metrics of a run (a row function)."""
    from mobmem.session.compare import metrics

    return lambda res: metrics(res)["overall"][key]


def fps(frames: int, missed_vsyncs: int) -> float | None:
    """Frames delivered per second at a 60 Hz vsync: a frame that misses vsyncs holds the screen
    for them too."""
    return 60.0 * frames / (frames + missed_vsyncs) if frames else None


def run_fps(res: dict) -> float | None:
    """The FPS of a run's frames (those of the foreground app; a row function)."""
    fr = res.get("frames", {})
    return fps(fr.get("total", 0), fr.get("missed_vsyncs", 0))


def plan(study: Study, quick: bool, seeds: int, seed: int | None) -> tuple[list[str], list[int], list[str]]:
    """Systems, seeds and extra settings of a run of the study."""
    from mobmem import session

    systems = study.quick_systems if quick else study.systems
    n = study.quick_seeds if quick else seeds
    if n < 1:
        raise MobmemError(f"--seeds must be at least 1, got {n}")
    base = 1 if seed is None else seed
    seed_list = [base + i for i in range(n)]
    for s in seed_list:
        session.check_seed(s)
    extra = [f"session.time_scale={study.quick_time_scale}"] if quick else []
    return systems, seed_list, extra


def stats(
    systems: list[str], seeds: list[int], results: dict, fn: Callable[[dict], float | None], bounds: tuple[float | None, float | None] = (0.0, None)
) -> dict:
    """Per system: mean and CI across seeds of ``fn`` (cut at ``bounds``); ``vs_base`` against the
    first system."""
    from mobmem.session.compare import stat, versus

    vals = {s: [fn(results[(s, seed)]) for seed in seeds] for s in systems}
    out = {s: stat(v, *bounds) for s, v in vals.items()}
    for s in systems[1:]:
        out[s]["vs_base"] = versus(vals[systems[0]], vals[s], bounds[0])
    return out


def run(
    study: Study,
    quick: bool = False,
    seeds: int = 3,
    seed: int | None = None,
    jobs: int = 1,
    out: Path | None = None,
    resume: bool = False,
    only: list[str] | None = None,
    progress: Callable[[str, str, int, dict, bool], None] | None = None,
    executor: str = "local",
    address: str | None = None,
) -> dict:
    """Every experiment of ``study`` (or those in ``only``); returns the result document:
    per experiment its systems, seeds, settings and per-row statistics, and the runs' summaries.
    ``executor``/``address``: where the runs execute (:mod:`mobmem.session.executor`)."""
    from mobmem import session
    from mobmem.session.compare import SUMMARY_RECORD, run_matrix

    systems, seed_list, extra = plan(study, quick, seeds, seed)
    exps = [e for e in study.experiments if not only or e.id in only]
    unknown = sorted(set(only or []) - {e.id for e in study.experiments})
    if unknown:
        raise MobmemError(f"unknown experiment(s) {', '.join(unknown)} of study {study.name}; known: {', '.join(e.id for e in study.experiments)}")
    t0 = time.perf_counter()
    doc = {"study": study.name, "title": study.title, "quick": quick, "systems": systems, "seeds": seed_list, "experiments": [], "runs": 0, "reused_runs": 0}

    def count(exp_id: str, s: str, sd: int, r: dict, reused: bool) -> None:
        doc["runs"] += 1
        doc["reused_runs"] += int(reused)
        if progress is not None:
            progress(exp_id, s, sd, r, reused)

    for e in exps:
        scenario = session.resolve_scenario(e.scenario)
        settings = [*e.settings, *extra]
        exp_systems = e.systems_of(systems)
        res = run_matrix(
            scenario,
            exp_systems,
            seed_list,
            settings,
            jobs=jobs,
            out=None if out is None else out / e.id,
            resume=resume,
            progress=lambda s, sd, r, reused, e=e: count(e.id, s, sd, r, reused),
            executor=executor,
            address=address,
            # One summary record for the study (DIR/record/EXPERIMENT/…): copying DIR/record/
            # carries every finished run to another machine.
            record=None if out is None else out / SUMMARY_RECORD / e.id,
        )
        rows = {r.key: stats(exp_systems, seed_list, res, r.fn, r.bounds) for r in e.rows}
        apps = sorted({a for r in res.values() for a in r.get("per_app", {})})
        per_app = {r.key: {a: stats(exp_systems, seed_list, res, lambda x, a=a, r=r: (r.fn(x) or {}).get(a), r.bounds) for a in apps} for r in e.per_app}
        doc["experiments"].append(
            {
                "id": e.id,
                "title": e.title,
                "scenario": e.scenario,
                "settings": settings,
                "systems": exp_systems,
                "rows": rows,
                "per_app": per_app,
                "results": {f"{s}/{sd}": r for (s, sd), r in res.items()},
            }
        )
    doc["wall_seconds"] = time.perf_counter() - t0
    return doc


def fmt_stat(st: dict, fmt: str) -> str:
    """``mean [lo, hi]`` (or ``mean`` with one value, ``—`` with none); marks as
    :func:`mobmem.session.compare.fmt_interval`."""
    from mobmem.session.compare import fmt_stat as compare_fmt_stat

    return compare_fmt_stat(st, fmt)


def fmt_vs(st: dict) -> str:
    """The ratio to the first system with Welch's p (:func:`mobmem.session.compare.fmt_versus`)."""
    from mobmem.session.compare import fmt_versus

    return fmt_versus(st)


def calibration_lines(doc: dict) -> list[str]:
    """Per device the study's runs ran on: the calibration file its stock inputs came from, or none."""
    from mobmem.session import fidelity

    devices = sorted({r.get("device") for e in doc["experiments"] for r in e.get("results", {}).values() if r.get("device")})
    return fidelity.calibration_lines(fidelity.calibration_files(devices))


def header_lines(doc: dict, study: Study) -> list[str]:
    """The top of a study's report: what ran, from which revision, how long, and how to read the
    tables."""
    systems, seeds = doc["systems"], doc["seeds"]
    lines = [
        f"# {doc['title']}",
        "",
        f"Generated by `mobmem report --study {study.name}`; every number below comes from the run that wrote this page.",
        "",
        f"- command: `{doc['command']}`",
        f"- revision: `{doc.get('revision') or 'unknown'}`",
        f"- systems: {', '.join(f'`{s}`' for s in systems)}; seeds {', '.join(map(str, seeds))}",
        f"- wall time: {doc['wall_seconds']:.0f} s",
    ]
    if doc.get("reused_runs"):
        lines.append(reused_runs_line(doc["reused_runs"], doc["runs"]))
    lines += calibration_lines(doc)
    ran = [e["id"] for e in doc["experiments"]]
    skipped = [e.id for e in study.experiments if e.id not in ran]
    if skipped:
        lines += ["", f"This run covers the experiments {', '.join(ran)} (`--only`); {', '.join(skipped)} were not run."]
    if doc["quick"]:
        lines += [
            "",
            "**A quick run** (`--quick`): one seed, fewer systems, every use and wait duration scaled down. It shows",
            "the mechanisms at work; its numbers are not the study's results (run without `--quick` for those).",
        ]
    from mobmem.session.compare import ci_legend, flags_in

    lines += [
        "",
        "Cells are the mean across seeds with its 95 % Student-t interval in brackets (none with one seed);",
        f"`vs {systems[0]}` is the ratio of means with Welch's test and its p-value (`n.s.`: not significant at 5 %;",
        "`—` with one seed).",
    ]
    legend = ci_legend(flags_in([[e["rows"], e["per_app"]] for e in doc["experiments"]]))
    if legend:
        lines += ["", *(f"{line}." if i == len(legend) - 1 else f"{line};" for i, line in enumerate(legend))]
    return lines


def experiment_lines(exp: dict, study: Study, systems: list[str]) -> list[str]:
    """An experiment's heading and its table of rows (systems as columns, ratios against the first;
    the experiment's own systems where it runs a subset)."""
    systems = exp.get("systems") or systems
    base = systems[0]
    lines = [
        "",
        f"## {exp['title']}",
        "",
        f"Scenario `{exp['scenario']}`" + (f", settings `{' '.join(exp['settings'])}`" if exp["settings"] else "") + ".",
        "",
    ]
    head = "| | " + " | ".join(f"`{s}`" for s in systems) + " | " + " | ".join(f"`{s}` vs {base}" for s in systems[1:]) + " |"
    lines += [head, "|---" * (1 + len(systems) + len(systems) - 1) + "|"]
    rows = row_defs(study, exp["id"])
    for key, st in exp["rows"].items():
        r = rows[key]
        lines.append(f"| {r.label} | " + " | ".join(fmt_stat(st[s], r.fmt) for s in systems) + " | " + " | ".join(fmt_vs(st[s]) for s in systems[1:]) + " |")
    return lines


def per_app_lines(exp: dict, study: Study, systems: list[str]) -> list[str]:
    """One table per per-app row: apps as rows, systems as columns."""
    rows = row_defs(study, exp["id"])
    lines: list[str] = []
    for key, apps in exp["per_app"].items():
        r = rows[key]
        lines += ["", f"Per app: {r.label}", "", "| app | " + " | ".join(f"`{s}`" for s in systems) + " |", "|---" * (1 + len(systems)) + "|"]
        for app, st in apps.items():
            lines.append(f"| {app} | " + " | ".join(fmt_stat(st[s], r.fmt) for s in systems) + " |")
    return lines


def row_defs(study: Study, exp_id: str) -> dict[str, Row]:
    return {r.key: r for e in study.experiments if e.id == exp_id for r in (*e.rows, *e.per_app)}
