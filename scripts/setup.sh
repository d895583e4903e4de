#!/usr/bin/env bash
# setup.sh - install everything hourglass needs to build, test and demo.
#
# Idempotent: each step checks first and does nothing when already done, so a
# second run takes a few seconds. Needs root for apt-get (CI and the project's
# machines run as root); prints what it would install otherwise.
#
# What it installs and why:
#   - the four guest kernels with matching headers (6.1, 6.1 PREEMPT_RT, 6.12,
#     6.12 PREEMPT_RT): the module is built for and tested inside each;
#   - qemu-system-x86: virtme-ng boots those kernels under TCG emulation;
#     busybox-static: virtme-ng builds the guest's initramfs from it;
#   - trace-cmd, rt-tests (hackbench, cyclictest), stress-ng: loads and the
#     independent ftrace ground truth the module is checked against;
#   - kernelshark: the viewer of exported traces; its library (libkshark)
#     lets the tests check that exported files load as the GUI loads them;
#   - xvfb, imagemagick, chromium-headless-shell: a test opens the demo's
#     trace in a real KernelShark window and the HTML report in Chromium,
#     without a screen, and checks the screenshots;
#   - librsvg2-bin: rsvg-convert, for `hourglass export --png`;
#   - libtracecmd-dev, libtracefs-dev (its .pc requires libtracefs),
#     libtraceevent-dev, pkg-config: hgtrace-import reads
#     trace-cmd's trace.dat through the libraries trace-cmd itself uses;
#   - virtme-ng in a virtual environment at $HG_VENV (default .venv).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
venv=${HG_VENV:-$top/.venv}

pkgs=(
	linux-image-amd64 linux-headers-amd64
	linux-image-rt-amd64 linux-headers-rt-amd64
	linux-image-6.12-amd64 linux-headers-6.12-amd64
	linux-image-6.12-rt-amd64 linux-headers-6.12-rt-amd64
	qemu-system-x86 busybox-static trace-cmd rt-tests stress-ng kmod kernelshark
	xvfb imagemagick chromium-headless-shell librsvg2-bin
	gcc make python3-venv libtracecmd-dev libtracefs-dev libtraceevent-dev pkg-config
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

if [ ! -x "$venv/bin/vng" ] || [ ! -x "$venv/bin/pytest" ]; then
	echo "setup: creating $venv with virtme-ng"
	/usr/bin/python3 -m venv "$venv"
	"$venv/bin/pip" install -q --disable-pip-version-check virtme-ng pytest
fi

echo "setup: ok ($(ls /boot/vmlinuz-* | wc -l) kernels, $("$venv/bin/vng" --version 2>&1 | head -1))"
