"""Figures of a run directory (``mobmem run --out``) or of a comparison (``mobmem compare --out``),
drawn with matplotlib from the files the run wrote — nothing is re-simulated.

- ``cached_apps`` — apps alive and cached over time (the caching-capacity curve), kills marked;
- ``memory`` — the phone's memory over time (free, anon, file, swap) and, per app, its RSS
  stacked by ``dumpsys meminfo`` category (Java heap, native heap, code, graphics, stack,
  other) with its PSS and swap as lines;
- ``launches`` — time to initial display per app and launch kind (hot/cold), one box per system
  for a comparison;
- ``activity`` — collections (duration, pauses) per app and reclaim (kswapd and direct scan
  rates, PSI) over time;
- ``mmu`` — minimum mutator utilisation curves (:mod:`mobmem.session.mmu`).

:func:`plot_dir` writes each figure as PNG and SVG; :func:`figures` returns them unsaved (the
HTML report embeds the SVG text).
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


def fig_cached_apps(runs: dict[str, list]):
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 3.5))
    for system, rs in runs.items():
        r = rs[0]
        tl = r.timeline
        label = system if len(runs) > 1 else None
        line = ax.step(tl["t_s"], tl["cached_apps"], where="post", label=f"{label} cached" if label else "cached apps")[0]
        ax.step(tl["t_s"], tl["alive_apps"], where="post", alpha=0.5, linestyle="--", color=line.get_color(), label=f"{label} alive" if label else "alive apps")
        k = r.kills
        if len(k):
            ax.scatter(k["t_s"], [0.2] * len(k), marker="x", color=line.get_color(), label=f"{label} kills" if label else "kills")
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("apps")
    ax.set_title("Apps alive and cached (first seed of each system)" if len(runs) > 1 else "Apps alive and cached")
    ax.legend(loc="upper left", fontsize="small")
    fig.tight_layout()
    return fig


def fig_memory(runs: dict[str, list]):
    plt = _plt()
    from mobmem.session.output import MEMINFO_CATEGORIES

    r = next(iter(runs.values()))[0]
    am = r.app_memory
    apps = list(dict.fromkeys(am["app"])) if len(am) else []
    n = 1 + len(apps)
    cols = 3
    rows = 1 + (len(apps) + cols - 1) // cols
    fig = plt.figure(figsize=(12, 2.6 * rows))
    gs = fig.add_gridspec(rows, cols)
    ax0 = fig.add_subplot(gs[0, :])
    tl = r.timeline
    ax0.stackplot(tl["t_s"], tl["anon_mib"], tl["file_mib"], tl["free_mib"], labels=["anon LRU", "file LRU", "free"], alpha=0.8)
    ax0.plot(tl["t_s"], tl["swap_used_mib"], color="black", label="swap used")
    ax0.set_ylabel("MiB")
    ax0.set_title(f"Phone memory ({next(iter(runs))})")
    ax0.legend(loc="upper right", fontsize="small", ncol=4)
    present = [c for c in MEMINFO_CATEGORIES if c in am.columns]
    for i, app in enumerate(apps):
        ax = fig.add_subplot(gs[1 + i // cols, i % cols])
        a = am[am["app"] == app]
        ax.stackplot(a["t_s"], *[a[c] for c in present], labels=[CATEGORY_LABELS[c] for c in present], alpha=0.85)
        ax.plot(a["t_s"], a["pss_mib"], color="black", linewidth=0.8, label="PSS")
        ax.plot(a["t_s"], a["swap_mib"], color="red", linewidth=0.8, label="swap")
        ax.set_title(app if len(app) < 40 else app[:37] + "…", fontsize="small")
        ax.tick_params(labelsize="x-small")
        if i == 0:
            ax.legend(loc="upper left", fontsize="xx-small", ncol=2)
    if n == 1:
        ax0.set_xlabel("simulated time (s)")
    fig.tight_layout()
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


def fig_launches(runs: dict[str, list]):
    plt = _plt()
    df = launches_frame(runs)
    kinds = [k for k in ("hot", "cold") if (df["kind"] == k).any()] or ["hot"]
    fig, axes = plt.subplots(len(kinds), 1, figsize=(12, 3.4 * len(kinds)), squeeze=False)
    systems = list(runs)
    for ax, kind in zip(axes[:, 0], kinds):
        d = df[df["kind"] == kind]
        apps = sorted(set(d["app"]))
        data, pos, colors = [], [], []
        width = 0.8 / max(1, len(systems))
        for i, app in enumerate(apps):
            for j, s in enumerate(systems):
                v = d[(d["app"] == app) & (d["system"] == s)]["ttid_ms"].tolist()
                if v:
                    data.append(v)
                    pos.append(i + (j - (len(systems) - 1) / 2) * width)
                    colors.append(f"C{j}")
        if data:
            bp = ax.boxplot(data, positions=pos, widths=width * 0.9, patch_artist=True, manage_ticks=False)
            for patch, c in zip(bp["boxes"], colors):
                patch.set_facecolor(c)
                patch.set_alpha(0.6)
        ax.set_xticks(range(len(apps)))
        ax.set_xticklabels([a if len(a) < 16 else a[:14] + "…" for a in apps], rotation=45, ha="right", fontsize="small")
        ax.set_ylabel("TTID (ms)")
        ax.set_title(f"{kind} launches" + (f": {', '.join(f'C{j}={s}' for j, s in enumerate(systems))}" if len(systems) > 1 else ""))
        for j, s in enumerate(systems):
            ax.plot([], [], color=f"C{j}", linewidth=6, alpha=0.6, label=s)
        if len(systems) > 1:
            ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def fig_activity(runs: dict[str, list]):
    plt = _plt()
    r = next(iter(runs.values()))[0]
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(12, 6), sharex=True)
    g = r.gc
    for i, app in enumerate(dict.fromkeys(g["app"])):
        x = g[g["app"] == app]
        a1.scatter(x["t_s"], x["duration_ms"], s=6, color=f"C{i % 10}", label=app if len(app) < 24 else app[:22] + "…")
        a1.scatter(x["t_s"], x["pause_ms"], s=6, marker="v", color=f"C{i % 10}")
    a1.set_yscale("symlog", linthresh=1.0)
    a1.set_ylabel("GC duration (•) / pauses (▾), ms")
    a1.set_title("Collections")
    if len(g):
        a1.legend(fontsize="xx-small", ncol=6, loc="upper left")
    tl = r.timeline
    dt = tl["t_s"].diff()
    a2.plot(tl["t_s"], tl["pgscan_kswapd"].diff() / dt, label="kswapd pages scanned/s")
    a2.plot(tl["t_s"], tl["pgscan_direct"].diff() / dt, label="direct reclaim pages scanned/s")
    a2.set_ylabel("pages/s")
    ax3 = a2.twinx()
    ax3.plot(tl["t_s"], tl["psi_some_avg10"], color="gray", linestyle=":", label="PSI some avg10 (%)")
    ax3.set_ylabel("PSI %")
    a2.set_xlabel("simulated time (s)")
    a2.set_title("Reclaim")
    h1, l1 = a2.get_legend_handles_labels()
    h2, l2 = ax3.get_legend_handles_labels()
    a2.legend(h1 + h2, l1 + l2, fontsize="small", loc="upper left")
    fig.tight_layout()
    return fig


def fig_mmu(runs: dict[str, list]):
    """Minimum mutator utilisation: each app of the first run (thin), and per system the worst
    app at each window length (thick)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 4))
    for j, (system, rs) in enumerate(runs.items()):
        m = rs[0].mmu.dropna()
        if not len(m):
            continue
        if j == 0:
            for _app, g in m.groupby("app", sort=False):
                ax.plot(g["window_ms"], g["mmu"], color="gray", linewidth=0.6, alpha=0.6)
        worst = m.groupby("window_ms")["mmu"].min()
        ax.plot(worst.index, worst.values, color=f"C{j}", linewidth=2, marker="o", markersize=3, label=f"{system}: worst app")
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("window (ms)")
    ax.set_ylabel("minimum mutator utilisation")
    ax.set_title("MMU per app (gray) and the worst app")
    ax.legend(fontsize="small", loc="lower right")
    fig.tight_layout()
    return fig


_DRAW = {"cached_apps": fig_cached_apps, "memory": fig_memory, "launches": fig_launches, "activity": fig_activity, "mmu": fig_mmu}
#: The figures, by name (each written as NAME.png and NAME.svg).
FIGURES = tuple(_DRAW)


def figures(runs: dict[str, list]) -> dict[str, object]:
    """Every figure of :data:`FIGURES` (matplotlib Figure objects)."""
    return {name: draw(runs) for name, draw in _DRAW.items()}


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
