"""Studies: a paper's experiments re-run on the simulated phone, as one command that writes a
report (``mobmem report --study NAME``); :data:`NAMES` registers them.

A study is a list of :class:`Experiment` — a shipped scenario run under named systems over seeds,
with the rows it reports — plus the text of its report. :func:`run` runs every experiment with
:func:`mobmem.session.compare.run_matrix` (worker processes, each run's files under
``OUT/EXPERIMENT/runs/SYSTEM/seed-N/`` as soon as it ends, ``--resume`` after an interruption)
and aggregates each row per system (mean and 95 % CI across seeds, ratio against the first
system with Welch's test). ``--quick`` runs a scaled-down set (fewer systems, one seed, every use
and wait duration scaled down) that finishes in minutes; its numbers show the mechanisms, not the
study's results.
"""

from __future__ import annotations

from mobmem.errors import MobmemError
from mobmem.session.studies.study import Experiment, Row, Study, fmt_stat, fmt_vs, plan, run, stats

__all__ = ["NAMES", "Experiment", "Row", "Study", "fmt_stat", "fmt_vs", "get", "plan", "registry", "run", "stats"]

#: The registered studies, in order: each is the module of that name in this package, whose
#: ``STUDY`` is named so. The command line's help lists them from here without importing them.
NAMES = ("fleet", "acclaim", "thesis")


def registry() -> dict[str, Study]:
    import importlib

    studies = {}
    for name in NAMES:
        study = importlib.import_module(f"{__name__}.{name}").STUDY
        if study.name != name:
            raise AssertionError(f"studies/{name}.py: its STUDY is named {study.name!r}")
        studies[name] = study
    return studies


def get(name: str) -> Study:
    studies = registry()
    if name not in studies:
        raise MobmemError(f"--study: unknown study {name!r}; known: {', '.join(studies)}")
    return studies[name]
