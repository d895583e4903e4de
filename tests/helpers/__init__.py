"""Test helpers: writers of our binary files (files.py); their readers, through the C
library's `hgtrace dump --json`, are hgtools.recordings (tools/hgtools/recordings.py)."""
