"""hourglass records the scheduler's features and base slice in its JSON's kernel
object (docs/hourglass-trace.md): the list debugfs shows, or null where it cannot
be read (not root, debugfs not mounted: this machine's own kernel, most often)."""
import json
import os
import subprocess

from conftest import TOP

HOURGLASS = os.path.join(TOP, "build", "hourglass")


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def test_the_scheduler_features_as_debugfs_lists_them_or_null(tmp_path):
    subprocess.run(["make", "-s", "-C", os.path.join(TOP, "userspace", "hourglass")], check=True)
    out = tmp_path / "run.json"
    p = subprocess.run([HOURGLASS, "-n", "1", "-d", "20ms", "-q", "--fallback", "--json", str(out), "-o",
                        str(tmp_path / "run.txt")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    k = json.loads(out.read_text())["kernel"]
    assert "sched_features" in k and "sched_base_slice_ns" in k, k
    feats = read("/sys/kernel/debug/sched/features") or read("/sys/kernel/debug/sched_features")
    if feats is None:
        assert k["sched_features"] is None
    else:
        assert k["sched_features"] == feats.split()
        assert any(f in ("HRTICK", "NO_HRTICK") for f in k["sched_features"])
    base = read("/sys/kernel/debug/sched/base_slice_ns")
    assert k["sched_base_slice_ns"] == (int(base) if base else None)
