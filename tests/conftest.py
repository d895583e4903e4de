"""What `pytest tests` collects: tests/unit and tests/native.

Not collected, on purpose:
- tests/guest: harness modules that tests/guest/run.py runs inside a guest
  kernel with the module loaded (scripts/check-kernels); their test_*
  functions need root, hgtrace.ko and the guest's devices, and their
  test_merge.py would collide with tests/unit/test_merge.py by name;
- tests/demo: scripts run by `make check` after `make demo` on its output.
"""
collect_ignore = ["guest", "demo"]
