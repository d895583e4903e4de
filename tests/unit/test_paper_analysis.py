"""The paper experiments' analysis (tools/hgtools/paper): t-test intervals,
response-time analysis and rt-muse's supply summary, each against answers
computed by hand (shown in the comments)."""
import math

import pytest

from hgtools.paper import rta, sbf, stats


# Student's t, two-sided 95%: the quantiles every table prints
@pytest.mark.parametrize("df,t", [(1, 12.7062), (2, 4.3027), (4, 2.7764), (9, 2.2622), (14, 2.1448),
                                  (29, 2.0452), (1000, 1.9623)])
def test_t_quantile_matches_the_tables(df, t):
    assert stats.t_quantile(0.975, df) == pytest.approx(t, abs=5e-4)


def test_t_cdf_is_symmetric_and_half_at_zero():
    assert stats.t_cdf(0.0, 5) == pytest.approx(0.5)
    assert stats.t_cdf(-2.0, 5) == pytest.approx(1 - stats.t_cdf(2.0, 5))
    assert stats.t_quantile(0.025, 4) == pytest.approx(-2.7764, abs=5e-4)


def test_mean_ci_by_hand():
    # 1..5: mean 3, s = sqrt(10/4) = 1.58114, half = 2.77645 * 1.58114 / sqrt(5) = 1.96324
    ci = stats.mean_ci([1, 2, 3, 4, 5])
    assert ci.n == 5 and ci.mean == 3
    assert ci.sd == pytest.approx(math.sqrt(2.5))
    assert ci.half == pytest.approx(1.96324, abs=1e-4)
    assert ci.lo == pytest.approx(3 - 1.96324, abs=1e-4)


def test_mean_ci_of_one_sample_has_no_interval():
    ci = stats.mean_ci([7.0])
    assert ci.mean == 7.0 and ci.half is None and ci.lo is None
    with pytest.raises(ValueError):
        stats.mean_ci([])


def test_percentiles():
    assert stats.median([3, 1, 2]) == 2
    assert stats.median([1, 2, 3, 4]) == 2.5
    assert stats.percentile([0, 10], 90) == pytest.approx(9.0)


def paper_tasks(c1=17.0, j1=0.0):
    return [rta.Task("task 0", 3.0, 8.0, prio=0), rta.Task("task 1", c1, 33.0, prio=1, jitter=j1)]


def test_rta_the_papers_task_set():
    # section 5.5: task 0 alone, R0 = 3; task 1: w = 17 + ceil(w/8)*3: 17 -> 26 -> 29 -> 29
    r0, r1 = rta.response_times(paper_tasks())
    assert r0.response == 3.0 and r0.schedulable
    assert r1.response == 29.0 and r1.schedulable
    assert r1.iterations == [17.0, 26.0, 29.0, 29.0]


def test_rta_with_the_papers_release_jitter():
    # 8 ms of release jitter and 19 ms of work: w = 19 + ceil(w/8)*3: 19 -> 28 -> 31 -> 31, R = 31 + 8 = 39
    _, r1 = rta.response_times(paper_tasks(c1=19.0, j1=8.0))
    assert r1.busy == 31.0 and r1.response == 39.0 and not r1.schedulable


def test_rta_the_papers_12ms_variant():
    # w = 12 + ceil(w/8)*3: 12 -> 18 -> 21 -> 21
    _, r1 = rta.response_times(paper_tasks(c1=12.0))
    assert r1.response == 21.0 and r1.schedulable


def test_rta_overheads_as_a_task_and_higher_priority_jitter():
    # a tick of 0.1 every 4 above both; task 0 with jitter 1 seen by task 1:
    # task 0: w = 3 + ceil(w/4)*0.1: 3 -> 3.1 -> 3.1; R0 = 3.1
    # task 1: w = 17 + ceil(w/4)*0.1 + ceil((w+1)/8)*3:
    #   17 -> 17 + 0.5 + 9 = 26.5 -> 17 + 0.7 + 12 = 29.7 -> 17 + 0.8 + 12 = 29.8 -> 29.8
    ts = [rta.Task("tick", 0.1, 4.0, prio=-1), rta.Task("t0", 3.0, 8.0, prio=0, jitter=1.0),
          rta.Task("t1", 17.0, 33.0, prio=1)]
    tick, t0, t1 = rta.response_times(ts)
    assert tick.response == pytest.approx(0.1)
    assert t0.response == pytest.approx(3.1 + 1.0)
    assert t1.busy == pytest.approx(29.8) and t1.schedulable


def test_rta_overload_is_unbounded():
    ts = [rta.Task("a", 5.0, 8.0, prio=0), rta.Task("b", 4.0, 10.0, prio=1)]
    # b: U of a = 0.625 < 1, w = 4 + ceil(w/8)*5: 4 -> 9 -> 14 -> 14: R = 14 > 10
    a, b = rta.response_times(ts)
    assert b.response == 14.0 and not b.schedulable
    ts = [rta.Task("a", 8.0, 8.0, prio=0), rta.Task("b", 1.0, 10.0, prio=1)]
    assert rta.response_times(ts)[1].response is None


def test_rta_refuses_equal_priorities():
    with pytest.raises(ValueError):
        rta.response_times([rta.Task("a", 1, 4, prio=1), rta.Task("b", 1, 4, prio=1)])


def test_sbf_lower_line_of_a_delayed_full_rate():
    # lower(d) = max(0, d - 2) at d = 0..10: alpha 1, Delta 2 has area 32; alpha 1.2 needs
    # Delta 3.33 (area 26.7), alpha 0.8 keeps Delta 2 (area 25.6)
    ds = list(range(0, 11))
    lo = [max(0, d - 2) for d in ds]
    a, delta = sbf.lower_line(ds, lo)
    assert a == pytest.approx(1.0) and delta == pytest.approx(2.0)


def test_sbf_lower_line_of_a_periodic_server():
    # 1 every 4 at the worst phase: points (6,0), (7,1), (10,1), (11,2), (14,2), (15,3). The classic
    # bound (Q/P)(d - 2(P - Q)) = 0.25 (d - 6) stays under all of them, area 0.25 * 9^2 / 2 = 10.125;
    # the steeper 1/3 must start at 8 ((14,2) caps it): area (1/3) * 7^2 / 2 = 8.17; 0.2 keeps
    # Delta 6: area 8.1. So alpha = Q/P = 0.25, Delta = 2(P - Q) = 6
    ds = [0, 6, 7, 10, 11, 14, 15]
    lo = [0, 0, 1, 1, 2, 2, 3]
    a, delta = sbf.lower_line(ds, lo)
    assert a == pytest.approx(0.25) and delta == pytest.approx(6.0)


def test_sbf_upper_line_exact_fit():
    # upper(d) = min(d, 1 + d/2): the line 1 + d/2 itself has the least area under min(d, .)
    ds = list(range(0, 11))
    up = [min(d, 1 + d / 2) for d in ds]
    au, beta = sbf.upper_line(ds, up)
    assert au == pytest.approx(0.5) and beta == pytest.approx(1.0)


def test_sbf_summary_shares_and_blackout():
    ds = [0.01, 1.0, 2.0, 4.0, 8.0]
    lo = [0.0, 0.0, 0.0, 1.0, 3.0]
    up = [0.01, 1.0, 2.0, 3.0, 5.0]
    s = sbf.summarise(ds, lo, up)
    assert s.horizon == 8.0
    assert s.share_lower == pytest.approx(3 / 8) and s.share_upper == pytest.approx(5 / 8)
    assert s.blackout == 2.0
    assert sbf.from_report({"window_ms": []}) is None
