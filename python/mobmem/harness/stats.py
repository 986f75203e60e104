"""Statistics for benchmark samples: summaries, confidence intervals, outliers, histograms, ratios.

Everything here is a thin, tested layer over numpy/scipy: Student-t intervals for means
(``scipy.stats.t``), percentile bootstrap for medians and other statistics (``scipy.stats.bootstrap``
with a seeded generator, so results are reproducible), Tukey's fences for outlier *flags*, the
coefficient of variation, and the comparison of two samples (Welch's t-test and a Fieller confidence
interval on the ratio of means). It leaves out anything that needs a model of the data beyond
independence of runs (no autocorrelation correction, no change-point detection).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Callable, Sequence

import numpy as np
from scipy import stats as sps

DEFAULT_SEED = 20220522  # fixed seed for bootstrap resampling: same data -> same interval


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    confidence: float
    method: str

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2.0

    def relative_half_width(self, center: float) -> float:
        """Half-width as a fraction of ``center`` (inf when center is 0 or the interval is undefined)."""
        if center == 0 or not math.isfinite(self.low) or not math.isfinite(self.high):
            return math.inf
        return self.half_width / abs(center)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    median: float
    q1: float
    q3: float
    std: float
    min: float
    max: float
    cv: float
    mean_ci: Interval
    median_ci: Interval | None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["mean_ci"] = self.mean_ci.to_dict()
        d["median_ci"] = self.median_ci.to_dict() if self.median_ci else None
        return d


def _arr(x: Sequence[float]) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim != 1:
        raise ValueError("sample must be one-dimensional")
    return a


def t_interval(x: Sequence[float], confidence: float = 0.95) -> Interval:
    """Student-t confidence interval for the mean; undefined (nan) with fewer than 2 values."""
    a = _arr(x)
    n = a.size
    if n < 2:
        return Interval(math.nan, math.nan, confidence, "student-t")
    m = float(a.mean())
    se = float(a.std(ddof=1)) / math.sqrt(n)
    if se == 0.0:
        return Interval(m, m, confidence, "student-t")
    lo, hi = sps.t.interval(confidence, n - 1, loc=m, scale=se)
    return Interval(float(lo), float(hi), confidence, "student-t")


def bootstrap_interval(
    x: Sequence[float],
    statistic: Callable[[np.ndarray], float] = np.median,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = DEFAULT_SEED,
    method: str = "percentile",
) -> Interval:
    """Bootstrap confidence interval of ``statistic`` (default: median), seeded."""
    a = _arr(x)
    if a.size < 2:
        return Interval(math.nan, math.nan, confidence, f"bootstrap-{method}")
    if np.all(a == a[0]):
        v = float(statistic(a))
        return Interval(v, v, confidence, f"bootstrap-{method}")
    vectorized = statistic in (np.median, np.mean)
    res = sps.bootstrap(
        (a,),
        (lambda s, axis=-1: statistic(s, axis=axis)) if vectorized else statistic,
        confidence_level=confidence,
        n_resamples=n_resamples,
        method=method,
        random_state=np.random.default_rng(seed),
        vectorized=vectorized,
    )
    return Interval(float(res.confidence_interval.low), float(res.confidence_interval.high), confidence, f"bootstrap-{method}")


def cv(x: Sequence[float]) -> float:
    """Coefficient of variation (sample std / mean); inf for a zero mean, nan below 2 values."""
    a = _arr(x)
    if a.size < 2:
        return math.nan
    m = float(a.mean())
    if m == 0:
        return math.inf
    return float(a.std(ddof=1)) / abs(m)


def tukey_fences(x: Sequence[float], k: float = 1.5) -> tuple[float, float]:
    """(low, high) fences: Q1 - k*IQR and Q3 + k*IQR (linear-interpolated quartiles)."""
    a = _arr(x)
    q1, q3 = np.percentile(a, [25, 75])
    iqr = q3 - q1
    return float(q1 - k * iqr), float(q3 + k * iqr)


def tukey_outliers(x: Sequence[float], k: float = 1.5) -> np.ndarray:
    """Boolean mask of values outside Tukey's fences (flags only; nothing is removed)."""
    a = _arr(x)
    if a.size < 4:
        return np.zeros(a.size, dtype=bool)
    lo, hi = tukey_fences(a, k)
    return (a < lo) | (a > hi)


def summarize(x: Sequence[float], confidence: float = 0.95, bootstrap_median: bool = True, seed: int = DEFAULT_SEED) -> Summary:
    a = _arr(x)
    if a.size == 0:
        nan = math.nan
        return Summary(0, nan, nan, nan, nan, nan, nan, nan, nan, Interval(nan, nan, confidence, "student-t"), None)
    q1, med, q3 = np.percentile(a, [25, 50, 75])
    return Summary(
        n=int(a.size),
        mean=float(a.mean()),
        median=float(med),
        q1=float(q1),
        q3=float(q3),
        std=float(a.std(ddof=1)) if a.size > 1 else math.nan,
        min=float(a.min()),
        max=float(a.max()),
        cv=cv(a),
        mean_ci=t_interval(a, confidence),
        median_ci=bootstrap_interval(a, np.median, confidence, seed=seed) if bootstrap_median and a.size >= 2 else None,
    )


def histogram(x: Sequence[float], bins: int | str = "auto") -> tuple[list[int], list[float]]:
    """Counts and bin edges (numpy's rules)."""
    counts, edges = np.histogram(_arr(x), bins=bins)
    return [int(c) for c in counts], [float(e) for e in edges]


@dataclass(frozen=True)
class RatioResult:
    """B relative to A: ratio = mean(B)/mean(A)."""

    ratio: float
    ci: Interval
    p_value: float
    significant: bool
    test: str
    n_a: int
    n_b: int

    def verdict(self, name_a: str = "A", name_b: str = "B") -> str:
        if not self.significant:
            return f"no significant difference (p = {self.p_value:.3g})"
        faster = self.ratio < 1
        pct = abs(self.ratio - 1) * 100
        word = "less" if faster else "more"
        return (
            f"{name_b} takes {self.ratio:.3f}x of {name_a} ({pct:.1f}% {word}), "
            f"{int(self.ci.confidence * 100)}% CI [{self.ci.low:.3f}, {self.ci.high:.3f}], p = {self.p_value:.3g}"
        )

    def to_dict(self) -> dict:
        d = asdict(self)
        d["ci"] = self.ci.to_dict()
        return d


def fieller_ratio_interval(a: Sequence[float], b: Sequence[float], confidence: float = 0.95) -> Interval:
    """Fieller's confidence interval for mean(b)/mean(a), independent samples with unequal variances
    (Welch-Satterthwaite degrees of freedom). Unbounded (±inf) when mean(a) is not significantly
    different from zero."""
    A, B = _arr(a), _arr(b)
    na, nb = A.size, B.size
    if na < 2 or nb < 2:
        return Interval(math.nan, math.nan, confidence, "fieller")
    ma, mb = float(A.mean()), float(B.mean())
    va, vb = float(A.var(ddof=1)) / na, float(B.var(ddof=1)) / nb  # variances of the means
    if va + vb == 0:
        r = mb / ma
        return Interval(r, r, confidence, "fieller")
    # Welch-Satterthwaite df for the linear combination mb - r*ma, evaluated at r = mb/ma
    r0 = mb / ma if ma != 0 else 0.0
    num = (vb + r0 * r0 * va) ** 2
    den = (vb**2) / max(nb - 1, 1) + (r0**4) * (va**2) / max(na - 1, 1)
    df = num / den if den > 0 else float(na + nb - 2)
    t = float(sps.t.ppf(0.5 + confidence / 2.0, df))
    # Solve (mb - r ma)^2 = t^2 (vb + r^2 va) for r
    qa = ma * ma - t * t * va
    qb = -2.0 * ma * mb
    qc = mb * mb - t * t * vb
    if qa <= 0:
        return Interval(-math.inf, math.inf, confidence, "fieller")
    disc = qb * qb - 4 * qa * qc
    if disc < 0:
        return Interval(-math.inf, math.inf, confidence, "fieller")
    s = math.sqrt(disc)
    lo, hi = sorted(((-qb - s) / (2 * qa), (-qb + s) / (2 * qa)))
    return Interval(lo, hi, confidence, "fieller")


def compare(a: Sequence[float], b: Sequence[float], confidence: float = 0.95) -> RatioResult:
    """Compare B against A: ratio of means with a Fieller CI and Welch's t-test (two-sided).
    Significant when p < 1 - confidence."""
    A, B = _arr(a), _arr(b)
    if A.size < 2 or B.size < 2:
        return RatioResult(math.nan, Interval(math.nan, math.nan, confidence, "fieller"), math.nan, False, "welch-t", int(A.size), int(B.size))
    ratio = float(B.mean() / A.mean()) if A.mean() != 0 else math.inf
    # Samples constant to rounding (a deterministic simulator gives them): Welch's test has no
    # variance to work with (scipy warns of precision loss); the means are equal or not.
    if np.allclose(A, A[0], rtol=1e-12, atol=0.0) and np.allclose(B, B[0], rtol=1e-12, atol=0.0):
        p = 1.0 if np.isclose(A.mean(), B.mean(), rtol=1e-12, atol=0.0) else 0.0
    else:
        p = float(sps.ttest_ind(B, A, equal_var=False).pvalue)
    ci = fieller_ratio_interval(A, B, confidence)
    return RatioResult(ratio, ci, p, bool(p < 1 - confidence), "welch-t", int(A.size), int(B.size))


def geomean(x: Sequence[float]) -> float:
    a = _arr(x)
    if a.size == 0 or np.any(a <= 0):
        return math.nan
    return float(np.exp(np.mean(np.log(a))))
