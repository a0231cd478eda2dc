#!/usr/bin/env bash
# report.sh - `fattn-tune report` loaded in a real headless browser
# (Debian's chromium): two studies searched with different strategies on the
# fake engine (FATTN_WORKER_HOOK; made-up times), the first confirmed; the
# page's DOM, as chromium parsed it, holds the four plots with their data
# (a line per study, both sides' histograms, a bar per rejection reason) and
# the top-10 table; the page fetches nothing; a screenshot renders.
# Skips (77) where chromium is not installed.
#
#   report.sh TOOL
set -euo pipefail
tool=$(realpath "$1")
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "SKIP: no chromium (apt-get install chromium)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
work=$(mktemp -d /tmp/fattn-report.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
export FATTN_WORKER_HOOK=fake
sql() { "$tool" -q query --db fattn.db --format csv --sql "$1" | tail -n +2; }

# A slice of the default space with gate rejections, two strategies.
for strategy in random tpe; do
    "$tool" -q search --db fattn.db --arch sm_90 --shape 2,8,512,64 --strategy $strategy --trials 6 --seed 3 \
        --filter BLOCK_M=64,NUM_WARPS=4,UNROLL=1,HALF2=1 --samples 12 >/dev/null || fail "search $strategy"
done
"$tool" -q confirm --db fattn.db --study 1 --n 30 >/dev/null || fail confirm
"$tool" report --db fattn.db --study 1 --study 2 -o report.html || fail "report exit $?"
[ -s report.html ] || fail "no report"
! grep -Eiq '(src|href)=|<script|@import|url\(' report.html || fail "the page refers to something outside itself"

# The DOM as the browser built it.
"$browser" --headless --no-sandbox --disable-gpu --dump-dom "file://$work/report.html" >dom.html 2>browser.log ||
    { cat browser.log >&2; fail "chromium --dump-dom"; }
reasons=$(sql "SELECT count(DISTINCT coalesce(reason, status)) FROM trials WHERE study_id = 1 AND status IN ('rejected', 'error')")
timed=$(sql "SELECT count(*) FROM trials WHERE study_id = 1 AND status = 'ok'")
python3 - dom.html "$reasons" "$timed" <<'PY'
import sys
from html.parser import HTMLParser

class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.svgs = {}          # id -> list of (tag, attrs)
        self.current = None
        self.top_rows = 0
        self.in_top = False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg" and "plot" in a.get("class", ""):
            self.current = a["id"]
            self.svgs[self.current] = []
        elif self.current:
            self.svgs[self.current].append((tag, a))
        if tag == "table" and a.get("id") == "top10":
            self.in_top = True
        elif tag == "tr" and self.in_top:
            self.top_rows += 1
    def handle_endtag(self, tag):
        if tag == "svg":
            self.current = None
        if tag == "table":
            self.in_top = False

d = Dom()
d.feed(open(sys.argv[1]).read())
reasons, timed = int(sys.argv[2]), int(sys.argv[3])
want = ["plot-best-trials", "plot-best-time", "plot-confirm", "plot-rejections"]
assert list(d.svgs) == want, list(d.svgs)
for pid in want[:2]:
    lines = [a for t, a in d.svgs[pid] if t == "polyline" and a.get("class") == "series"]
    assert [a["data-series"] for a in lines] == ["study 1 (random)", "study 2 (tpe)"], lines
    n = [int(a["data-points"]) for a in lines]
    assert all(k >= 1 and len(a["points"].split()) == 2 * k - 1 for k, a in zip(n, lines)), lines
    assert sum(1 for t, a in d.svgs[pid] if t == "circle" and a.get("class") == "pt") == sum(n)
bars = [a["data-series"] for t, a in d.svgs["plot-confirm"] if t == "rect" and a.get("class") == "bar"]
assert "candidate" in bars and "baseline" in bars, bars
assert sum(1 for t, a in d.svgs["plot-confirm"] if t == "line" and a.get("class") == "median") == 2
assert sum(1 for t, a in d.svgs["plot-confirm"] if t == "rect" and a.get("class") == "ci") == 2
rej = [a for t, a in d.svgs["plot-rejections"] if t == "rect" and a.get("class") == "bar"]
assert len(rej) == reasons and reasons > 0, (len(rej), reasons)
assert d.top_rows - 1 == min(10, timed), (d.top_rows, timed)
print("dom: 4 plots, 2 series each, both confirm sides, %d rejection reasons, %d top rows" % (reasons, d.top_rows - 1))
PY

# It renders: a screenshot of the page, not blank.
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1340,2400 \
    --screenshot="$work/report.png" "file://$work/report.html" >/dev/null 2>>browser.log || fail "screenshot"
[ "$(stat -c %s report.png)" -gt 50000 ] || fail "the screenshot is nearly empty"
[ -z "${FATTN_REPORT_SHOT:-}" ] || cp report.png "$FATTN_REPORT_SHOT"
echo "ok: report in chromium: plots, tables, self-contained, renders"
