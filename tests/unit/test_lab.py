"""The truth lab's host side (tools/hgtools/lab): scenario files, expectations against
a constructed run, the targets' assertions and the table, without a guest."""
import csv
import json
import os
import re
import sys

import pytest

from hgtools.lab import check
import files  # noqa: E402
from hgtools.lab import expect
from hgtools.lab import labtable
from hgtools.lab import scenario
from hgtools import vocab  # noqa: E402

HZ = 1e9     # one cycle a nanosecond: lengths read easily


def test_every_scenario_file_is_valid_and_the_issue_s_eight_are_there():
    names = scenario.names()
    for n in names:
        sc = scenario.load(n)
        for g in sc["guests"]:
            cmds = scenario.for_guest(sc, g)
            assert "{" not in cmds["hourglass"] + " ".join(cmds["loads"] + cmds["setup"]), (n, g, cmds)
    for n in ("three-threads", "fifo-periodic", "tick", "ipi", "device-irq", "softirq", "fifo-beside-cpu", "cpu-yield",
              "unpinned", "periodic-pair"):
        assert n in names
    quick = [n for n in names if scenario.load(n).get("quick")]
    # make check's quick subsets run on the instruction-count clock: one CPU, and two (icount2)
    assert quick and all({"icount", "icount2"} & set(scenario.load(n)["guests"]) for n in quick)
    assert any("icount2" in scenario.load(n)["guests"] for n in quick)


def test_vm_options_say_each_guest_s_cpus_and_clock():
    assert [scenario.vm_options(g) for g in ("icount", "icount2", "icount2-shared", "smp2")] == \
        ["--icount -c 1", "--icount -c 2 --append isolcpus=1 --append transparent_hugepage=never", "--icount -c 2", "-c 2"]


def test_placeholders_per_guest():
    assert scenario.fill("--affinity {cpu} mask {cpumask} from {other}", "smp2") == "--affinity 1 mask 2 from 0"
    assert scenario.fill("--affinity {cpu} mask {cpumask}", "icount") == "--affinity 0 mask 1"


def test_a_bad_scenario_names_its_file_and_key(tmp_path, monkeypatch):
    monkeypatch.setattr(scenario, "SCENARIOS", str(tmp_path))
    (tmp_path / "x.toml").write_text('title = "t"\nguests = ["icount"]\nhourglass = "-n 1"\n'
                                     '[[expect]]\nwhat = "w"\nexpected = "stamps:0"\nfound = "load:0"\n')
    with pytest.raises(scenario.ScenarioError, match=r"x\.toml: \[\[expect\]\] 1: stamps:N needs the index"):
        scenario.load("x")
    (tmp_path / "y.toml").write_text('title = "t"\nguests = ["kvm"]\nhourglass = "-n 1"\n')
    with pytest.raises(scenario.ScenarioError, match=r"y\.toml: guests must be some of"):
        scenario.load("y")
    for bad in ("check_runs = 9\nquick = true", "check_runs = 3", "check_runs = true\nquick = true"):
        (tmp_path / "w.toml").write_text(f'title = "t"\nguests = ["icount"]\nhourglass = "-n 1"\n{bad}\n')
        with pytest.raises(scenario.ScenarioError, match=r"w\.toml: check_runs is how many times"):
            scenario.load("w")
    (tmp_path / "z.toml").write_text('title = \n')
    with pytest.raises(scenario.ScenarioError, match=r"z\.toml: "):
        scenario.load("z")


def write_hgl(run):
    """hourglass.hgl with the intervals around @run's gaps: the trace the gaps came from."""
    w0, w1 = run["hourglass"]["threads"][0]["first_tsc"], run["hourglass"]["threads"][0]["last_tsc"]
    # the report's gaps may overlap (two threads' views of one stretch): the
    # trace holds their union, as the library's reader wants intervals forwards
    spans = []
    for g in sorted(run["gaps"], key=lambda g: g["g0"]):
        if spans and g["g0"] <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], g["g1"])
        else:
            spans.append([g["g0"], g["g1"]])
    edges = [w0] + [x for sp in spans for x in sp] + [w1]
    ivs = [files.iv(a, b, 0, 0) for a, b in zip(edges[::2], edges[1::2])]
    with open(os.path.join(run["dir"], "hourglass.hgl"), "wb") as f:
        f.write(files.hgl(ivs, threads=1))


def gap(g0, length_us, actual, inferred, cause, cpu=0):
    return {"g0": g0, "g1": g0 + int(length_us * 1000), "cpu": cpu, "actual": actual, "inferred": inferred,
            "cause": cause, "vol": 0}


@pytest.fixture
def run(tmp_path):
    """A run of 1 s (TSC 1e9 to 2e9) beside a load that stamped 12 jobs, 10 inside the run."""
    jobs = [(int(0.5e9), int(0.5e9) + 400000), (int(1.0e9) - 100, int(1.0e9) + 399900)]
    jobs += [(int(1.0e9 + k * 0.09e9), int(1.0e9 + k * 0.09e9) + 400000) for k in range(1, 11)]
    with open(tmp_path / "stamps-0.txt", "w") as f:
        f.write("# program=lab-periodic\n# period_ns=90000000\n")
        f.writelines(f"{a} {b}\n" for a, b in jobs)
    gaps = [gap(int(1.0e9 + k * 0.09e9), 410 + k, "switch_other", "switch_other" if k < 9 else "timer",
                "switched to lab-periodic:42 [lab-periodic]") for k in range(1, 11)]
    gaps += [gap(int(1.0e9 + k * 4e6), 5, "timer", "timer", "local_timer") for k in range(200)]
    hg = {"tsc": {"hz": HZ}, "threads": [{"affinity": "0", "first_tsc": int(1e9), "last_tsc": int(2e9),
                                          "gaps_voluntary": 0}]}
    rep = {"run": {"tsc_hz": HZ}, "gaps": {"total": 210, "scored": 210, "unexplainable": 0, "voluntary": 0},
           "loads": [{"label": "lab-periodic", "gaps_caused": 10, "gaps_touched": 10}]}
    rec = {"loads": [{"name": "lab-periodic", "sched_before": {"42": {"nr_switches": 10}},
                      "sched_after": {"42": {"nr_switches": 32}}}],
           "counters_before": {"monotonic_ns": 0, "interrupts": {"cpus": [0], "rows": {}},
                               "softirqs": {"cpus": [0], "rows": {}}},
           "counters_after": {"monotonic_ns": int(1.1e9), "interrupts": {"cpus": [0], "rows": {}},
                              "softirqs": {"cpus": [0], "rows": {}}}}
    run = {"dir": str(tmp_path), "report": rep, "record": rec, "hourglass": hg, "gaps": gaps, "cpu": 0,
           "load_names": ["lab-periodic"]}
    write_hgl(run)
    return run


def test_stamps_inside_the_run_are_expected_and_the_named_gaps_found(run):
    sc = {"expect": [{"what": "jobs", "expected": "stamps:0", "found": "load:0", "class": "switch_other",
                      "median_us": [400, 460], "counter": "sched:0"}]}
    (e,) = expect.evaluate(sc, run)
    assert e["expected"] == 10 and e["details"]["load_events"] == 12 and e["details"]["events_inside_run"] == 10
    assert e["details"]["events_in_no_gap"] == 0 and e["details"]["events_over_several_gaps"] == 0
    assert e["found"] == 10 and e["count_ok"] and e["class_share"] == 1.0 and e["named_right"]
    assert e["median_us"] == pytest.approx(415.5) and e["median_ok"] and e["ok"]
    assert e["inferred_right"] == pytest.approx(0.8) and e["inferred_classes"] == {"switch_other": 8, "timer": 2}
    assert e["cross_check"]["delta"] == 22 and e["cross_check"]["scaled"] == pytest.approx(20.0)


def test_a_count_off_by_more_than_two_percent_fails_and_says_so(run):
    # hourglass saw ten gaps with a job in each: the report names eight
    run["gaps"] = run["gaps"][2:]
    sc = {"expect": [{"what": "jobs", "expected": "stamps:0", "found": "load:0", "class": "switch_other"}]}
    (e,) = expect.evaluate(sc, run)
    assert e["found"] == 8 and not e["count_ok"] and not e["ok"]
    lab = {"runs": [{"kernel": "6.1", "guest": "icount", "scenario": "fifo-periodic", "expectations": [e],
                     "class_short": {"switch_other": {"precision": 0.5, "recall": 0.97, "actual": 30,
                                                      "inferred": 58}}}]}
    (cnt, probs, _), (cls, probs2, todo) = check.tests_of(lab, "icount")
    assert not todo, "fifo-periodic's switch_other is no known shortfall on 6.1"
    assert "found 8 of 10 expected" in probs[0] and "not within 2%" in probs[0]
    assert probs2 == ["switch_other: precision 0.500 recall 0.970 (30 actual, 58 inferred)"]


def test_zero_expected_means_none_touched(run):
    sc = {"expect": [{"what": "charged", "expected": "zero", "found": "touched:0"}]}
    (e,) = expect.evaluate(sc, run)
    assert e["expected"] == 0 and e["found"] == 10 and not e["ok"]
    run["report"]["loads"][0].update(gaps_caused=0, gaps_touched=0)
    (e,) = expect.evaluate(sc, run)
    assert e["found"] == 0 and e["ok"]


def test_class_targets_only_on_classes_that_occur():
    rep = {"inference": {"classes": {
        "switch_hg": {"actual": 100, "inferred": 100, "correct": 100, "precision": 1.0, "recall": 1.0},
        "switch_other": {"actual": 428, "inferred": 300, "correct": 297, "precision": 0.99, "recall": 0.694},
        "interrupt": {"actual": 0, "inferred": 12, "correct": 0, "precision": 0.0, "recall": None},
        "timer": {"actual": 0, "inferred": 0, "correct": 0, "precision": None, "recall": None},
        "hidden": {"actual": 5, "inferred": 0, "correct": 0, "precision": None, "recall": 0.0}}}}
    short = expect.class_targets(rep)
    # twelve wrong in a class of twelve are twelve, not a rate off by one gap
    assert sorted(short) == ["interrupt", "switch_other"], "hidden is not one of the issue's four"
    # one stray interrupt, read as a switch: a class of one is shown, not held to 0.95
    rep["inference"]["classes"]["interrupt"] = {"actual": 1, "inferred": 0, "correct": 0, "precision": None,
                                                "recall": 0.0}
    few = {}
    assert sorted(expect.class_targets(rep, few)) == ["switch_other"]
    assert few == {"interrupt": {"actual": 1, "inferred": 0, "precision": None, "recall": 0.0, "why": "rare"}}
    # 19 switches, one read wrong: 0.947 is one gap, not a rate; two wrong of 19 or 20 miss it;
    # 20 with one wrong meet 0.95 outright
    for n, wrong, is_short, by_slack in ((19, 1, False, True), (19, 2, True, False), (20, 1, False, False),
                                         (20, 2, True, False)):
        rep["inference"]["classes"]["switch_hg"] = {"actual": n, "inferred": n - wrong, "correct": n - wrong,
                                                    "precision": 1.0, "recall": (n - wrong) / n}
        f = {}
        assert ("switch_hg" in expect.class_targets(rep, f)) == is_short, (n, wrong)
        assert ("switch_hg" in f) == by_slack, (n, wrong, f)
    # a report without 'correct' (older): counted from the rates
    rep["inference"]["classes"]["switch_hg"] = {"actual": 19, "inferred": 18, "precision": 1.0, "recall": 18 / 19}
    assert "switch_hg" not in expect.class_targets(rep)
    lab = {"runs": [{"kernel": "6.1", "guest": "icount", "scenario": "x", "expectations": [],
                     "class_short": {}, "class_few": few}]}
    (_, (name, probs, _)) = check.tests_of(lab, "icount")
    assert not probs and "interrupt 1 actual, 0 inferred: not held to it" in name


def test_the_table_and_the_csv(tmp_path, run):
    sc = {"expect": [{"what": "jobs", "expected": "stamps:0", "found": "load:0", "class": "switch_other"}]}
    r = {"kernel": "6.1", "guest": "icount", "scenario": "fifo-periodic", "dir": str(tmp_path), "title": "t",
         "expectations": expect.evaluate(sc, run), "explained_share": 0.999, "steal_share": 0.001, "macro_f1": 0.9,
         "headline": {"accuracy": 0.99}, "class_short": {"timer": {}},
         "classes": {"timer": {"actual": 200, "inferred": 202, "correct": 200, "precision": 0.94, "recall": 1.0}}}
    bad = {"kernel": "6.12-rt", "guest": "smp2", "scenario": "ipi", "dir": str(tmp_path), "error": "setup failed"}
    lab = {"commit": "abc", "targets": {"count_tolerance": 0.02, "class_share": 0.98,
                                        "classes": list(expect.TARGET_CLASSES), "class_precision_recall": 0.95},
           "runs": [bad, r]}
    labtable.write_csv(lab, str(tmp_path / "lab.csv"))
    labtable.write_html(lab, str(tmp_path / "index.html"))
    rows = list(csv.DictReader(open(tmp_path / "lab.csv")))
    assert [x["scenario"] for x in rows] == ["fifo-periodic", "ipi"]
    assert rows[0]["expected"] == "10" and rows[0]["found"] == "10" and rows[0]["timer_precision"] == "0.94"
    page = (tmp_path / "index.html").read_text()
    assert 'class="short" title="timer: 200 actual' in page and "setup failed" in page
    assert "jobs: 10 of 10" in page
    json.dumps(lab)   # what lab.json holds must be JSON


def test_interrupts_are_counted_where_they_are_a_part_and_named_where_they_are_the_cause(run):
    """An IPI inside a tick's gap is still one IPI the kernel saw; only the share named after it
    falls (the 2-vCPU guest's way)."""
    base = int(1.0e9)
    run["gaps"] = [dict(gap(base + k * 1000000, 10, "interrupt", "interrupt", "call_function_single"),
                        components={"self": 100, "call_function_single": 900}) for k in range(1, 9)]
    run["gaps"] += [dict(gap(base + k * 1000000, 20, "timer", "timer", "local_timer"),
                         components={"self": 100, "local_timer": 1500, "call_function_single": 900})
                    for k in (9, 10)]
    write_hgl(run)
    with open(os.path.join(run["dir"], "stamps-0.txt"), "w") as f:
        f.writelines(f"{base + k * 1000000 - 500} {base + k * 1000000 + 5000}\n" for k in range(1, 11))
    sc = {"expect": [{"what": "IPIs", "expected": "stamps:0", "found": "component:^call_function_single$",
                      "named": "^call_function_single$", "class": "interrupt"}]}
    (e,) = expect.evaluate(sc, run)
    assert e["expected"] == 10 and e["found"] == 10 and e["count_ok"]
    assert e["named_share"] == 0.8 and e["class_share"] == 0.8 and not e["named_right"]
    lab = {"runs": [{"kernel": "6.1", "guest": "smp2", "scenario": "ipi", "expectations": [e]}]}
    (cnt, probs, _), _ = check.tests_of(lab, "smp2")
    assert probs == [p for p in probs if "0.800" in p] and len(probs) == 2
    assert "named /^call_function_single$/" in probs[1]
    # where the merger says the local timer's handler was in those two gaps (the gap's tick
    # flag), they are the timer's by the primary-cause rule: the name and class are judged on
    # the other eight, and the two are counted apart
    for g in run["gaps"][8:]:
        g["tick"] = True
    (e,) = expect.evaluate(sc, run)
    assert e["found"] == 10 and e["with_the_tick"] == 2
    assert e["named_share"] == 1.0 and e["class_share"] == 1.0 and e["named_ok"] and e["class_ok"]


def test_median_bounds_by_guest(run):
    sc = {"expect": [{"what": "jobs", "expected": "stamps:0", "found": "load:0",
                      "median_us": {"icount": [400, 410]}}]}
    run["guest"] = "icount"
    (e,) = expect.evaluate(sc, run)
    assert e["median_ok"] is False and not e["ok"]
    run["guest"] = "smp2"
    (e,) = expect.evaluate(sc, run)
    assert "median_ok" not in e and e["ok"]


def test_two_jobs_in_one_of_hourglass_s_gaps_are_one_gap_to_expect(run):
    """Another task held the CPU across two jobs (khugepaged for 17 ms, seen in icount): hourglass
    saw one gap, so one gap is expected; an event in no gap at all is reported."""
    jobs = [g for g in run["gaps"] if g["actual"] == "switch_other"]
    a, b = jobs[0], jobs[1]
    merged = dict(a, g1=b["g1"], components={"task khugepaged:30": 1, "task python3:42 [lab-periodic]": 1},
                  cause="switched to khugepaged:30")
    run["gaps"] = [g for g in run["gaps"] if g["g1"] <= a["g0"] or g["g0"] >= b["g1"]] + [merged]
    write_hgl(run)
    with open(os.path.join(run["dir"], "stamps-0.txt"), "a") as f:
        f.write(f"{int(1.95e9)} {int(1.95e9) + 1000}\n")     # inside an interval: no gap has it
    sc = {"expect": [{"what": "jobs", "expected": "stamps:0", "found": "load:0", "class": "switch_other"}]}
    (e,) = expect.evaluate(sc, run)
    assert e["expected"] == 9 and e["details"]["events_inside_run"] == 11 and e["details"]["events_in_no_gap"] == 1
    assert e["found"] == 9 and e["count_ok"] and e["named_share"] == pytest.approx(8 / 9) and not e["named_right"]


def test_ticks_expected_from_config_hz_over_the_run(run):
    """The fixture's 200 tick gaps of 1 s at HZ 200: expected from CONFIG_HZ, not from the module;
    one tick inside a job's gap still counts (a part), but is not named after the tick."""
    for g in run["gaps"]:
        g["components"] = {"self": 100, "local_timer": 4000} if g["cause"] == "local_timer" else {"self": 100}
    run["gaps"][0]["components"]["local_timer"] = 4000
    sc = {"expect": [{"what": "ticks", "expected": "ticks", "found": "component:^local_timer$",
                      "named": "^local_timer$", "class": "timer"}]}
    run["config_hz"] = 200
    (e,) = expect.evaluate(sc, run)
    assert e["expected"] == 200 and e["details"]["config_hz"] == 200
    assert e["found"] == 201 and e["count_ok"] and e["named_share"] == pytest.approx(200 / 201)
    assert e["class_share"] == pytest.approx(200 / 201) and e["named_right"]
    # the recorder's own timer woke it: a local timer interrupt that is not the tick
    run["gaps"].append(dict(gap(int(1.5e9) + 1000, 30, "switch_other", "switch_other", "switched to hgtrace:280"),
                            components={"self": 100, "local_timer": 3000, "task hgtrace:280": 20000}))
    # on PREEMPT_RT the timer's softirq runs in ktimers, which then wakes the recorder
    run["gaps"].append(dict(gap(int(1.6e9) + 1000, 40, "switch_other", "switch_other", "switched to ktimers/0:12"),
                            components={"self": 100, "local_timer": 3000, "softirq HRTIMER": 2000,
                                        "task ktimers/0:12": 9000, "task hgtrace:280": 20000}))
    sc["expect"][0]["found"] = "ticks"
    (e,) = expect.evaluate(sc, run)
    assert e["found"] == 201 and e["count_ok"]
    run["config_hz"] = 250
    (e,) = expect.evaluate(sc, run)
    assert e["expected"] == 250 and not e["count_ok"] and not e["ok"]
    # 201 strict and 2 gaps the recorder ran in: 207 expected is 6 off the strict count (more
    # than 2%), within 2% of 203 when both of those gaps held a tick; 209 is beyond either
    run["config_hz"] = 207
    (e,) = expect.evaluate(sc, run)
    assert e["count_ok"] and e["details"]["ticks_with_the_recorder"] == 2
    run["config_hz"] = 209
    (e,) = expect.evaluate(sc, run)
    assert not e["count_ok"] and e["details"]["ticks_with_the_recorder"] == 2
    run["config_hz"] = None
    (e,) = expect.evaluate(sc, run)
    assert e["expected"] is None and "CONFIG_HZ unknown" in e["expected_how"] and not e["ok"]


def test_a_device_s_own_count_scaled_to_the_run_and_its_row_found_by_name(run):
    """device:N: the driver's count of load N's device's interrupts (lab-hpet's irqs=, over
    on_tsc..off_tsc), scaled to the part of hourglass's run inside that span; the counter's
    row found by its name (an irq numbered only once the load asked for it)."""
    # the device was on from 0.5e9 to 2.5e9 and counted 400 interrupts: 200 in the 1 s run
    with open(os.path.join(run["dir"], "stamps-0.txt"), "w") as f:
        f.write("# program=lab-hpet\n# rate_hz=200\n# irq=17\n# on_tsc=500000000\n# off_tsc=2500000000\n"
                "# irqs=400\n# tsc_hz=1000000000\n# events=0\n# not_kept=0\n")
    for g in run["gaps"]:
        g["components"] = {"self": 100, "irq 17 hpet2": 4000} if g["cause"] == "local_timer" else {"self": 100}
        if g["cause"] == "local_timer":
            g["cause"] = "irq 17 hpet2"
    row = lambda n: {"17": {"counts": [n], "name": "IO-APIC 17-fasteoi hpet2"},
                     "0": {"counts": [5], "name": "IO-APIC 2-edge timer"}}
    run["record"]["counters_before"]["interrupts"]["rows"] = row(100)
    run["record"]["counters_after"]["interrupts"]["rows"] = row(320)
    sc = {"expect": [{"what": "HPET", "expected": "device:0", "found": r"component:^irq \d+ hpet\d+$",
                      "named": r"^irq \d+ hpet\d+$", "class": "timer", "counter": r"interrupts:~ hpet\d+$"}]}
    (e,) = expect.evaluate(sc, run)
    assert e["expected"] == 200 and e["details"]["device_irqs"] == 400 and e["found"] == 200 and e["ok"]
    assert e["cross_check"]["delta"] == 220
    # on from the run's middle, 200 in 1e9 cycles: half of them inside, where 200 were found
    with open(os.path.join(run["dir"], "stamps-0.txt"), "w") as f:
        f.write("# on_tsc=1500000000\n# off_tsc=2500000000\n# irqs=200\n")
    (e,) = expect.evaluate(sc, run)
    assert e["expected"] == 100 and not e["count_ok"] and not e["ok"]
    # a device that counted nothing, or a file without its figures: no expectation, said why
    with open(os.path.join(run["dir"], "stamps-0.txt"), "w") as f:
        f.write("# program=lab-hpet\n")
    (e,) = expect.evaluate(sc, run)
    assert e["expected"] is None and "no on_tsc" in e["expected_how"] and not e["ok"]
    run["record"]["counters_after"]["interrupts"]["rows"]["18"] = {"counts": [1], "name": "x hpet3"}
    assert "2 rows match" in expect.counter_delta(r"interrupts:~ hpet\d+$", run)["error"]


def test_the_markdown_table_marks_what_is_short():
    lab = {"runs": [{"kernel": "6.1", "guest": "icount", "scenario": "tick", "steal_share": 0.001, "macro_f1": 0.5,
                     "expectations": [{"found": 749, "expected": 750, "ok": True}],
                     "classes": {"timer": {"actual": 750, "inferred": 749, "precision": 1.0, "recall": 0.9987},
                                 "interrupt": {"actual": 0, "inferred": 1, "precision": 0.0, "recall": None}}},
                    {"kernel": "6.1", "guest": "smp2", "scenario": "ipi", "error": "setup failed | x"}]}
    lines = labtable.markdown(lab).splitlines()
    assert lines[3] == ("| tick | 6.1 | icount | 749/750 | 0.10% |  |  | 1.00/1.00 (750) | **0.00/- (0)** |  "
                        "| 0.50 |")
    assert lines[2].startswith("| ipi | 6.1 | smp2 | error: setup failed / x |") and lines[2].count("|") == 12


def test_a_run_that_lost_events_fails_its_check():
    runs = [{"kernel": k, "scenario": "tick", "guest": "icount", "lost": lost, "expectations": [],
             "class_short": {}} for k, lost in (("6.1", 0), ("6.12", 7))]
    got = check.tests_of({"runs": runs}, "icount")
    counts = [probs for name, probs, _ in got if "expected counts" in name]
    assert counts[0] == [] and "lost 7 events" in counts[1][0], counts


def test_the_icount_guest_drains_outside_the_run():
    """One CPU: the recorder must not drain inside hourglass's run (a 3 s run that once
    recorded for 17.6 s in all; a 60 s period)."""
    sc = scenario.load("fifo-periodic")
    assert scenario.for_guest(sc, "icount")["record"] == ["--reader-interval", "60s"]
    assert scenario.for_guest(sc, "smp2")["record"] == []


def _rep(confusion):
    """A report's inference: the confusion matrix {(actual, inferred): n} and the classes' counts."""
    names = ["switch_hg", "switch_other", "timer", "interrupt", "hidden"]
    m = [[confusion.get((a, i), 0) for i in names] for a in names]
    cls = {}
    for c in names:
        k = names.index(c)
        actual, inferred, correct = sum(m[k]), sum(r[k] for r in m), m[k][k]
        cls[c] = {"actual": actual, "inferred": inferred, "correct": correct,
                  "precision": correct / inferred if inferred else None, "recall": correct / actual if actual else None}
    return {"inference": {"confusion": {"actual": names, "inferred": names, "matrix": m}, "classes": cls}}


def test_a_known_shortfall_is_todo_and_only_for_its_kernel_guest_and_share(capsys, tmp_path, monkeypatch):
    """A scenario's [[known_misread]] turns a class test into TAP's TODO when the class is short
    only by the gaps a kernel is known to misread in that guest, no more than the entry's share
    of the class's gaps (2% at most): printed with its figures, counted apart, not as passed;
    and a class the scenario does not hold there ([[class_not_held]]) says why. The same on
    another kernel or guest, more than the share, or another gap read wrong beside them, fails.
    check.py judges the classes from each run's confusion matrix against the data as it is."""
    sc = scenario.load("periodic-pair")
    (known,) = scenario.known_misreads(sc, "6.12", "icount")
    assert (known["actual"], known["inferred"]) == ("timer", "interrupt") and known["share"] <= 0.02
    assert "interrupt" in scenario.classes_not_held(sc, "6.12", "icount")
    assert not scenario.known_misreads(sc, "6.12", "smp2") and not scenario.known_misreads(sc, "6.12-rt", "icount")

    def run(kernel, confusion, guest="icount"):
        inf = _rep(confusion)["inference"]
        return {"kernel": kernel, "guest": guest, "scenario": "periodic-pair", "expectations": [],
                "classes": inf["classes"], "confusion": inf["confusion"]}
    # 625 ticks: 25 hidden (not a misread the scenario knows) and 10 fair-server timers read as
    # interrupts (1.6% of the ticks): the timer's recall 0.944 is 0.959 without the 10
    usual = {("timer", "timer"): 590, ("timer", "hidden"): 25, ("timer", "interrupt"): 10, ("switch_hg", "switch_hg"): 375}
    beside = {**usual, ("switch_hg", "switch_other"): 30}
    over = {**usual, ("timer", "interrupt"): 14}     # 14 of 629: more than 2%
    calib = {("timer", "interrupt"): 318, ("switch_hg", "switch_hg"): 375}      # the tick not found at all
    got = check.tests_of({"runs": [run("6.12", usual), run("6.1", usual), run("6.12-rt", {})]}, "icount")
    todos = {name.split(":")[0]: (probs, todo) for name, probs, todo in got if "every class" in name}
    probs, todo = todos["periodic-pair on 6.12 icount"]
    assert todo and sorted(p.split(":")[0] for p in probs) == ["interrupt", "timer"], probs
    assert "10 timer read as interrupt (known: at most 2% of timer's 625 actual" in probs[1], probs
    assert "fair-server timers off the tick's phase" in todo and "interrupt not held: " in todo, todo
    assert not todos["periodic-pair on 6.1 icount"][1] and todos["periodic-pair on 6.1 icount"][0], "6.12 only"
    assert not todos["periodic-pair on 6.12-rt icount"][0], "nothing short: a plain pass"
    for conf in (beside, over, calib):
        (_, (name, probs, todo)) = check.tests_of({"runs": [run("6.12", conf)]}, "icount")
        assert probs and not todo, (conf, probs)
    (_, (name, probs, todo)) = check.tests_of({"runs": [run("6.12", over)]}, "icount")
    assert any("14 timer read as interrupt" in p for p in probs), probs
    # as TAP: not ok ... # TODO, exit 0; a real failure still exits 1
    for runs, rc, last in (([run("6.12", usual)], 0, "# lab: 1 passed, 0 failed, 1 known short"),
                           ([run("6.12", beside)], 1, "# lab: 1 passed, 1 failed")):
        (tmp_path / "lab.json").write_text(json.dumps({"runs": runs}))
        monkeypatch.setattr(sys, "argv", ["check.py", str(tmp_path)])
        assert check.main() == rc
        out = capsys.readouterr().out.splitlines()
        assert out[-1].startswith(last), out
        assert any(l.startswith("not ok 2 - ") for l in out)
        assert any("# TODO known short: 6.12's fair-server timers" in l for l in out) == (rc == 0)


def test_an_allowance_over_the_ceiling_cannot_be_declared(tmp_path, monkeypatch):
    """No known misread may excuse more than 2% of a class's gaps (vocab.ALLOWANCE_CEILING): a
    scenario that declares more is refused when read, naming the entry; so is one without why or
    without dated runs behind it. A class that needs more is not held there, and says so."""
    monkeypatch.setenv("HGT_LAB_SCENARIOS", str(tmp_path))
    base = ('title = "t"\nguests = ["icount"]\nhourglass = "-n 1"\n[[expect]]\nwhat = "w"\nexpected = "zero"\n'
            'found = "class:timer"\n')
    entry = {"kernels": '["6.12"]', "guests": '["icount"]', "actual": '"timer"', "inferred": '"interrupt"',
             "share": "0.02", "why": '"why"', "runs": '["2026-12-07: one run"]'}

    def write(name, **change):
        e = {**entry, **change}
        (tmp_path / f"{name}.toml").write_text(base + "[[known_misread]]\n" + "".join(
            f"{k} = {v}\n" for k, v in e.items() if v is not None))
        return name
    assert scenario.load(write("lab-allow-ok"))["known_misread"][0]["share"] == 0.02
    for name, change, msg in (("lab-allow-over", {"share": "0.03"}, "at most 0.02"),
                              ("lab-allow-zero", {"share": "0"}, "at most 0.02"),
                              ("lab-allow-nowhy", {"why": None}, "needs exactly"),
                              ("lab-allow-undated", {"runs": '["some runs"]'}, "its date"),
                              ("lab-allow-guest", {"guests": '["smp2"]'}, "scenario's guests"),
                              ("lab-allow-class", {"inferred": '"voluntary"'}, "inferred another")):
        with pytest.raises(scenario.ScenarioError, match=msg) as e:
            scenario.load(write(name, **change))
        assert "[[known_misread]] 1" in str(e.value)
    assert vocab.ALLOWANCE_CEILING == 0.02


def test_the_ceiling_holds_for_all_allowances_of_a_class_together():
    """Two known misreads of one class, each within its share, may not excuse more than the
    ceiling together."""
    rep = _rep({("timer", "timer"): 900, ("timer", "interrupt"): 15, ("timer", "switch_other"): 15,
                ("timer", "hidden"): 30, ("switch_hg", "switch_hg"): 300})
    known = [{"actual": "timer", "inferred": i, "share": 0.02, "why": f"w{i}"} for i in ("interrupt", "switch_other")]
    short = expect.class_targets(rep, {}, known, {"interrupt": "n", "switch_other": "n"})
    assert "known" not in short["timer"] and "more than the ceiling" in short["timer"]["excused"], short
    short = expect.class_targets(rep, {}, known[:1], {})
    assert short["timer"].get("known") == "winterrupt", "one alone: 15 of 960 excused, recall 900/945"


def test_a_guest_not_held_makes_its_class_tests_todo_but_not_its_counts():
    """ipi's class figures in icount2 are shown, not held (scenario.not_held): a short class is
    TAP's TODO with the reason; its count test is held as everywhere, and the same figures in
    the icount guest fail."""
    assert scenario.not_held(scenario.load("ipi"), "icount2") and not scenario.GUESTS["icount"].get("not_held")
    assert not scenario.not_held(scenario.load("device-timer"), "icount2"), "the cause without steal is held"
    rep = _rep({("interrupt", "switch_other"): 300, ("timer", "timer"): 700})

    def run(guest, found):
        return {"kernel": "6.1", "guest": guest, "scenario": "ipi",
                "expectations": [{"what": "IPIs", "found": found, "expected": 3000, "expected_how": "stamps",
                                  "found_how": "component", "count_ok": found == 3000}],
                "class_short": expect.class_targets(rep, {}, [])}
    (cnt, cprobs, ctodo), (cls, probs, todo) = check.tests_of({"runs": [run("icount2", 3000)]}, "icount2")
    assert not cprobs and not ctodo and probs and todo == scenario.not_held(scenario.load("ipi"), "icount2"), \
        (probs, todo)
    (cnt, cprobs, _), _ = check.tests_of({"runs": [run("icount2", 2000)]}, "icount2")
    assert cprobs, "a count short fails in icount2 too"
    (_, (cls, probs, todo)) = check.tests_of({"runs": [run("icount", 3000)]}, "icount")
    assert probs and not todo


def test_a_failing_class_check_prints_the_calibration_and_the_misreads():
    """CI keeps only the log: a class short for no known reason prints the calibration the
    inferences worked with and the commonest misreads, with their lengths and the reason given;
    a thread that slept (inferred voluntary) is no misread; a pass or a known shortfall prints none."""
    rep = _rep({("timer", "switch_other"): 30, ("timer", "timer"): 10, ("switch_hg", "switch_hg"): 375})
    rep["run"] = {"tsc_hz": 1e9}
    rep["inference"]["calibration"] = {
        "tick": {"0": {"period_ms": 4.0, "score": 0.19, "periods_apart": 1, "floor_us": 19.0, "band_top_us": 49.0}},
        "switch_limit_us": 25.0, "switch_limit_basis": "between a tick and two switches at the fastest seen",
        "phase_limit_us": 40.0, "tick_gaps": 10, "switch_gaps": 375}
    gaps = ([{"actual": "timer", "inferred": "switch_other", "g0": 1000 * k, "g1": 1000 * k + 61000 + k, "t": 1.5,
              "why_inferred": "no hourglass thread ran, and longer than 25.0 us"} for k in range(30)]
            + [{"actual": "switch_hg", "inferred": "voluntary", "g0": 0, "g1": 30000, "t": 1.0}])
    dig = expect.misread_digest(rep, gaps)
    assert dig[0].startswith("calibration: CPU 0's tick every 4.000 ms (score 0.19"), dig
    assert "switch limit 25.0 us" in dig[1], dig
    assert dig[2:] == ["misread: 30 timer read as switch_other, 61.0/61.0/61.0 us (min/median/max); the first at "
                       "1.500000 s: no hourglass thread ran, and longer than 25.0 us"], dig
    run = {"kernel": "6.1", "guest": "icount", "scenario": "periodic-pair", "expectations": [],
           "class_short": expect.class_targets(rep, {}, ()), "misreads": dig}
    (_, (_, probs, todo)) = check.tests_of({"runs": [run]}, "icount")
    assert not todo and probs[-3:] == dig and len(dig) == 3, probs
    run["class_short"] = {}
    (_, (_, probs, _)) = check.tests_of({"runs": [run]}, "icount")
    assert probs == [], probs


def test_a_scenario_run_several_times_is_judged_on_most_runs():
    """check_runs: a scenario recorded three times in a boot passes a test that two of its runs
    pass, naming the run that fell short; fails it when two fail; is a known shortfall when no
    majority passes and fewer than two fail. A run that could not be analysed is judged alone."""
    def run(k, short):
        return {"kernel": "6.12", "guest": "icount", "scenario": "periodic-pair", "run": k, "expectations": [],
                "class_short": {"timer": {"precision": 1.0, "recall": 0.2, "actual": 40, "inferred": 8}} if short == "fail"
                else {"timer": {"precision": 1.0, "recall": 0.9, "actual": 40, "inferred": 36, "known": "why",
                                "excused": "4 timer read as interrupt"}} if short == "todo" else {},
                "misreads": ["misread: 32 timer read as switch_other"]}

    def judge(*kinds):
        got = check.tests_of({"runs": [run(k, s) for k, s in enumerate(kinds, 1)]}, "icount")
        assert len(got) == 2 and "in most of 3 runs" in got[1][0], got
        return got[1]
    name, probs, todo = judge("ok", "fail", "ok")
    assert probs == [] and not todo and "(run 2 short: run 2: timer: precision 1.000 recall 0.200" in name, name
    name, probs, todo = judge("fail", "ok", "fail")
    assert todo == "" and "run 1, 3 failed" in name and any(p.startswith("run 3: misread:") for p in probs), probs
    name, probs, todo = judge("todo", "fail", "ok")
    assert todo == "why" and probs, (name, probs)
    name, probs, todo = judge("ok", "ok", "ok")
    assert probs == [] and not todo and name.endswith("in most of 3 runs"), name
    runs = [run(1, "ok"), dict(run(2, "ok"), error="hourglass record exited 2"), run(3, "ok")]
    got = check.tests_of({"runs": runs}, "icount")
    assert len(got) == 5 and any(p == ["hourglass record exited 2"] for _, p, _ in got), got


def test_check_runs_is_read_and_names_the_run_directories():
    sc = scenario.load("periodic-pair")
    assert sc["check_runs"] == 3 and sc.get("quick")
    assert scenario.load("tick")["check_runs"] == 3 and scenario.load("fifo-periodic")["check_runs"] == 1
    assert [scenario.run_dir_name("tick", k) for k in (1, 2)] == ["tick", "tick.run2"]
    assert scenario.parse_run_dir("tick.run2") == ("tick", 2)
    assert scenario.parse_run_dir("tick") == ("tick", 1)
    assert scenario.parse_run_dir("a.run1") == ("a.run1", 1)


def test_not_on_names_the_kernels_a_scenario_cannot_run_on(tmp_path, monkeypatch):
    """not_on: on a kernel every condition of one entry matches, the scenario is not run, and
    the table, the CSV and make check's assertions say why (a check there fails: its
    targets are asserted on every kernel it names)."""
    monkeypatch.setattr(scenario, "SCENARIOS", str(tmp_path))
    head = ('title = "t"\nguests = ["smp2"]\nhourglass = "-n 1"\n'
            '[[expect]]\nwhat = "w"\nexpected = "zero"\nfound = "class:interrupt"\n')
    for bad in ('not_on = [{why = "no condition"}]', 'not_on = [{rt = true}]', 'not_on = [{rt = "yes", why = "w"}]',
                'not_on = [{below = "six", why = "w"}]', 'not_on = [{arch = "arm", why = "w"}]', 'not_on = {rt = true}'):
        (tmp_path / "b.toml").write_text(bad + "\n" + head)
        with pytest.raises(scenario.ScenarioError, match=r"b\.toml: not_on is a list"):
            scenario.load("b")
    (tmp_path / "s.toml").write_text('not_on = [{rt = true, below = "6.10", why = "old RT"}, {rt = true, why = "RT"}]\n'
                                     + head)
    sc = scenario.load("s")
    why = lambda rel, rt: scenario.not_run_reason(sc, rel, rt)   # noqa: E731
    assert why("6.1.0-56-rt-amd64", True) == "old RT" and why("6.12.117+deb12-rt-amd64", True) == "RT"
    assert why("6.1.0-56-amd64", False) is None and why("6.12.117+deb12-amd64", False) is None
    (tmp_path / "any.toml").write_text(head)
    assert scenario.not_run_reason(scenario.load("any"), "6.1.0-56-rt-amd64", True) is None, "not_on is optional"
    r = {"kernel": "6.1-rt", "guest": "smp2", "scenario": "s", "dir": str(tmp_path), "not_run": "old RT"}
    lab = {"commit": "abc", "targets": {"count_tolerance": 0.02, "class_share": 0.98,
                                        "classes": list(expect.TARGET_CLASSES), "class_precision_recall": 0.95},
           "runs": [r]}
    labtable.write_csv(lab, str(tmp_path / "lab.csv"))
    labtable.write_html(lab, str(tmp_path / "index.html"))
    assert list(csv.DictReader(open(tmp_path / "lab.csv")))[0]["not_run"] == "old RT"
    assert "not made for this kernel: old RT" in (tmp_path / "index.html").read_text()
    assert "not made for this kernel" in labtable.markdown(lab) and "old RT" in labtable.one_line(r)
    (got,) = check.tests_of({"runs": [dict(r, guest="icount")]}, "icount")
    assert got[1] == ["not made for this kernel: old RT"], got


def test_a_loads_hidden_gaps_are_judged_apart_and_held_to_two_percent(run):
    """A gap the kernel recorded too little of is hidden (issue 50: mostly another vCPU's turn,
    or nothing recorded), whatever load had a part in it: the class and the name are judged on
    the others, and no more than 2% of the load's gaps may be hidden unless the expectation
    says why for the guest (its `hidden` table)."""
    base = int(1.0e9)
    run["gaps"] = [dict(gap(base + k * 1000000, 10, "interrupt", "interrupt", "call_function_single"),
                        components={"self": 100, "call_function_single": 900}) for k in range(1, 99)]
    run["gaps"] += [dict(gap(base + k * 1000000, 60, "hidden", "switch_other", "cpu 0's turn, with call_function_single"),
                         components={"cpu 0's turn": 40000, "self": 12000, "call_function_single": 8000})
                    for k in (99, 100, 101)]
    write_hgl(run)
    with open(os.path.join(run["dir"], "stamps-0.txt"), "w") as f:
        f.writelines(f"{base + k * 1000000 - 500} {base + k * 1000000 + 5000}\n" for k in range(1, 102))
    sc = {"expect": [{"what": "IPIs", "expected": "stamps:0", "found": "component:^call_function_single$",
                      "named": "^call_function_single$", "class": "interrupt"}]}
    run["guest"] = "icount2"
    (e,) = expect.evaluate(sc, run)
    assert e["found"] == 101 and e["count_ok"] and e["hidden"] == 3
    assert e["class_share"] == 1.0 and e["named_share"] == 1.0    # the 98 the kernel recorded
    assert not e["hidden_ok"] and not e["named_right"]             # 3 of 101 > 2%
    lab = {"runs": [{"kernel": "6.1", "guest": "icount2", "scenario": "ipi", "expectations": [e]}]}
    (cnt, probs, _), _ = check.tests_of(lab, "icount2")
    assert len(probs) == 1 and "3 of them hidden" in probs[0] and "at most 2%" in probs[0]
    sc["expect"][0]["hidden"] = {"icount2": "CPU 0 sends each IPI in its turn"}
    (e,) = expect.evaluate(sc, run)
    assert e["hidden_ok"] and e["named_right"] and e["hidden_why"] == "CPU 0 sends each IPI in its turn"
    run["guest"] = "icount"
    (e,) = expect.evaluate(sc, run)
    assert not e["hidden_ok"]                                      # the reason is the icount2 guest's only


def test_the_table_shows_the_classes_not_held_with_their_figures_and_why(tmp_path):
    """A class the scenario does not hold on a kernel and guest ([[class_not_held]]) is shown in
    the lab's table with its figures, marked not held, and listed under it with why; the same
    class on a kernel that holds it is an ordinary cell."""
    cls = {"switch_other": {"actual": 2, "inferred": 40, "correct": 2, "precision": 0.05, "recall": 1.0},
           "interrupt": {"actual": 2280, "inferred": 2250, "correct": 2240, "precision": 0.996, "recall": 0.982}}
    lab = {"targets": {"count_tolerance": 0.02, "class_share": 0.98, "classes": list(vocab.TARGET_CLASSES),
                       "class_precision_recall": vocab.CLASS_TARGET},
           "runs": [{"kernel": k, "guest": "icount2", "scenario": "device-timer", "dir": str(tmp_path),
                     "expectations": [{"found": 2307, "expected": 2307, "ok": True, "what": "HPET"}],
                     "classes": cls, "class_short": {"switch_other": {}}} for k in ("7.3", "6.1-rt")]}
    md = labtable.markdown(lab)
    row73 = next(l for l in md.splitlines() if l.startswith("| device-timer | 7.3 "))
    row61 = next(l for l in md.splitlines() if l.startswith("| device-timer | 6.1-rt "))
    assert "*0.05/1.00 (2)* not held" in row73 and "**0.05/1.00 (2)**" in row61, (row73, row61)
    listed = [l for l in md.splitlines() if l.startswith("| device-timer | 7.3 | icount2 | switch_other |")]
    why = scenario.classes_not_held(scenario.load("device-timer"), "7.3", "icount2")["switch_other"]
    assert listed and "0.05/1.00 (2 actual, 40 inferred)" in listed[0] and why in listed[0], md
    labtable.write_html(lab, str(tmp_path / "index.html"))
    page = (tmp_path / "index.html").read_text()
    assert "<h2>Classes not held</h2>" in page and 'class="nh"' in page


def test_docs_list_the_allowances_the_scenarios_hold():
    """docs/lab.md's table of allowances is the scenarios' data (tools/hgtools/lab/allowances.py
    --write): every known misread and class not held, with why and its dated runs."""
    from hgtools.lab import allowances
    with open(allowances.DOC) as f:
        doc = allowances.in_doc(f.read())
    assert doc == allowances.block(), "docs/lab.md's allowances are stale: python3 -m hgtools.lab.allowances --write"
    assert doc.count("| known misread: ") >= 4 and doc.count("| not held: ") >= 4


def test_a_report_whose_rates_are_not_its_counts_fails_the_class_test():
    """The report's precision is correct over inferred and its recall correct over actual: a rate
    from the wrong column fails the class test, in a guest not held too (no TODO hides it)."""
    inf = _rep({("timer", "timer"): 700, ("timer", "interrupt"): 2, ("interrupt", "interrupt"): 40,
                ("interrupt", "switch_other"): 1, ("switch_hg", "switch_hg"): 300})["inference"]
    good = {"kernel": "6.1", "guest": "icount2", "scenario": "ipi", "expectations": [],
            "classes": inf["classes"], "confusion": inf["confusion"]}
    (_, (_, probs, _)) = check.tests_of({"runs": [good]}, "icount2")
    assert not probs, probs
    bad_cls = {c: dict(f) for c, f in inf["classes"].items()}
    bad_cls["interrupt"]["precision"] = bad_cls["interrupt"]["correct"] / bad_cls["interrupt"]["actual"]
    (_, (_, probs, todo)) = check.tests_of({"runs": [dict(good, classes=bad_cls)]}, "icount2")
    assert probs and not todo and "interrupt: the report's precision 0.976 is not 40 of 42 inferred" in probs[0], probs


def test_the_lab_is_a_package_that_edits_no_import_path():
    """The lab is hgtools.lab (issue 55): its modules import each other and hgtools as a package,
    and none puts a folder on the import path (lava_jobs imports LAVA's unpacked lava_common
    from build/lava by a finder of its own); nothing of it is left in tests/."""
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    edits = []
    for root, _, names in os.walk(os.path.join(top, "tools", "hgtools")):
        for n in names:
            if n.endswith(".py"):
                for i, line in enumerate(open(os.path.join(root, n)), 1):
                    if re.search(r"sys\.path\.(insert|append)\(|sys\.path\[", line) \
                            and not line.lstrip().startswith("`"):         # a docstring's command line
                        edits.append(f"{os.path.relpath(os.path.join(root, n), top)}:{i}: {line.strip()}")
    assert edits == [], edits
    left = [f for _, _, fs in os.walk(os.path.join(top, "tests", "lab")) for f in fs if not f.endswith(".pyc")]
    assert not left, f"the lab lives in tools/hgtools/lab, not tests/lab: {left}"
    assert check.scenario is scenario and expect.vocab is vocab, "one module each, imported as hgtools.lab's"


def test_a_reason_for_several_classes_not_held_is_said_once():
    """The scenario's data gives one reason for the classes it does not hold in a guest; a run
    short in two of them says that reason once, naming both (make check printed a 7.3 reason
    three times over)."""
    why = "ticks read as switches; timer 0.947 in one run"
    short = {"switch_other": {"not_held": why}, "timer": {"not_held": why},
             "interrupt": {"known": "the device's interrupts, known"}}
    todo = check._todo(short)
    assert todo.count(why) == 1 and "switch_other, timer not held: " + why in todo, todo
    assert "the device's interrupts, known" in todo, todo
