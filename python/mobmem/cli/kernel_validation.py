"""``mobmem kernel validate`` and ``mobmem kernel gen-trace``: the validation commands.

The kernel command group (``mobmem.cli.kernel``) calls :func:`register` on its Typer app.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from mobmem.errors import MobmemError


def _parse_value(text: str):
    """``--set`` values: int, float, comma-separated tuple of those, true/false, else string."""
    if "," in text:
        return tuple(_parse_value(t) for t in text.split(",") if t != "")
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse_sets(items: list[str] | None) -> dict:
    out = {}
    for it in items or []:
        k, sep, v = it.partition("=")
        if not sep or not k:
            raise MobmemError(f"--set {it}: expected key=value")
        out[k.replace("-", "_")] = _parse_value(v)
    return out


def register(app: typer.Typer) -> None:
    """Add ``validate`` and ``gen-trace`` to ``app`` (the ``mobmem kernel`` group)."""

    @app.command("gen-trace")
    def gen_trace(
        kind: str = typer.Argument(..., help="seq-scan | seq-scan-anon | zipf | app-switch | bench"),
        out: Path = typer.Argument(..., help="trace file to write"),
        seed: int = typer.Option(1, help="random seed (same seed and settings: same file)"),
        set_: Optional[List[str]] = typer.Option(None, "--set", help="generator parameter key=value (repeatable), e.g. ram_mib=128"),
    ) -> None:
        """Write one of the generated validation/benchmark traces (deterministic)."""
        import inspect

        from mobmem.kernel import tracegen as tg

        if kind not in tg.GENERATORS:
            raise MobmemError(f"gen-trace: unknown kind '{kind}' (one of {', '.join(tg.GENERATORS)})")
        params = parse_sets(set_)
        params["seed"] = seed
        fn = {"seq-scan": tg.seq_scan, "seq-scan-anon": tg.seq_scan}.get(kind, tg.GENERATORS[kind])
        allowed = set(inspect.signature(fn).parameters) - {"path"}
        bad = sorted(set(params) - allowed)
        if bad:
            raise MobmemError(f"gen-trace {kind}: unknown parameter(s) {', '.join(bad)} (known: {', '.join(sorted(allowed))})")
        try:
            summary = tg.GENERATORS[kind](str(out), **params)
        except (ValueError, TypeError) as e:
            raise MobmemError(f"gen-trace {kind}: {e}") from None
        from rich.console import Console

        Console().print(
            f"wrote {summary['path']}: {summary['lines']:,} lines, {summary['touched_pages']:,} touched pages ({summary['written_pages']:,} written)"
        )

    @app.command("validate")
    def validate(
        out: Path = typer.Option(Path("docs/validation.md"), help="the document to (re)generate"),
        workdir: Path = typer.Option(Path("out/validation"), help="where the generated traces go"),
        real: bool = typer.Option(True, "--real/--no-real", help="also run the real kernel (needs root)"),
        quick: bool = typer.Option(False, help="small traces (seconds; for tests)"),
        shape: Optional[List[str]] = typer.Option(None, help="only these shapes (seq-scan, seq-scan-anon, zipf, app-switch)"),
        json_out: Optional[Path] = typer.Option(None, "--json-out", help="also write the raw results as JSON"),
        real_runs: int = typer.Option(3, help="real-kernel runs per trace (it is not deterministic)"),
    ) -> None:
        """Regenerate docs/validation.md: model vs real kernel per counter, and pure LRU vs libcachesim."""
        from rich.console import Console
        from rich.markup import escape

        from mobmem.kernel import validation as v

        console = Console(stderr=True)
        known = [s.key for s in v.SHAPES]
        for s in shape or []:
            if s not in known:
                raise MobmemError(f"validate: unknown shape '{s}' (one of {', '.join(known)})")
        res = v.run_validation(
            str(workdir), real=real, quick=quick, shapes=shape or None, real_runs=real_runs, log=lambda s: console.print(f"[dim]{escape(s)}[/dim]")
        )
        v.write_markdown(res, str(out))
        if json_out:
            json_out.parent.mkdir(parents=True, exist_ok=True)
            json_out.write_text(json.dumps(res, indent=2, default=str))
        for e in res["shapes"]:
            lr = e["lru"]
            status = ("match" if lr["match"] else "MISMATCH") if lr["match"] is not None else "model pending"
            console.print(
                f"{e['key']}: real {'ok' if e['real'] else e['real_why']}; model {'ok' if e['model'] else 'pending'}; "
                f"pure LRU libcachesim {lr['libcachesim']} vs model {lr['model']} ({status})"
            )
        console.print(f"wrote {out}")
        mism = [e["key"] for e in res["shapes"] if e["lru"]["match"] is False]
        if mism:
            raise typer.Exit(1)
