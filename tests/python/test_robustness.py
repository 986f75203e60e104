"""Absurd input never crashes: hypothesis-generated scenario files and ``--set`` values either run
or end in one :class:`MobmemError` line (which ``mobmem`` prints as ``error: …`` with exit 2) —
never another exception, a panic or a hang. Runs are tiny (the test scenario at a twentieth of its
durations), so a generated input that is valid costs well under a second."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mobmem import catalog, session
from mobmem.errors import MobmemError

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests/python/data/session_tiny.toml"
FAST = ("session.time_scale", "0.05")

# Values that break naive parsing: signs, overflow, non-finite floats, wrong types, empty text.
ABSURD = [
    "-1",
    "0",
    "1e300",
    "-1e300",
    "nan",
    "inf",
    "-inf",
    "18446744073709551616",
    "99999999999999999999999",
    "9223372036854775807",
    "4294967296",
    "0.0000001",
    "",
    "x",
    "true",
    "1m",
    "100000g",
    "-5k",
    "1e-300",
    "\u00e9",
]
# TOML literals for the same purpose inside a scenario file.
TOML_VALUES = ["-1", "0", "1e300", "nan", "inf", "-inf", "18446744073709551615", '""', '"x"', "true", "[]", "{}", '"synthetic:footprint=-1"', "1.5", '"\u00e9"']


def _check(path: Path, pairs: list[tuple[str, str]]) -> None:
    try:
        res = session.run_pairs(path, [FAST, *pairs], None)
    except MobmemError as e:
        msg = str(e)
        assert msg and "\n" not in msg, msg
        assert "Traceback" not in msg and "panicked" not in msg, msg
        return
    assert isinstance(res, dict) and res["sim_seconds"] >= 0


def _setting_keys() -> list[str]:
    keys = [f"kernel.{s['key']}" for s in catalog.settings("kernel")]
    keys += [s["key"] for s in catalog.settings("runtime")]
    keys += [s["key"] for s in catalog.settings("session")]
    keys += [f"app.{s['key']}" for s in catalog.settings("app")]
    # Kept small by design: a valid but slow setting would only test patience.
    return [k for k in keys if k not in ("session.time_scale", "session.slice_ms", "session.sample_ms")]


KEYS = _setting_keys()


def _extremes() -> dict[str, list[str]]:
    """Each setting's own range ends (or its choices): valid values where overflow hides."""
    out: dict[str, list[str]] = {}
    for layer, prefix in (("kernel", "kernel."), ("runtime", ""), ("session", ""), ("app", "app.")):
        for s in catalog.settings(layer):
            r = s["range"].strip()
            if r.startswith("[") and "," in r:
                vals = [v.strip() for v in r.strip("[]()").split(",")]
            elif r:
                vals = [v.strip() for v in r.split(",")]
            else:
                vals = []
            key = prefix + s["key"]
            # A cost at its maximum (a second per operation) is valid; it only stretches
            # simulated time, so a run takes long instead of failing: not this test's subject.
            out[key] = [v for v in vals if v][:1] if ".cost." in f".{key}" or key.startswith("cost.") else [v for v in vals if v]
    return out


EXTREMES = _extremes()


@st.composite
def settings_pairs(draw) -> tuple[str, str]:
    key = draw(st.sampled_from(KEYS))
    ends = EXTREMES.get(key, [])
    return key, draw(st.sampled_from(ends) if ends and draw(st.booleans()) else st.sampled_from(ABSURD))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(settings_pairs(), min_size=1, max_size=3))
def test_absurd_settings_run_or_fail_in_one_line(pairs):
    _check(TINY, pairs)


LINES = TINY.read_text().splitlines()


@st.composite
def mutated_scenarios(draw) -> str:
    lines = list(LINES)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["value", "delete", "unknown", "truncate", "garbage"]))
        i = draw(st.integers(0, len(lines) - 1))
        if kind == "value" and " = " in lines[i] and not lines[i].lstrip().startswith("#"):
            key = lines[i].split(" = ", 1)[0]
            lines[i] = f"{key} = {draw(st.sampled_from(TOML_VALUES))}"
        elif kind == "delete":
            del lines[i]
        elif kind == "unknown":
            lines.insert(i, f"bogus_{draw(st.integers(0, 9))} = 1")
        elif kind == "truncate":
            lines = lines[:i]
        elif kind == "garbage":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))] + draw(st.sampled_from(["[", "]", '"', "=", "{", "\x00", "[[x]]"]))
        if not lines:
            break
    return "\n".join(lines) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(mutated_scenarios())
def test_mutated_scenario_files_run_or_fail_in_one_line(tmp_path, text):
    p = tmp_path / "fuzz.toml"
    p.write_text(text)
    _check(p, [])


@pytest.mark.parametrize("raw,where", [(b"\xff\xfe", "bin.toml:1:1:"), (b'name = "x"\n\xff\n', "bin.toml:2:1:"), (b"\x00" * 10, "bin.toml:")])
def test_undecodable_scenario_files_fail_in_one_line(tmp_path, raw, where):
    p = tmp_path / "bin.toml"
    p.write_bytes(raw)
    with pytest.raises(MobmemError) as e:
        session.run_pairs(p, [FAST], None)
    assert where in str(e.value) and "\n" not in str(e.value), str(e.value)


@pytest.mark.parametrize("key", ["app.frame_ms", "app.bg_period_ms"])
def test_a_unit_of_work_period_beyond_a_second_is_refused(key):
    """A unit of work allocates its whole period's bytes at once: a period of 1e23 ms (drawn by
    the absurd-settings test) ran one unit for over half an hour. Refused, with the range."""
    with pytest.raises(MobmemError) as e:
        session.run_pairs(TINY, [FAST, (key, "99999999999999999999999")], None)
    assert key in str(e.value) and "must be within [1, 1000]" in str(e.value), str(e.value)


@pytest.mark.parametrize("key", ["app.frame_ms", "app.bg_period_ms"])
def test_a_unit_of_work_period_of_zero_is_refused(key):
    """A period of 0 would never let simulated time pass (the run would not end): refused, with
    the range (an unbounded end shown as ∞)."""
    with pytest.raises(MobmemError) as e:
        session.run_pairs(TINY, [FAST, (key, "0")], None)
    assert key in str(e.value) and "must be within [1, 1000], got 0" in str(e.value), str(e.value)
