"""Stop conditions: when a runner has done enough runs.

Conditions look at a :class:`RunState` (all runs so far, the successful values of the primary
metric, elapsed time) and say whether to stop:

- ``fixed:N`` — N measured runs done (failed runs count: they were run);
- ``time:30s`` — elapsed time (``ms``, ``s``, ``m``, ``h``);
- ``ci:1%`` / ``ci:1%@99`` — relative half-width of the Student-t CI of the mean ≤ target
  (at least ``min_runs`` successful runs, default 3);
- ``cv:2%/10`` — coefficient of variation of the last 10 successful values ≤ 2 %;
- combinators ``a & b``, ``a | b``, ``!a`` and parentheses (also ``and``/``or``/``not``).

Every runner wraps its condition in :class:`Bounded`, so there is always an upper bound on runs
(and optionally time), and stops early after too many failures. Left out: conditions on several
metrics at once (combine conditions instead, each names its metric with ``ci[task_clock_s]:1%``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from mobmem.errors import MobmemError
from mobmem.harness import stats


@dataclass
class RunState:
    """What a stop condition sees. ``values`` maps metric -> successful measured values."""

    runs: int = 0
    failures: int = 0
    elapsed_s: float = 0.0
    values: dict[str, list[float]] = field(default_factory=dict)
    primary: str = "wall_s"

    def ok(self, metric: str | None = None) -> list[float]:
        return self.values.get(metric or self.primary, [])


class StopCondition:
    def should_stop(self, s: RunState) -> bool:
        raise NotImplementedError

    def __and__(self, o: "StopCondition") -> "StopCondition":
        return And(self, o)

    def __or__(self, o: "StopCondition") -> "StopCondition":
        return Or(self, o)

    def __invert__(self) -> "StopCondition":
        return Not(self)


@dataclass
class Fixed(StopCondition):
    n: int

    def __post_init__(self):
        if self.n < 1:
            raise MobmemError(f"fixed run count must be ≥ 1, got {self.n}")

    def should_stop(self, s):
        return s.runs >= self.n

    def __str__(self):
        return f"fixed:{self.n}"


@dataclass
class Elapsed(StopCondition):
    seconds: float

    def __post_init__(self):
        if not self.seconds > 0:
            raise MobmemError(f"time limit must be positive, got {self.seconds}")

    def should_stop(self, s):
        return s.elapsed_s >= self.seconds

    def __str__(self):
        return f"time:{self.seconds:g}s"


@dataclass
class RelativeCI(StopCondition):
    """Relative half-width of the Student-t CI of the mean of ``metric`` ≤ ``target``."""

    target: float
    confidence: float = 0.95
    min_runs: int = 3
    metric: str | None = None

    def __post_init__(self):
        if not 0 < self.target < 1:
            raise MobmemError(f"CI target must be a fraction in (0, 1), got {self.target}")
        if not 0.5 <= self.confidence < 1:
            raise MobmemError(f"confidence must be in [0.5, 1), got {self.confidence}")
        self.min_runs = max(2, self.min_runs)

    def current(self, s: RunState) -> float:
        v = s.ok(self.metric)
        if len(v) < self.min_runs:
            return math.inf
        m = sum(v) / len(v)
        return stats.t_interval(v, self.confidence).relative_half_width(m)

    def should_stop(self, s):
        return self.current(s) <= self.target

    def __str__(self):
        m = f"[{self.metric}]" if self.metric else ""
        return f"ci{m}:{self.target * 100:g}%@{self.confidence * 100:g}"


@dataclass
class CVWindow(StopCondition):
    """Coefficient of variation of the last ``window`` successful values ≤ ``threshold``."""

    threshold: float
    window: int = 10
    metric: str | None = None

    def __post_init__(self):
        if not self.threshold > 0:
            raise MobmemError(f"CV threshold must be positive, got {self.threshold}")
        if self.window < 2:
            raise MobmemError(f"CV window must be ≥ 2, got {self.window}")

    def should_stop(self, s):
        v = s.ok(self.metric)
        if len(v) < self.window:
            return False
        return stats.cv(v[-self.window :]) <= self.threshold

    def __str__(self):
        m = f"[{self.metric}]" if self.metric else ""
        return f"cv{m}:{self.threshold * 100:g}%/{self.window}"


@dataclass
class And(StopCondition):
    a: StopCondition
    b: StopCondition

    def should_stop(self, s):
        return self.a.should_stop(s) and self.b.should_stop(s)

    def __str__(self):
        return f"({self.a} & {self.b})"


@dataclass
class Or(StopCondition):
    a: StopCondition
    b: StopCondition

    def should_stop(self, s):
        return self.a.should_stop(s) or self.b.should_stop(s)

    def __str__(self):
        return f"({self.a} | {self.b})"


@dataclass
class Not(StopCondition):
    a: StopCondition

    def should_stop(self, s):
        return not self.a.should_stop(s)

    def __str__(self):
        return f"!{self.a}"


@dataclass
class Bounded(StopCondition):
    """``inner`` with an upper bound on runs (always) and time (optional), and a failure limit.
    ``reason`` tells why it stopped."""

    inner: StopCondition
    max_runs: int = 1000
    max_time_s: float | None = None
    max_failures: int | None = 5
    reason: str = ""

    def __post_init__(self):
        if self.max_runs < 1:
            raise MobmemError(f"--max-runs must be ≥ 1, got {self.max_runs}")
        if self.max_time_s is not None and self.max_time_s <= 0:
            raise MobmemError(f"--max-time must be positive, got {self.max_time_s}")

    def should_stop(self, s):
        if self.inner.should_stop(s):
            self.reason = f"condition met: {self.inner}"
        elif s.runs >= self.max_runs:
            self.reason = f"upper bound reached: {self.max_runs} runs (condition {self.inner} not met)"
        elif self.max_time_s is not None and s.elapsed_s >= self.max_time_s:
            self.reason = f"upper bound reached: {self.max_time_s:g} s (condition {self.inner} not met)"
        elif self.max_failures is not None and s.failures >= self.max_failures:
            self.reason = f"stopped after {s.failures} unsuccessful runs"
        else:
            return False
        return True

    @property
    def met(self) -> bool:
        return self.reason.startswith("condition met")

    def __str__(self):
        t = f", {self.max_time_s:g} s" if self.max_time_s else ""
        return f"{self.inner} (at most {self.max_runs} runs{t})"


# ------------------------------------------------------------------------------------- parsing

_TOKEN = re.compile(r"\s*(?:(?P<op>[&|!()])|(?P<word>[A-Za-z_][\w\-]*(?:\[[\w.\-]+\])?(?::[^\s&|!()]+)?))")
_DUR = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h)?$")
_PCT = re.compile(r"^(\d+(?:\.\d+)?)(%?)$")


def parse_duration(text: str) -> float:
    m = _DUR.match(text.strip())
    if not m:
        raise MobmemError(f"bad duration {text!r}: expected e.g. 500ms, 30s, 2m, 1h")
    v = float(m.group(1))
    return v * {"ms": 1e-3, "s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]


def _fraction(text: str, what: str) -> float:
    m = _PCT.match(text)
    if not m:
        raise MobmemError(f"bad {what} {text!r}: expected a percentage like 1% or a fraction like 0.01")
    v = float(m.group(1))
    return v / 100 if m.group(2) else v


def _leaf(word: str) -> StopCondition:
    name, _, arg = word.partition(":")
    metric = None
    if "[" in name:
        name, metric = name[:-1].split("[", 1)
    name = name.lower()
    if not arg:
        raise MobmemError(f"stop condition {word!r} needs an argument, e.g. fixed:15, time:30s, ci:1%, cv:2%/10")
    if name in ("fixed", "runs", "n"):
        try:
            return Fixed(int(arg))
        except ValueError:
            raise MobmemError(f"bad run count in {word!r}") from None
    if name in ("time", "elapsed"):
        return Elapsed(parse_duration(arg))
    if name == "ci":
        target, _, conf = arg.partition("@")
        c = _fraction(conf, "confidence") if conf else 0.95
        if c > 1:
            c /= 100
        return RelativeCI(_fraction(target, "CI target"), c, metric=metric)
    if name == "cv":
        thr, _, win = arg.partition("/")
        try:
            w = int(win) if win else 10
        except ValueError:
            raise MobmemError(f"bad window in {word!r}") from None
        return CVWindow(_fraction(thr, "CV threshold"), w, metric=metric)
    raise MobmemError(f"unknown stop condition {name!r}: use fixed:N, time:D, ci:P%, cv:P%/W with &, |, ! and ()")


def parse_stop(text: str) -> StopCondition:
    """Parses the stop-condition language described in the module docstring."""
    toks: list[str] = []
    pos = 0
    text = text.strip()
    if not text:
        raise MobmemError("empty stop condition")
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise MobmemError(f"cannot parse stop condition at {text[pos:]!r}")
        w = m.group("op") or m.group("word")
        toks.append({"and": "&", "or": "|", "not": "!"}.get(w.lower(), w))
        pos = m.end()
    i = 0

    def peek():
        return toks[i] if i < len(toks) else None

    def take():
        nonlocal i
        i += 1
        return toks[i - 1]

    def expr():
        left = term()
        while peek() == "|":
            take()
            left = Or(left, term())
        return left

    def term():
        left = factor()
        while peek() == "&":
            take()
            left = And(left, factor())
        return left

    def factor():
        t = peek()
        if t is None:
            raise MobmemError(f"stop condition {text!r} ends early")
        if t == "!":
            take()
            return Not(factor())
        if t == "(":
            take()
            e = expr()
            if peek() != ")":
                raise MobmemError(f"missing ')' in stop condition {text!r}")
            take()
            return e
        if t in ("&", "|", ")"):
            raise MobmemError(f"unexpected {t!r} in stop condition {text!r}")
        take()
        return _leaf(t)

    e = expr()
    if i != len(toks):
        raise MobmemError(f"unexpected {toks[i]!r} in stop condition {text!r}")
    return e
