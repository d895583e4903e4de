"""scripts/apt-pin: the set-up scripts' one way to add a pinned Debian suite to apt."""
import os
import re
import subprocess

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))


def call_of(script):
    """The script's own apt_pin call, with the arrays it names."""
    text = open(os.path.join(TOP, "scripts", script)).read()
    arrays = "\n".join(re.findall(r"^(?:pkgs|from_forky)=\(.*\)$", text, re.M))
    m = re.search(r"^\s*apt_pin .*?\n(?=fi$)", text, re.M | re.S)
    assert m, f"scripts/{script} does not call apt_pin"
    return f'. "{TOP}/scripts/apt-pin"\n{arrays}\n{m.group(0)}'


def pin(tmp_path, script):
    for d in ("sources.list.d", "preferences.d"):
        (tmp_path / d).mkdir(exist_ok=True)
    subprocess.run(["bash", "-c", call_of(script), script], check=True,
                   env=dict(os.environ, HG_APT_DIR=str(tmp_path), HG_DEBIAN_MIRROR="http://mirror.test/debian"))


@pytest.mark.parametrize("script,name,suites,pkgs,prio", [
    ("setup-qemu", "qemu", ["bookworm-backports"], "qemu-system-x86 qemu-system-common qemu-system-data seabios", 990),
    ("setup-trixie", "trixie", ["trixie", "trixie-backports"],
     r"/^linux-(binary|modules|base)-[0-9][0-9.]*\+deb13-(rt-)?amd64$/", 500),
    ("setup-lttng", "lttng", ["forky"], "dkms lttng-modules-dkms", 990)])
def test_each_suite_pinned_to_the_packages_its_script_names(tmp_path, script, name, suites, pkgs, prio):
    pin(tmp_path, script)
    src = (tmp_path / "sources.list.d" / f"hourglass-{name}.sources").read_text()
    assert f"# hourglass (scripts/{script}): " in src.splitlines()[0]
    assert f"URIs: http://mirror.test/debian\nSuites: {' '.join(suites)}\nComponents: main\n" in src
    prefs = (tmp_path / "preferences.d" / f"hourglass-{name}").read_text()
    stanzas = [s for s in prefs.split("\n\n")]
    # nothing from any suite, then the named packages from the last one
    for suite, stanza in zip(suites, stanzas):
        assert stanza.endswith(f"Package: *\nPin: release n={suite}\nPin-Priority: -1"), stanza
    assert stanzas[-1] == f"Package: {pkgs}\nPin: release n={suites[-1]}\nPin-Priority: {prio}\n"
    assert all(line.startswith("#") for line in stanzas[0].splitlines()[:-3])


def test_what_is_there_is_kept(tmp_path):
    """Set-up is idempotent: both files there, nothing is written over what a user edited."""
    pin(tmp_path, "setup-qemu")
    p = tmp_path / "preferences.d" / "hourglass-qemu"
    p.write_text("# edited\n")
    pin(tmp_path, "setup-qemu")
    assert p.read_text() == "# edited\n"
