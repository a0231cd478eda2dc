#!/usr/bin/env python3
"""report-dom.py - the DOM of `fattn-tune report` (as chromium dumped it)
checked against the database it was written from (tests/cli/report.sh).

    report-dom.py DOM DB KIND STUDIES [--confirmed]

KIND is search or compile; STUDIES the ids in the report, the first the main
one. What is counted comes from the database with SQL of its own, never from
the page: a configuration rejected before compiling (by the static gates or
the simulator's findings) is a trial 'rejected' without a compile-cache entry
(cache_key); every other trial the study tried (compiled, ran, timed, or
failed, an error) is a point.
"""
import sqlite3
import sys
from html.parser import HTMLParser

DATA = ("pt", "bar", "range", "series")  # classes of data elements
TRIED = "(cache_key IS NOT NULL OR status <> 'rejected')"  # as SQL, over trials


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.sections = {}  # id -> [(tag, attrs)]
        self.order = []
        self.svgs = {}
        self.svg_title = {}
        self.tables = {}  # id -> rows
        self.texts = []  # (svg id, class, text)
        self.ticks = {}  # svg id -> centred texts (the x axis's tick labels among them)
        self.section = self.svg = self.table = None
        self.text_class = None
        self.text_anchor = None
        self.last_bar = None
        self.bar_value = {}  # (svg id, series) -> the text after the bar
        self.in_title = False
        self.body = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class", "") or ""
        if tag == "section":
            self.section = a["id"]
            self.order.append(self.section)
            self.sections[self.section] = []
        elif self.section:
            self.sections[self.section].append((tag, a))
        if tag == "svg" and "plot" in cls:
            self.svg = a["id"]
            self.svgs[self.svg] = []
        elif self.svg:
            self.svgs[self.svg].append((tag, a))
        if tag == "table":
            self.table = a.get("id") or "table-%d" % len(self.tables)
            self.tables[self.table] = 0
        elif tag == "tr" and self.table:
            self.tables[self.table] += 1
        if tag == "text":
            self.text_class = cls
            self.text_anchor = a.get("text-anchor")
        if tag == "rect" and "bar" in cls.split() and self.svg:
            self.last_bar = (self.svg, a.get("data-series"))
        if tag == "title" and self.svg:
            self.in_title = True

    def handle_endtag(self, tag):
        if tag == "section":
            self.section = None
        elif tag == "svg":
            self.svg = None
        elif tag == "table":
            self.table = None
        elif tag == "text":
            self.text_class = None
        elif tag == "title":
            self.in_title = False

    def handle_data(self, data):
        self.body.append(data)
        if self.svg and self.in_title and self.svg not in self.svg_title:
            self.svg_title[self.svg] = data
        elif self.svg and self.text_class is not None:
            self.texts.append((self.svg, self.text_class, data))
            if self.last_bar and self.last_bar[0] == self.svg:
                self.bar_value[self.last_bar] = data
                self.last_bar = None
            if self.text_anchor == "middle":
                self.ticks.setdefault(self.svg, []).append(data)


def classes(a):
    return (a.get("class") or "").split()


def elements(d, svg, cls, series=None):
    return [a for t, a in d.svgs.get(svg, []) if cls in classes(a) and (series is None or a.get("data-series") == series)]


def check(cond, *what):
    if not cond:
        print("FAIL:", *what, file=sys.stderr)
        sys.exit(1)


def main():
    dom, db, kind, studies = sys.argv[1], sys.argv[2], sys.argv[3], [int(x) for x in sys.argv[4].split(",")]
    confirmed = "--confirmed" in sys.argv
    d = Dom()
    d.feed(open(dom, encoding="utf-8").read())
    con = sqlite3.connect(db)
    q = lambda sql, *args: con.execute(sql, args).fetchall()
    main_study = studies[0]

    def tried(study):  # (id, rejected or failed) in order
        return q("SELECT id, status IN ('rejected', 'error') FROM trials WHERE study_id = ? AND " + TRIED +
                 " ORDER BY seq", study)

    def name(study):
        strategy = q("SELECT strategy FROM studies WHERE id = ?", study)[0][0]
        return "study %d (%s)" % (study, "compile" if kind == "compile" else strategy)

    # No section without data: each holds a data element or a table row
    # beyond its head, and no chart says it is empty.
    for sid, els in d.sections.items():
        rows = [t for t, a in els if t == "tr"]
        data = [a for t, a in els if set(classes(a)) & set(DATA)]
        check(data or len(rows) >= 2, "section", sid, "has no data")

    # Every trial the study compiled, ran or timed is one point, in the plots
    # of trials; the rejected ones crosses.
    plots = ["plot-compile"] if kind == "compile" else ["plot-trials", "plot-time"]
    for pid in plots:
        for study in studies:
            want = tried(study)
            pts = elements(d, pid, "pt", name(study))
            check([int(a["data-trial"]) for a in pts] == [t for t, _ in want], pid, name(study), "points",
                  len(pts), "trials", len(want))
            marked = [int(a["data-trial"]) for a in pts if "rejected" in classes(a)]
            check(marked == [t for t, r in want if r], pid, "crosses", marked)
        check(len(elements(d, pid, "pt")) == sum(len(tried(s)) for s in studies), pid, "points of no study")

    # Reference lines: the best (and the baseline once confirmed) in every
    # plot of times; a compile study's median compile time and the register
    # ceiling.
    def refs(svg):
        return [a.get("data-ref") for a in elements(d, svg, "ref")]

    def ref_label(svg, ref):
        return [t for s, c, t in d.texts if s == svg and c == "ref-label" and t.startswith(ref + " ")]

    params = dict(q("SELECT j.key, count(*) FROM trials t, json_each(t.params_json) j WHERE t.study_id = ? AND "
                    "(t.cache_key IS NOT NULL OR t.status <> 'rejected') GROUP BY j.key "
                    "HAVING count(DISTINCT j.value) > 1", main_study))
    strips = [s for s in d.svgs if s.startswith("strip-")]
    if kind == "search":
        best = q("SELECT min(median_us) FROM trials WHERE study_id = ? AND status = 'ok'", main_study)[0][0]
        check(best is not None, "no timed trial to check against")
        for svg in ["plot-trials", "plot-time", "plot-spread"] + strips:
            r = refs(svg)
            check("best" in r, svg, "has no best line", r)
            check(ref_label(svg, "best") == ["best %.4g" % best], svg, "best label", ref_label(svg, "best"))
            base = [x for x in r if x.startswith("baseline")]
            check(len(base) == (1 if confirmed else 0), svg, "baseline lines", r)
        # The wall-time axis runs to the end of the longest study.
        end = max(q("SELECT (julianday(s.finished_at) - min(julianday(t.created_at))) * 86400 FROM studies s "
                    "JOIN trials t ON t.study_id = s.id WHERE s.id = ?", st)[0][0] or 0 for st in studies)
        xs = [float(t) for t in d.ticks.get("plot-time", []) if t.replace(".", "", 1).isdigit()]
        check(xs and max(xs) >= end, "the wall-time axis ends at", max(xs or [0]), "before the end", end)
        timed = q("SELECT count(*) FROM trials WHERE study_id = ? AND status = 'ok'", main_study)[0][0]
        check(len(elements(d, "plot-spread", "range")) == min(20, timed), "spread rows")
        check(d.tables.get("top10", 0) - 1 == min(10, timed), "top10 rows", d.tables.get("top10"))
        check(("confirmation" in d.sections) == confirmed, "confirmation section", d.order)
        if confirmed:
            bars = {a["data-series"] for a in elements(d, "plot-confirm", "bar")}
            check(bars == {"candidate", "baseline"}, "confirm bars", bars)
            check(len(elements(d, "plot-confirm", "median")) == 2, "confirm medians")
        else:
            check("fattn-tune confirm --study %d" % main_study in "".join(d.body), "no hint to confirm")
        want_sections = ["study", "trials", "fastest", "params"] + (["confirmation"] if confirmed else []) + ["rejections"]
    else:
        for svg in ["plot-compile"]:
            check(refs(svg) == ["median"], svg, "refs", refs(svg))
        for svg in strips:
            check(refs(svg) == ["most per thread"], svg, "refs", refs(svg))
        body = "".join(d.body).lower()
        check("fattn-tune confirm" not in body and "not confirmed" not in body, "a compile report suggests confirm")
        check(not {"plot-trials", "plot-time", "plot-spread"} & set(d.svgs), "a compile report has search plots")
        ready = q("SELECT count(*) FROM trials WHERE study_id = ? AND status = 'compiled'", main_study)[0][0]
        if ready:
            check(d.tables.get("ready", 0) - 1 == min(20, ready), "ready rows", d.tables.get("ready"))
        want_sections = ["study", "compile-times", "resources", "params", "rejections"]
    check(d.order == want_sections, "sections", d.order, "want", want_sections)

    # A strip plot per parameter with more than one value, each with a point
    # per trial tried.
    titles = sorted(d.svg_title[s] for s in strips)
    check(titles == sorted(params), "strip plots", titles, "parameters", params)
    for s in strips:
        check(len(elements(d, s, "pt")) == params[d.svg_title[s]], s, "points")

    # Rejections before and after compiling apart, each bar its count.
    for svg, cond in (("plot-rejected-before", "NOT " + TRIED), ("plot-rejected-after", TRIED)):
        want = dict(q("SELECT coalesce(reason, status), count(*) FROM trials WHERE study_id = ? AND status IN "
                      "('rejected', 'error') AND " + cond + " GROUP BY 1", main_study))
        got = {a["data-series"] for a in elements(d, svg, "bar")}
        check(got == set(want), svg, got, "want", want)
        for reason, n in want.items():
            check(d.bar_value.get((svg, reason)) == str(n), svg, reason, "count", d.bar_value.get((svg, reason)),
                  "want", n)
    print("dom: %s report of %s: sections %s, %d strip plots, points and references as stored"
          % (kind, ",".join(map(str, studies)), ",".join(d.order), len(strips)))


main()
