"""The statistics every comparison table prints (`mobmem.session.compare`): a mean's interval never
leaves what the quantity can be (no negative count, time or ratio, no share above one), a cut
bound and an interval from fewer than three values are flagged, and the tables' formatting shows
both marks. Checked as properties over generated samples, not against stored numbers."""

from __future__ import annotations

import math
import re
import statistics

from hypothesis import given, settings
from hypothesis import strategies as st
from mobmem.harness.stats import t_interval
from mobmem.session import compare as cmp
from mobmem.session.studies import stats as study_stats

# Measured values: counts, milliseconds, joules (to a thousandth; no 1e-300 denormals).
nonneg = st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False).map(lambda x: round(x, 3))
share = st.floats(min_value=0.0, max_value=1.0, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(nonneg, min_size=2, max_size=8))
def test_interval_of_a_nonnegative_quantity_never_goes_below_zero(xs):
    s = cmp.stat(xs)
    raw = t_interval(xs)
    assert s["n"] == len(xs) and math.isclose(s["mean"], statistics.fmean(xs), rel_tol=1e-9, abs_tol=1e-9)
    assert s["ci_low"] >= 0.0 and s["ci_low"] <= s["mean"] + 1e-9 <= s["ci_high"] + 2e-9
    # Cut exactly when the t interval reached below zero, and only its lower bound.
    assert (cmp.CUT_LOW in s["ci_flags"]) == (raw.low < 0.0)
    assert math.isclose(s["ci_high"], raw.high, rel_tol=1e-12, abs_tol=1e-12)
    assert (cmp.FEW in s["ci_flags"]) == (len(xs) < 3)
    text = cmp.fmt_interval(s, "{:.3f}")
    assert ("‡" in text) == (raw.low < 0.0) and text.endswith("†") == (len(xs) < 3) and "-" not in text and "−" not in text


@settings(max_examples=100, deadline=None)
@given(st.lists(share, min_size=2, max_size=6))
def test_interval_of_a_share_stays_within_zero_and_one(xs):
    s = cmp.stat(xs, *cmp.bounds("jank_ratio"))
    assert 0.0 <= s["ci_low"] <= s["ci_high"] <= 1.0
    assert (cmp.CUT_HIGH in s["ci_flags"]) == (t_interval(xs).high > 1.0)


def test_two_seeds_that_differ_a_lot_give_a_flagged_interval_cut_at_zero():
    # The case users met: two seeds of a latency far apart (the t interval on one degree of freedom).
    s = cmp.stat([120.0, 2400.0])
    assert t_interval([120.0, 2400.0]).low < 0 and s["ci_low"] == 0.0 and s["ci_flags"] == [cmp.FEW, cmp.CUT_LOW]
    text = cmp.fmt_stat(s, "{:,.0f}")
    assert text.startswith("1,260 [0‡, ") and text.endswith("]†")
    legend = "\n".join(cmp.ci_legend(cmp.flags_in({"x": [s]})))
    assert "†" in legend and "‡" in legend and "fewer than 3" in legend
    # A signed quantity is not cut.
    assert cmp.stat([120.0, 2400.0], lower=None)["ci_low"] < 0


def test_one_value_has_no_interval_and_three_agreeing_values_are_not_flagged():
    one = cmp.stat([5.0, None])
    assert one["n"] == 1 and one["ci_low"] is None and one["ci_flags"] == [] and cmp.fmt_interval(one, "{:.1f}") == ""
    three = cmp.stat([10.0, 11.0, 12.0])
    assert three["ci_flags"] == [] and 0 < three["ci_low"] < 11.0 < three["ci_high"]
    assert "†" not in cmp.fmt_stat(three, "{:.1f}") and "‡" not in cmp.fmt_stat(three, "{:.1f}")


@settings(max_examples=100, deadline=None)
@given(st.lists(nonneg, min_size=2, max_size=6), st.lists(nonneg, min_size=2, max_size=6))
def test_ratio_of_nonnegative_means_has_no_negative_bound_and_a_p_value(a, b):
    v = cmp.versus(a, b)
    if sum(a) == 0:
        assert v is None
        return
    assert v["ci"]["low"] >= 0.0 or math.isnan(v["ci"]["low"])
    assert v["p_value"] is None or 0.0 <= v["p_value"] <= 1.0
    assert (cmp.FEW in v["ci_flags"]) == (min(len(a), len(b)) < 3)
    text = cmp.fmt_versus({"vs_base": v})
    assert text.startswith("×") and "p" in text and ("n.s." in text) == (not v["significant"])


def test_study_rows_use_the_same_rule():
    results = {(s, seed): {"x": x} for s, xs in (("a", (1.0, 900.0)), ("b", (5.0, 6.0))) for seed, x in zip((1, 2), xs)}
    out = study_stats(["a", "b"], [1, 2], results, lambda r: r["x"])
    assert out["a"]["ci_low"] == 0.0 and cmp.CUT_LOW in out["a"]["ci_flags"] and cmp.FEW in out["a"]["ci_flags"]
    assert out["b"]["vs_base"]["p_value"] is not None and out["b"]["vs_base"]["ci"]["low"] >= 0.0
    capped = study_stats(["a"], [1, 2], {("a", 1): {"x": 0.99}, ("a", 2): {"x": 0.2}}, lambda r: r["x"], (0.0, 1.0))
    assert capped["a"]["ci_high"] == 1.0 and cmp.CUT_HIGH in capped["a"]["ci_flags"]
    # The report's table and its header print the interval with its marks and say what they mean.
    from mobmem.session.studies import fleet
    from mobmem.session.studies.study import experiment_lines, header_lines

    exp = {"id": "caching-large", "title": "t", "scenario": "s", "settings": [], "systems": ["a", "b"], "rows": {"cached_max": out}, "per_app": {}}
    doc = {"title": "T", "command": "c", "systems": ["a", "b"], "seeds": [1, 2], "wall_seconds": 1.0, "quick": False, "experiments": [exp]}
    page = "\n".join(header_lines(doc, fleet.STUDY) + experiment_lines(exp, fleet.STUDY, ["a", "b"]))
    assert re.search(r"\[0(\.0+)?‡, ", page) and "]†" in page and "† from fewer than 3 seeds" in page and "‡ bound cut" in page
    assert re.search(r"×[\d.]+ \((n\.s\., )?p [=<] ", page)


def test_aggregate_counts_a_missing_run_as_a_run_without_the_metric():
    res = {"launch_stats": {"hot": {"*": {"p50": 100.0, "p90": 150.0, "n": 3}}}, "launches": [], "per_app": {}}
    agg = cmp.aggregate(["a", "b"], [1, 2, 3], {("a", 1): res, ("a", 2): res, ("b", 1): res})
    assert agg["overall"]["hot_p50_ms"]["a"]["n"] == 2 and agg["overall"]["hot_p50_ms"]["b"]["n"] == 1
    assert agg["overall"]["hot_p50_ms"]["a"]["values"] == [100.0, 100.0, None]
