# hourglass - top-level build, tests, install and demo.
#
#   make              build everything this machine can: the programs, the man pages, and
#                     hgtrace.ko for the running kernel and each guest kernel of $(KERNELS)
#                     whose headers are installed; it ends by saying what it skipped and why
#   make test         the unit tests (C and Python), as any user, in seconds
#   make check        set up, unit and native tests here, the guest tests in each of
#                     $(KERNELS), then make demo and a check of what it left, then
#                     make paper's quick mode on 6.1 and a check of its page (out/paper-quick)
#                     (what CI runs: warnings are errors there, WERROR=1)
#   make check KERNELS=6.1        the guest tests in one kernel only
#   make check-full   the whole guest suite at full size on each of $(KERNELS): 45 to 60 minutes
#                     a kernel (make check runs it quick: smaller workloads, and each test of
#                     user-space behaviour on one kernel, not four; tests/guest/depth.py)
#   make demo         record (natively when this kernel loads modules, else in the 6.1 guest)
#                     and judge the paper's run and a latency test; exports in out/demo/
#   make install      PREFIX=/usr/local DESTDIR=: the programs, the Python package, the man
#                     pages and the module's DKMS source; make uninstall takes them away
#   make bench        benchmarks: hourglass's loop here, the recorder in the 6.1 guest
#   make bench-loop   hourglass's polling loop against a bare rdtsc loop (this machine)
#   make bench-startup  hourglass record --ftrace-only against trace-cmd record, in the 6.1 guest
#   make lab          the truth lab: scenarios x kernels x guests into out/lab/ (docs/lab.md)
#   make mutants      mutation testing of the merger: make check's quick lab recorded once (or
#                     LAB=DIR: runs recorded before), judged again with each deliberate fault
#                     of tests/mutants/, and the merger's host tests; which were caught, by what
#   make lava-jobs    LAVA jobs that run the lab on a farm's devices into out/lava-jobs/,
#                     each checked by LAVA's own job schema (docs/lava.md)
#   make lava-local   one such job through LAVA's own dispatcher here, in its QEMU device:
#                     tick and a scenario that fails on purpose, its test cases printed
#   make setup        install what is missing (apt packages, virtual environment)
#   make fuzz         each fuzz target for FUZZ_SECONDS (default 180): executions, edges, crashes
#                     (tests/fuzz/README.md); make soak: 10 minutes of recording in a guest
#   make debug-kernel the guest kernel with the kernel's checkers on (lockdep, KASAN, UBSAN...),
#                     built once from Debian's linux-source-7.3 and cached (root; about 3 hours here)
#   make check-debug  the guest suite and a soak under it, judged by its checkers (hours; not in
#                     make check): out/check-debug/
#   make WERROR=1     warnings are errors (C and the module), as in make check
#
# Module tests need a kernel that loads modules: this machine's does not, so
# they run in guests booted by scripts/vm (virtme-ng, TCG emulation).

# make help: every target a user runs, a line each (tests/unit/test_make_help.py checks that
# each rule of this Makefile is here, or is a part of another)
define HELP
make                 build the programs, man pages and hgtrace.ko for each kernel with headers
make help            this list
make setup           install what is missing: apt packages, guest kernels, QEMU 10, .venv
make test            the unit tests (C and Python), as any user, in a few minutes
make check           everything CI runs: setup, unit and native tests, the guest suites in each
                     kernel, the truth lab's quick subset, the demo, the paper's quick mode
make check-full      the whole guest suite at full size on each kernel (about an hour a kernel)
make check-debug     the guest suite and a soak under the debug kernel, judged by its checkers
make debug-kernel    the guest kernel with lockdep, KASAN, UBSAN and more (root, once, hours)
make demo            record and judge the paper's run and a latency test: out/demo/
make lab             the truth lab: every scenario, kernel and guest, into out/lab/ (docs/lab.md)
make mutants         deliberate faults in the merger, each judged by the quick lab and the host tests
                     (LAB=DIR: stored lab runs to judge instead of recording them)
make paper           the paper's experiments on today's kernels: out/paper/ (docs/paper.md)
make lava-jobs       LAVA jobs that run the lab on a farm's devices: out/lava-jobs/ (docs/lava.md)
make lava-local      one LAVA job through LAVA's own dispatcher here, in its QEMU device
make bench           benchmarks: hourglass's loop here, the recorder in the 6.1 guest
make bench-loop      hourglass's polling loop against a bare rdtsc loop, on this machine
make bench-icount    the recorder's cost on the instruction-count clock, beside trace-cmd and LTTng
make bench-peers     the same on each of KERNELS (default every guest kernel)
make bench-startup   hourglass record --ftrace-only against trace-cmd record, in the 6.1 guest
make lttng           LTTng's tools and modules for the benchmarks (root, once)
make fuzz            each fuzz target for FUZZ_SECONDS (default 180), with libFuzzer
make fuzz-smoke      each fuzz target for 10 s (make check runs it)
make soak            ten minutes of recording under a mixed load in the 6.1 guest
make modules         hgtrace.ko only, for each kernel with headers
make userspace       the programs only, into build/
make man             the man pages only, into build/man/
make install         the programs, Python package, man pages and DKMS source (PREFIX, DESTDIR)
make uninstall       take them away again
make clean           remove build/, out/ and the module's build
Variables: KERNELS="6.1 7.3" (the guest kernels), WERROR=1 (warnings are errors),
PREFIX=/usr/local, DESTDIR=, FUZZ_SECONDS=180, QUICK=1 and EXP="..." (make paper)
endef
export HELP
.DEFAULT_GOAL := all

# the guest kernels (scripts/kernels: one list for every script) and the Debian 13 root
# that builds the module for those whose build programs need Debian 13 (kmod/Makefile)
KERNELS ?= $(shell . scripts/kernels && echo $$HG_KERNELS)
export HG_KBUILD_ROOT := $(shell . scripts/kernels && echo $$HG_KBUILD_ROOT)
VENV    := .venv
PY      := $(VENV)/bin/python
B       := $(CURDIR)/build
# make test runs as any user, also before make setup made the virtual environment: then
# the tests that need what setup installs (matplotlib, Perfetto's definitions) are skipped,
# each saying why (-rs)
PYTEST  := $(if $(wildcard $(PY)),$(PY),python3) -m pytest
# ... on every CPU it may use, with pytest-xdist (make setup installs it; one process where it
# is missing): 2 minutes on one of this project's 2-CPU machines, 1 on both
XDIST    = $(shell $(firstword $(PYTEST)) -c 'import xdist; print("-n auto")' 2>/dev/null)
# hgtools' types (tools/pyproject.toml's [tool.mypy]); make setup installs the mypy it pins
MYPY    := $(if $(wildcard $(PY)),$(PY),python3) -m mypy --config-file tools/pyproject.toml --cache-dir $(B)/mypy

comma := ,
field = $(subst $(comma), ,$(word $(2),$(subst :, ,$(1))))

# Programs that need a library this machine may lack, one entry each:
#   program:directory whose Makefile builds $(B)/program:pkg-config modules:Debian packages
# make builds the ones pkg-config finds everything for, and names the others at the end.
OPTIONAL := hgtrace-import:userspace/recorder:libtracecmd,libtracefs,libtraceevent:libtracecmd-dev,libtracefs-dev,libtraceevent-dev \
	hgtrace-ftrace:userspace/ftrace:libtracefs,libtraceevent:libtracefs-dev,libtraceevent-dev \
	kernelshark/plugin-hourglass.so:userspace/export/ks-plugin:libkshark,json-c,glu:libkshark-dev,libjson-c-dev,libglu1-mesa-dev

# the pkg-config modules of entry $(1) that are missing (all of them without pkg-config)
pc_missing = $(shell for m in $(call field,$(1),3); do pkg-config --exists $$m 2>/dev/null || echo $$m; done)
$(foreach o,$(OPTIONAL),$(eval MISSING_$(word 1,$(subst :, ,$(o))) := $(call pc_missing,$(o))))
opt_name = $(word 1,$(subst :, ,$(1)))
OPT_SKIP := $(foreach o,$(OPTIONAL),$(if $(MISSING_$(call opt_name,$(o))),$(o)))
# the optional programs that directory $(1) builds here
opt_targets = $(foreach o,$(OPTIONAL),$(if $(and $(filter $(1),$(call field,$(o),2)),$(if \
	$(MISSING_$(call opt_name,$(o))),,y)),$(B)/$(call opt_name,$(o))))
SKIPPED := $(foreach o,$(OPT_SKIP),'skipped $(call opt_name,$(o)): $(if $(shell command -v \
	pkg-config),pkg-config finds no $(MISSING_$(call opt_name,$(o))),no pkg-config) (apt \
	install $(if $(shell command -v pkg-config),,pkg-config )$(call field,$(o),4))')

# The kernels to build hgtrace.ko for: the running one, and each guest kernel of $(KERNELS)
# that scripts/vm finds installed. Looked up only when the goal builds modules.
ifneq ($(filter all modules,$(or $(MAKECMDGOALS),all)),)
RUNNING  := $(shell uname -r)
VM_LIST  := $(shell scripts/vm --list | awk -v want="$(KERNELS)" 'BEGIN { n = split(want, w, " "); \
	for (i = 1; i <= n; i++) k[w[i]] = 1 } ($$1 in k) { print (NF == 2 ? $$2 : "-" $$1) }')
uniq      = $(if $(1),$(firstword $(1)) $(call uniq,$(filter-out $(firstword $(1)),$(1))))
KVERS    := $(call uniq,$(RUNNING) $(filter-out -%,$(VM_LIST)))
# headers here, or in the Debian 13 build root for Debian 13's kernels (make setup makes it;
# building there is a chroot: root only)
ROOT_KVERS := $(foreach k,$(KVERS),$(if $(wildcard /lib/modules/$(k)/build/Makefile),,$(if $(wildcard \
	$(HG_KBUILD_ROOT)/lib/modules/$(k)/build/Makefile),$(k))))
IS_ROOT  := $(filter 0,$(shell id -u))
MOD_KVERS := $(foreach k,$(KVERS),$(if $(wildcard /lib/modules/$(k)/build/Makefile),$(k))) $(if $(IS_ROOT),$(ROOT_KVERS))
SKIPPED  += $(if $(IS_ROOT),,$(foreach k,$(ROOT_KVERS),'skipped hgtrace.ko for $(k): its headers are in \
	$(HG_KBUILD_ROOT), where building is a chroot (as root: make modules)'))
SKIPPED  += $(foreach k,$(filter-out $(MOD_KVERS) $(ROOT_KVERS),$(KVERS)),'skipped hgtrace.ko for $(k)$(if \
	$(filter $(RUNNING),$(k)), (the running kernel)): no headers at /lib/modules/$(k)/build \
	$(if $(findstring +deb13,$(k)),nor in $(HG_KBUILD_ROOT) (make setup builds Debian 13 kernels there),(install \
	them, e.g. apt install linux-headers-$(k)))')
SKIPPED  += $(foreach k,$(patsubst -%,%,$(filter -%,$(VM_LIST))),'skipped hgtrace.ko for guest \
	kernel $(k): not installed (make setup installs it)')
endif

# man pages: page:doc in docs/ (a page whose doc does not exist yet is skipped)
MAN_PAGES := hourglass.1:hourglass.md hgtrace.1:hgtrace.md hgtrace-ftrace.1:hgtrace-ftrace.md \
	hourglass-record.1:merge.md \
	hourglass-export.1:export.md hgmerge.1:hgmerge.md hgtrace.4:hgtrace-abi.md \
	hgtrace-file.5:hgtrace-file.md hourglass-trace.5:hourglass-trace.md report-json.5:report-json.md \
	hourglass-learn.1:profile.md hourglass-results.1:results.md
# more names for a page: name:page that documents it
MAN_LINKS := hourglass-report.1:hourglass-record.1 hgtrace-import.1:hgtrace.1
HG_VERSION := $(shell sed -n 's/^\#define HG_VERSION "\(.*\)"/\1/p' userspace/hourglass/hourglass.h)
man_sec  = $(subst .,,$(suffix $(1)))
man_file = build/man/man$(call man_sec,$(1))/$(1)
# md2man is Python: without python3, no pages (and nothing else needs it to build)
MAN_HAVE := $(if $(shell command -v python3),$(foreach e,$(MAN_PAGES),$(if $(wildcard \
	docs/$(call field,$(e),2)),$(e))))
SKIPPED  += $(if $(shell command -v python3),,'skipped the man pages: no python3 for scripts/md2man \
	(apt install python3)')
MAN_DONE := $(foreach e,$(MAN_HAVE),$(call field,$(e),1))
MAN_FILES := $(foreach p,$(MAN_DONE),$(call man_file,$(p))) \
	$(foreach e,$(MAN_LINKS),$(if $(filter $(call field,$(e),2),$(MAN_DONE)),$(call \
	man_file,$(call field,$(e),1))))
SKIPPED  += $(foreach e,$(MAN_PAGES),$(if $(wildcard docs/$(call field,$(e),2)),,'skipped man page \
	$(call field,$(e),1): no docs/$(call field,$(e),2) yet'))
MD2MAN   := scripts/md2man --source "hourglass $(HG_VERSION)" \
	$(foreach e,$(MAN_HAVE),--link $(call field,$(e),2)=$(call field,$(e),1))

help:
	@echo "$$HELP"

# -k: a part that fails does not stop the parts that do not need it, nor the modules; make
# still fails, after saying what it built and skipped
all:
	@$(MAKE) -k --no-print-directory userspace man; status=$$?; \
	$(build-modules); \
	[ $$status -eq 0 ] || { echo "make: FAILED to build some programs (errors above)" >&2; exit 1; }

# hgtrace.ko for each kernel with headers, then what make built and skipped; a module that
# fails is shown and fails make, after the other kernels were tried
define build-modules
failed=; for k in $(MOD_KVERS); do \
	$(MAKE) -s -C kmod KVER=$$k || failed="$$failed $$k"; \
done; \
built=; for k in $(MOD_KVERS); do case " $$failed " in *" $$k "*) ;; *) built="$$built $$k" ;; esac; done; \
echo "make: built $$(cd $(B) 2>/dev/null && ls $(PROGRAMS) 2>/dev/null | tr '\n' ' ' | sed 's/ $$//'), $(words $(MAN_DONE)) man \
pages in $(B)/man (man -l $(B)/man/man1/hourglass.1), hgtrace.ko for$${built:- no kernel}"; \
for s in $(SKIPPED); do echo "make: $$s"; done; \
[ -z "$$failed" ] || { echo "make: hgtrace.ko FAILED for$$failed (errors above)" >&2; exit 1; }
endef

modules:
	@$(build-modules)

# the programs, one part per directory; the library (and the exporters) first, once they exist
HAVE_LIB    := $(if $(wildcard userspace/lib/Makefile),lib)
HAVE_EXPORT := $(if $(wildcard userspace/export/Makefile),export)
userspace: $(addprefix us-,$(HAVE_LIB) $(HAVE_EXPORT) recorder ftrace merger hourglass progs pyc ksplugin)
us-lib:
	$(MAKE) -s -C userspace/lib
us-export: $(addprefix us-,$(HAVE_LIB))
	$(MAKE) -s -C userspace/export
us-recorder: $(addprefix us-,$(HAVE_LIB))
	$(MAKE) -s -C userspace/recorder OUT=$(B) $(B)/hgtrace $(call opt_targets,userspace/recorder)
# the module-less recorder (hourglass record --ftrace, --ftrace-only), where libtracefs is;
# and its test build, $(B)/test/hgtrace-ftrace, with the knobs the guest tests set (ftrace.h)
us-ftrace: $(addprefix us-,$(HAVE_LIB))
	$(if $(call opt_targets,userspace/ftrace),$(MAKE) -s -C userspace/ftrace OUT=$(B) \
		$(call opt_targets,userspace/ftrace) $(B)/test/hgtrace-ftrace)
# the KernelShark plugin the sessions load (userspace/export/ks-plugin), where KernelShark's headers are
us-ksplugin:
	$(if $(strip $(call opt_targets,userspace/export/ks-plugin)),$(MAKE) -s -C userspace/export/ks-plugin \
		OUT=$(B) $(call opt_targets,userspace/export/ks-plugin))
us-merger: $(addprefix us-,$(HAVE_LIB) $(HAVE_EXPORT))
	$(MAKE) -s -C userspace/merger
us-hourglass: $(addprefix us-,$(HAVE_LIB))
	$(MAKE) -s -C userspace/hourglass
# hgtools compiled here: a guest sees the tree copy-on-write, and compiled again on each run
# `hourglass record` took 0.15 to 0.2 s more to start there (bench/record_startup.py)
us-pyc:
	@python3 -m compileall -q tools/hgtools >/dev/null || true
us-progs:
	$(MAKE) -s -C tests/guest/progs
	$(MAKE) -s -C tools/hgtools/lab/progs

man: $(MAN_FILES)
	@:

define man-page
$(call man_file,$(1)): docs/$(2) scripts/md2man
	@mkdir -p $$(@D)
	@$(MD2MAN) --name $(basename $(1)) --section $(call man_sec,$(1)) $$< -o $$@
endef
$(foreach e,$(MAN_HAVE),$(eval $(call man-page,$(call field,$(e),1),$(call field,$(e),2))))
# another name of a page: a symbolic link beside it (mandoc finds .so requests fragile)
define man-link
$(call man_file,$(1)):
	@mkdir -p $$(@D)
	@ln -sf $(2) $$@
endef
$(foreach e,$(MAN_LINKS),$(eval $(call man-link,$(call field,$(e),1),$(call field,$(e),2))))

# the unit tests only: C (the library's, once it exists) and Python; no root, no guest
test: userspace man
	$(if $(wildcard userspace/lib/Makefile),$(MAKE) -s -C userspace/lib test)
	$(if $(call opt_targets,userspace/ftrace),$(MAKE) -s -C userspace/ftrace OUT=$(B) check)
	@# what the tests' fixtures build, built before the workers start: two of them must never
	@# write one file at once (each fixture's make then finds nothing to do)
	$(if $(HAVE_EXPORT),$(MAKE) -s -C userspace/export OUT=$(B) tests)
	@$(PYTEST) --version >/dev/null 2>&1 || { echo "make test: no pytest for $(firstword \
	$(PYTEST)): make setup (or apt install python3-pytest)" >&2; exit 2; }
	$(PYTEST) -q -rs $(XDIST) tests/unit
	@if $(MYPY) --version >/dev/null 2>&1; then $(MYPY) tools/hgtools; \
	else echo "make test: no mypy for $(firstword $(MYPY)) (make setup installs it): hgtools' types not checked" >&2; fi

setup:
	@scripts/setup.sh

# CI: warnings are errors in everything check builds, here and for the guests
check: export WERROR := 1
# each stage's wall time goes to out/check-times.txt, printed at the end
STAGE = @mkdir -p out && echo "$(1) $$(date +%s)" >> out/check-times.txt
check: setup userspace man
	@mkdir -p out && echo "start $$(date +%s)" > out/check-times.txt
	@$(MAKE) -s test
	$(PY) -m pytest -q tests/native
	@$(MAKE) -s fuzz-smoke
	$(call STAGE,host)
	@scripts/check-kernels $(KERNELS)
	$(call STAGE,guests)
	@$(MAKE) -s demo
	$(PY) tests/demo/check_demo.py out/demo
	$(PY) tests/demo/check_tutorial.py out/demo
	$(PY) tests/demo/check_screens.py out/demo
	$(call STAGE,demo)
	HG_GUEST_LOCK=held scripts/paper --quick -j 2 -o out/paper-quick
	$(PY) scripts/paper-check out/paper-quick
	$(call STAGE,paper)
	@scripts/lava-local
	$(call STAGE,lava)
	@awk 'NR == 1 { t0 = p = $$2; next } { printf "make check: %s %.1f min\n", $$1, ($$2 - p) / 60; p = $$2 } \
		END { printf "make check: passed, the tests in %.1f min (setup and build before them)\n", (p - t0) / 60 }' \
		out/check-times.txt

check-full: export WERROR := 1
check-full: setup userspace man
	@HGT_GUEST_DEPTH=full scripts/check-kernels $(KERNELS)

demo: setup userspace
	@scripts/demo

# coverage-guided fuzzing of every reader (clang, libFuzzer): outside make check, which runs
# each target for 10 s (fuzz-smoke: six targets, about two minutes with their build)
FUZZ_SECONDS ?= 180
fuzz:
	@scripts/setup.sh --fuzz
	@$(MAKE) -s -C tests/fuzz run FUZZ_SECONDS=$(FUZZ_SECONDS)

fuzz-smoke:
	@scripts/setup.sh --fuzz
	@$(MAKE) -s -C tests/fuzz smoke

# a guest kernel with lockdep, KASAN, UBSAN and more (scripts/debug-kernel, docs/testing.md "Checkers"):
# built once and cached (a second run finds it); scripts/vm -k debug boots it
debug-kernel:
	@scripts/debug-kernel

# the guest suite and tests/guest/debug_soak.py in it, each test judged by its checkers' reports
check-debug: setup userspace
	@scripts/check-debug

# ten minutes of recording under a mixed load in the 6.1 guest (under the guest lock), then the
# recording read end to end, its accounting per CPU, the merger's report and the readers' memory
# at 1, 5 and 10 minutes, on the host: about 25 minutes, outside make check; out/soak/soak.txt
soak: setup userspace
	@scripts/soak

# the paper's experiments on today's kernels (docs/paper.md): out/paper/index.html, paper-today.md,
# data/. QUICK=1: every experiment, short, on one kernel (6.1; KERNELS=... chooses); EXP="fig4 dl": those only
.PHONY: paper
paper: setup userspace
	@scripts/paper $(if $(filter 1,$(QUICK)),--quick) $(if $(filter command line,$(origin \
		KERNELS)),-k "$(KERNELS)") $(EXP)

bench: setup userspace bench-loop
	@scripts/vm -k 6.1 -o out/bench -- bench/run.py

# the cost parts on the instruction-count clock: figures the host's load cannot move;
# then hgtrace.ko beside trace-cmd and LTTng (bench/peers.py; scripts/setup-lttng), which
# says why and is left out (exit 3) where LTTng cannot record
bench-icount: setup userspace lttng
	@scripts/vm --icount -k 6.1 -o out/bench-icount -- sh -c 'bench/run.py pipe store; r=$$?; \
		bench/peers.py; s=$$?; [ $$s = 0 ] || [ $$s = 3 ] || r=$$s; exit $$r'

# bench/peers.py on each of KERNELS (default every guest kernel); where LTTng's modules
# did not build it says so and goes on (docs/recorder-figures.md)
PEER_KERNELS = $(if $(filter command line,$(origin KERNELS)),$(KERNELS),6.1 6.1-rt 6.12 6.12-rt 7.3 7.3-rt)
bench-peers: setup userspace lttng
	@r=0; for k in $(PEER_KERNELS); do scripts/vm --icount -k $$k -o out/bench-peers/$$k -- bench/peers.py; \
		s=$$?; [ $$s = 0 ] || [ $$s = 3 ] || r=$$s; done; exit $$r

# LTTng's tools and modules (DKMS) for the benchmarks; root once
lttng:
	@scripts/setup-lttng 2>/dev/null || echo "make: LTTng is not set up (needs root once: sudo scripts/setup-lttng)" >&2

HG_SRC := userspace/hourglass
build/bench/loopcost: bench/loopcost.c $(HG_SRC)/*.c $(HG_SRC)/*.h userspace/lib/cpulist.c
	@mkdir -p build/bench
	$(CC) -O2 -g -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror) -D_GNU_SOURCE -DHG_SPIN_COUNT \
		-pthread -I $(HG_SRC) -I userspace/lib -o $@ bench/loopcost.c $(addprefix $(HG_SRC)/,workloads.c \
		acct.c tsc.c calibrate.c timers.c policy.c options.c timeunits.c) userspace/lib/cpulist.c -lm -lrt

# hourglass record --ftrace-only against trace-cmd record of the same events around the same
# run, wall time, in the 6.1 guest (docs/hgtrace-ftrace.md, FIGURES)
bench-startup: setup userspace
	@flock /tmp/hg-guest.lock scripts/vm -k 6.1 -o out/bench-startup -- bench/record_startup.py

bench-loop: build/bench/loopcost
	@mkdir -p out/bench
	@build/bench/loopcost | tee out/bench/loopcost.txt

# -- install ------------------------------------------------------------------------------
# make install PREFIX=/usr/local DESTDIR=/tmp/stage: what exists in build/ of these programs
# (hourglass itself rebuilt to find its Python package in PYTHONDIR), the Python package
# (plain files: nothing to pip at run time), the man pages, and kmod/ as a DKMS source tree
# in /usr/src/hgtrace-VERSION, where `dkms add -m hgtrace -v VERSION` looks for it.
PROGRAMS  := hourglass hgtrace hgtrace-import hgtrace-ftrace hgmerge
PY_PKGS   := hgtools
PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
PYTHONDIR ?= $(PREFIX)/lib/hourglass/python
MANDIR    ?= $(PREFIX)/share/man
DKMS_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' kmod/dkms.conf)
ABI_VERSION  := $(shell awk '/define HGT_ABI_MAJOR/ { M = $$3 } /define HGT_ABI_MINOR/ { m = $$3 } \
	END { print M "." m }' kmod/uapi/hgtrace.h)
# DKMS finds sources in /usr/src only; a private PREFIX keeps them under itself
DKMSDIR   ?= $(if $(filter /usr /usr/local,$(PREFIX)),/usr/src,$(PREFIX)/src)/hgtrace-$(DKMS_VERSION)
KMOD_SRC  := $(wildcard kmod/*.c kmod/*.h) kmod/Kbuild kmod/Makefile kmod/dkms.conf kmod/README.md
D         := $(DESTDIR)

# a copy of hourglass that runs $(PYTHONDIR)'s package, never the build tree's
build/install/hourglass: userspace FORCE
	@rm -rf build/install
	$(MAKE) -s -C userspace/hourglass OUT=$(B)/install HG_PYTHONDIR=$(PYTHONDIR)

install: userspace man build/install/hourglass
	@[ "$(DKMS_VERSION)" = "$(ABI_VERSION)" ] || { echo "install: kmod/dkms.conf's \
	PACKAGE_VERSION $(DKMS_VERSION) is not the ABI $(ABI_VERSION) of kmod/uapi/hgtrace.h" >&2; exit 1; }
	install -d $(D)$(BINDIR) $(D)$(PYTHONDIR) $(D)$(DKMSDIR)/uapi
	install -m 755 build/install/hourglass $(D)$(BINDIR)/hourglass
	@for p in $(filter-out hourglass,$(PROGRAMS)); do \
		if [ -x build/$$p ]; then echo "install -m 755 build/$$p $(D)$(BINDIR)/$$p"; \
			install -m 755 build/$$p $(D)$(BINDIR)/$$p || exit 1; \
		else echo "install: no build/$$p (make says why it skipped it)"; fi; \
	done
	@for p in $(PY_PKGS); do \
		if [ ! -d tools/$$p ]; then echo "install: no Python package tools/$$p: hourglass \
	record, report and export will not run"; continue; fi; \
		echo "install Python package tools/$$p in $(D)$(PYTHONDIR)"; \
		(cd tools && find $$p -name __pycache__ -prune -o -type f ! -name '*.pyc' -print) | \
		while read -r f; do install -D -m 644 tools/$$f $(D)$(PYTHONDIR)/$$f || exit 1; done; \
	done
	@# the package's programs are beside hourglass; config.py says so for runs without HG_BIN
	@for c in $(addprefix $(D)$(PYTHONDIR)/,$(addsuffix /config.py,$(PY_PKGS))); do \
		[ ! -f $$c ] || sed -i 's|^LIBEXEC_DIR: Optional\[str\] = None$$|LIBEXEC_DIR: Optional[str] = "$(BINDIR)"|' $$c; \
	done
	@python3 -m compileall -q -d $(PYTHONDIR) $(D)$(PYTHONDIR) >/dev/null || true
	@for f in $(MAN_FILES); do \
		to=$(D)$(MANDIR)/$${f#build/man/}; mkdir -p $$(dirname $$to) || exit 1; \
		if [ -L $$f ]; then echo "ln -sf $$(readlink $$f) $$to"; ln -sf $$(readlink $$f) $$to; \
		else echo "install -m 644 $$f $$to"; install -m 644 $$f $$to; fi || exit 1; \
	done
	install -m 644 $(filter-out kmod/uapi/%,$(KMOD_SRC)) $(D)$(DKMSDIR)/
	install -m 644 $(wildcard kmod/uapi/*.h) $(D)$(DKMSDIR)/uapi/
	@echo "install: done; for the module: dkms install -m hgtrace -v $(DKMS_VERSION) (as root)"

uninstall:
	@if [ -z "$(DESTDIR)" ] && command -v dkms >/dev/null && dkms status -m hgtrace -v \
		$(DKMS_VERSION) 2>/dev/null | grep -q .; then echo "uninstall: DKMS still has \
	hgtrace/$(DKMS_VERSION): dkms remove -m hgtrace -v $(DKMS_VERSION) --all first" >&2; exit 1; fi
	rm -f $(addprefix $(D)$(BINDIR)/,$(PROGRAMS))
	rm -rf $(addprefix $(D)$(PYTHONDIR)/,$(PY_PKGS))
	-rmdir $(D)$(PYTHONDIR) $(D)$(PREFIX)/lib/hourglass 2>/dev/null
	rm -f $(foreach p,$(foreach e,$(MAN_PAGES) $(MAN_LINKS),$(call field,$(e),1)),\
		$(D)$(MANDIR)/man$(call man_sec,$(p))/$(p))
	rm -rf $(D)$(DKMSDIR)

FORCE:

lab: setup userspace
	@flock /tmp/hg-guest.lock env HG_GUEST_LOCK=held scripts/lab -j 2 --runs 2 --profiles

# mutation testing of the merger (tests/mutants/, docs/lab.md "Mutants"): make check's quick
# lab recorded once into out/lab-quick (the icount guest on $(KERNELS), icount2 on
# HGT_LAB_SMP_KERNELS, default 6.1 7.3), one guest at a time under the guest lock; then every
# mutant's hgmerge judges those runs again on the host, and the merger's host tests run against
# it: which were caught, and by what. LAB=DIR judges runs recorded before instead (no guest).
MUTANT_SMP_KERNELS = $(or $(HGT_LAB_SMP_KERNELS),6.1 7.3)
mutants: setup userspace
	@if [ -z "$(LAB)" ]; then \
		scripts/lab --quick --no-exports -k "$(KERNELS)" -g icount -o out/lab-quick && \
		scripts/lab --quick --no-exports -k "$(filter $(KERNELS),$(MUTANT_SMP_KERNELS))" -g icount2 \
			-o out/lab-quick || exit 2; fi
	$(PY) tests/mutants/mutants.py $(or $(LAB),out/lab-quick)

lava-jobs: setup
	PYTHONPATH=tools $(PY) -m hgtools.lab.lava_jobs -o out/lava-jobs

lava-local: setup userspace modules
	@$(MAKE) -s -C tools/hgtools/lab/progs
	@flock /tmp/hg-guest.lock scripts/lava-local

clean:
	$(MAKE) -s -C kmod clean
	rm -rf build out

.PHONY: all help modules userspace us-lib us-export us-recorder us-ftrace us-merger us-hourglass us-progs us-pyc us-ksplugin man test setup check check-full check-debug debug-kernel demo bench bench-icount bench-peers lttng bench-startup bench-loop install fuzz fuzz-smoke soak lab mutants lava-jobs lava-local \
	uninstall clean FORCE
