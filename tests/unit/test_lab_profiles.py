"""tools/hgtools/lab/profiles.py on constructed lab output: the split (learned on every other
scenario's first run, measured on their second runs and on the others'), the figures judged
by each run's own kernel recording, the table, and another kernel's profile (--cross)."""
import json
import os
import subprocess
import sys

from conftest import TOP

from test_learn import write_run  # this folder: pytest puts a test's own first



def lab(root, kernel, release, seed0=0):
    """Six scenarios of two runs each in the smp2 guest of @kernel."""
    for i, name in enumerate(("a", "b", "c", "d", "e", "f")):
        for k in (1, 2):
            d = write_run(os.path.join(root, kernel, "smp2", name if k == 1 else f"{name}.run2"),
                          seed0 + 2 * i + k, release=release)
            with open(os.path.join(d, "lab-run.json"), "w") as f:
                json.dump({"scenario": name, "run": k}, f)


def test_profiles_learned_and_measured_on_runs_they_never_saw(tmp_path):
    lab(str(tmp_path), "6.1", "6.1.0-test")
    lab(str(tmp_path), "7.3", "7.3.0-test", seed0=40)
    # a run that failed is left out, and its scenario with it
    with open(tmp_path / "7.3" / "smp2" / "f.run2" / "lab-run.json", "w") as f:
        json.dump({"scenario": "f", "run": 2, "error": "hourglass failed"}, f)
    p = subprocess.run([sys.executable, "-m", "hgtools.lab.profiles", str(tmp_path), "--cross"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    res = json.load(open(tmp_path / "profiles.json"))
    assert set(res) == {"6.1/smp2", "7.3/smp2"}
    r = res["6.1/smp2"]
    assert r["scenarios_learned"] == ["a", "c", "e"] and r["scenarios_other"] == ["b", "d", "f"]
    assert res["7.3/smp2"]["scenarios_other"] == ["b", "d"]
    # the expectation is each run's kernel recording: 100 ticks and 100 interrupts a run
    assert r["repeat"]["builtin"]["gaps"] == 3 * 200 and r["other"]["builtin"]["gaps"] == 6 * 200
    assert r["repeat"]["profile"]["accuracy"] >= 0.98 > r["repeat"]["builtin"]["accuracy"]
    assert r["other"]["profile"]["accuracy"] >= 0.98
    cr = json.load(open(tmp_path / "profiles-cross.json"))
    assert set(cr) == {"6.1->7.3/smp2", "7.3->6.1/smp2"}
    assert cr["6.1->7.3/smp2"]["profile"]["gaps"] == 3 * 200
    md = open(tmp_path / "profiles.md").read()
    assert "| 6.1 | smp2 | repeat | 600 |" in md and "6.1 → 7.3" in md
