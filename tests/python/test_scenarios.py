"""Every shipped scenario runs as intended: its apps launch and run out of nothing they should not,
its metrics are not empty, and a scenario that says it creates memory pressure (``[expect]
pressure = true``) does swap out, reclaim directly or kill.

Long scenarios run with their use and wait durations scaled (``session.time_scale``); the demos
run as shipped, since `mobmem demo` shows them as they are."""

from __future__ import annotations

import pytest
from mobmem import session
from mobmem.catalog import catalog
from mobmem.session.pool import run_all

#: Durations × this for every scenario but the demos (launch work is not scaled).
TIME_SCALE = 0.05
SCENARIOS = {s["name"]: s for s in catalog()["scenarios"]}
#: Known gaps of the stock baseline: these fail today and must fail (strict), so that the day the
#: model or its inputs close the gap, the mark has to go.
KNOWN_GAPS: dict[str, str] = {}


def _run(name: str) -> tuple[str, dict]:
    settings = [] if name.startswith("demo_") else [f"session.time_scale={TIME_SCALE}"]
    return name, session.run(name, settings)


@pytest.fixture(scope="module")
def results() -> dict[str, dict]:
    out: dict[str, dict] = {}
    run_all(_run, sorted(SCENARIOS), 2, lambda r: out.__setitem__(*r))
    return out


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[n])) if n in KNOWN_GAPS else n for n in sorted(SCENARIOS)]
)
def test_shipped_scenario_runs_as_intended(results, name):
    res, expect = results[name], SCENARIOS[name]["expect"]
    problems = []
    ooms = {a: p["java_ooms"] for a, p in res["per_app"].items() if p["java_ooms"]}
    if ooms and not expect["java_oom"]:
        problems.append(f"apps ran out of Java heap: {ooms}")
    never = [a for a, p in res["per_app"].items() if p["cold_launches"] + p["hot_launches"] == 0]
    if never:
        problems.append(f"apps never launched: {never}")
    if res["gc"]["count"] == 0 or res["frames"]["total"] == 0 or not res["launches"]:
        problems.append(f"empty metrics: GCs {res['gc']['count']}, frames {res['frames']['total']}, launches {len(res['launches'])}")
    if expect["pressure"]:
        pressure = {"pswpout": res["swap"]["pswpout"], "allocstall": res["direct_reclaims"], "kills": len(res["kill_records"])}
        if not any(pressure.values()):
            problems.append(f"says it creates memory pressure but had none: {pressure}")
    assert not problems, f"{name}: " + "; ".join(problems)
