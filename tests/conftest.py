"""What `pytest tests` collects: everything, each test run where it can run.

- tests/unit: the unit tests, all that `make test` runs of these;
- tests/native: the real binaries on this machine;
- tests/guest: the guest tests, a package so that its test_merge.py and
  test_record_loads.py do not collide with tests/unit's. Outside a guest
  booted by scripts/vm they are skipped, each naming the command that runs
  it (tests/guest/conftest.py); scripts/check-kernels runs them with
  tests/guest/run.py, as before;
- tests/demo: make check's checks of what `make demo` left, skipped where
  there is no demo output (tests/demo/test_demo.py).
"""
