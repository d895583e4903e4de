"""python3 -m hgtools record|report|export ARGS (what the C `hourglass` execs)."""
import sys

from .cli import main

sys.exit(main())
