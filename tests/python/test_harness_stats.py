"""Harness statistics against scipy/numpy reference computations."""

import math

import conftest_eval  # noqa: F401  (puts python/ on sys.path)
import numpy as np
import pytest
from mobmem.harness import stats
from scipy import stats as sps

RNG = np.random.default_rng(7)
X = RNG.normal(10.0, 0.5, size=25)
Y = RNG.normal(10.4, 0.6, size=30)


def test_t_interval_matches_scipy():
    ci = stats.t_interval(X, 0.95)
    lo, hi = sps.t.interval(0.95, len(X) - 1, loc=X.mean(), scale=sps.sem(X))
    assert ci.low == pytest.approx(lo, rel=1e-12) and ci.high == pytest.approx(hi, rel=1e-12)
    ci99 = stats.t_interval(X, 0.99)
    assert ci99.high - ci99.low > ci.high - ci.low


def test_t_interval_degenerate():
    assert math.isnan(stats.t_interval([1.0]).low)
    c = stats.t_interval([2.0, 2.0, 2.0])
    assert c.low == c.high == 2.0


def test_bootstrap_median_matches_scipy_with_same_seed():
    ci = stats.bootstrap_interval(X, np.median, 0.95, n_resamples=3000, seed=11)
    ref = sps.bootstrap((X,), np.median, confidence_level=0.95, n_resamples=3000, method="percentile", random_state=np.random.default_rng(11))
    assert ci.low == pytest.approx(ref.confidence_interval.low) and ci.high == pytest.approx(ref.confidence_interval.high)
    assert ci.low <= np.median(X) <= ci.high
    # deterministic: the same call twice gives the same interval
    assert stats.bootstrap_interval(X, np.median, seed=11) == stats.bootstrap_interval(X, np.median, seed=11)


def test_summary_quartiles_std_cv():
    s = stats.summarize(X)
    q1, med, q3 = np.percentile(X, [25, 50, 75])
    assert (s.q1, s.median, s.q3) == pytest.approx((q1, med, q3))
    assert s.std == pytest.approx(np.std(X, ddof=1))
    assert s.cv == pytest.approx(sps.variation(X, ddof=1))
    assert s.n == 25 and s.min == X.min() and s.max == X.max()


def test_tukey_flags_exactly_points_outside_fences():
    data = np.concatenate([RNG.normal(0, 1, 50), [8.0, -9.0]])
    mask = stats.tukey_outliers(data)
    q1, q3 = np.percentile(data, [25, 75])
    lo, hi = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
    assert np.array_equal(mask, (data < lo) | (data > hi))
    assert mask[-1] and mask[-2]


def test_histogram_matches_numpy():
    c, e = stats.histogram(X, 8)
    rc, re_ = np.histogram(X, 8)
    assert c == rc.tolist() and e == pytest.approx(re_.tolist())


def test_welch_p_value_matches_scipy():
    r = stats.compare(X, Y)
    assert r.p_value == pytest.approx(sps.ttest_ind(Y, X, equal_var=False).pvalue)
    assert r.ratio == pytest.approx(Y.mean() / X.mean())
    assert r.significant and r.ci.low < r.ratio < r.ci.high


def test_no_significant_difference_is_said():
    a = RNG.normal(5, 1, 10)
    b = a + RNG.normal(0, 0.001, 10)
    r = stats.compare(a, b)
    assert not r.significant
    assert r.verdict().startswith("no significant difference")


def test_fieller_coverage_is_near_nominal():
    rng = np.random.default_rng(123)
    hits = 0
    n_sim = 1500
    for _ in range(n_sim):
        a = rng.normal(10, 1.0, 12)
        b = rng.normal(12, 1.5, 15)
        ci = stats.fieller_ratio_interval(a, b, 0.95)
        hits += ci.low <= 1.2 <= ci.high
    cover = hits / n_sim
    assert 0.93 <= cover <= 0.97, cover


def test_geomean():
    assert stats.geomean([1, 4, 16]) == pytest.approx(4.0)
    assert math.isnan(stats.geomean([1, -1]))
