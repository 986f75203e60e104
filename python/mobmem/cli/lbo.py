"""``mobmem lbo …``: lower-bound overhead of GC (issue 5). Placeholder group."""

import typer

app = typer.Typer(help="Lower-bound overhead (LBO) of garbage collection.", no_args_is_help=True)
