"""Guest tests: a package for pytest, so that its test_merge.py and test_record_loads.py
are guest.test_merge and guest.test_record_loads, not the unit tests' modules of those
names. run.py imports them by their own names, from this directory, as before."""
