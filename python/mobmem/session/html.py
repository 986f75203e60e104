"""One self-contained HTML page for a run or comparison directory: what ran, the launch-time
statistics, kills and per-app totals as tables, and the figures of :mod:`mobmem.session.plots`
inlined as SVG (no external file, script or font: it opens offline and can be mailed).

A comparison's page opens with what the comparison is for: per metric and system the mean across
seeds with its 95 % interval, the ratio to the first system with Fieller's interval and Welch's
p-value (:func:`mobmem.session.compare.aggregate`, computed from the runs in the directory, so a
comparison stopped part-way still gets its page), the same per app, and every run's value.
"""

from __future__ import annotations

import html
from pathlib import Path


def _launch_table(runs: dict[str, list]):
    import pandas as pd

    from mobmem.session.plots import launches_frame

    df = launches_frame(runs)
    if not len(df):
        return None
    g = df.groupby(["system", "app", "kind"])["ttid_ms"]
    t = pd.DataFrame({"n": g.count(), "mean_ms": g.mean(), "p50_ms": g.median(), "p90_ms": g.quantile(0.9), "max_ms": g.max()})
    return t.reset_index()


def _kills_table(runs: dict[str, list]):
    from mobmem.session.plots import stacked

    df = stacked(runs, "kills")
    return df if len(df) else None


def _apps_table(runs: dict[str, list]):
    r = next(iter(runs.values()))[0]
    cols = [
        c
        for c in ("app", "incarnations", "hot_launches", "cold_launches", "kills", "gc_count", "gc_cpu_ms", "majflt", "swapin", "swapout", "frames_janky")
        if c in r.apps.columns
    ]
    return r.apps[cols]


def _table(df, floatfmt: str = "{:,.1f}", table_id: str | None = None) -> str:
    if df is None:
        return "<p><em>none</em></p>"
    return df.to_html(index=False, float_format=lambda x: floatfmt.format(x), border=0, classes="t", na_rep="—", table_id=table_id)


def _stat_table(rows: list[tuple[str, dict, str]], systems: list[str], first_col: str, table_id: str) -> str:
    """Rows of (label, {system: stat}, format) as a table: per system its mean and 95 % interval,
    per other system its ratio to the first with Fieller's interval and Welch's p."""
    import pandas as pd

    from mobmem.session.compare import fmt_interval, fmt_versus

    out = []
    for label, by, fmt in rows:
        r = {first_col: label}
        for s in systems:
            st = by[s]
            r[f"{s} mean"] = "—" if st["mean"] is None else fmt.format(st["mean"])
            r[f"{s} 95 % CI"] = fmt_interval(st, fmt)
        for s in systems[1:]:
            r[f"{s} vs {systems[0]}"] = fmt_versus(by[s], interval=True)
        out.append(r)
    return _table(pd.DataFrame(out), table_id=table_id)


def _comparison(runs: dict[str, list], baseline_named: bool = True) -> list[str]:
    """A comparison's statistics (none for a single run): the metrics' table, the same per app
    and every run's values. ``baseline_named``: the systems' order is the comparison's (its
    ``compare.json``), not their names'."""
    import pandas as pd

    from mobmem.session.compare import METRICS, PER_APP, aggregate, ci_legend, flags_in, metrics

    if sum(len(rs) for rs in runs.values()) < 2:
        return []
    systems = list(runs)
    results = {(s, r.raw.get("seed")): r.raw for s, rs in runs.items() for r in rs}
    seeds = sorted({sd for _, sd in results})
    agg = aggregate(systems, seeds, results)
    e = html.escape
    parts = [
        "<h2>Comparison</h2>",
        f"<p>Mean across seeds ({e(', '.join(map(str, seeds)))}) with its 95 % Student-t interval; against <b>{e(systems[0])}</b>, the ratio of "
        "means with Fieller's 95 % interval and Welch's test (<i>n.s.</i>: no significant difference, p ≥ 0.05). One seed gives no interval and no "
        "test. The same numbers are in <code>compare.csv</code> and <code>compare_runs.csv</code>."
        + ("" if baseline_named else " (No <code>compare.json</code> here: the systems are in name order and the first is the baseline.)")
        + "</p>",
        _stat_table([(label, agg["overall"][key], fmt) for key, label, fmt in METRICS], systems, "metric", "statistics"),
    ]
    pa = agg["per_app"]
    apps = [a for a in pa if any(pa[a]["hot_p50_ms"][s]["n"] or pa[a]["relaunches"][s]["mean"] for s in systems)]
    if apps:
        parts += [
            "<h3>Per app: hot launches and relaunches</h3>",
            _stat_table([(f"{a}: {label}", pa[a][key], fmt) for a in apps for key, label, fmt in PER_APP], systems, "app: metric", "statistics-per-app"),
        ]
    legend = ci_legend(flags_in(agg))
    if legend:
        parts.append("<p class='note'>" + "<br>".join(e(x) for x in legend) + "</p>")
    cols = {f"{s} seed {r.raw.get('seed')}": metrics(r.raw)["overall"] for s, rs in runs.items() for r in rs}
    every = pd.DataFrame([{"metric": label, **{c: "—" if m[key] is None else fmt.format(m[key]) for c, m in cols.items()}} for key, label, fmt in METRICS])
    parts += ["<h3>Every run</h3>", _table(every, table_id="runs")]
    return parts


def render(path: Path, command: str | None = None) -> str:
    """The HTML page of the run or comparison directory ``path``."""
    from mobmem.session import plots

    runs = plots.load_runs(path)
    first = next(iter(runs.values()))[0].raw
    figs = plots.figures(runs)
    plt = plots._plt()
    svgs = {}
    for name, fig in figs.items():
        svg = plots.svg_text(fig)
        svgs[name] = svg[svg.index("<svg") :]  # inline: without the XML prologue
        plt.close(fig)
    e = html.escape
    seeds = {s: [r.raw.get("seed") for r in rs] for s, rs in runs.items()}
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>mobmem: {e(str(first.get('scenario')))}</title>",
        "<style>body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}"
        "table.t{border-collapse:collapse;font-size:13px;margin:0.5em 0 1.5em}table.t td,table.t th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}"
        "table.t th{background:#f4f4f4}table.t td:first-child,table.t th:first-child{text-align:left}p.note{font-size:13px;color:#555}figure{margin:1em 0}svg{max-width:100%;height:auto}code{background:#f4f4f4;padding:1px 4px}</style>",
        "</head><body>",
        f"<h1>{e(str(first.get('scenario')))}</h1>",
        "<p>"
        + " · ".join(
            [
                f"device <b>{e(str(first.get('device')))}</b>",
                f"systems {', '.join(f'<b>{e(s)}</b> (seeds {e(str(v))})' for s, v in seeds.items())}",
                f"{first.get('sim_seconds', 0):,.0f} simulated s",
            ]
        )
        + "</p>",
    ]
    if command:
        parts.append(f"<p>made by <code>{e(command)}</code> from <code>{e(str(path))}</code></p>")
    parts += _comparison(runs, (Path(path) / "compare.json").is_file())
    parts += [
        "<h2>Apps alive and cached</h2>",
        f"<figure id='cached_apps'>{svgs['cached_apps']}</figure>",
        "<h2>Launches</h2>",
        _table(_launch_table(runs)),
        f"<figure id='launches'>{svgs['launches']}</figure>",
        "<h2>Memory</h2>",
        f"<figure id='memory'>{svgs['memory']}</figure>",
        "<h2>Collections and reclaim</h2>",
        f"<figure id='activity'>{svgs['activity']}</figure>",
        "<h2>Minimum mutator utilisation</h2>",
        f"<figure id='mmu'>{svgs['mmu']}</figure>",
        "<h2>Kills</h2>",
        _table(_kills_table(runs)),
        "<h2>Per app</h2>" if sum(len(rs) for rs in runs.values()) == 1 else f"<h2>Per app: {e(next(iter(runs)))}, seed {e(str(first.get('seed')))}</h2>",
        _table(_apps_table(runs)),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def write_html(path: Path, out: Path, command: str | None = None) -> Path:
    from mobmem.files import atomic_write, check_out_file

    check_out_file(out, "--html")
    atomic_write(Path(out), render(Path(path), command))
    return Path(out)
