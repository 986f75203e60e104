"""``mobmem calibrate``: fit a device's calibration knobs to its stock facts and write its file.

- ``mobmem calibrate --device pixel3 [--trials N] [--seed S] [--jobs J] [--out DIR [--resume]]
  [--write FILE] [--quick] [--json]`` runs the search (:mod:`mobmem.session.calibrate`), prints each
  trial's loss, then the fit facts at the best knobs, and writes the calibration file (by default
  ``data/calibration/DEVICE.toml``, which sessions on the device read; ``--quick`` writes
  ``DIR/DEVICE.toml`` or ``--write`` and never the shipped file).
- ``mobmem calibrate --list`` lists each device's knobs and fit facts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from mobmem.cli import options
from mobmem.cli.fidelity import error_text

console = Console(width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True)


def _table(doc: dict) -> Table:
    t = Table(title=f"{doc['device']}: fit facts at the best knobs (±15 %)", show_edge=False, title_justify="left")
    for c, j in (("fact", "left"), ("published", "right"), ("model", "right"), ("error", "right"), ("within", "left")):
        t.add_column(c, justify=j)
    for r in doc["facts"]:
        model = "—" if r["mean"] is None else f"{r['mean']:,.2f}"
        t.add_row(r["id"], f"{r['published']:g} {r['unit']}", model, error_text(r), "not measured" if r["within"] is None else ("yes" if r["within"] else "no"))
    return t


def calibrate(
    device: Optional[str] = typer.Option(None, "--device", help="The device to calibrate (a device with a plan in data/fidelity.toml: see --list)."),
    trials: Optional[int] = typer.Option(None, "--trials", help="Trials of the search (default 48; 4 with --quick)."),
    seed: int = typer.Option(1, "--seed", help="Seed of the search (the same seed, code and trials give the same file)."),
    quick: bool = typer.Option(False, "--quick", help="A smoke run: 4 trials, one seed, durations × 0.02; never writes the shipped file."),
    jobs: str = options.jobs("2"),
    out: Optional[Path] = typer.Option(None, "--out", help="Keep every run under DIR/trials/ (and the search's record in DIR/calibration.json)."),
    resume: bool = typer.Option(
        False,
        "--resume",
        help="With --out: reuse the runs already there (same settings and simulator code), from their directories or from DIR/runs.jsonl, the fit's portable record of every run (copy it to resume on another machine).",
    ),
    write: Optional[Path] = typer.Option(None, "--write", help="Write the calibration file here instead of data/calibration/DEVICE.toml."),
    list_: bool = typer.Option(False, "--list", help="List each device's knobs and fit facts, and exit."),
    as_json: bool = typer.Option(False, "--json", help="Print the calibration document as JSON."),
) -> None:
    """Fit a device's calibration knobs to its stock facts (the fit set) and write its calibration file."""
    from mobmem.errors import MobmemError
    from mobmem.session import calibrate as cal
    from mobmem.session.executor import parse_jobs

    if list_:
        for name in cal.devices_table():
            p = cal.plan(name)
            console.print(f"[bold]{name}[/bold]: knobs {', '.join(k.name for k in p.knobs)}", highlight=False)
            for f in p.facts:
                console.print(f"  {f.id}: {f.claim} — {f.published:g} {f.unit}", highlight=False)
        return
    if device is None:
        raise MobmemError("--device is required (devices with a calibration plan: " + ", ".join(cal.devices_table()) + ")")
    mode = cal.QUICK if quick else cal.FULL
    n_trials = trials if trials is not None else mode["trials"]
    n_jobs = parse_jobs(jobs)
    if write is None:
        if quick:
            if out is None:
                raise MobmemError("--quick writes no shipped calibration: give --out DIR (the file goes to DIR/DEVICE.toml) or --write FILE")
            write = out / f"{device}.toml"
        else:
            write = cal.CALIBRATION_DIR / f"{device}.toml"
    if write.is_dir():
        raise MobmemError(f"--write {write}: is a directory; give a file name such as {write / (device + '.toml')}")
    # The command that makes the same file: the options that decide the result, not where it runs.
    argv = ["calibrate", "--device", device, "--seed", str(seed), "--trials", str(n_trials), *(["--quick"] if quick else [])]

    def progress(msg: str) -> None:
        if not as_json:
            err.print(msg, highlight=False)

    try:
        doc = cal.calibrate(device, n_trials, seed, mode["seeds"], mode["verify_seeds"], mode["time_scale"], n_jobs, out, resume, progress)
    except KeyboardInterrupt:
        from mobmem.errors import Interrupted

        kept = f"; the finished runs are in {out}/trials (the same command with --resume continues from them)" if out else " (no --out: nothing kept)"
        raise Interrupted(f"calibrate interrupted{kept}") from None
    path = cal.write_file(doc, write, cal.command_line(argv))
    if out is not None:
        from mobmem.files import atomic_write

        atomic_write(out / "calibration.json", json.dumps(doc, indent=1) + "\n")
    if as_json:
        sys.stdout.write(json.dumps(doc) + "\n")
        return
    console.print(_table(doc))
    knobs = ", ".join(f"{k} = {v:g}" for k, v in doc["knobs"].items())
    edge = f"; at a range edge: {', '.join(doc['at_edge'])}" if doc["at_edge"] else ""
    console.print(f"knobs: {knobs}{edge}", highlight=False)
    console.print(
        f"{doc['within']} of {len(doc['facts'])} fit facts within ±15 %; loss {doc['loss']:.4f}; {doc['trials']} trials in {doc['wall_seconds']:.0f} s; wrote {path}",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate)
