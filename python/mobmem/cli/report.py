"""``mobmem report --study NAME``: a study's experiments on the simulated phone, and its report.

- ``mobmem report --study NAME [--quick] [--seeds K] [--jobs J] [--out DIR] [--resume]
  [--report FILE] [--only EXPERIMENT …] [--json]`` runs every experiment of the study under its
  systems and seeds, prints the tables and, with ``--report``, writes the Markdown page (with its
  figures, PNG and SVG, in a folder named after it) and the exact command that made it.
- ``mobmem report RUN_DIR --html [--report FILE]`` writes one self-contained HTML page of a run or
  compare directory (:mod:`mobmem.session.html`).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table

from mobmem.cli import options
from mobmem.session.studies import NAMES as STUDIES

console = Console(width=None if sys.stdout.isatty() else 200)


def _or(names) -> str:
    """``a, b or c``."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _tables(doc: dict) -> list[Table]:
    from mobmem.session.studies import fmt_stat, fmt_vs, get

    study = get(doc["study"])
    out = []
    for exp in doc["experiments"]:
        systems = exp.get("systems") or doc["systems"]
        rows = {r.key: r for e in study.experiments if e.id == exp["id"] for r in e.rows}
        t = Table(title=f"{exp['title']} ({exp['scenario']})", show_edge=False, title_justify="left")
        t.add_column("")
        for s in systems:
            t.add_column(s, justify="right")
        for s in systems[1:]:
            t.add_column(f"{s} vs {systems[0]}", justify="right")
        for key, st in exp["rows"].items():
            r = rows[key]
            t.add_row(r.label, *[fmt_stat(st[s], r.fmt) for s in systems], *[fmt_vs(st[s]) for s in systems[1:]])
        out.append(t)
    return out


def report(
    run_dir: Optional[Path] = typer.Argument(
        None, metavar="[RUN_DIR]", help="A run or compare directory (--out of `mobmem run` or `mobmem compare`): its report with --html."
    ),
    html: bool = typer.Option(
        False, "--html", help="With RUN_DIR: write one self-contained HTML page (tables and figures) to RUN_DIR/report.html or --report FILE."
    ),
    study: Optional[str] = typer.Option(None, "--study", metavar="NAME", help=f"The study: {_or(STUDIES)}."),
    quick: bool = typer.Option(False, "--quick", help="A scaled-down set (fewer systems, one seed, shorter durations) that runs in minutes."),
    seeds: int = typer.Option(3, "--seeds", help="Seeds per run: --seed + 0 … K−1 (ignored with --quick)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="First seed (default 1)."),
    jobs_: str = options.jobs("2"),
    executor: str = options.executor(),
    address: Optional[str] = options.address(),
    out: Optional[Path] = typer.Option(
        None, "--out", help="Write every run's files under DIR/EXPERIMENT/runs/SYSTEM/seed-N/, and its summary to the study's record DIR/record/."
    ),
    resume: bool = typer.Option(
        False,
        "--resume",
        help="With --out: reuse runs already there (same scenario, system, seed, settings, simulator code), from their directories or from DIR/record/ (copy it to resume on another machine).",
    ),
    report_: Optional[Path] = typer.Option(None, "--report", help="Write the Markdown report here (e.g. docs/studies/fleet.md), figures next to it."),
    only: List[str] = typer.Option(None, "--only", help="Run only these experiments (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result document (without the runs) as JSON."),
) -> None:
    """Run a study's experiments (a paper's, on the simulated phone) and write its report; or, for
    a run directory, write its HTML report."""
    from mobmem.cli.progress import RunsProgress, run_done, wanted
    from mobmem.errors import MobmemError
    from mobmem.files import atomic_write, check_out_dir, out_dir_lock
    from mobmem.session import studies

    if run_dir is not None:
        if study is not None:
            raise MobmemError("give either RUN_DIR (a run's report) or --study NAME, not both")
        if not html:
            raise MobmemError(f"{run_dir}: add --html for its HTML report (or see `mobmem plot {run_dir}` for its figures)")
        from mobmem.session.html import write_html

        target = report_ if report_ is not None else Path(run_dir) / "report.html"
        write_html(Path(run_dir), target, shlex.join(["mobmem", "report", *sys.argv[2:]]))
        console.print(f"wrote {target}", highlight=False)
        return
    if study is None:
        raise MobmemError(f"give --study NAME ({', '.join(STUDIES)}) or a run directory with --html")
    if html:
        raise MobmemError("--html is for a run directory: mobmem report RUN_DIR --html")

    st = studies.get(study)
    from mobmem.session.executor import check as check_executor

    jobs = check_executor(jobs_, executor)
    if resume and out is None:
        raise MobmemError("--resume needs --out DIR (the runs to resume from)")
    if report_ is not None and report_.is_dir():
        raise MobmemError(f"--report {report_}: is a directory; give a file name such as {report_ / (study + '.md')}")
    systems, seed_list, _ = studies.plan(st, quick, seeds, seed)
    exps = [e for e in st.experiments if not only or e.id in only]
    if out is not None:
        check_out_dir(out)
    # An experiment may run a subset of the study's systems.
    total = sum(len(e.systems_of(systems)) for e in exps) * len(seed_list)
    bar = RunsProgress(f"study {study}", total, wanted(as_json))

    def progress(exp: str, system: str, sd: int, res: dict, reused: bool) -> None:
        bar.advance()
        bar.log(f"[{bar.done}/{total}] {exp} / {system} seed {sd}: {run_done(res, reused)}")

    with out_dir_lock(out), bar:
        doc = studies.run(st, quick, seeds, seed, jobs, out, resume, list(only or []), progress, executor=executor, address=address)
    from mobmem.harness.environment import git_revision

    doc["command"] = shlex.join(["mobmem", "report", *sys.argv[2:]])
    doc["revision"] = git_revision(str(Path(__file__).resolve().parent))
    if report_ is not None:
        report_.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(report_, st.render(doc, report_))
    if as_json:
        light = {**doc, "experiments": [{k: v for k, v in e.items() if k != "results"} for e in doc["experiments"]]}
        sys.stdout.write(json.dumps(light) + "\n")
        return
    for t in _tables(doc):
        console.print(t)
    from mobmem.session.compare import ci_legend, flags_in

    for line in ci_legend(flags_in([[e["rows"], e["per_app"]] for e in doc["experiments"]])):
        console.print(line, highlight=False)
    console.print(f"{total} runs in {doc['wall_seconds']:.0f} s" + (f"; report in {report_}" if report_ else ""))


def register(app: typer.Typer) -> None:
    app.command("report")(report)
