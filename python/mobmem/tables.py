"""Rows (dicts) → pandas DataFrames with a stable column order (the Python API's tables)."""

from __future__ import annotations

from typing import Sequence


def frame(rows: list[dict], columns: Sequence[str] = ()):
    """A DataFrame with ``columns`` first, in that order (present even without rows), then any
    other keys of the rows in order of appearance."""
    import pandas as pd

    cols = list(columns)
    seen = set(cols)
    for r in rows:
        for k in r:
            if k not in seen:
                cols.append(k)
                seen.add(k)
    return pd.DataFrame([{c: r.get(c) for c in cols} for r in rows], columns=cols)
