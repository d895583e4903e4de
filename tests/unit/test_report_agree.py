"""The text report and the HTML page say the same of a run, each figure from one place
(report_json): what one output says, the other says in the same words."""
import copy
import io
import json
import os
import re
from html import unescape

import pytest

from hgtools import report_text

DATA = os.path.join(os.path.dirname(__file__), "data")


def load(name):
    with open(os.path.join(DATA, f"report-{name}.json")) as f:
        return json.load(f)


def text_of(rep):
    buf = io.StringIO()
    report_text.render(rep, buf)
    return buf.getvalue()


def page_text(rep):
    pytest.importorskip("matplotlib", reason="the page's charts need matplotlib")
    from hgtools import html
    return unescape(re.sub(r"<[^>]+>", " ", html.page([rep]).text))


@pytest.mark.parametrize("name,migrations,says", [
    # a latency run: its threads sleep, no interval to infer a migration from (issue 52: the text
    # said "moved 1 times", the page "0 inferred from interval CPUs, 0 confirmed")
    ("lat", {"inferred": 0, "confirmed": 0, "kernel_migrations_of_hourglass_threads": 1},
     "migrations: the kernel moved hourglass's threads 1 time; none inferred, the threads recorded no "
     "intervals to infer them from"),
    ("three", {"inferred": 3, "confirmed": 2, "kernel_migrations_of_hourglass_threads": 4},
     "migrations: 3 inferred from the intervals' CPUs, 2 of them confirmed by the kernel; the kernel moved "
     "hourglass's threads 4 times"),
])
def test_migrations_one_sentence_in_text_and_page(name, migrations, says):
    rep = copy.deepcopy(load(name))
    rep["migrations"] = migrations
    if name == "lat":           # as today's merger writes a latency run: no interval, so no gap
        rep["gaps"].update(total=0, voluntary=0, classes={})
    assert says in text_of(rep).splitlines()
    assert says in " ".join(page_text(rep).split())


LOAD = {"label": "stress-ng", "gaps_caused": 12, "caused_ms": 3.5, "caused_median_us": 250.0, "gaps_touched": 14,
        "charged_ms": 3.1}


@pytest.mark.parametrize("name", ["lat", "three"])
def test_loads_are_named_in_text_and_page(name):
    """Issue 52: the stress-ng load beside the latency test was not named in its report (the
    demo ran it outside --load, and neither output printed the merger's loads section). Both
    print it now, with the same head line; a run with gaps also gets the figures."""
    rep = copy.deepcopy(load(name))
    rep["loads"] = [LOAD]
    if name == "lat":
        rep["gaps"].update(total=0, voluntary=0, classes={})
    text, page = text_of(rep), " ".join(page_text(rep).split())
    head = [x for x in text.splitlines() if x.startswith("loads beside hourglass")]
    assert len(head) == 1 and "stress-ng" in head[0] and head[0] in page
    if name == "three":
        row = "  stress-ng                     12      3.500      250.0       14       3.100"
        assert row in text.splitlines() and "stress-ng 12 3.500 250.0 14 3.100" in page
    else:
        assert "no gap for them to cause" in head[0] and "3.500" not in text


def test_disagreements_counted_the_same_in_text_and_page():
    """Issue 52: the page's lead said 'the 7 wrong inferences' above 'Disagreements: 58', most of
    them hidden gaps. Text and page give the count and split it the same way."""
    rep = load("three")
    text = text_of(rep)
    line = next(x for x in text.splitlines() if x.startswith("disagreements: "))
    assert line == ("disagreements: 75 (first 20); 71 wrong inferences on gaps the kernel gives a cause, "
                    "4 hidden gaps inferred as something else")
    page = " ".join(page_text(rep).split())
    assert "Disagreements: 75" in page and "71 wrong inferences on gaps the kernel gives a cause" in page
    assert "Hidden gaps inferred as something else: 4" in page


def test_a_load_of_many_labels_is_one_load():
    """record --load names a load by each of its pids and comms (record.json's labels), and hgmerge
    reports each label apart: the demo's stress-ng came seven times. One line a load: what adds up
    (gaps caused, their time, the time charged) summed; a median or a count of gaps it was in that
    two labels share is not made up ('-')."""
    rep = copy.deepcopy(load("three"))
    one = dict(LOAD, gaps_caused=0, caused_ms=0.0, caused_median_us=0.0, gaps_touched=0, charged_ms=0.0)
    rep["loads"] = [dict(LOAD), dict(one), dict(LOAD, gaps_caused=2, caused_ms=0.5, gaps_touched=3, charged_ms=0.4),
                    dict(one, label="other")]
    text = text_of(rep).splitlines()
    head = next(x for x in text if x.startswith("loads beside hourglass"))
    assert "): stress-ng, other; " in head
    assert "  stress-ng                     14      4.000          -        -       3.500" in text
    assert "  other                          0      0.000          -        0       0.000" in text
