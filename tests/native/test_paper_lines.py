"""The paper's command lines, shared by the tests that parse and run them."""
import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    "cli", os.path.join(os.path.dirname(__file__), "..", "unit", "test_hourglass_cli.py"))
PAPER = {}
with open(_spec.origin) as f:
    src = f.read()
exec(src[src.index("PAPER = {"):src.index("}\n", src.index("PAPER = {")) + 2], {}, globals())
