"""What `pytest tests` collects: tests/unit, tests/native and tests/guest.

- tests/guest: the guest tests, a package so that its test_merge.py and
  test_record_loads.py do not collide with tests/unit's. Outside a guest
  booted by scripts/vm they are skipped, each naming the command that runs
  it (tests/guest/conftest.py); scripts/check-kernels runs them with
  tests/guest/run.py, as before.

Not collected, on purpose:
- tests/demo: scripts run by `make check` after `make demo` on its output.
"""
collect_ignore = ["demo"]
