#!/usr/bin/env bash
# search-kill.sh - kill -9 of `fattn-tune search` mid-run loses no committed
# trial: replaying a landscape (no GPU), the search is killed after a few
# trials; the database passes integrity_check, the study reads back, every
# stored trial is whole (a measured one has its samples); `search --resume`
# then finishes the study (the killed search's claim on it is stale, so it
# does not stand in the way) with every configuration tried exactly once, the
# trials from before untouched, the same set a fresh search tries.
#
#   search-kill.sh TOOL SOURCE_ROOT
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/slowdown.sh"
tool=$(realpath "$1")
work=$(mktemp -d /tmp/fattn-search-kill.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
dbsql() { "$tool" -q query --db "$1" --format csv --sql "$2" | tail -n +2; }
sql() { dbsql fattn.db "$1"; }
isql() { dbsql int.db "$1"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# Waits (up to 2 minutes times FATTN_TEST_SLOWDOWN) until 4 trials of
# database $1 have run on the evaluator; fails if they never do.
wait_runs() {
    local n
    for _ in $(seq "$(scaled 600)"); do
        n=$(dbsql "$1" "SELECT count(*) FROM trials WHERE run_ms IS NOT NULL" 2>/dev/null || echo 0)
        [ "${n:-0}" -ge 4 ] && return
        sleep 0.2
    done
    fail "$1: 4 trials not run in $(scaled 120) s"
}

# A landscape to replay: the fake worker's times for a slice of the space.
FATTN_WORKER_HOOK=fake "$tool" -q search --strategy exhaustive --arch sm_90 --shape 2,8,512,64 --db land.db --samples 5 \
    --filter BLOCK_M=64,NUM_WARPS=4,UNROLL=1,HALF2=1,CP_ASYNC=1 >/dev/null
"$tool" query landscape --db land.db >land.csv
entries=$(($(wc -l <land.csv) - 7))
[ "$entries" -gt 10 ] || fail "landscape too small ($entries)"

# shellcheck disable=SC2054 # commas inside values
args=(search --arch sm_90 --shape 2,8,512,64 --filter BLOCK_M=64,NUM_WARPS=4,UNROLL=1,HALF2=1 --evaluator replay:land.csv
      --jobs 1 --db fattn.db)
"$tool" "${args[@]}" >run.out 2>run.err &
pid=$!
wait_runs fattn.db
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

# --resume: the study goes on where it stopped; nothing lost, nothing twice.
sql "SELECT id, seq, config_key, status, coalesce(median_us, '') FROM trials WHERE study_id = 1 ORDER BY id" >before.csv
"$tool" search --resume 1 --db fattn.db >resume.out 2>resume.err || { cat resume.out resume.err >&2; fail resume; }
grep -q "resumed: " resume.out || fail "the summary does not say it resumed"
[ "$(sql "SELECT status || ' ' || runs FROM studies WHERE id = 1")" = "done 2" ] || fail "resumed study status"
[ "$(sql "SELECT count(*) - count(DISTINCT config_key) FROM trials WHERE study_id = 1")" = 0 ] || fail "a trial repeated"
[ "$(sql "SELECT count(*) - count(DISTINCT seq) FROM trials WHERE study_id = 1")" = 0 ] || fail "a seq repeated"
sql "SELECT id, seq, config_key, status, coalesce(median_us, '') FROM trials WHERE study_id = 1 ORDER BY id LIMIT $(wc -l <before.csv)" >after.csv
cmp -s before.csv after.csv || fail "trials committed before kill -9 changed after --resume"

# A fresh search of the same arguments tries exactly the same configurations.
"$tool" -q "${args[@]}" >rerun.out || fail rerun
[ "$(sql "SELECT status FROM studies WHERE id = 2")" = "done" ] || fail "rerun study"
a=$(sql "SELECT group_concat(config_key) FROM (SELECT config_key FROM trials WHERE study_id = 1 ORDER BY 1)")
b=$(sql "SELECT group_concat(config_key) FROM (SELECT config_key FROM trials WHERE study_id = 2 ORDER BY 1)")
[ "$a" = "$b" ] || fail "the resumed study and a fresh one differ in the configurations tried"
# While it runs, a second `search --resume` of its study is refused.
# Ctrl-C (SIGINT to the whole process group, worker included): the trial in
# flight finishes, the worker does not die of it (no runtime_fault), and the
# message says how to go on.
# A fresh database (nothing cached) keeps the search busy compiling.
setsid "$tool" "${args[@]}" --db int.db >int.out 2>int.err &
pid=$!
wait_runs int.db
[ "$(isql "SELECT status FROM studies WHERE id = 1")" = running ] || fail "the search ended before Ctrl-C"
# A second search may not go on with the study the first is running: one
# line naming the process, exit 1, nothing of the study changed.
isql "SELECT runs, status, (SELECT count(*) FROM trials) FROM studies WHERE id = 1" >held-before.csv
rc=0
"$tool" search --resume 1 --db int.db >held.out 2>held.err || rc=$?
[ "$rc" = 1 ] || { cat held.out held.err >&2; fail "a concurrent --resume: exit $rc, expected 1"; }
[ "$(wc -l <held.err)" = 1 ] && grep -q "^fattn-tune: --resume 1: study 1 is being searched by process $pid on " held.err ||
    { cat held.err >&2; fail "a concurrent --resume: not the one line naming the search"; }
isql "SELECT runs, status FROM studies WHERE id = 1" >held-after.csv
[ "$(cut -d, -f1,2 held-before.csv)" = "$(cat held-after.csv)" ] || fail "a refused --resume changed the study"
echo "ok: a second search --resume of a running study is refused: $(cat held.err)"
kill -INT -- -"$pid"
rc=0
wait "$pid" || rc=$?
pid=
[ "$rc" = 1 ] || fail "Ctrl-C: exit $rc, expected 1"
grep -q "fattn-tune search --resume 1 --db int.db" int.err || { cat int.err >&2; fail "no resume command after Ctrl-C"; }
[ "$(isql "SELECT status FROM studies WHERE id = 1")" = interrupted ] || fail "Ctrl-C study status"
[ "$(isql "SELECT count(*) FROM trials WHERE reason = 'runtime_fault'")" = 0 ] ||
    fail "Ctrl-C killed the worker: a runtime_fault was recorded"
echo "ok: Ctrl-C stops cleanly and prints the resume command"

echo "ok: --resume finished the study: $(sql "SELECT count(*) FROM trials WHERE study_id = 1") trials, each once, as a fresh search"
