"""The HTML page from hand-written report JSON v2 fixtures: one valid,
self-contained page; what to look at first; warnings; every chart inline as
SVG; no empty section for a latency-only run; and in headless Chromium, the
page as a browser draws it."""
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

pytest.importorskip("matplotlib", reason="the charts need matplotlib (make setup installs it)")
from hgtools import charts, html  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "data")
VOID = {"meta", "br", "img", "hr", "input", "link", "area", "base", "col", "embed", "source", "track", "wbr"}


def load(name):
    with open(os.path.join(DATA, f"report-{name}.json")) as f:
        return json.load(f)


class Checker(HTMLParser):
    """Every element closed in order (SVG's self-closed ones included), ids unique, nothing external."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.ids, self.errors, self.svgs, self.h2, self.external = [], set(), [], 0, [], []
        self.text = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            if a["id"] in self.ids:
                self.errors.append(f"duplicate id {a['id']}")
            self.ids.add(a["id"])
        for k in ("src", "href", "xlink:href"):
            if a.get(k) and not a[k].startswith(("#", "data:")):
                self.external.append(a[k])
        if tag in ("script", "link", "img", "iframe"):
            self.external.append(tag)
        if tag == "svg":
            self.svgs += 1
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            return
        self.stack.pop()

    def handle_data(self, data):
        if self.stack and self.stack[-1] == "h2":
            self.h2.append(data)
        self.text.append(data)


def parse(page_text):
    c = Checker()
    c.feed(page_text)
    c.close()
    assert not c.errors, c.errors[:5]
    assert c.stack == [], f"unclosed: {c.stack}"
    assert not c.external, f"the page must be self-contained: {c.external[:5]}"
    return c


@pytest.fixture(scope="module")
def pages():
    return {n: html.page([load(n)]) for n in ("three", "lat", "deadlines")}


def test_every_chart_is_inline_svg(pages):
    expect = {"three": {"matrix", "map", "gaps", "switch", "sbf"},
              "lat": {"latency", "cdf", "stages"},
              "deadlines": {"matrix", "gaps", "switch", "latency", "cdf", "stages", "sbf"}}
    for name, p in pages.items():
        c = parse(p.text)
        assert {k.split("-", 1)[1] for k in p.files} == expect[name], name
        assert c.svgs == len(expect[name]) == p.charts
        for chart in expect[name]:
            fig = re.search(rf'<figure id=r0-{chart}>.*?</figure>', p.text, re.S)
            assert fig and "<svg" in fig.group(0), chart
        assert "<?xml" not in p.text and "<!DOCTYPE svg" not in p.text


def test_charts_of_many_threads_say_how_many_they_show():
    """A run of many threads: the map holds the first 16 (hgmerge says how many there
    were), the supply-bound chart draws as many as it has colours; both titles say so."""
    rep = load("three")
    m = rep["charts"]["map"]
    assert "threads_total" not in m and "of" not in charts.execution_map(rep).title
    m["threads_total"] = 40
    assert charts.execution_map(rep).title.endswith(f", the first {len(m['threads'])} of 40 threads")
    one = next(iter(rep["charts"]["sbf"].values()))
    rep["charts"]["sbf"] = {str(k): dict(one, name=f"t{k}") for k in range(12)}
    c = charts.supply_bounds(rep)
    assert c.title == f"Supply-bound functions, the first {charts.SBF_THREADS} of 12 threads"
    assert len(c.fig.axes[0].get_lines()) == 2 * charts.SBF_THREADS


def test_first_paragraph_says_what_to_look_at_first(pages):
    lead = re.search(r"<p class=lead>(.*?)</p>", pages["deadlines"].text, re.S).group(1)
    assert lead.startswith("Start with each run&#x27;s three summary lines")
    assert "3 warnings" in lead and "heat map" in lead and "71 wrong inferences" in lead
    assert "4102.5 us at t=7.731140 s (hg-thread-1), largest stage sched" in lead
    assert "3 deadlines were missed" in lead
    lead = re.search(r"<p class=lead>(.*?)</p>", pages["lat"].text, re.S).group(1)
    assert "heat map" not in lead and "warning" not in lead and "6680.2 us" in lead


def test_summary_lines_and_warnings_are_on_the_page(pages):
    rep = load("deadlines")
    c = parse(pages["deadlines"].text)
    body = " ".join(c.text)
    for line in rep["summary"]:
        assert line in body
    assert body.index(rep["summary"][0]) < body.index("Inferred against actual")
    for w in rep["warnings"]:
        assert f"warning: {w}" in body
    assert pages["deadlines"].text.count("<p class=warn>") == 3
    assert "<p class=warn>" not in pages["three"].text


def test_latency_only_page_has_no_empty_section(pages):
    body = " ".join(parse(pages["lat"].text).text)
    for absent in ("Inferred against actual", "accuracy:", "calibrated", "Execution map", "Context switches", "Disagreements",
                   "Supply-bound", "Causes", "Missed deadlines", "CPU time per thread"):
        assert absent not in body, absent
    assert "Wake-up latency" in body and "6680.2" in body


def test_times_and_names(pages):
    body = " ".join(parse(pages["deadlines"].text).text)
    assert "2.145007" in body and "hg-thread-1 -> hg-thread-0" in body
    assert "thread 1" not in body


def test_runs_side_by_side():
    p = html.page([load("three"), load("lat"), load("three")])
    c = parse(p.text)
    assert c.h2 == ["three", "lat", "three2"], "one h2 per run, labels unique"
    assert c.svgs == 5 + 3 + 5 and len(c.ids) > 100


def test_log_axes_read_as_durations_not_exponents(pages):
    for name, p in pages.items():
        for chart in p.files.values():
            svg = chart.svg("x")
            labels = re.findall(r">([^<>]*\d[^<>]*)</text>", svg)
            assert not [l for l in labels if re.search(r"\de[+-]?\d|\u00d710|\^", l)], (name, chart.name, labels)
    svg = pages["lat"].files["lat-latency"].svg("x")
    for tick in ("1 us", "10 us", "100 us", "1 ms", "10 ms"):
        assert f">{tick}<" in svg, tick
    assert "wake-ups (log scale)" in svg and "max 6.68 ms" in svg


def test_latency_outlier_is_a_bar():
    """The 6.68 ms wake-up: one count in a bin far right of the rest, above the axis floor."""
    fig = charts.latency_hist(load("lat")).fig
    ax = fig.axes[0]
    assert ax.get_yscale() == "log" and ax.get_ylim()[0] < 1
    assert ax.get_xlim()[1] >= 6680.2


def test_chart_files_png_and_svg(tmp_path, pages):
    p = pages["lat"]
    for fmt in ("png", "svg"):
        written = p.write_charts(str(tmp_path / fmt), fmt)
        assert sorted(os.path.basename(w) for w in written) == [f"lat-{n}.{fmt}" for n in ("cdf", "latency", "stages")]
    with open(tmp_path / "png" / "lat-latency.png", "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(head[16:20], "big") > 500
    assert (tmp_path / "svg" / "lat-cdf.svg").read_text().startswith("<svg")


CHROMIUM = shutil.which("chromium-headless-shell") or shutil.which("chromium")


@pytest.mark.skipif(not CHROMIUM, reason="needs chromium-headless-shell (scripts/setup.sh installs it)")
def test_chromium_draws_the_page(tmp_path):
    """As tests/demo/check_screens.py does on the demo: Chromium's own DOM, and a screenshot that is not blank."""
    page = tmp_path / "report.html"
    page.write_text(html.page([load("three"), load("deadlines")]).text)
    base = [CHROMIUM, "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--user-data-dir={tmp_path}/chromium"]
    url = "file://" + str(page)
    dom = subprocess.run(base + ["--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
    assert "hourglass: inferred against actual" in dom and dom.count("<h2>") == 2
    assert dom.count("<svg") == 5 + 7
    shot = tmp_path / "shot.png"
    subprocess.run(base + ["--window-size=1280,1800", f"--screenshot={shot}", url], capture_output=True,
                   timeout=120, check=True)
    from matplotlib.image import imread
    img = imread(str(shot))
    assert img.shape[:2] == (1800, 1280)
    dark = (img[:, :, :3].mean(axis=2) < 0.5).mean()
    assert dark > 0.01, f"the page is drawn ({dark:.1%} dark pixels)"


@pytest.mark.parametrize("cpus,fork_fails", [(2, False), (3, False), (2, True)])
def test_charts_drawn_side_by_side_are_the_same(monkeypatch, cpus, fork_fails):
    """render_svgs draws the charts on forked children, one per CPU: the page is the
    same byte for byte as one drawn chart by chart, also when fork fails (all drawn here),
    and no pipe is left open either way."""
    rep = load("three")
    alone = {c.name: c.svg(f"r0-{c.name}") for c in charts.all_charts(rep)}
    assert len(alone) >= 3
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)))
    if fork_fails:
        def no_fork():
            raise OSError(11, "Resource temporarily unavailable")
        monkeypatch.setattr(os, "fork", no_fork)
    drawn = charts.all_charts(rep)
    fds = set(os.listdir("/proc/self/fd"))
    charts.render_svgs([(c, f"r0-{c.name}") for c in drawn])
    assert {c.name: c.drawn.get(f"r0-{c.name}") for c in drawn} == alone
    assert set(os.listdir("/proc/self/fd")) == fds, "no descriptor left open (a failed fork's pipe included)"


def test_stages_chart_draws_each_stage_median():
    """Issue 52: the chart was empty and said 0.0 us (the stages' names were thrown away before
    the loop that draws them). Each stage is a bar as long as its median, one after the other,
    and the label is their sum."""
    rep = load("lat")
    s = rep["latency"]["threads"]["0"]
    stages = charts.report_stages(rep)
    c = charts.latency_stages(rep)
    ax = c.fig.axes[0]
    bars = [p for p in ax.patches if p.get_width() > 0]
    assert [round(b.get_width(), 6) for b in bars] == [s[st]["median_us"] for st in stages]
    assert [round(b.get_x(), 6) for b in bars] == [round(sum(s[x]["median_us"] for x in stages[:i]), 6)
                                                  for i in range(len(stages))]
    total = sum(s[st]["median_us"] for st in stages)
    assert [t.get_text() for t in ax.texts] == [f"{total:.1f} us"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == stages
    assert [t.get_text() for t in ax.get_yticklabels()] == ["hg-thread-0"]


def _consistent_three():
    """The three-thread fixture with its map's wrong gaps among the disagreements, as hgmerge
    writes them (each wrong gap of the map is one of `listed`): inferred timer, actually an
    interrupt, at the front of the list."""
    rep = load("three")
    wrong = [(th["thread"], g) for th in rep["charts"]["map"]["threads"] for g in th["gaps"] if g[3]]
    assert len(wrong) == 3
    rep["disagreements"]["listed"][:0] = [
        {"t": round(g[0], 6), "cpu": 1, "thread": k, "next_thread": k, "length_us": round((g[1] - g[0]) * 1e6, 3),
         "inferred": "timer", "inferred_why": "it recurs every 4.000 ms", "rule": "tick", "actual": g[2],
         "actual_kind": "irq", "primary": "irq 11 virtio0", "actual_why": "", "components_us": {},
         "events": ["+0.4us irq 11 virtio0"]} for k, g in wrong]
    rep["disagreements"]["count"] += 3
    return rep, wrong


def _patches_at(ax, x, y0, y1):
    """The face colours of the map's drawn boxes that cover time @x from @y0 to @y1."""
    from matplotlib.colors import to_hex
    out = []
    for p in ax.patches + [a for a in ax.artists if hasattr(a, "get_path")]:
        verts = p.get_path().vertices.reshape(-1, 5, 2) if len(p.get_path().vertices) % 5 == 0 else []
        for box in verts:
            xs, ys = box[:4, 0], box[:4, 1]
            if xs.min() <= x <= xs.max() and abs(ys.min() - y0) < 1e-9 and abs(ys.max() - y1) < 1e-9:
                out.append(to_hex(p.get_facecolor()))
    return out


def test_execution_map_shows_inferred_and_actual_of_each_gap():
    """Issue 52: the map coloured each gap by its actual cause only. Now the upper half of a gap is
    the inferred class, the lower half the actual one: at a wrong gap they differ."""
    rep, wrong = _consistent_three()
    c = charts.execution_map(rep)
    ax = c.fig.axes[0]
    threads = rep["charts"]["map"]["threads"]
    for k, g in wrong:
        y = len(threads) - 1 - [th["thread"] for th in threads].index(k)
        mid = (g[0] + g[1]) / 2
        assert _patches_at(ax, mid, y, y + 0.35) == [charts.CLASS_COLORS["timer"]], "upper half: inferred"
        assert _patches_at(ax, mid, y - 0.35, y) == [charts.CLASS_COLORS[g[2]]], "lower half: actual"
    right = next(g for th in threads for g in th["gaps"] if not g[3])
    y = len(threads) - 1 - next(i for i, th in enumerate(threads) if right in th["gaps"])
    mid = (right[0] + right[1]) / 2
    assert _patches_at(ax, mid, y, y + 0.35) == _patches_at(ax, mid, y - 0.35, y) == [charts.CLASS_COLORS[right[2]]]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "wrong inference" in legend and "inferred" in ax.get_legend().get_title().get_text()


def test_each_gap_of_the_map_can_be_opened():
    """Issue 52: no gap could be opened. Every gap of the map has a tooltip (an SVG <title>)
    saying inferred and actual; a wrong one links to its row of the disagreements, which is on
    the page."""
    rep, wrong = _consistent_three()
    page = html.page([rep])
    parse(page.text)
    fig = re.search(r"<figure id=r0-map>(.*?)</figure>", page.text, re.S).group(1)
    titles = re.findall(r"<title>([^<]*)</title>", fig)
    gaps = sum(len(th["gaps"]) for th in rep["charts"]["map"]["threads"])
    spots = [t for t in titles if " us: inferred " in t]
    assert len(spots) == gaps
    assert sum(1 for t in spots if t.endswith("; WRONG")) == 3 == sum(
        1 for t in spots if "inferred timer (it recurs every 4.000 ms); actual interrupt (irq 11 virtio0)" in t)
    links = re.findall(r'<a href="#(r0-dis-\d+)"><rect', fig)
    assert links == ["r0-dis-0", "r0-dis-1", "r0-dis-2"]
    for link in links:
        row = re.search(rf"<tr id={link}>(.*?)</tr>", page.text, re.S)
        assert row and "timer" in row.group(1) and "interrupt" in row.group(1) and "+0.4us irq 11 virtio0" in row.group(1)
    # a wrong gap the list does not hold (the fixture's own) is drawn as such, linked nowhere
    plain = html.page([load("three")]).text
    fig = re.search(r"<figure id=r0-map>(.*?)</figure>", plain, re.S).group(1)
    assert "inferred inferred: not listed" in fig and "<a href" not in fig.split("-spots")[-1]


def test_lead_counts_what_the_disagreements_count():
    """Issue 52: the lead said 'the 7 wrong inferences' above 'Disagreements: 58', most of them
    hidden gaps. Now the lead gives the disagreements' number, the heat map's off-diagonal sum,
    and splits it as the section does: wrong inferences on explained gaps, hidden gaps."""
    rep = load("three")
    inf = rep["inference"]
    conf = inf["confusion"]
    off = sum(v for a, row in zip(conf["actual"], conf["matrix"]) for c, v in zip(conf["inferred"], row) if c != a)
    explained = inf["headline"]["gaps"] - inf["headline"]["correct"]
    hidden = sum(1 for d in rep["disagreements"]["listed"] if d["actual"] == "hidden")
    assert (off, explained, hidden) == (75, 71, 4)
    text = html.page([rep]).text
    lead = re.search(r"<p class=lead>(.*?)</p>", text, re.S).group(1)
    assert f"where the {off} disagreements went" in lead
    assert f"{explained} wrong inferences on gaps the kernel gives a cause" in lead
    assert f"{hidden} hidden gaps" in lead
    assert f"<h3>Disagreements: {off}</h3>" in text
    assert f"<h4>Wrong inferences on gaps the kernel gives a cause: {explained} (the first 30" in text
    assert f"<h4>Hidden gaps inferred as something else: {hidden}</h4>" in text


def test_page_ends_with_the_reports_automatic_analysis(pages):
    """Issue 52: the worst samples' analysis (rtla timerlat -a's) is on the page as in
    report.txt: the same lines (analysis.report_lines), for the wake-up and the longest gap."""
    from hgtools import analysis
    for name in ("lat", "three"):
        lines = analysis.report_lines(load(name))
        body = "\n".join(parse(pages[name].text).text)
        if not lines:
            assert "Automatic analysis" not in body
            continue
        assert "Automatic analysis of the worst samples" in body
        for line in lines:
            assert line in body, line
    assert analysis.report_lines(load("lat")), "the latency fixture has a worst wake-up to analyse"
