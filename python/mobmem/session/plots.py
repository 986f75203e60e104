"""Figures of a run directory (``mobmem run --out``) or of a comparison (``mobmem compare --out``),
drawn with matplotlib from the files the run wrote — nothing is re-simulated.

- ``cached_apps`` — apps alive and cached over time (the caching-capacity curve), kills marked;
- ``memory`` — the phone's memory over time (free, anon, file, swap) and, per app, its RSS
  stacked by ``dumpsys meminfo`` category (Java heap, native heap, code, graphics, stack,
  other) with its PSS and swap as lines;
- ``launches`` — time to initial display per app and launch kind (hot/cold): every launch a
  point, a column per system, the median a dash, a box of quartiles only from five launches;
- ``activity`` — collections (duration, pauses) per app and reclaim (kswapd and direct scan
  rates, PSI) over time;
- ``mmu`` — minimum mutator utilisation curves (a result's ``mmu`` rows).

Every axis is labelled with its unit, counts get whole-number ticks, systems are named in the
legends (each in one colour and marker in every figure, :func:`system_style`) and every app has
one colour of its own in every figure of a run or comparison (:func:`app_colors`). Figures that
show one run name it (system and seed). :func:`plot_dir` writes each figure as PNG and SVG;
:func:`figures` returns them unsaved (the HTML report embeds the SVG text).
"""

from __future__ import annotations

import io
from pathlib import Path

from mobmem.errors import MobmemError

CATEGORY_LABELS = {
    "java_heap_mib": "Java heap",
    "native_heap_mib": "native heap",
    "code_mib": "code",
    "graphics_mib": "graphics",
    "stack_mib": "stack",
    "other_mib": "other",
}


def load_runs(path: Path) -> dict[str, list]:
    """``{system: [Result, …]}`` of a run directory (one system, named after the run's) or of a
    comparison directory (``runs/SYSTEM/seed-N``): systems in the comparison's order (its
    ``compare.json``; the first is the baseline), else by name, each system's runs by seed."""
    import json

    from mobmem.api import load

    path = Path(path)
    if (path / "summary.json").is_file():
        r = load(path)
        return {r.raw.get("system_name") or "run": [r]}
    runs = list(path.glob("runs/*/seed-*/summary.json"))
    if not runs:
        raise MobmemError(f"{path}: no summary.json and no runs/SYSTEM/seed-N/ (not a run or compare directory)")
    try:
        order = list(json.loads((path / "compare.json").read_text())["systems"])
    except (OSError, ValueError, KeyError, TypeError):
        order = []

    def key(p: Path) -> tuple:
        system, seed = p.parent.parent.name, p.parent.name.removeprefix("seed-")
        return (order.index(system) if system in order else len(order), system, int(seed) if seed.lstrip("-").isdigit() else 0, seed)

    out: dict[str, list] = {}
    for p in sorted(runs, key=key):
        out.setdefault(p.parent.parent.name, []).append(load(p.parent))
    return out


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _apps(runs: dict[str, list]) -> list[str]:
    """Every app of the runs in the order of their first launch (the first run's first), then
    apps that never launched."""
    apps: dict[str, None] = {}
    for rs in runs.values():
        for r in rs:
            apps.update(dict.fromkeys(r.launches["app"]))
    for rs in runs.values():
        for r in rs:
            apps.update(dict.fromkeys(r.raw.get("per_app", {})))
    return list(apps)


def app_colors(apps: list[str]) -> dict[str, tuple]:
    """One colour per app, distinct for any number of apps: matplotlib's ten categorical colours,
    then the other shades of its tab20, tab20b and tab20c maps in the order that keeps each new
    colour farthest from those taken (greys left out: they are the figures' own), then evenly
    spaced hues beyond those 55. The same apps in the same order get the same colours, so every
    figure of a run or comparison gives an app one colour."""
    import math

    from matplotlib import colormaps
    from matplotlib.colors import hsv_to_rgb, to_rgb

    chosen = [to_rgb(c) for c in colormaps["tab10"].colors]
    cand = [to_rgb(c) for m in ("tab20", "tab20b", "tab20c") for c in colormaps[m].colors]
    cand = [c for c in dict.fromkeys(cand) if c not in chosen and max(c) - min(c) > 0.02]
    while cand and len(chosen) < len(apps):
        best = max(cand, key=lambda c: min(math.dist(c, x) for x in chosen))
        chosen.append(best)
        cand.remove(best)
    golden = (math.sqrt(5) - 1) / 2
    i = 0
    while len(chosen) < len(apps):
        h = (i * golden) % 1.0
        chosen.append(tuple(hsv_to_rgb((h, 0.75, 0.45 + 0.4 * (i % 2)))))
        i += 1
    return {a: chosen[i] for i, a in enumerate(apps)}


#: A system's marker (its colour is matplotlib's Nth categorical colour, ``CN``).
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def system_style(systems: list[str]) -> dict[str, dict]:
    """Per system (in comparison order) its colour and marker, the same in every figure."""
    return {s: {"color": f"C{i % 10}", "marker": MARKERS[i % len(MARKERS)]} for i, s in enumerate(systems)}


def integer_axis(axis) -> None:
    """Ticks at whole numbers only (an axis of counts)."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def _first(runs: dict[str, list]):
    """The first run and how a figure that shows only it names it."""
    system, rs = next(iter(runs.items()))
    r = rs[0]
    several = sum(len(x) for x in runs.values()) > 1
    name = f"system {system}, " if r.raw.get("system_name") else ""  # a run without --system has none
    return r, f"{name}seed {r.raw.get('seed')}" + (" (the first run)" if several else "")


TIME = "simulated time (s)"


def fig_cached_apps(runs: dict[str, list], colors: dict | None = None):
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 3.5))
    style = system_style(list(runs))
    for system, rs in runs.items():
        r = rs[0]
        tl = r.timeline
        label = system if len(runs) > 1 else None
        c = style[system]["color"]
        ax.step(tl["t_s"], tl["cached_apps"], where="post", color=c, label=f"{label} cached" if label else "cached apps")
        ax.step(tl["t_s"], tl["alive_apps"], where="post", alpha=0.5, linestyle="--", color=c, label=f"{label} alive" if label else "alive apps")
        k = r.kills
        if len(k):
            ax.scatter(k["t_s"], [0.2] * len(k), marker="x", color=c, label=f"{label} kills" if label else "kills")
    ax.set_xlabel(TIME)
    ax.set_ylabel("apps (count)")
    integer_axis(ax.yaxis)
    ax.set_ylim(bottom=0)
    ax.set_title("Apps alive and cached (first seed of each system)" if len(runs) > 1 else "Apps alive and cached")
    ax.legend(loc="upper left", fontsize="small")
    fig.tight_layout()
    return fig


def fig_memory(runs: dict[str, list], colors: dict | None = None):
    """The phone's memory over time, then one panel per app (its RSS by category, PSS and swap),
    all on one time axis."""
    plt = _plt()
    from matplotlib.patches import Patch

    from mobmem.session.output import MEMINFO_CATEGORIES

    r, which = _first(runs)
    am = r.app_memory
    apps = list(dict.fromkeys(am["app"])) if len(am) else []
    cols = 3
    rows = 1 + (len(apps) + cols - 1) // cols
    fig = plt.figure(figsize=(12, 1.2 + 2.7 * rows), layout="constrained")
    gs = fig.add_gridspec(rows, cols)
    ax0 = fig.add_subplot(gs[0, :])
    tl = r.timeline
    ax0.stackplot(tl["t_s"], tl["anon_mib"], tl["file_mib"], tl["free_mib"], labels=["anon LRU", "file LRU", "free"], alpha=0.8)
    ax0.plot(tl["t_s"], tl["swap_used_mib"], color="black", label="swap used")
    ax0.set_ylabel("memory (MiB)")
    ax0.set_xlabel(TIME)
    ax0.set_title(f"Phone memory: {which}")
    ax0.legend(loc="upper right", fontsize="small", ncol=4)
    present = [c for c in MEMINFO_CATEGORIES if c in am.columns]
    fills = [f"C{i}" for i in range(len(present))]
    for i, app in enumerate(apps):
        ax = fig.add_subplot(gs[1 + i // cols, i % cols], sharex=ax0)
        a = am[am["app"] == app]
        ax.stackplot(a["t_s"], *[a[c] for c in present], colors=fills, alpha=0.85)
        ax.plot(a["t_s"], a["pss_mib"], color="black", linewidth=0.8)
        ax.plot(a["t_s"], a["swap_mib"], color="black", linestyle="--", linewidth=0.8)
        ax.set_title(app if len(app) < 40 else app[:37] + "…", fontsize="small")
        ax.set_xlabel(TIME, fontsize="x-small")
        ax.set_ylabel("memory (MiB)", fontsize="x-small")
        ax.tick_params(labelsize="x-small")
    if apps:
        from matplotlib.lines import Line2D

        handles = [Patch(color=f, alpha=0.85, label=CATEGORY_LABELS[c]) for f, c in zip(fills, present)]
        handles += [Line2D([], [], color="black", linewidth=0.8, label="PSS"), Line2D([], [], color="black", linestyle="--", linewidth=0.8, label="swap")]
        fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), fontsize="small", title="per app: RSS by dumpsys meminfo category (stacked)")
    return fig


def stacked(runs: dict[str, list], table: str):
    """A :class:`mobmem.api.Result` table of every run, one under the other, with the run's
    ``system`` and ``seed`` as its first columns."""
    import pandas as pd

    frames = []
    for system, rs in runs.items():
        for r in rs:
            t = getattr(r, table).copy()
            t.insert(0, "system", system)
            t.insert(1, "seed", r.raw.get("seed"))
            frames.append(t)
    return pd.concat(frames, ignore_index=True)


def launches_frame(runs: dict[str, list]):
    """Every launch of every run: ``system, seed, app, kind, ttid_ms``."""
    return stacked(runs, "launches")[["system", "seed", "app", "kind", "ttid_ms"]]


#: The fewest launches a box is drawn for (below, the launches are the points alone).
MIN_BOX = 5


def fig_launches(runs: dict[str, list], colors: dict | None = None):
    """Every launch's TTID as a point (per app, one column per system; spread sideways so equal
    values stay visible), with a box of quartiles where an app has at least :data:`MIN_BOX`
    launches under a system — a box of fewer says nothing the points do not."""
    import zlib

    import numpy as np

    plt = _plt()
    df = launches_frame(runs)
    kinds = [k for k in ("hot", "cold") if (df["kind"] == k).any()] or ["hot"]
    fig, axes = plt.subplots(len(kinds), 1, figsize=(12, 3.6 * len(kinds)), squeeze=False)
    systems = list(runs)
    style = system_style(systems)
    width = 0.8 / max(1, len(systems))
    for ax, kind in zip(axes[:, 0], kinds):
        d = df[df["kind"] == kind]
        apps = sorted(set(d["app"]))
        for i, app in enumerate(apps):
            for j, s in enumerate(systems):
                v = d[(d["app"] == app) & (d["system"] == s)]["ttid_ms"].to_numpy(dtype=float)
                if not len(v):
                    continue
                x = i + (j - (len(systems) - 1) / 2) * width
                if len(v) >= MIN_BOX:
                    bp = ax.boxplot([v], positions=[x], widths=width * 0.8, manage_ticks=False, showfliers=False, patch_artist=True)
                    for b in bp["boxes"]:
                        b.set(facecolor="none", edgecolor=style[s]["color"])
                    for part in ("whiskers", "caps", "medians"):
                        for line in bp[part]:
                            line.set(color=style[s]["color"], linewidth=1)
                # a fixed spread per point (seeded by the app and system): the same figure every time
                rng = np.random.default_rng(zlib.crc32(f"{kind}/{app}/{s}".encode()))
                jitter = (rng.random(len(v)) - 0.5) * width * 0.5 if len(v) > 1 else np.zeros(1)
                ax.scatter(x + jitter, v, s=18, color=style[s]["color"], marker=style[s]["marker"], alpha=0.8, linewidths=0, zorder=3)
                if 2 <= len(v) < MIN_BOX:  # the median as a dash across the points
                    ax.plot([x - width * 0.35, x + width * 0.35], [np.median(v)] * 2, color=style[s]["color"], linewidth=1.2, zorder=2)
        ax.set_xticks(range(len(apps)))
        ax.set_xticklabels([a if len(a) < 16 else a[:14] + "…" for a in apps], rotation=45, ha="right", fontsize="small")
        ax.set_xlim(-0.6, len(apps) - 0.4)
        ax.set_ylim(bottom=0)
        ax.set_ylabel("time to initial display (ms)")
        ax.set_xlabel("app")
        boxes = (d.groupby(["app", "system"]).size() >= MIN_BOX).any()
        ax.set_title(f"{kind} launches: every launch a point, the median a dash" + (f"; a box of quartiles from {MIN_BOX} launches" if boxes else ""))
        for s in systems:
            ax.scatter([], [], color=style[s]["color"], marker=style[s]["marker"], label=s)
        ax.legend(fontsize="small", loc="upper right", title="system" if len(systems) > 1 else None)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def fig_activity(runs: dict[str, list], colors: dict | None = None):
    """Collections of each app (duration and pauses, in the app's colour) and reclaim over time,
    of the first run."""
    plt = _plt()
    from matplotlib.lines import Line2D
    from matplotlib.ticker import EngFormatter

    r, which = _first(runs)
    g = r.gc
    apps = list(dict.fromkeys(g["app"]))
    colors = colors or app_colors(apps)
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(12, 6.5), sharex=True, layout="constrained")
    for app in apps:
        x = g[g["app"] == app]
        c = colors.get(app, "black")
        a1.scatter(x["t_s"], x["duration_ms"], s=14, color=c, label=app if len(app) < 24 else app[:22] + "…")
        a1.scatter(x["t_s"], x["pause_ms"], s=14, marker="v", color=c)
    a1.set_yscale("symlog", linthresh=1.0)
    a1.set_ylabel("time (ms, log above 1)")
    a1.set_title(f"Collections: {which}")
    if len(g):
        kinds = [
            Line2D([], [], linestyle="", marker="o", color="black", markersize=4, label="GC duration"),
            Line2D([], [], linestyle="", marker="v", color="black", markersize=4, label="pauses"),
        ]
        leg = a1.legend(handles=kinds, fontsize="x-small", loc="upper left")
        a1.add_artist(leg)
        a1.legend(fontsize="x-small", ncol=1 if len(apps) <= 16 else 2, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="app", title_fontsize="x-small")
    tl = r.timeline
    dt = tl["t_s"].diff()
    a2.plot(tl["t_s"], tl["pgscan_kswapd"].diff() / dt, label="kswapd pages scanned/s")
    a2.plot(tl["t_s"], tl["pgscan_direct"].diff() / dt, label="direct reclaim pages scanned/s")
    a2.set_ylabel("scan rate (pages/s)")
    a2.yaxis.set_major_formatter(EngFormatter())
    ax3 = a2.twinx()
    ax3.plot(tl["t_s"], tl["psi_some_avg10"], color="gray", linestyle=":", label="PSI memory some avg10 (%)")
    ax3.set_ylabel("PSI some avg10 (%)")
    ax3.set_ylim(bottom=0)
    a2.set_xlabel(TIME)
    a2.set_title("Reclaim")
    h1, l1 = a2.get_legend_handles_labels()
    h2, l2 = ax3.get_legend_handles_labels()
    a2.legend(h1 + h2, l1 + l2, fontsize="small", loc="upper left")
    return fig


def fig_mmu(runs: dict[str, list], colors: dict | None = None):
    """Minimum mutator utilisation: each app of the first run (thin, gray), and per system the
    worst app at each window length (thick, in the system's colour)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 4))
    style = system_style(list(runs))
    for j, (system, rs) in enumerate(runs.items()):
        m = rs[0].mmu.dropna()
        if not len(m):
            continue
        if j == 0:
            for k, (_app, g) in enumerate(m.groupby("app", sort=False)):
                ax.plot(
                    g["window_ms"],
                    g["mmu"],
                    color="gray",
                    linewidth=0.6,
                    alpha=0.6,
                    label=f"each app ({system}, seed {rs[0].raw.get('seed')})" if k == 0 else None,
                )
        worst = m.groupby("window_ms")["mmu"].min()
        ax.plot(
            worst.index, worst.values, color=style[system]["color"], linewidth=2, marker=style[system]["marker"], markersize=3, label=f"{system}: worst app"
        )
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("window (ms)")
    ax.set_ylabel("minimum mutator utilisation (fraction)")
    ax.set_title("MMU per app (gray) and the worst app" + (" (first seed of each system)" if len(runs) > 1 else ""))
    ax.legend(fontsize="small", loc="lower right")
    fig.tight_layout()
    return fig


_DRAW = {"cached_apps": fig_cached_apps, "memory": fig_memory, "launches": fig_launches, "activity": fig_activity, "mmu": fig_mmu}
#: The figures, by name (each written as NAME.png and NAME.svg).
FIGURES = tuple(_DRAW)


def figures(runs: dict[str, list]) -> dict[str, object]:
    """Every figure of :data:`FIGURES` (matplotlib Figure objects); one app colouring for all."""
    colors = app_colors(_apps(runs))
    return {name: draw(runs, colors) for name, draw in _DRAW.items()}


def svg_text(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    return buf.getvalue()


def plot_dir(path: Path, out: Path | None = None, formats: tuple[str, ...] = ("png", "svg")) -> list[Path]:
    """Write the figures of the run or compare directory ``path`` into ``out`` (default:
    ``path/plots``); returns the files written."""
    from mobmem.files import atomic_write

    runs = load_runs(path)
    out = Path(out) if out is not None else Path(path) / "plots"
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise MobmemError(f"--out {out}: {e.strerror or e}") from None
    plt = _plt()
    written = []
    for name, fig in figures(runs).items():
        for fmt in formats:
            p = out / f"{name}.{fmt}"
            if fmt == "svg":
                atomic_write(p, svg_text(fig))
            else:
                buf = io.BytesIO()
                fig.savefig(buf, format=fmt, dpi=110, metadata={"Software": None} if fmt == "png" else None)
                atomic_write(p, buf.getvalue())
            written.append(p)
        plt.close(fig)
    return written
