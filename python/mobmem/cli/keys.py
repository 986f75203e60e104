"""`mobmem keys [LAYER]`: every setting of a layer (kernel, runtime, app, session, a runtime policy's such as fleet) from the
catalogue — key, type, default, unit, range, help and where the default comes from."""

from __future__ import annotations

import json
import sys

import typer
from rich.console import Console

from mobmem.errors import MobmemError


def print_keys(layer: str | None, as_json: bool = False) -> None:
    from mobmem import catalog

    tables = catalog.catalog()["settings"]
    layers = list(tables) if layer is None else [layer]
    for name in layers:
        if name not in tables:
            raise MobmemError(f"unknown settings layer {name!r}; expected one of {', '.join(tables)}")
    if as_json:
        sys.stdout.write(json.dumps({n: tables[n] for n in layers}) + "\n")
        return
    out = Console()
    for name in layers:
        prefix = (tables[name]["prefixes"] or [""])[0]
        out.print(f"[bold]{name} settings[/bold] (--set {prefix}KEY=VALUE)", highlight=False)
        for e in tables[name]["keys"]:
            also = f" (also {', '.join(e['aliases'])})" if e["aliases"] else ""
            unit = f" {e['unit']}" if e["unit"] else ""
            rng = f"  range {e['range']}" if e["range"] else ""
            out.print(f"  [bold]{e['key']}[/bold]{also}  {e['type']}, default {e['default'] or '(none)'}{unit}{rng}", highlight=False)
            src = f" [dim](source: {e['source']})[/dim]" if e["source"] else ""
            out.print(f"      {e['help']}{src}", highlight=False)


def keys(
    layer: str = typer.Argument(None, help="kernel, runtime, app, session, or a runtime policy's (fleet) (default: all)."),
    as_json: bool = typer.Option(False, "--json", help="The catalogue's settings tables as JSON."),
) -> None:
    """List settings: key, type, default, unit, range, help and the source of the default."""
    print_keys(layer, as_json)
