"""Calibration of a device's stock baseline: fit the calibration knobs to the device's fit-set facts.

The knobs (``mobmem keys calibration``) are the few global inputs nobody has measured — the
memory of the system processes, the apps' native heaps and code, how much of its code an app
keeps re-reading — each with a physical range. The facts are the published measurements of the
stock phone (``data/fidelity.toml``), split before any fit into a fit set and a held-out set;
:func:`calibrate` sees only the fit set of one device (the facts whose scenario runs on it) and the
knobs listed for that device under ``[devices.NAME]``.

The search is Optuna's TPE sampler, seeded: trials are asked in batches of :data:`BATCH` (their runs
share the worker pool) and told in order, so the same seed, code and budget give the same trials
and the same result whatever ``--jobs`` is. Knob values are drawn on a grid of :data:`STEP`, so the
values written are exact. The first trial is the knobs' defaults (the profiles as written). A
trial's loss is, per group of facts, the mean squared relative error, summed over groups (a fact
no run measured counts as an error of 100 %). Every run is kept under ``OUT/trials/`` and reused
by ``--resume`` when scenario, system, seed, settings and simulator code are the same; the trials
themselves are recomputed from those runs, so an interrupted fit resumes where it stopped. Each
finished run's fact values also go to ``OUT/runs.jsonl``, one line per run: a few hundred bytes
where the run's directory holds megabytes, so a long fit can be carried to another machine (or a
fresh checkout of the same code) by copying that one file into its ``--out`` directory.

The best trial is then run again over ``verify_seeds`` seeds, and the calibration file
(``data/calibration/DEVICE.toml``, or ``--write FILE``) records the knobs, every fit fact's
target and what the model reached, the loss, the revision and the command. Sessions on that device
read its ``[knobs]``. The file holds nothing that depends on the machine or the time, so the same
inputs write the same file.
"""

from __future__ import annotations

import hashlib
import json
import math
import shlex
import subprocess
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from mobmem.errors import MobmemError
from mobmem.paths import DATA
from mobmem.session import fidelity

CALIBRATION_DIR = DATA / "calibration"
#: Trials asked and run together (a fixed number, so that the trials do not depend on --jobs).
BATCH = 2
#: Knob values are multiples of this (exact in the file, and what the runs used).
STEP = 0.01
#: A fact no run measured counts as this relative error in the loss.
MISSING_ERROR = 1.0
#: A fact's relative error counts at most this much in the loss. Beyond 100 % a fact only says
#: "wrong shape" (a curve that never drops is scored one past the last launch, +160 % for the
#: commercial curve), and uncapped it would outweigh every other group of facts together.
ERROR_CAP = 1.0
#: ``--quick``: a smoke run of the whole command (numbers not comparable with the published ones).
QUICK = {"trials": 4, "seeds": 1, "verify_seeds": 1, "time_scale": 0.02}
FULL = {"trials": 48, "seeds": 1, "verify_seeds": 3, "time_scale": 1.0}


@dataclass(frozen=True)
class Knob:
    name: str
    low: float
    high: float
    default: float
    unit: str
    help: str
    source: str


def knobs() -> dict[str, Knob]:
    """Every calibration knob with its range and default (from the core's catalogue)."""
    from mobmem import catalog

    out = {}
    for e in catalog.catalog()["settings"]["calibration"]["keys"]:
        lo, hi = (float(x) for x in e["range"].strip("[]").split(","))
        out[e["key"]] = Knob(e["key"], lo, hi, float(e["default"]), e["unit"], e["help"], e["source"])
    return out


@dataclass(frozen=True)
class Plan:
    device: str
    knobs: list[Knob]
    split: str
    facts: list[fidelity.Fact]


def devices_table(path: Path | None = None) -> dict:
    """The ``[devices.NAME]`` tables of the facts file: knobs fitted on each device and why its
    facts are split as they are."""
    path = Path(path or fidelity.FACTS_FILE)
    try:
        return tomllib.loads(path.read_text()).get("devices", {})
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise MobmemError(f"{path}: {e}") from None


def plan(device: str, facts_file: Path | None = None) -> Plan:
    """What a calibration of ``device`` fits: its knobs and its fit-set facts."""
    table = devices_table(facts_file)
    if device not in table:
        raise MobmemError(f"--device: unknown device {device!r} for calibration; known (devices with a plan in the facts file): {', '.join(table) or 'none'}")
    all_knobs = knobs()
    names = table[device].get("knobs", [])
    unknown = [k for k in names if k not in all_knobs]
    if unknown or not names:
        raise MobmemError(
            f"{facts_file or fidelity.FACTS_FILE}: devices.{device}.knobs: {'unknown knob(s) ' + ', '.join(unknown) if unknown else 'empty'}; knobs: {', '.join(all_knobs)}"
        )
    facts = [f for f in fidelity.for_device(fidelity.load(facts_file), device) if f.set == "fit"]
    if not facts:
        raise MobmemError(f"no fit-set fact runs on device {device!r}")
    return Plan(device, [all_knobs[k] for k in names], table[device].get("split", ""), facts)


def settings_of(values: dict[str, float]) -> list[str]:
    """Every knob as a ``calibration.KNOB=VALUE`` setting: the fitted ones at ``values``, the others
    at their defaults (so a device's earlier calibration file never leaks into a trial)."""
    return [f"calibration.{k.name}={_fmt(values.get(k.name, k.default))}" for k in knobs().values()]


def _fmt(v: float) -> str:
    return f"{round(v, 6):g}"


def _grid(k: Knob, v: float) -> float:
    """``v`` on the knob's grid, within its range."""
    lo = math.ceil(k.low / STEP - 1e-9) * STEP
    return round(min(max(round(v / STEP) * STEP, lo), k.high), 6)


def loss(rows: list[dict]) -> float:
    """Per group, the mean squared relative error of its facts (each capped at ``ERROR_CAP``);
    summed over groups."""
    groups: dict[str, list[float]] = {}
    for r in rows:
        e = MISSING_ERROR if r["rel_error"] is None else min(abs(r["rel_error"]), ERROR_CAP)
        groups.setdefault(r["group"], []).append(e * e)
    return sum(sum(v) / len(v) for v in groups.values())


def _point_dir(out: Path | None, values: dict[str, float]) -> Path | None:
    if out is None:
        return None
    h = hashlib.sha256(json.dumps(sorted(values.items())).encode()).hexdigest()[:12]
    return Path(out) / "trials" / h


def revision() -> str:
    """The git revision of the package's tree (``-dirty`` with uncommitted changes), or "unknown"."""
    root = Path(__file__).resolve().parents[3]
    try:
        rev = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (rev + ("-dirty" if dirty else "")) if rev else "unknown"


def calibrate(
    device: str,
    trials: int,
    seed: int = 1,
    seeds: int = 1,
    verify_seeds: int = 3,
    time_scale: float = 1.0,
    jobs: int = 1,
    out: Path | None = None,
    resume: bool = False,
    progress: Callable[[str], None] | None = None,
    facts_file: Path | None = None,
) -> dict:
    """Fit ``device``'s knobs (module docstring); the calibration document (what
    :func:`write_file` writes, plus every trial and the wall time)."""
    import optuna

    if trials < 1:
        raise MobmemError(f"--trials must be at least 1, got {trials}")
    fidelity.check_arguments(max(seeds, verify_seeds), time_scale, jobs, out, resume)
    p = plan(device, facts_file)
    say = progress or (lambda _m: None)
    t0 = time.monotonic()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # Random start-up trials: 8 for any budget of 16 or more, so a fit stopped early and finalised
    # with a smaller --trials replays the same first trials (and reuses their runs).
    sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=min(8, max(2, trials // 2)), multivariate=True, constant_liar=True)
    study = optuna.create_study(direction="minimize", sampler=sampler)
    study.enqueue_trial({k.name: _grid(k, k.default) for k in p.knobs})
    history: list[dict] = []
    record = fidelity.RunRecord(Path(out) / fidelity.RECORD_FILE) if out is not None else None
    reused = 0
    verifying = 0  # the best trial's number while it is checked over more seeds

    def count(i, scenario, system, run_seed, _res, was_reused) -> None:
        # One line per run, so that a long batch shows it is moving.
        nonlocal reused
        reused += was_reused
        how = "reused" if was_reused else "done"
        trial = verifying or len(history) + i + 1
        say(f"  trial {trial}: {scenario} / {system} seed {run_seed} {how}")

    def evaluate(points: list[dict[str, float]], n_seeds: int) -> list[list[dict]]:
        outs = [_point_dir(out, v) for v in points]
        res = fidelity.run_points(p.facts, [settings_of(v) for v in points], n_seeds, time_scale, jobs, count, outs, resume, record)
        return [fidelity.evaluate(p.facts, r) for r in res]

    from mobmem.files import out_dir_lock

    with out_dir_lock(out):
        while len(history) < trials:
            batch = [study.ask() for _ in range(min(BATCH, trials - len(history)))]
            points = [{k.name: _grid(k, t.suggest_float(k.name, k.low, k.high, step=STEP)) for k in p.knobs} for t in batch]
            for t, values, rows in zip(batch, points, evaluate(points, seeds)):
                value = loss(rows)
                study.tell(t, value)
                history.append({"trial": len(history) + 1, "knobs": values, "loss": value, "facts": {r["id"]: r["mean"] for r in rows}})
                best = min(h["loss"] for h in history)
                knob_text = ", ".join(f"{k}={_fmt(v)}" for k, v in values.items())
                say(f"trial {len(history)}/{trials}: loss {value:.4f} (best {best:.4f}) — {knob_text}")
        best = min(history, key=lambda h: (h["loss"], h["trial"]))
        say(f"best trial {best['trial']}: loss {best['loss']:.4f}; checking it over {verify_seeds} seed(s)…")
        verifying = best["trial"]
        rows = evaluate([best["knobs"]], verify_seeds)[0]
    edges = [k.name for k in p.knobs if min(best["knobs"][k.name] - k.low, k.high - best["knobs"][k.name]) <= 0.02 * (k.high - k.low)]
    return {
        "device": device,
        "knobs": best["knobs"],
        "ranges": {k.name: [k.low, k.high] for k in p.knobs},
        "at_edge": edges,
        "split": p.split,
        "seed": seed,
        "trials": trials,
        "seeds": seeds,
        "verify_seeds": verify_seeds,
        "time_scale": time_scale,
        "best_trial": best["trial"],
        "search_loss": best["loss"],
        "loss": loss(rows),
        "facts": rows,
        "within": sum(1 for r in rows if r["within"]),
        "history": history,
        "reused_runs": reused,
        "wall_seconds": time.monotonic() - t0,
    }


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def file_text(doc: dict, command: str, rev: str) -> str:
    """The calibration file: the knobs sessions read, then the record of the fit (nothing that
    depends on the machine or the time)."""
    L = [
        f"# Calibration of the stock baseline of device {doc['device']!r}, written by `mobmem calibrate`: rerun",
        "# the command below to make it again; do not edit by hand. Sessions on this device read [knobs]",
        "# (`--set calibration.KNOB=VALUE` overrides one); the rest records the fit. The knobs were fitted",
        "# to the device's fit-set facts only (data/fidelity.toml); see docs/fidelity.md for both sets.",
        f"device = {_toml_str(doc['device'])}",
        f"command = {_toml_str(command)}",
        f"revision = {_toml_str(rev)}",
        f"seed = {doc['seed']}",
        f"trials = {doc['trials']}",
        f"seeds_per_trial = {doc['seeds']}",
        f"verify_seeds = {doc['verify_seeds']}",
        f"time_scale = {doc['time_scale']!r}",
        f"best_trial = {doc['best_trial']}",
        f"loss = {doc['loss']:.6g}",
        f"fit_facts_within_15_percent = {doc['within']}",
        f"fit_facts = {len(doc['facts'])}",
        f"knobs_at_a_range_edge = [{', '.join(_toml_str(k) for k in doc['at_edge'])}]",
        "",
        "[knobs]",
        *[f"{k} = {_fmt(v)}" for k, v in doc["knobs"].items()],
        "",
        "[ranges]",
        *[f"{k} = [{_fmt(lo)}, {_fmt(hi)}]" for k, (lo, hi) in doc["ranges"].items()],
    ]
    for r in doc["facts"]:
        reached = "nan" if r["mean"] is None else f"{r['mean']:.6g}"
        error = "nan" if r["rel_error"] is None else f"{r['rel_error']:.4f}"
        L += [
            "",
            "[[target]]",
            f"fact = {_toml_str(r['id'])}",
            f"published = {r['published']!r}",
            f"reached = {reached}",
            f"error = {error}",
            *([f"full_scale = {r['full_scale']!r}  # a fact published as 0: the error is a share of this"] if r.get("full_scale") else []),
            f"seeds = {r['n']}",
        ]
    return "\n".join(L) + "\n"


def write_file(doc: dict, path: Path, command: str) -> Path:
    from mobmem.files import atomic_write

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    atomic_write(Path(path), file_text(doc, command, revision()))
    return Path(path)


def command_line(argv: list[str]) -> str:
    return "mobmem " + " ".join(shlex.quote(a) for a in argv)
