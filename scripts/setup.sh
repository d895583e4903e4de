#!/usr/bin/env bash
# setup.sh - install everything hourglass needs to build, test and demo.
#
# Idempotent: each step checks first and does nothing when already done, so a
# second run takes a few seconds. Needs root for apt-get (CI and the project's
# machines run as root); prints what it would install otherwise.
#
# What it installs and why:
#   - the six guest kernels (scripts/kernels): Debian 12's four with matching headers
#     (6.1, 6.1 PREEMPT_RT, 6.12, 6.12 PREEMPT_RT), and Debian 13's backported 7.3 and
#     7.3 PREEMPT_RT, whose headers build only in a Debian 13 root (scripts/setup-trixie,
#     with debootstrap); the module is built for and tested inside each;
#   - QEMU 10 (qemu-system-x86 from Debian 12's backports, pinned to QEMU alone;
#     scripts/setup-qemu): virtme-ng boots those kernels under TCG emulation, and 10
#     runs the instruction-count clock with 2 or 4 vCPUs, where 7.2 hangs;
#     busybox-static: virtme-ng builds the guest's initramfs from it;
#   - trace-cmd, rt-tests (hackbench, cyclictest), stress-ng: loads and the
#     independent ftrace ground truth the module is checked against;
#   - kernelshark: the viewer of exported traces; its library (libkshark)
#     lets the tests check that exported files load as the GUI loads them;
#   - libkshark-dev (KernelShark's own headers and libraries, Debian's package of
#     the version installed), libjson-c-dev and libglu1-mesa-dev (headers its
#     headers include), g++: the hourglass KernelShark plugin the sessions load
#     (userspace/export/ks-plugin), which draws each gap by inferred and actual class;
#   - xvfb, imagemagick, chromium-headless-shell: a test opens the demo's
#     trace in a real KernelShark window and the HTML report in Chromium,
#     without a screen, and checks the screenshots; xauth, which xvfb-run
#     (the doc-test's KernelShark) needs and xvfb only recommends;
#   - librsvg2-bin: rsvg-convert, for `hourglass export --png`;
#   - libtracecmd-dev, libtracefs-dev (its .pc requires libtracefs),
#     libtraceevent-dev, pkg-config: hgtrace-import reads
#     trace-cmd's trace.dat through the libraries trace-cmd itself uses;
#   - python3-matplotlib: the charts of `hourglass export --html`; the
#     virtual environment sees it (and every Debian Python package) through
#     --system-site-packages, so nothing is compiled or downloaded for it;
#   - python3-scipy: scikit-learn's (hourglass learn --model), Debian's own so that pip
#     does not fetch a SciPy that wants a newer NumPy than matplotlib's;
#   - man-db, groff-base, mandoc: make builds man pages from docs/ and the
#     unit tests render each (man -l, groff) and lint it (mandoc -T lint);
#   - with --fuzz, only clang and its compiler-rt (libclang-rt-N-dev: libFuzzer and
#     the sanitizers), and atheris in build/fuzz/pyenv, for make fuzz (tests/fuzz);
#   - virtme-ng, pytest and pytest-xdist (and pyarrow and duckdb: hourglass results) in a
#     virtual environment at $HG_VENV (default
#     .venv), and the hgtools package from tools/, installed editable, so
#     that `python -m hgtools` runs the tree's code as it is.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
venv=${HG_VENV:-$top/.venv}

# --fuzz: only what the fuzz targets need (tests/fuzz, make fuzz): clang, and the
# compiler-rt of its version (libFuzzer and the sanitizers); quick when they are there
if [ "${1:-}" = --fuzz ]; then
	# the compiler-rt package of the installed clang, when its libFuzzer is missing
	rt_missing() {
		local v f
		v=$(clang -dumpversion 2>/dev/null | cut -d. -f1)
		f=$(clang -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null)
		[ -n "$v" ] && [ ! -e "$f" ] && echo "libclang-rt-$v-dev"
		return 0
	}
	want=()
	command -v clang >/dev/null || want+=(clang)
	for p in libtracecmd-dev libtracefs-dev libtraceevent-dev pkg-config zlib1g-dev; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || want+=("$p")
	done
	for p in python3-venv python3-matplotlib python3-scipy; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || want+=("$p")
	done
	if [ ${#want[@]} -gt 0 ] || [ -n "$(rt_missing)" ]; then
		if [ "$(id -u)" -ne 0 ]; then
			echo "setup: need root for apt-get; run: sudo apt-get install ${want[*]} $(rt_missing)" >&2
			exit 1
		fi
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -q
		[ ${#want[@]} -eq 0 ] || apt-get install -y -q --no-install-recommends "${want[@]}"
		rt=$(rt_missing)
		[ -z "$rt" ] || apt-get install -y -q --no-install-recommends "$rt"
		echo "setup: fuzzing ok ($(clang --version | head -1))"
	fi
	# atheris (libFuzzer for Python, a wheel) for the report JSON target, in an environment of
	# its own under build/ that sees the system's matplotlib
	pyenv=$top/build/fuzz/pyenv
	if ! "$pyenv/bin/python" -c 'import atheris' 2>/dev/null; then
		echo "setup: atheris into $pyenv"
		/usr/bin/python3 -m venv --system-site-packages "$pyenv"
		"$pyenv/bin/pip" install -q --disable-pip-version-check atheris
	fi
	exit 0
fi

pkgs=(
	linux-image-amd64 linux-headers-amd64
	linux-image-rt-amd64 linux-headers-rt-amd64
	linux-image-6.12-amd64 linux-headers-6.12-amd64
	linux-image-6.12-rt-amd64 linux-headers-6.12-rt-amd64
	debootstrap busybox-static trace-cmd rt-tests stress-ng kmod kernelshark
	libkshark-dev libjson-c-dev libglu1-mesa-dev g++
	xvfb xauth imagemagick chromium-headless-shell librsvg2-bin
	gcc make patch python3-venv libtracecmd-dev libtracefs-dev libtraceevent-dev pkg-config
	python3-matplotlib python3-scipy man-db groff-base mandoc
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	if [ "$(id -u)" -ne 0 ]; then
		echo "setup: need root for apt-get; run: sudo apt-get install ${missing[*]}" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# QEMU 10 from Debian 12's backports (quick when it is there)
if [ "$(id -u)" -eq 0 ]; then
	"$top/scripts/setup-qemu"
else
	"$top/scripts/setup-qemu" 2>/dev/null || echo "setup: QEMU 10 needs root once: sudo $top/scripts/setup-qemu" >&2
fi

# Debian 13's backported kernels: their images here, their headers in a Debian 13 root
if [ "$(id -u)" -eq 0 ]; then
	"$top/scripts/setup-trixie"
else
	"$top/scripts/setup-trixie" 2>/dev/null || echo "setup: the 7.3 kernels need root once: sudo $top/scripts/setup-trixie" >&2
fi

# An environment made before matplotlib was needed does not see the system's
# packages: --upgrade rewrites its pyvenv.cfg and keeps what it has installed.
if [ -e "$venv/pyvenv.cfg" ] && ! grep -qiE '^include-system-site-packages *= *true' "$venv/pyvenv.cfg"; then
	echo "setup: letting $venv see the system's Python packages (python3-matplotlib)"
	/usr/bin/python3 -m venv --system-site-packages --upgrade "$venv"
fi

if [ ! -x "$venv/bin/vng" ] || [ ! -x "$venv/bin/pytest" ]; then
	echo "setup: creating $venv with virtme-ng"
	/usr/bin/python3 -m venv --system-site-packages "$venv"
	"$venv/bin/pip" install -q --disable-pip-version-check virtme-ng pytest
fi

# make test runs the unit tests on every CPU it may use (pinned, as mypy below)
if ! "$venv/bin/python" -c 'import xdist, sys; sys.exit(xdist.__version__ != "3.8.0")' 2>/dev/null; then
	echo "setup: installing pytest-xdist 3.8.0 into $venv (make test on every CPU)"
	"$venv/bin/pip" install -q --disable-pip-version-check pytest-xdist==3.8.0
fi

# the tests read the Perfetto export with Perfetto's own compiled protos
if ! "$venv/bin/python" -c "import perfetto.protos.perfetto.trace.perfetto_trace_pb2" 2>/dev/null; then
	echo "setup: installing perfetto and protobuf into $venv (the Perfetto export's tests)"
	"$venv/bin/pip" install -q --disable-pip-version-check perfetto protobuf
fi

# hourglass results writes Parquet (pyarrow) and answers SQL (DuckDB): pinned, as the
# table's tests compare their output; pyarrow 17, the last that runs with Debian 12's
# numpy 1.24, which the system's matplotlib (seen through --system-site-packages) needs
if ! "$venv/bin/python" -c 'import pyarrow, duckdb, sys; sys.exit(pyarrow.__version__ != "17.0.0" or duckdb.__version__ != "2.0.1")' 2>/dev/null; then
	echo "setup: installing pyarrow 17.0.0 and duckdb 2.0.1 into $venv (hourglass results)"
	"$venv/bin/pip" install -q --disable-pip-version-check pyarrow==17.0.0 duckdb==2.0.1
fi

# hourglass learn --model tree fits its tree with scikit-learn (optional for users, as the
# tree is walked without it; the tests fit one): pinned, so that a tree is the same tree
if ! "$venv/bin/python" -c 'import sklearn, sys; sys.exit(sklearn.__version__ != "1.9.1")' 2>/dev/null; then
	echo "setup: installing scikit-learn 1.9.1 into $venv (hourglass learn --model)"
	"$venv/bin/pip" install -q --disable-pip-version-check scikit-learn==1.9.1
fi

# the farm's jobs (tools/hgtools/lab/lava_jobs.py, docs/lava.md): rendered by Linaro's TuxLAVA and
# checked by LAVA's own job schema (scripts/setup-lava unpacks it into build/lava)
if ! "$venv/bin/python" -c 'import tuxlava, voluptuous, sys; from importlib.metadata import version as v; sys.exit(v("tuxlava") != "0.28.0" or voluptuous.__version__ != "0.16.0")' 2>/dev/null; then
	echo "setup: installing tuxlava 0.28.0 and voluptuous 0.16.0 into $venv (the LAVA jobs)"
	"$venv/bin/pip" install -q --disable-pip-version-check tuxlava==0.28.0 voluptuous==0.16.0
fi
HG_VENV=$venv "$top/scripts/setup-lava" ||
	echo "setup: LAVA's job schema is not here: the LAVA jobs' check will say it is missing" >&2

# make test checks hgtools' types with mypy, pinned: a newer mypy's new checks are a change of
# their own, not a failure of a tree that passed
if ! "$venv/bin/python" -m mypy --version 2>/dev/null | grep -q "^mypy 1\.20\.2 "; then
	echo "setup: installing mypy 1.20.2 into $venv (make test checks hgtools' types)"
	"$venv/bin/pip" install -q --disable-pip-version-check mypy==1.20.2
fi

# tools/ as the hgtools package, editable: done when the environment already
# imports it from this tree
if [ -e "$top/tools/pyproject.toml" ]; then
	# -I: not from the current directory, nor from PYTHONPATH
	at=$("$venv/bin/python" -I -c 'import hgtools, os; print(os.path.realpath(hgtools.__file__))' 2>/dev/null || true)
	case "$at" in
	"$(realpath "$top/tools")"/*) ;;
	*)	echo "setup: installing tools/ (hgtools) into $venv, editable"
		"$venv/bin/pip" install -q --disable-pip-version-check -e "$top/tools" ;;
	esac
fi

"$venv/bin/python" -c 'import matplotlib' 2>/dev/null ||
	{ echo "setup: $venv cannot import matplotlib (python3-matplotlib)" >&2; exit 1; }

echo "setup: ok ($("$top/scripts/vm" --list | grep -vc 'not installed') kernels, $(qemu-system-x86_64 --version | head -1 | sed 's/ emulator version//'), $("$venv/bin/vng" --version 2>&1 | head -1))"
