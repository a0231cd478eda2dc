#!/usr/bin/env bash
# budget.sh - `search --budget` bounds the whole run: compiles still running
# at the deadline are given up, not waited for (the test hook
# FATTN_TEST_COMPILE_JITTER makes each compile last up to 8 s more), so the
# run ends within the budget plus 2 s (times FATTN_TEST_SLOWDOWN); the
# summary says where the time went and how many compiles were given up, and
# the study records it (last_run_json). The study's time counts the whole
# run: resumed under the same budget, it runs nothing and says why.
#
#   budget.sh TOOL SOURCE_ROOT
set -euo pipefail
tool=$(realpath "$1")
src=$(realpath "$2")
. "$src/tests/cli/slowdown.sh"
work=$(mktemp -d /tmp/fattn-budget.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; cat out.txt >&2 2>/dev/null; exit 1; }
sql() { "$tool" -q query --db b.db --format csv --sql "$1" | tail -n +2; }
now() { date +%s.%N; }
within() { awk -v a="$1" -v b="$2" -v lim="$3" 'BEGIN { exit !(b - a <= lim) }'; }
land="replay:$src/tests/data/landscape-h100-2-8-512-64.csv"

t0=$(now)
FATTN_TEST_COMPILE_JITTER=7,8000 "$tool" -q search --db b.db --evaluator "$land" --space "$src/tests/data/space-search.json" \
    --strategy random --budget 10s --jobs 2 >out.txt || fail "the search"
t1=$(now)
within "$t0" "$t1" "$(awk -v f="$slowdown" 'BEGIN { print 10 + 2 * f }')" ||
    fail "10 s budget: the run took $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') s"
grep -Eq '^stopped: --budget 10s spent; ran [0-9.]+ s, ' out.txt || fail "the stop line"
grep -Eq '^time: [0-9.]+ s this run: [0-9.]+ s before the first trial \(gates, study\), [0-9.]+ s waiting for compiles, [0-9.]+ s evaluating, [0-9.]+ s in the strategy, [0-9.]+ s storing(; [1-9][0-9]* compiles? given up at the end)?$' out.txt ||
    fail "the time line"
given_up=$(sql "SELECT json_extract(last_run_json, '$.abandoned_compiles') AS n FROM studies WHERE id = 1")
# Compiles still running at the end are given up and counted; none only when the loop stopped early
# (no trial would have ended in time) with nothing compiling.
[ "$given_up" -ge 1 ] || { [ "$given_up" = 0 ] && grep -q 'within it (another trial would not have ended in time)' out.txt; } ||
    fail "compiles given up recorded: '$given_up'"
[ "$(sql "SELECT json_extract(last_run_json, '$.stop') AS s FROM studies WHERE id = 1")" = budget ] || fail "stop recorded"
echo "ok: a 10 s budget with compiles of up to 8 s more: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s, $given_up given up"

before=$(sql "SELECT count(*) AS n FROM trials")
t0=$(now)
"$tool" -q search --resume 1 --db b.db >out.txt || fail "the resume"
t1=$(now)
[ "$(sql "SELECT count(*) AS n FROM trials")" = "$before" ] || fail "the resume of a spent budget added trials"
grep -q "^stopped: --budget 10s spent before this run's first trial" out.txt || fail "the resume's stop line"
within "$t0" "$t1" "$(awk -v f="$slowdown" 'BEGIN { print 2 * f }')" || fail "the resume of a spent budget took long"
echo "ok: a resume of the spent budget runs nothing, in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"
