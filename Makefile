# hourglass - top-level build, tests and demo.
#
#   make              build the recorder and the module for every installed kernel
#   make check        set up, unit and native tests here, the guest tests in each of
#                     $(KERNELS), then make demo and a check of what it left
#   make check KERNELS=6.1        the guest tests in one kernel only
#   make demo         record (natively when this kernel loads modules, else in the 6.1 guest)
#                     and judge the paper's run and a latency test; exports in out/demo/
#   make bench        benchmarks: hourglass's loop here, the recorder in the 6.1 guest
#   make bench-loop   hourglass's polling loop against a bare rdtsc loop (this machine)
#   make lab          the truth lab: scenarios x kernels x guests into out/lab/ (docs/lab.md)
#   make setup        install what is missing (apt packages, virtual environment)
#
# Module tests need a kernel that loads modules: this machine's does not, so
# they run in guests booted by scripts/vm (virtme-ng, TCG emulation).

KERNELS ?= 6.1 6.1-rt 6.12 6.12-rt
VENV    := .venv
PY      := $(VENV)/bin/python

all: userspace
	@for k in $(KERNELS); do rel=$$(scripts/vm --list | awk -v k=$$k '$$1==k {print $$2}'); \
		[ -n "$$rel" ] && $(MAKE) -s -C kmod KVER=$$rel || true; done

userspace:
	$(MAKE) -s -C userspace/lib
	$(MAKE) -s -C userspace/recorder
	$(MAKE) -s -C userspace/hourglass
	$(MAKE) -s -C tests/guest/progs
	$(MAKE) -s -C userspace/merger

setup:
	@scripts/setup.sh

check: setup userspace
	$(PY) -m pytest -q tests/unit
	$(PY) -m pytest -q tests/native
	@scripts/check-kernels $(KERNELS)
	@$(MAKE) -s demo
	$(PY) tests/demo/check_demo.py out/demo
	$(PY) tests/demo/check_screens.py out/demo

demo: setup userspace
	@scripts/demo

bench: setup userspace bench-loop
	@scripts/vm -k 6.1 -o out/bench -- bench/run.py

# the cost parts on the instruction-count clock: figures the host's load cannot move
bench-icount: setup userspace
	@scripts/vm --icount -k 6.1 -o out/bench-icount -- bench/run.py pipe store

HG_SRC := userspace/hourglass
build/bench/loopcost: bench/loopcost.c $(HG_SRC)/*.c $(HG_SRC)/*.h userspace/lib/cpulist.c
	@mkdir -p build/bench
	$(CC) -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -DHG_SPIN_COUNT -pthread -I $(HG_SRC) -I userspace/lib -o $@ \
		bench/loopcost.c $(addprefix $(HG_SRC)/,workloads.c acct.c tsc.c calibrate.c timers.c policy.c \
		options.c timeunits.c) userspace/lib/cpulist.c -lm -lrt

bench-loop: build/bench/loopcost
	@mkdir -p out/bench
	@build/bench/loopcost | tee out/bench/loopcost.txt

lab: setup userspace
	@scripts/lab

clean:
	$(MAKE) -s -C kmod clean
	rm -rf build out

.PHONY: all userspace setup check demo bench bench-icount bench-loop lab clean
