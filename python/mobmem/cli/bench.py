"""``mobmem bench …``: the benchmark harness on the command line.

- ``mobmem bench run [options] -- CMD ARG…`` — benchmark one command (an argv list, never a shell
  string) until the stop condition is met, with an environment record and warnings.
- ``mobmem bench compare [options] -- CMD_A … ::: CMD_B …`` — two commands, interleaved, with the
  ratio of means, its Fieller CI and Welch's test ("no significant difference" when not).
- ``mobmem bench harness-overhead`` — the harness against hyperfine on a trivial command.

The group object is ``app``; other areas add commands to it (e.g. ``bench kernel``).
"""

from __future__ import annotations

import json
import sys
from typing import List, Optional, Tuple

import typer
from rich.console import Console
from rich.table import Table

from mobmem.errors import MobmemError
from mobmem.harness.cliutil import fmt_value, handle_errors

app = typer.Typer(help="Benchmarks: the harness (run/compare any command) and model benchmarks.", no_args_is_help=True)

_CTX = {"allow_extra_args": True, "ignore_unknown_options": True, "allow_interspersed_args": False}


def _build(
    argv_list,
    names,
    *,
    stop,
    max_runs,
    max_time,
    max_failures,
    warmup,
    timeout,
    metric,
    perf_events,
    results,
    csv_path,
    json_out,
    quiet,
    cpus,
    cooldown,
    sleep,
    sysfs,
    gc_log,
    show_output,
    shuffle_seed,
    command_line,
    setup=None,
    prepare=None,
    cleanup=None,
    export_json=None,
    export_markdown=None,
    export_csv=None,
    parameter=None,
):
    from mobmem.files import check_out_file
    from mobmem.harness import actions as A
    from mobmem.harness import environment, meters
    from mobmem.harness.hyperfine import ShellCommands, substitute
    from mobmem.harness.implementation import CommandImplementation, Configuration, Parameters
    from mobmem.harness.loggers import CSVLogger, JSONLogger, ProgressLogger
    from mobmem.harness.runner import Runner, make_stop
    from mobmem.harness.stop import parse_duration, parse_stop
    from mobmem.harness.store import ResultStore

    for option, path in (
        ("--results", results),
        ("--csv", csv_path),
        ("--json-out", json_out),
        ("--export-json", export_json),
        ("--export-markdown", export_markdown),
        ("--export-csv", export_csv),
    ):
        if path:
            check_out_file(path, option)  # before any run, not after the last one
    if max_runs < 1:
        raise MobmemError(f"--max-runs must be ≥ 1, got {max_runs}")
    if warmup < 0:
        raise MobmemError(f"--warmup must be ≥ 0, got {warmup}")
    cond = make_stop(parse_stop(stop), max_runs, parse_duration(max_time) if max_time else None, max_failures if max_failures > 0 else None)
    t = parse_duration(timeout) if timeout else None
    shell = ShellCommands(setup, prepare, cleanup)
    if parameter:
        # hyperfine's -L/-P: one configuration per value, named by the command it runs
        (pname, values), argv = parameter, argv_list[0]
        if not any("{" + pname + "}" in a for a in argv):
            raise MobmemError(f"the command does not use the parameter {{{pname}}}")
        configs = [
            Configuration(
                " ".join(substitute(a, {pname: v}) for a in argv),
                CommandImplementation(argv, timeout=t, show_output=show_output, shell=shell),
                Parameters({pname: v}),
            )
            for v in values
        ]
    else:
        configs = [Configuration(n, CommandImplementation(a, timeout=t, show_output=show_output, shell=shell), Parameters()) for n, a in zip(names, argv_list)]
    events = tuple(e.strip() for e in perf_events.split(",") if e.strip()) if perf_events else ()
    ms = [meters.WallClockMeter(), meters.RusageMeter()]
    if events:
        ms.append(meters.PerfEventMeter(events))
    if gc_log:
        ms.append(meters.GCLogMeter(gc_log))
    acts = []
    if cpus:
        acts.append(A.SetAffinity(A.parse_cpus(cpus)))
    for s in sysfs or []:
        path, eq, value = s.partition("=")
        if not eq:
            raise MobmemError(f"--sysfs expects PATH=VALUE, got {s!r}")
        acts.append(A.SysfsWrite(path, value))
    if cooldown:
        zone, colon, temp = cooldown.rpartition(":")
        try:
            acts.append(A.CoolDown(zone, float(temp)))
        except ValueError:
            raise MobmemError(f"--cooldown expects ZONE:CELSIUS, got {cooldown!r}") from None
        if not colon:
            raise MobmemError(f"--cooldown expects ZONE:CELSIUS, got {cooldown!r}")
    if sleep:
        acts.append(A.Sleep(parse_duration(sleep)))
    if warmup:
        acts.append(A.Warmup(warmup))
    loggers = [] if quiet else [ProgressLogger()]
    if csv_path:
        loggers.append(CSVLogger(csv_path))
    if json_out:
        loggers.append(JSONLogger(json_out))
    env = environment.collect(command_line)
    store = ResultStore(results) if results else None
    return Runner(
        configs, cond, meters=ms, actions=acts, loggers=loggers, store=store, primary=metric, shuffle_seed=shuffle_seed, env=env, command=command_line
    )


def _pct(x: float) -> str:
    return "—" if x != x or x in (float("inf"), float("-inf")) else f"{x:.2f}%"


def _cells(m: str, d: dict) -> dict[str, str]:
    """A metric's statistics as text, by column: mean, the 95 % CI's half-width relative to it,
    median, standard deviation, CV, min, max, outliers (— where a value has no meaning)."""
    s = d["summary"]
    ci = s["mean_ci"]
    rel = (ci["high"] - ci["low"]) / 2 / abs(s["mean"]) * 100 if s["mean"] else float("nan")
    return {
        "n": str(s["n"]),
        "mean": fmt_value(s["mean"], m),
        "95% CI (mean)": f"±{_pct(rel)}" if s["n"] > 1 and rel == rel else "—",
        "median": fmt_value(s["median"], m),
        "std": fmt_value(s["std"], m),
        "CV": _pct(s["cv"] * 100) if s["n"] > 1 else "—",
        "min": fmt_value(s["min"], m),
        "max": fmt_value(s["max"], m),
        "outliers": str(len(d["outliers"]["flagged"])),
    }


def _narrow(con: Console, title: str, metrics: dict) -> None:
    """The statistics of a command one metric at a time, for a terminal too narrow for the table:
    the metric's name, then its values packed into lines that fit (none cut short)."""
    con.print(title, highlight=False, soft_wrap=True)
    con.print("  (mean ± the half-width of its 95% CI; σ: standard deviation)", style="dim", highlight=False, soft_wrap=True)
    names = list(metrics)
    indent = min(max((len(n) for n in names), default=0) + 4, 28)
    room = max(20, con.width - indent)
    for m in names:
        c = _cells(m, metrics[m])
        items = [
            c["mean"] + ("" if c["95% CI (mean)"] == "—" else f" {c['95% CI (mean)']}"),
            f"median {c['median']}",
            f"σ {c['std']}",
            f"CV {c['CV']}",
            f"range {c['min']} … {c['max']}",
            f"n {c['n']}",
            f"outliers {c['outliers']}",
        ]
        lines, cur = [], ""
        for it in items:
            if cur and len(cur) + 3 + len(it) > room:
                lines.append(cur)
                cur = it
            else:
                cur = f"{cur}   {it}" if cur else it
        lines.append(cur)
        head = f"  {m}"
        con.print(
            f"{head}{' ' * max(1, indent - len(head))}{lines[0]}" if len(head) < indent else f"{head}\n{' ' * indent}{lines[0]}",
            highlight=False,
            soft_wrap=True,
        )
        for ln in lines[1:]:
            con.print(" " * indent + ln, highlight=False, soft_wrap=True)


def _print_human(result: dict, metric: str, warnings_shown: bool = False, console: Console | None = None) -> None:
    """The statistics of every command as a table; where the terminal is too narrow for it, one
    metric at a time (:func:`_narrow`), as hyperfine stays readable in 80 columns."""
    con = console or Console()
    cols = ("n", "mean", "95% CI (mean)", "median", "std", "CV", "min", "max", "outliers")
    for name, c in result["configurations"].items():
        st = c["stats"]
        title = f"{name}: {' '.join(c['describe'].get('argv', []))}"
        t = Table(title=title, title_justify="left")
        t.add_column("metric", justify="left", no_wrap=True)
        for col in cols:
            t.add_column(col, justify="right", no_wrap=True)
        for m, d in st["metrics"].items():
            cells = _cells(m, d)
            t.add_row(m, *(cells[col] for col in cols))
        if con.measure(t, options=con.options.update_width(10_000)).maximum > con.width:  # its natural width
            _narrow(con, title, st["metrics"])
        else:
            con.print(t)
        statuses = ", ".join(f"{k}: {v}" for k, v in st["statuses"].items())
        con.print(f"runs: {st['runs']} ({statuses}); stop: {c['stop_reason']}")
        for u in st["unsuccessful"][:5]:
            con.print(f"  [red]{u['status']}[/red] {u['run_id']} exit={u['exit_code']} signal={u['signal']} {u['error'] or ''}")
    if "comparison" in result:
        cmp = result["comparison"]
        con.print(f"[bold]{cmp['metric']}: {cmp['verdict']}[/bold]")
    for w in result["warnings"][len(result["environment"].get("warnings", [])) if warnings_shown else 0 :]:
        con.print(f"[yellow]warning:[/yellow] {w}")


_opts = dict(
    stop=typer.Option("ci:1%", "--stop", help="Stop condition: fixed:N, time:30s, ci:1%[@95], cv:2%/10, combined with & | ! ( )."),
    max_runs=typer.Option(50, "--max-runs", help="Upper bound on measured runs per command (always applied)."),
    max_time=typer.Option(None, "--max-time", help="Upper bound on elapsed time, e.g. 2m."),
    max_failures=typer.Option(5, "--max-failures", help="Stop after this many unsuccessful runs (0: never)."),
    warmup=typer.Option(1, "--warmup", help="Unrecorded warm-up runs before measuring."),
    timeout=typer.Option(None, "--timeout", help="Per-run time limit (e.g. 10s); a run over it is killed and recorded as 'timeout'."),
    metric=typer.Option("wall_s", "--metric", help="Primary metric for stop conditions and comparison (wall_s, task_clock_s, …)."),
    perf_events=typer.Option("cycles,instructions", "--perf-events", help="perf_event counters to try ('' for none)."),
    results=typer.Option(None, "--results", help="Append-only JSONL results file; an existing file is resumed."),
    csv_path=typer.Option(None, "--csv", help="Write one CSV row per run."),
    json_out=typer.Option(None, "--json-out", help="Write the JSON result to this file."),
    json_flag=typer.Option(False, "--json", help="Print the JSON result on stdout instead of tables."),
    quiet=typer.Option(False, "--quiet", "-q", help="No progress line."),
    cpus=typer.Option(None, "--cpus", help="Pin to these CPUs, e.g. 0-1 (verified after every run)."),
    cooldown=typer.Option(None, "--cooldown", help="Before each run wait until ZONE reads below CELSIUS, e.g. thermal_zone0:60."),
    sleep=typer.Option(None, "--sleep", help="Sleep before each run, e.g. 100ms."),
    sysfs=typer.Option(None, "--sysfs", help="PATH=VALUE written before the benchmark (when permitted) and restored after."),
    gc_log=typer.Option(None, "--gc-log", help="Parse this HotSpot unified GC log after every run (the command writes it)."),
    show_output=typer.Option(False, "--show-output", help="Let the command print to the terminal."),
    shuffle_seed=typer.Option(None, "--shuffle-seed", help="Shuffle the order of configurations in each round with this seed."),
    setup=typer.Option(None, "--setup", help="Shell command run once before a command's runs (as hyperfine's --setup)."),
    prepare=typer.Option(None, "--prepare", help="Shell command run before each run, not measured (as hyperfine's --prepare)."),
    cleanup=typer.Option(None, "--cleanup", help="Shell command run after a command's runs (as hyperfine's --cleanup)."),
    export_json=typer.Option(None, "--export-json", help="Write the results in hyperfine's JSON format (what its scripts read)."),
    export_markdown=typer.Option(None, "--export-markdown", help="Write hyperfine's Markdown table."),
    export_csv=typer.Option(None, "--export-csv", help="Write hyperfine's CSV summary."),
)


def _harness_options(given: dict) -> dict:
    """The harness options of a command's arguments (every key of ``_opts`` but the output flag);
    ``--json`` implies ``--quiet``."""
    out = {k: given[k] for k in _opts if k != "json_flag"}
    out["quiet"] = given["quiet"] or given["json_flag"]
    return out


def _emit(result, json_flag, metric, quiet=False):
    if json_flag:
        from mobmem.harness.store import _default

        json.dump(result, sys.stdout, indent=2, default=_default)
        sys.stdout.write("\n")
    else:
        _print_human(result, metric, warnings_shown=not quiet)


@app.command("run", context_settings=_CTX)
@handle_errors
def run_cmd(
    ctx: typer.Context,
    stop: str = _opts["stop"],
    max_runs: int = _opts["max_runs"],
    max_time: Optional[str] = _opts["max_time"],
    max_failures: int = _opts["max_failures"],
    warmup: int = _opts["warmup"],
    timeout: Optional[str] = _opts["timeout"],
    metric: str = _opts["metric"],
    perf_events: str = _opts["perf_events"],
    results: Optional[str] = _opts["results"],
    csv_path: Optional[str] = _opts["csv_path"],
    json_out: Optional[str] = _opts["json_out"],
    json_flag: bool = _opts["json_flag"],
    quiet: bool = _opts["quiet"],
    cpus: Optional[str] = _opts["cpus"],
    cooldown: Optional[str] = _opts["cooldown"],
    sleep: Optional[str] = _opts["sleep"],
    sysfs: Optional[List[str]] = _opts["sysfs"],
    gc_log: Optional[str] = _opts["gc_log"],
    show_output: bool = _opts["show_output"],
    shuffle_seed: Optional[int] = _opts["shuffle_seed"],
    setup: Optional[str] = _opts["setup"],
    prepare: Optional[str] = _opts["prepare"],
    cleanup: Optional[str] = _opts["cleanup"],
    export_json: Optional[str] = _opts["export_json"],
    export_markdown: Optional[str] = _opts["export_markdown"],
    export_csv: Optional[str] = _opts["export_csv"],
    parameter_list: Optional[Tuple[str, str]] = typer.Option(
        None, "--parameter-list", "-L", help="NAME V1,V2,…: run the command once per value, with {NAME} replaced (as hyperfine's -L)."
    ),
    parameter_scan: Optional[Tuple[str, float, float]] = typer.Option(
        None, "--parameter-scan", "-P", help="NAME MIN MAX: {NAME} from MIN to MAX by --parameter-step-size (as hyperfine's -P)."
    ),
    parameter_step_size: Optional[float] = typer.Option(None, "--parameter-step-size", "-D", help="Step of --parameter-scan (default 1)."),
):
    """Benchmark one command: mobmem bench run [options] -- CMD ARG…"""
    argv = list(ctx.args)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise MobmemError("no command given: mobmem bench run [options] -- CMD ARG…")
    if any(a.startswith("--") for a in argv[:1]):
        raise MobmemError(f"unknown option {argv[0]!r} (put the command after `--`)")
    from mobmem.harness.hyperfine import parameter_values

    param = parameter_values(parameter_list, parameter_scan, parameter_step_size)
    runner = _build(
        [argv],
        ["cmd"],
        **_harness_options(locals()),
        parameter=param,
        command_line=["mobmem", "bench", "run"] + sys.argv[3:] if len(sys.argv) > 3 else ["mobmem", "bench", "run", "--", *argv],
    )
    result = runner.run()
    _exports(runner, export_json, export_markdown, export_csv)
    _emit(result, json_flag, metric, quiet)


def _exports(runner, export_json, export_markdown, export_csv) -> None:
    from mobmem.harness import hyperfine

    for path, fn in ((export_json, hyperfine.export_json), (export_markdown, hyperfine.export_markdown), (export_csv, hyperfine.export_csv)):
        if path:
            fn(runner, path)


@app.command("compare", context_settings=_CTX)
@handle_errors
def compare_cmd(
    ctx: typer.Context,
    stop: str = _opts["stop"],
    max_runs: int = _opts["max_runs"],
    max_time: Optional[str] = _opts["max_time"],
    max_failures: int = _opts["max_failures"],
    warmup: int = _opts["warmup"],
    timeout: Optional[str] = _opts["timeout"],
    metric: str = _opts["metric"],
    perf_events: str = _opts["perf_events"],
    results: Optional[str] = _opts["results"],
    csv_path: Optional[str] = _opts["csv_path"],
    json_out: Optional[str] = _opts["json_out"],
    json_flag: bool = _opts["json_flag"],
    quiet: bool = _opts["quiet"],
    cpus: Optional[str] = _opts["cpus"],
    cooldown: Optional[str] = _opts["cooldown"],
    sleep: Optional[str] = _opts["sleep"],
    sysfs: Optional[List[str]] = _opts["sysfs"],
    gc_log: Optional[str] = _opts["gc_log"],
    show_output: bool = _opts["show_output"],
    shuffle_seed: Optional[int] = _opts["shuffle_seed"],
    setup: Optional[str] = _opts["setup"],
    prepare: Optional[str] = _opts["prepare"],
    cleanup: Optional[str] = _opts["cleanup"],
    export_json: Optional[str] = _opts["export_json"],
    export_markdown: Optional[str] = _opts["export_markdown"],
    export_csv: Optional[str] = _opts["export_csv"],
):
    """Compare two commands: mobmem bench compare [options] -- CMD_A … ::: CMD_B …"""
    argv = list(ctx.args)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if argv.count(":::") != 1:
        raise MobmemError("give exactly two commands separated by ':::': mobmem bench compare -- CMD_A … ::: CMD_B …")
    i = argv.index(":::")
    a, b = argv[:i], argv[i + 1 :]
    if not a or not b:
        raise MobmemError("both commands must be non-empty: mobmem bench compare -- CMD_A … ::: CMD_B …")
    runner = _build(
        [a, b],
        ["A", "B"],
        **_harness_options(locals()),
        command_line=["mobmem", "bench", "compare", "--", *a, ":::", *b],
    )
    result = runner.run()
    _exports(runner, export_json, export_markdown, export_csv)
    _emit(result, json_flag, metric, quiet)


@app.command("harness-overhead")
@handle_errors
def overhead_cmd(
    runs: int = typer.Option(200, "--runs", help="Runs of the trivial command for each tool."),
    command: str = typer.Option("true", "--command", help="The trivial command (one executable, no arguments)."),
    json_flag: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Harness vs hyperfine on a trivial command: extra time per run, and runs to a 1% CI vs fixed 15."""
    from mobmem.harness.overhead import measure, render

    res = measure(runs=runs, command=command)
    if json_flag:
        print(json.dumps(res, indent=2, default=str))
    else:
        render(res)
