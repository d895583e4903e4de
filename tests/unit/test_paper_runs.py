"""The paper experiments' readers of run directories (tools/hgtools/paper):
receive throughput from the receiver's log, cyclictest's histogram, the
indirect-cost formula of a trial; on small files written here, with answers
computed by hand."""
import json
import os

import pytest

from hgtools.paper import context, fig5, model, plan, runs, table1, table2


def run_dir(tmp_path, name="r", **files):
    d = tmp_path / name
    d.mkdir()
    (d / "paper-run.json").write_text(json.dumps({"run": name, "errors": []}))
    for f, text in files.items():
        (d / f.replace("_", ".", 1)).write_text(text)
    return runs.RunDir(str(d))


def test_throughput_inside_a_window(tmp_path):
    # 1 MB a second, sampled every 0.5 s: from 0.25 s to 1.75 s (interpolated) 1.5 MB = 8 Mbit/s
    log = "".join(f"{int(t * 1e9)} {int(t * 1_000_000)}\n" for t in (0, 0.5, 1.0, 1.5, 2.0))
    r = run_dir(tmp_path, netrecv_log=log)
    tp = table2.throughput(r, (250_000_000, 1_750_000_000))
    assert tp["bytes"] == pytest.approx(1_500_000)
    assert tp["seconds"] == pytest.approx(1.5)
    assert tp["mbit_s"] == pytest.approx(8.0)
    # no window: after the first second, to the end: 1 MB in 1 s
    assert table2.throughput(r)["mbit_s"] == pytest.approx(8.0)


def test_throughput_without_a_log(tmp_path):
    assert table2.throughput(run_dir(tmp_path)) is None


def test_cyclictest_histogram(tmp_path):
    hist = "# Histogram\n000000 000000\n000030 000900\n000150 000080\n000600 000015\n002000 000004\n" \
           "009999 000000\n# Total: 000000999\n# Min Latencies: 00028\n# Max Latencies: 12001\n" \
           "# Histogram Overflows: 00001\n"
    r = run_dir(tmp_path, cyclictest_hist=hist, cyclictest_txt="# /dev/cpu_dma_latency set to 0us\n")
    f = table1.cyclictest_figures(r)
    # 1000 samples; over 0.1 ms: 80 + 15 + 4 + 1 overflow; over 0.5 ms: 20; 1 ms: 5; 5 ms: the overflow
    assert f["samples"] == 1000
    assert f["above"] == [100, 20, 5, 1]
    assert f["worst_us"] == 12001 and f["median_us"] == 30


def hourglass_json(threads, duration_s=2.0):
    return json.dumps({"duration_ns": int(duration_s * 1e9), "threads": [
        {"thread": i, "work_units": w, "accounting": {"thread_cputime_ns": int(c * 1e9), "schedstat_slices": s}}
        for i, (w, c, s) in enumerate(threads)]})


def test_indirect_cost_of_one_trial(tmp_path, monkeypatch):
    # one thread: 1000 passes in 2 s of CPU; ten: 900 passes in 1.8 s of CPU over a 2 s run, 400 switches
    # (the kernel: 500 slices). The paper's form: (1000-900)/1000 * 2 s / 400 = 500 us.
    # Per CPU-second: rates 500 and 500/s: no loss, C = 0.
    one = run_dir(tmp_path, "one", hourglass_json=hourglass_json([(1000, 2.0, 1)]))
    ten = run_dir(tmp_path, "ten", hourglass_json=hourglass_json([(90, 0.18, 50)] * 10))
    monkeypatch.setattr(fig5, "switches_inferred", lambda r: 400)
    f = fig5.trial_figures(one, ten)
    assert f["W1"] == 1000 and f["W10"] == 900 and f["N10_kernel"] == 500
    assert f["C_paper_us"] == pytest.approx(500.0)
    assert f["C_cpu_us"] == pytest.approx(0.0)
    assert f["cpu_share10"] == pytest.approx(0.9)
    # the same CPU time but 800 passes: rate 444.4/s, loss 1/9; C = (1/9) * 1.8 s / 400 = 500 us;
    # with the kernel's 500 switches: 400 us
    ten = run_dir(tmp_path, "ten2", hourglass_json=hourglass_json([(80, 0.18, 50)] * 10))
    f = fig5.trial_figures(one, ten)
    assert f["C_cpu_us"] == pytest.approx(500.0)
    assert f["C_cpu_kernel_us"] == pytest.approx(400.0)


def test_table_cells_and_checks():
    t = model.Table("t", "c", [model.Column("k", "key"), model.Column("x"), model.Column("y", "truth")])
    t.add("a", None, None)
    assert not t.has_figures() and not t.has_truth()
    t.add("b", 1.5, "irq 11")
    assert t.has_figures() and t.has_truth()
    with pytest.raises(ValueError):
        t.add("c", 1)
    assert model.fmt(0.012345) == "0.0123" and model.fmt(1234.5) == "1234" and model.fmt(None) == "-"


def test_plan_selects_and_brings_what_a_section_uses():
    assert [e.key for e in plan.select(["seeds"])] == ["fig4", "table1", "rta", "dl", "seeds"]
    with pytest.raises(ValueError, match="unknown experiment nope"):
        plan.select(["nope"])
    # the commands are the paper's, with the plan's lengths
    r = plan.BY_KEY["table2"].runs[2]
    assert r.args(True)[:7] == ["-n", "1", "-d", "1s", "-t", "0", "-p"]
    assert len(plan.fig5_runs(True)) == 2 * len(plan.FIG5_QUICK_KB) * plan.FIG5_QUICK_TRIALS


def test_runs_not_made_fold_into_one_line_per_guest():
    missing = ["fig4/cpu on 6.12 (icount guest): not run", "table1/idle: no samples",
               "fig4/yield on 6.12 (icount guest): not run", "fig5/ws4k-n1-t0 on this machine: not run",
               "fig4/cpu on 6.12 (icount guest): not run", "table1/idle: no samples"]
    assert context.fold_not_run(missing) == [
        "6.12 (icount guest): not run: fig4/cpu, fig4/yield",
        "table1/idle: no samples",
        "this machine: not run: fig5/ws4k-n1-t0",
    ]


def test_many_runs_not_made_are_counted_not_listed():
    missing = [f"fig5/ws{k}k-n1-t0 on this machine: not run" for k in range(20)]
    assert context.fold_not_run(missing) == [
        "this machine: not run: fig5/ws0k-n1-t0, fig5/ws1k-n1-t0, fig5/ws2k-n1-t0, fig5/ws3k-n1-t0, "
        "fig5/ws4k-n1-t0, fig5/ws5k-n1-t0 and 14 more (20 runs)"]


def test_a_kept_merge_of_an_older_merger_is_merged_again(tmp_path, monkeypatch):
    """report.json and gaps.jsonl newer than the recording are kept, unless an older hgmerge wrote them
    (report 2.0): what the analysis reads (kernel_tick, switch_path_cycles) only the merger computes."""
    r = run_dir(tmp_path, kernel_hgt="k", hourglass_hgl="h", gaps_jsonl="", report_json='{"report_version": 2}')
    os.utime(r.file("paper-run.json"), (1, 1))
    for f in ("kernel.hgt", "hourglass.hgl"):
        os.utime(r.file(f), (1, 1))
    merges = []

    class Done:
        returncode = 0

    def fake_run(cmd, **kw):
        merges.append(cmd)
        for out in (cmd[cmd.index("--report") + 1], cmd[cmd.index("--gaps-json") + 1]):
            with open(out, "w") as f:
                f.write('{"report_version": 2, "report_minor": 1}' if "report" in out else "")
        return Done()
    monkeypatch.setattr(runs.paths, "require", lambda name: name)
    monkeypatch.setattr(runs.subprocess, "run", fake_run)
    r.merge()
    assert len(merges) == 1 and json.load(open(r.file("report.json")))["report_minor"] == 1
    r.merge()                       # now a 2.1 report: kept
    assert len(merges) == 1
