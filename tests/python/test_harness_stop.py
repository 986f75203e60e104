"""Each stop condition, the combinators, the upper bound and the parser."""

import conftest_eval  # noqa: F401
import pytest
from mobmem.errors import MobmemError
from mobmem.harness.stop import And, Bounded, CVWindow, Elapsed, Fixed, Not, Or, RelativeCI, RunState, parse_duration, parse_stop


def st(values, runs=None, elapsed=0.0, failures=0):
    return RunState(runs=len(values) if runs is None else runs, failures=failures, elapsed_s=elapsed, values={"wall_s": list(values)})


def test_fixed_counts_all_runs_including_failed():
    assert not Fixed(3).should_stop(st([1, 1]))
    assert Fixed(3).should_stop(st([1, 1], runs=3, failures=1))


def test_elapsed():
    assert not Elapsed(2).should_stop(st([1], elapsed=1.9))
    assert Elapsed(2).should_stop(st([1], elapsed=2.0))


def test_relative_ci():
    tight = [100.0, 100.1, 99.9, 100.05, 99.95]
    loose = [100.0, 120.0, 80.0, 110.0, 90.0]
    assert RelativeCI(0.01).should_stop(st(tight))
    assert not RelativeCI(0.01).should_stop(st(loose))
    assert not RelativeCI(0.01, min_runs=10).should_stop(st(tight))
    assert not RelativeCI(0.5).should_stop(st([1.0]))  # one value has no CI


def test_cv_window_uses_only_the_last_values():
    noisy_then_flat = [1.0, 5.0, 9.0] + [2.0, 2.001, 1.999, 2.0]
    assert CVWindow(0.01, 4).should_stop(st(noisy_then_flat))
    assert not CVWindow(0.01, 5).should_stop(st(noisy_then_flat))
    assert not CVWindow(0.01, 10).should_stop(st(noisy_then_flat))


def test_combinators():
    s = st([1, 1, 1])
    assert And(Fixed(2), Fixed(3)).should_stop(s)
    assert not And(Fixed(2), Fixed(4)).should_stop(s)
    assert Or(Fixed(9), Fixed(3)).should_stop(s)
    assert Not(Fixed(4)).should_stop(s) and not Not(Fixed(3)).should_stop(s)


def test_bounded_always_stops_and_says_why():
    b = Bounded(RelativeCI(0.0001), max_runs=5)
    assert not b.should_stop(st([1, 2, 3, 4]))
    assert b.should_stop(st([1, 2, 3, 4, 5])) and "upper bound" in b.reason and not b.met
    b2 = Bounded(Fixed(2), max_runs=5)
    assert b2.should_stop(st([1, 1])) and b2.met
    b3 = Bounded(Fixed(100), max_runs=1000, max_time_s=1.0)
    assert b3.should_stop(st([1], elapsed=1.5)) and "1 s" in b3.reason
    b4 = Bounded(Fixed(100), max_runs=1000, max_failures=3)
    assert b4.should_stop(st([], runs=3, failures=3)) and "unsuccessful" in b4.reason


def test_parser_builds_the_right_tree():
    c = parse_stop("ci:1% & fixed:5 | !time:2m")
    assert isinstance(c, Or) and isinstance(c.a, And) and isinstance(c.b, Not)
    assert c.a.a.target == pytest.approx(0.01) and c.a.b.n == 5 and c.b.a.seconds == 120
    c2 = parse_stop("cv[task_clock_s]:2%/7 and (runs:3 or time:500ms)")
    assert c2.a.metric == "task_clock_s" and c2.a.window == 7 and c2.b.b.seconds == pytest.approx(0.5)
    assert parse_stop("ci:2%@99").confidence == pytest.approx(0.99)


@pytest.mark.parametrize("bad", ["", "bogus:3", "fixed:x", "ci:150%", "(fixed:3", "fixed:3 &", "& fixed:3", "fixed:0", "cv:1%/1", "time:-3s"])
def test_parser_rejects_bad_input_clearly(bad):
    with pytest.raises(MobmemError):
        parse_stop(bad)


def test_durations():
    assert parse_duration("250ms") == pytest.approx(0.25)
    assert parse_duration("2h") == 7200
    with pytest.raises(MobmemError):
        parse_duration("soon")
