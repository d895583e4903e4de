"""hgtools.jsonfile: the one reader of a run's JSON files (record.json, hourglass.json,
lab-run.json, paper-run.json...): a missing file, an unreadable one and one that is not JSON,
each said the same way wherever it is read."""
import json

import pytest

from hgtools import jsonfile
from hgtools.errors import EXIT_BAD_INPUT, HgError


def test_a_file_is_its_value(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps({"x": [1, 2]}))
    (tmp_path / "b.json").write_text("[1]")
    assert jsonfile.load(str(tmp_path / "a.json")) == {"x": [1, 2]}
    assert jsonfile.load_object(str(tmp_path / "a.json")) == {"x": [1, 2]}
    assert jsonfile.load(str(tmp_path / "b.json")) == [1]
    assert jsonfile.load_object(str(tmp_path / "b.json")) is None, "a JSON value that is no object"


def test_missing_is_none_only_when_allowed(tmp_path):
    p = str(tmp_path / "none.json")
    assert jsonfile.load(p, missing_ok=True) is None and jsonfile.load_object(p) is None
    with pytest.raises(HgError) as e:
        jsonfile.load(p)
    assert e.value.status == EXIT_BAD_INPUT and str(e.value) == f"cannot read {p}: no such file or directory"


def test_not_json_is_an_error_naming_the_file(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("{\"x\": ")
    for f in (jsonfile.load, jsonfile.load_object):
        with pytest.raises(HgError) as e:
            f(str(p))
        assert e.value.status == EXIT_BAD_INPUT and str(e.value).startswith(f"{p}: not JSON (")

