"""The farm's side of the lab (issue 41, docs/lava.md): the machine guest, the LAVA test
cases a lab's results become (tools/hgtools/lab/lava_cases.py), and the LAVA jobs TuxLAVA renders,
checked by LAVA's own job schema (tools/hgtools/lab/lava_jobs.py). No dispatcher: jobs are not run."""
import json
import os
import subprocess
import sys

import pytest

LAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "hgtools", "lab")   # its data
from hgtools.lab import expect
from hgtools.lab import scenario


def test_the_machine_guest_runs_smp2_s_scenarios_on_its_own_cpus():
    assert scenario.made_for(scenario.load("tick"), "machine")
    assert scenario.made_for(scenario.load("device-timer"), "machine")
    assert not scenario.made_for(scenario.load("cpu-yield-2cpu"), "machine"), "an icount2-only scenario"
    assert not scenario.made_for(scenario.load("cpu-yield-2cpu"), "smp2")
    assert scenario.fill("--affinity {cpu} mask {cpumask}", "machine", 8) == "--affinity 7 mask 80"
    assert scenario.for_guest(scenario.load("tick"), "machine", 4)["cpu"] == 3
    assert scenario.fill("{cpu}", "smp2", 8) == "1", "an emulated guest's CPUs are its own"
    with pytest.raises(ValueError):
        scenario.vm_options("machine")
    assert scenario.not_held(scenario.load("tick"), "machine"), "a machine's class figures are not held"


def _lab(found, precision_ok):
    """A lab of one machine run of tick: its tick count @found of 750, its timer class at
    precision 1.0 or 0.5 (@precision_ok)."""
    inferred = 750 if precision_ok else 1500
    classes = {"timer": {"actual": 750, "inferred": inferred, "correct": 750,
                         "precision": 750 / inferred, "recall": 1.0}}
    rep = {"inference": {"classes": classes}}
    return {"runs": [{"kernel": "6.12", "guest": "machine", "scenario": "tick", "dir": "/x/6.12/machine/tick",
                      "expectations": [{"what": "ticks", "found": found, "expected": 750, "expected_how": "HZ",
                                        "found_how": "timer gaps", "count_ok": abs(found - 750) <= 15}],
                      "class_short": expect.class_targets(rep, {}, []), "classes": classes,
                      "steal_share": 0.001, "explained_share": 0.99, "longest_gap_us": 412.5}]}


def _cases(tmp_path, lab, *extra):
    with open(tmp_path / "lab.json", "w") as f:
        json.dump(lab, f)
    p = subprocess.run([sys.executable, "-m", "hgtools.lab.lava_cases", "--print", str(tmp_path), *extra],
                       capture_output=True, text=True)
    cases = {ln.split()[1]: ln.split()[2:] for ln in p.stdout.splitlines() if ln.startswith("lava-test-case ")}
    return p.returncode, cases, p.stdout


def test_a_check_that_fails_fails_its_lava_test_case_and_figures_are_measurements(tmp_path):
    rc, cases, out = _cases(tmp_path, _lab(750, True))
    assert rc == 0, out
    assert cases["tick-on-6.12-machine-counts"] == ["--result", "pass"]
    assert cases["tick-on-6.12-machine-classes"] == ["--result", "pass"]
    assert cases["tick-ticks-found"] == ["--result", "pass", "--measurement", "750", "--units", "events"]
    assert cases["tick-timer-precision"] == ["--result", "pass", "--measurement", "1", "--units", "ratio"]
    assert cases["tick-steal"][:2] == ["--result", "pass"] and cases["tick-steal"][3] == "0.1"
    assert cases["tick-longest-gap"] == ["--result", "pass", "--measurement", "412.5", "--units", "us"]
    # a count far off fails its case and the exit status; a short class is shown, not held: skipped
    rc, cases, out = _cases(tmp_path, _lab(600, False))
    assert rc == 1, out
    assert cases["tick-on-6.12-machine-counts"] == ["--result", "fail"]
    assert cases["tick-ticks-found"][:2] == ["--result", "fail"]
    assert cases["tick-on-6.12-machine-classes"] == ["--result", "skip"]
    assert "# tick on 6.12 machine: expected counts" in out and "found 600 of 750" in out, "the log says why"
    assert cases["tick-timer-precision"][3] == "0.5"


def test_a_lab_with_nothing_to_report_fails(tmp_path):
    rc, cases, _ = _cases(tmp_path, {"runs": []})
    assert rc == 1 and cases["hourglass-lab"] == ["--result", "fail"]
    p = subprocess.run([sys.executable, "-m", "hgtools.lab.lava_cases", "--print", str(tmp_path / "none")],
                       capture_output=True, text=True)
    assert p.returncode == 1 and "lava-test-case hourglass-lab --result fail" in p.stdout
    p = subprocess.run([sys.executable, "-m", "hgtools.lab.lava_cases", "--print", "--case", "x", "maybe", "why"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "pass, fail, skip" in p.stderr and "'maybe'" in p.stderr and not p.stdout


def _have_lava_tools():
    try:
        import tuxlava  # noqa: F401
    except ImportError:
        return "TuxLAVA is not installed (make setup installs it)"
    from hgtools.lab import lava_jobs
    if not os.path.exists(os.path.join(lava_jobs.LAVA_PY, "lava_common")):
        return "LAVA's lava-common is not unpacked (make setup does it)"
    return ""


LAVA_MISSING = _have_lava_tools()


@pytest.mark.skipif(bool(LAVA_MISSING), reason=LAVA_MISSING or "TuxLAVA and lava-common are here")
def test_the_jobs_pass_lava_s_own_schema_and_a_broken_one_does_not(tmp_path):
    import yaml
    from hgtools.lab import lava_jobs
    p = subprocess.run([sys.executable, "-m", "hgtools.lab.lava_jobs", "-o", str(tmp_path), "--minutes", "33",
                        "--project", "https://lab.example/hourglass-src.tar.gz"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    for dev in lava_jobs.DEVICES:
        with open(tmp_path / f"{dev}.yaml") as f:
            job = yaml.safe_load(f)
        assert lava_jobs.validate(job) == "", dev
        steps = [s for a in job["actions"] if "test" in a for d in a["test"]["definitions"]
                 if d["name"] == "commands" for s in d["repository"]["run"]["steps"]]
        assert len(steps) == 1 and "/opt/hourglass/scripts/lava-lab" in steps[0], (dev, steps)
        assert [a["test"]["timeout"] for a in job["actions"] if "test" in a and
                a["test"]["definitions"][0]["name"] == "commands"] == [{"minutes": 33}]
        assert job["metadata"]["hourglass.device"] == dev
    # the schema is LAVA's, and it refuses what LAVA would: a deploy with nowhere to deploy to
    with open(tmp_path / "qemu-x86_64.yaml") as f:
        job = yaml.safe_load(f)
    del job["actions"][0]["deploy"]["to"]
    assert "deploy" in lava_jobs.validate(job)
    job = yaml.safe_load(open(tmp_path / "qemu-x86_64.yaml"))
    job["timeouts"]["job"] = {"fortnights": 1}
    assert lava_jobs.validate(job)


def _log(tmp_path, cases, job="pass"):
    """lava-run's log: a JSON object a line, the results among other lines."""
    lines = ['{"dt": "x", "lvl": "info", "msg": "lava-dispatcher, installed at version: 2026.10"}', "not json"]
    for definition, case, result, *m in cases:
        msg = {"definition": definition, "case": case, "result": result}
        if m:
            msg.update(measurement=m[0], units=m[1])
        lines.append(json.dumps({"dt": "x", "lvl": "results", "msg": msg}))
    # LAVA's own lines are YAML flow mappings, JSON but for their tags
    lines.append('{"dt": "x", "lvl": "results", "msg": {"definition": "0_commands", "case": "tagged", '
                 '"result": "pass", "starttc": ! "788", "endtc": ! "826"}}')
    if job:
        lines.append(json.dumps({"dt": "x", "lvl": "results", "msg": {"definition": "lava", "case": "job",
                                                                      "result": job}}))
    p = tmp_path / "job.log"
    p.write_text("\n".join(lines) + "\n")
    return str(p)


def _verdict(log, *args):
    p = subprocess.run([sys.executable, "-m", "hgtools.lab.lava_results", log, *args],
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def test_lava_s_results_are_read_from_its_log_and_judged(tmp_path):
    good = [("0_commands", "hgtrace-build", "pass"), ("0_commands", "tick-on-6.12-machine-counts", "pass"),
            ("0_commands", "tick-on-6.12-machine-classes", "skip"),
            ("0_commands", "tick-ticks-found", "pass", "749", "events"),
            ("0_commands", "fails-on-purpose-on-6.12-machine-recorded-and-analysed", "fail"),
            ("0_commands", "hourglass-lab", "fail")]
    rc, out, err = _verdict(_log(tmp_path, good, job="fail"), "--pass", "tick", "--fail", "fails-on-purpose")
    assert rc == 0, err
    assert "tick-ticks-found" in out and "749 events" in out and "7 test cases" in out and "tagged" in out
    # the scenario that fails on purpose passed: the failure did not reach LAVA
    bad = [c if not c[1].startswith("fails") else (c[0], c[1], "pass") for c in good]
    rc, _, err = _verdict(_log(tmp_path, bad, job="fail"), "--pass", "tick", "--fail", "fails-on-purpose")
    assert rc == 1 and "fails on purpose" in err
    # a case of tick that failed, or no case of it at all
    rc, _, err = _verdict(_log(tmp_path, [("0_commands", "tick-on-6.12-machine-counts", "fail")]), "--pass", "tick")
    assert rc == 1 and "expected to pass" in err
    rc, _, err = _verdict(_log(tmp_path, []), "--pass", "tick")
    assert rc == 1 and "no case of tick" in err
    # --present: reported, whatever the result
    rc, _, err = _verdict(_log(tmp_path, [("0_commands", "tick-ticks-found", "fail", "705", "events")]),
                          "--present", "tick")
    assert rc == 0, err
    rc, _, err = _verdict(_log(tmp_path, [("0_commands", "hgtrace-build", "pass")]), "--present", "tick")
    assert rc == 1 and "no case of tick" in err
    # a job that never finished (the dispatcher killed, the log cut)
    rc, _, err = _verdict(_log(tmp_path, good, job=None), "--pass", "tick", "--fail", "fails-on-purpose")
    assert rc == 1 and "did not finish" in err
    rc, _, err = _verdict(str(tmp_path / "none.log"))
    assert rc == 2 and "none.log" in err


def test_a_scenario_from_another_directory_is_found_by_name_only(monkeypatch):
    assert "fails-on-purpose" not in scenario.names()
    with pytest.raises(scenario.ScenarioError):
        scenario.load("fails-on-purpose")
    monkeypatch.setenv("HGT_LAB_SCENARIOS", os.path.join(LAB, "lava"))
    sc = scenario.load("fails-on-purpose")
    assert scenario.made_for(sc, "machine") and "exit 1" in sc["setup"][0]
    assert "fails-on-purpose" not in scenario.names(), "never in the lab's matrix"
    assert scenario.load("tick")["name"] == "tick", "the lab's own come first"


def test_the_worst_latency_is_the_longest_gap_not_asked_for():
    from hgtools.lab import analyse
    hg = {"tsc": {"hz": 1e9}}
    gaps = [{"g0": 0, "g1": 5000, "vol": 0, "actual": "timer"},
            {"g0": 10000, "g1": 900000, "vol": 1, "actual": "voluntary"},   # a sleep it asked for
            {"g0": 1000000, "g1": 1040000, "vol": 0, "actual": "switch_other"}]
    assert analyse.longest_gap(gaps, hg) == {"longest_gap_us": 40.0, "longest_gap_actual": "switch_other"}
    assert analyse.longest_gap(gaps[1:2], hg) == {"longest_gap_us": None, "longest_gap_actual": None}


def test_a_case_linked_to_the_run_directories_archive_is_a_reference():
    p = subprocess.run([sys.executable, "-m", "hgtools.lab.lava_cases", "--print", "--case", "hourglass-artifacts",
                        "pass", "12 KiB", "--reference", "http://store/hourglass-lab-6.12-m.tar.gz"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert ("lava-test-reference hourglass-artifacts --result pass --reference "
            "http://store/hourglass-lab-6.12-m.tar.gz") in p.stdout and "lava-test-case" not in p.stdout
    p = subprocess.run([sys.executable, "-m", "hgtools.lab.lava_cases", "--print", "/x", "--reference", "u"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "--reference goes with --case" in p.stderr


def test_the_job_s_reference_is_printed_and_required(tmp_path):
    cases = [("0_commands", "hgtrace-build", "pass")]
    log = _log(tmp_path, cases)
    rc, _, err = _verdict(log, "--reference", "hourglass-artifacts")
    assert rc == 1 and "no case of hourglass-artifacts passed with a link" in err
    lines = open(log).read().splitlines()
    ref = {"definition": "0_commands", "case": "hourglass-artifacts", "result": "pass",
           "reference": "http://10.0.2.2:8/hourglass-lab-x.tar.gz"}
    lines.insert(2, json.dumps({"dt": "x", "lvl": "results", "msg": ref}))
    with open(log, "w") as f:
        f.write("\n".join(lines) + "\n")
    rc, out, err = _verdict(log, "--reference", "hourglass-artifacts")
    assert rc == 0, err
    assert out.splitlines()[-1] == "reference hourglass-artifacts http://10.0.2.2:8/hourglass-lab-x.tar.gz"
    ref["result"] = "fail"
    lines[2] = json.dumps({"dt": "x", "lvl": "results", "msg": ref})
    with open(log, "w") as f:
        f.write("\n".join(lines) + "\n")
    rc, _, err = _verdict(log, "--reference", "hourglass-artifacts")
    assert rc == 1 and "passed with a link" in err


def test_the_artifact_store_takes_a_put_and_refuses_what_is_not_a_plain_file(tmp_path):
    import http.client
    store = subprocess.Popen([sys.executable, "-m", "hgtools.lab.lava_artifacts", "--dir", str(tmp_path),
                              "--max-mb", "1"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = store.stdout.readline()
        assert line.startswith("listening on 127.0.0.1:"), line
        port = int(line.rsplit(":", 1)[1])

        def put(path, body, headers=None):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            c.request("PUT", path, body=body, headers=headers or {})
            r = c.getresponse()
            return r.status, r.read().decode()

        assert put("/runs.tar.gz", b"x" * 1000)[0] == 201
        assert (tmp_path / "runs.tar.gz").read_bytes() == b"x" * 1000
        assert put("/lab-6.12.1%2Bdeb12.tgz", b"k")[0] == 201, "a kernel's '+' as curl sends it"
        assert (tmp_path / "lab-6.12.1+deb12.tgz").read_bytes() == b"k"
        os.unlink(tmp_path / "lab-6.12.1+deb12.tgz")
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        c.request("GET", "/runs.tar.gz")
        assert c.getresponse().read() == b"x" * 1000
        for bad in ("/../escape", "/a/b", "/a%2Fb", "/.hidden", "/"):
            status, text = put(bad, b"y")
            assert status == 400 and "plain file name" in text, bad
        # a body over --max-mb is refused on its Content-Length, before any of it is read
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        c.putrequest("PUT", "/big")
        c.putheader("Content-Length", str((1 << 20) + 1))
        c.endheaders()
        r = c.getresponse()
        assert r.status == 413 and "more than the store takes" in r.read().decode()
        assert sorted(os.listdir(tmp_path)) == ["runs.tar.gz"], "nothing else written, no temporary left"
    finally:
        store.terminate()
        store.wait(timeout=10)


@pytest.mark.skipif(bool(LAVA_MISSING), reason=LAVA_MISSING or "TuxLAVA and lava-common are here")
def test_a_job_with_an_artifact_store_uploads_there(tmp_path):
    import yaml
    p = subprocess.run([sys.executable, "-m", "hgtools.lab.lava_jobs", "-o", str(tmp_path), "--device",
                        "qemu-x86_64", "--project", "https://lab.example/src.tar.gz",
                        "--artifacts", "https://store.example/runs", "--lab-args", "--prebuilt tick"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    job = yaml.safe_load(open(tmp_path / "qemu-x86_64.yaml"))
    steps = [s for a in job["actions"] if "test" in a for d in a["test"]["definitions"]
             if d["name"] == "commands" for s in d["repository"]["run"]["steps"]]
    assert job["context"]["no_network"] is False, "QEMU gets a network to upload through"
    assert ("lava-lab --out /tmp/hourglass-lab --paper quick --upload https://store.example/runs --prebuilt tick'"
            in steps[0]), steps


def test_a_machine_gets_the_paper_s_runs_that_need_nothing_of_this_host():
    from hgtools.paper import plan
    on = {(e.key, r.name) for e in plan.EXPERIMENTS for r in plan.runs_of(e, True) if plan.on_machine(e, r)}
    assert ("rta", "hr") in on and ("dl", "hard_exact") in on and ("fig4", "yield") in on
    assert ("table1", "memory") in on and ("table1", "rtc-fork") in on, "the stress loads, on the machine's CPU 1"
    assert not any(e == "fig5" for e, _ in on), "fig5's runs are native: no module"
    assert not any(r in ("p4in5", "p8in10", "control2") for _, r in on), "the network sender is this host"
    assert ("table1", "console") not in on and ("table1", "rtc-console") not in on, "the farm's serial line"
    assert plan.MACHINE not in plan.guests_needed(plan.EXPERIMENTS, True), "scripts/paper boots no machine"


def test_the_paper_s_runs_on_a_machine_are_cases_with_their_figures(tmp_path):
    from test_learn import write_run
    ok = write_run(str(tmp_path / "paper" / "rta" / "hr"), 1)
    with open(os.path.join(ok, "paper-run.json"), "w") as f:
        json.dump({"experiment": "rta", "run": "hr", "errors": [], "cyclictest": {"exit": 0}}, f)
    with open(os.path.join(ok, "cyclictest.hist"), "w") as f:     # cyclictest -h's histogram file
        f.write("# Histogram\n000005 000990\n000117 000010\n# Total: 000001000\n# Min Latencies: 00003\n"
                "# Max Latencies: 00117\n# Histogram Overflows: 00000\n")
    bad = tmp_path / "paper" / "table1" / "memory"
    bad.mkdir(parents=True)
    (bad / "paper-run.json").write_text(json.dumps({"errors": ["load memory ended before the run"]}))
    p = subprocess.run([sys.executable, "-m", "hgtools.lab.lava_cases", "--print", "--paper",
                        str(tmp_path / "paper")], capture_output=True, text=True)
    cases = {ln.split()[1]: ln.split()[2:] for ln in p.stdout.splitlines() if ln.startswith("lava-test-case ")}
    assert p.returncode == 1, p.stdout + p.stderr
    assert cases["paper-rta-hr"] == ["--result", "pass"]
    assert cases["paper-rta-hr-accuracy"][:3] == ["--result", "pass", "--measurement"]
    assert 0 < float(cases["paper-rta-hr-accuracy"][3]) <= 1 and cases["paper-rta-hr-accuracy"][-1] == "ratio"
    assert cases["paper-rta-hr-cyclictest-max"] == ["--result", "pass", "--measurement", "117", "--units", "us"]
    assert cases["paper-table1-memory"] == ["--result", "fail"] and "ended before the run" in p.stdout
    p = subprocess.run([sys.executable, "-m", "hgtools.lab.lava_cases", "--print", "--paper",
                        str(tmp_path / "none")], capture_output=True, text=True)
    assert p.returncode == 1 and "lava-test-case paper --result fail" in p.stdout
