"""Test helpers: writers of our binary files (files.py) and their readers,
through the C library's `hgtrace dump --json` (recordings.py)."""
