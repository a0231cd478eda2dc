#!/usr/bin/env bash
# search-kill.sh - kill -9 of `fattn-tune search` mid-run loses no committed
# trial: replaying a landscape (no GPU), the search is killed after a few
# trials; the database passes integrity_check, the study reads back, every
# stored trial is whole (a measured one has its samples), and a new search
# runs to the end.
#
#   search-kill.sh TOOL SOURCE_ROOT
set -euo pipefail
tool=$(realpath "$1")
src=$(realpath "$2")
work=$(mktemp -d /tmp/fattn-search-kill.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
sql() { "$tool" -q query --db fattn.db --format csv --sql "$1" | tail -n +2; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# A landscape to replay: the fake worker's times for a slice of the space.
FATTN_WORKER_HOOK=fake "$tool" -q search --arch sm_90 --shape 2,8,512,64 --db land.db --samples 5 \
    --filter BLOCK_M=64,NUM_WARPS=4,CP_ASYNC=1,SWIZZLE=1,STAGES=2 >/dev/null
"$tool" query landscape --db land.db >land.csv
entries=$(($(wc -l <land.csv) - 7))
[ "$entries" -gt 10 ] || fail "landscape too small ($entries)"

args=(search --arch sm_90 --shape 2,8,512,64 --filter BLOCK_M=64,NUM_WARPS=4 --evaluator replay:land.csv
      --jobs 1 --db fattn.db)
"$tool" "${args[@]}" >run.out 2>run.err &
pid=$!
for _ in $(seq 600); do
    n=$(sql "SELECT count(*) FROM trials WHERE run_ms IS NOT NULL" 2>/dev/null || echo 0)
    [ "${n:-0}" -ge 4 ] && break
    sleep 0.2
done
seen=$(sql "SELECT count(*) FROM trials")
kill -9 $pid
wait $pid 2>/dev/null || true
pid=
[ "$(sql "PRAGMA integrity_check")" = ok ] || fail integrity
[ "$(sql "SELECT status FROM studies WHERE id = 1")" = running ] || fail "study status"
after=$(sql "SELECT count(*) FROM trials")
[ "$after" -ge "$seen" ] || fail "$seen trials seen before kill -9, $after after"
[ "$(sql "SELECT count(*) FROM trials WHERE status = 'ok' AND (median_us IS NULL OR (SELECT count(*) FROM samples WHERE trial_id = trials.id) != 3)")" = 0 ] || fail "a measured trial without its samples"
[ "$(sql "SELECT count(*) FROM trials WHERE status IS NULL OR config_key IS NULL")" = 0 ] || fail "a partial trial"
"$tool" query trials --db fattn.db --study 1 >/dev/null || fail "study unreadable"
ran=$(sql "SELECT count(*) FROM trials WHERE run_ms IS NOT NULL")
echo "ok: kill -9 after $ran evaluated trials, $after trials intact"

"$tool" -q "${args[@]}" >rerun.out || fail rerun
[ "$(sql "SELECT status FROM studies WHERE id = 2")" = done ] || fail "rerun study"
echo "ok: a new search runs to the end"
