#!/usr/bin/env bash
# report.sh - `fattn-tune report` loaded in a real headless browser
# (Debian's chromium), for four studies: two searches on the fake engine
# (FATTN_WORKER_HOOK; made-up times) with different strategies, the first
# confirmed; a compile study; a search replaying a landscape measured on
# an H100. The DOM, as chromium parsed it, is checked against the database
# (report-dom.py): one point per trial the study compiled, ran or timed, in
# the plot against order and against wall time, crosses for those rejected;
# the best and (once confirmed) the baseline as reference lines; a strip
# plot per parameter that takes more than one value; the rejections before
# and after compiling apart; no section without data; a compile study's
# page a compile report (no search plots, no confirm). The pages fetch
# nothing; a screenshot renders. (A search and a compile study refused
# together: cases/bad-report-mixed-kinds.case.) Skips (77) where chromium is
# not installed.
#
#   report.sh TOOL
set -euo pipefail
tool=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "SKIP: no chromium (apt-get install chromium)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
work=$(mktemp -d /tmp/fattn-report.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
dom() { # dom HTML OUT: the DOM as chromium built it
    "$browser" --headless --no-sandbox --disable-gpu --dump-dom "file://$work/$1" >"$2" 2>>browser.log ||
        { cat browser.log >&2; fail "chromium --dump-dom $1"; }
}
self_contained() {
    ! grep -Eiq '(src|href)=|<script|@import|url\(' "$1" || fail "$1 refers to something outside itself"
}

# 1. Two searches of a slice of the default space on the fake engine (gate
# rejections, two strategies), the first confirmed.
for strategy in random tpe; do
    FATTN_WORKER_HOOK=fake "$tool" -q search --db fake.db --arch sm_90 --shape 2,8,512,64 --strategy $strategy \
        --trials 6 --seed 3 --filter BLOCK_M=64,NUM_WARPS=4,UNROLL=1,HALF2=1 --samples 12 >/dev/null ||
        fail "search $strategy"
done
FATTN_WORKER_HOOK=fake "$tool" -q confirm --db fake.db --study 1 --n 30 >/dev/null || fail confirm
"$tool" report --db fake.db --study 1 --study 2 -o fake.html || fail "report exit $?"
self_contained fake.html
dom fake.html fake.dom
python3 "$here/report-dom.py" fake.dom fake.db search 1,2 --confirmed

# 2. A compile study of a slice (8 survivors, 4 rejected after compiling),
# compiled by NVRTC (a new database: no cache); then a search replaying the
# H100's landscape over the same slice (its compiles from that cache).
slice=BLOCK_M=64,BLOCK_N=64,NUM_WARPS=4,STAGES=2,UNROLL=1,HALF2=1
"$tool" -q compile --db lab.db --arch sm_90 --shape 2,8,512,64 --filter $slice >/dev/null || fail compile
"$tool" report --db lab.db --study 1 -o compile.html || fail "report of the compile study exit $?"
self_contained compile.html
dom compile.html compile.dom
python3 "$here/report-dom.py" compile.dom lab.db compile 1
"$tool" -q search --db lab.db --evaluator "replay:$here/../data/landscape-h100-2-8-512-64.csv" --filter $slice \
    >/dev/null || fail "replay search"
"$tool" report --db lab.db --study 2 -o replay.html || fail "report of the replay exit $?"
self_contained replay.html
dom replay.html replay.dom
python3 "$here/report-dom.py" replay.dom lab.db search 2

# It renders: a screenshot of the first page, not blank.
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1340,2400 \
    --screenshot="$work/fake.png" "file://$work/fake.html" >/dev/null 2>>browser.log || fail "screenshot"
[ "$(stat -c %s fake.png)" -gt 50000 ] || fail "the screenshot is nearly empty"
[ -z "${FATTN_REPORT_SHOT:-}" ] || cp fake.png "$FATTN_REPORT_SHOT"
echo "ok: reports of two searches, a replay and a compile study in chromium: every trial, references, strips"
