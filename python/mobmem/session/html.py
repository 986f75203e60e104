"""One self-contained HTML page for a run or comparison directory: what ran, the launch-time
statistics, kills and per-app totals as tables, and the figures of :mod:`mobmem.session.plots`
inlined as SVG (no external file, script or font: it opens offline and can be mailed).
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


def _table(df, floatfmt: str = "{:,.1f}") -> str:
    if df is None:
        return "<p><em>none</em></p>"
    return df.to_html(index=False, float_format=lambda x: floatfmt.format(x), border=0, classes="t", na_rep="—")


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
        "table.t th{background:#f4f4f4}figure{margin:1em 0}svg{max-width:100%;height:auto}code{background:#f4f4f4;padding:1px 4px}</style>",
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
        "<h2>Per app</h2>",
        _table(_apps_table(runs)),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def write_html(path: Path, out: Path, command: str | None = None) -> Path:
    from mobmem.files import atomic_write, check_out_file

    check_out_file(out, "--html")
    atomic_write(Path(out), render(Path(path), command))
    return Path(out)
