#!/usr/bin/env bash
# interrupt.sh - `fattn-tune compile` stopped by Ctrl-C (SIGINT) finishes the
# compiles in flight, marks the study interrupted and exits 1; killed with
# kill -9, it loses nothing committed: the database passes integrity_check,
# every stored trial is whole; the same command takes up the study it left
# (interrupted, or running with its process gone) and compiles only the rest;
# a read-only query killed leaves no -wal or -shm.
#
#   interrupt.sh TOOL
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/slowdown.sh"
tool=$(realpath "$1")
work=$(mktemp -d /tmp/fattn-interrupt.XXXXXX)
trap 'kill -9 $pid 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
pid=

sql() { "$tool" -q query --db fattn.db --format csv --sql "$1" | tail -n +2; }
args=(compile --arch sm_90 --shape 2,8,512,64 --family mma --sample 16 --seed 3 --jobs 1 --db fattn.db)

# Waits (up to 2 minutes times FATTN_TEST_SLOWDOWN) until the running study
# has at least $1 compiled trials.
wait_compiled() {
    for _ in $(seq "$(scaled 600)"); do
        [ -f fattn.db ] && n=$(sql "SELECT count(*) FROM trials t JOIN studies s ON s.id = t.study_id WHERE s.status = 'running' AND t.cache_key IS NOT NULL" 2>/dev/null) && [ "${n:-0}" -ge "$1" ] && return 0
        sleep 0.2
    done
    echo "FAIL: no progress" >&2
    exit 1
}

# 1. Ctrl-C.
"$tool" "${args[@]}" >int.out 2>int.err &
pid=$!
wait_compiled 2
kill -INT $pid
code=0
wait $pid || code=$?
[ "$code" = 1 ] || { echo "FAIL: exit $code after SIGINT, expected 1" >&2; cat int.err >&2; exit 1; }
grep -q "^fattn-tune: interrupted after [0-9]* of 16 compiles; study 1 keeps every trial recorded" int.err
[ "$(sql "SELECT status FROM studies WHERE id = 1")" = interrupted ]
done1=$(sql "SELECT count(*) FROM trials WHERE study_id = 1 AND cache_key IS NOT NULL")
[ "$done1" -ge 2 ] && [ "$done1" -lt 16 ]
echo "ok: SIGINT after $done1 compiles, study interrupted"

# 2. The same command takes study 1 up; kill -9 then.
"$tool" "${args[@]}" >kill.out 2>kill.err &
pid=$!
wait_compiled $((done1 + 2))
seen=$(sql "SELECT count(*) FROM trials WHERE study_id = 1")
kill -9 $pid
wait $pid 2>/dev/null || true
pid=
grep -q "^fattn-tune: taking up study 1, stopped before with [0-9]* trials recorded" kill.err ||
    { echo "FAIL: the rerun did not take up study 1" >&2; cat kill.err >&2; exit 1; }
[ "$(sql "PRAGMA integrity_check")" = ok ]
[ "$(sql "SELECT count(*) FROM studies")" = 1 ]
[ "$(sql "SELECT status FROM studies WHERE id = 1")" = running ]
after=$(sql "SELECT count(*) FROM trials WHERE study_id = 1")
[ "$after" -ge "$seen" ] || { echo "FAIL: $seen trials seen before kill -9, $after after" >&2; exit 1; }
whole=$(sql "SELECT count(*) FROM trials WHERE study_id = 1 AND cache_key IS NOT NULL AND (registers IS NULL OR smem_dynamic IS NULL OR status IS NULL)")
[ "$whole" = 0 ]
done2=$(sql "SELECT count(*) FROM trials WHERE study_id = 1 AND cache_key IS NOT NULL")
echo "ok: taken up, kill -9 after $done2 compiles, $after trials intact"

# 3. The same command takes it up again (its process is gone) and finishes
# it: one study, each configuration once, only the rest compiled.
"$tool" "${args[@]}" >rerun.out 2>rerun.err
grep -q "^fattn-tune: taking up study 1" rerun.err || { echo "FAIL: the last run did not take up study 1" >&2; exit 1; }
[ "$(sql "SELECT count(*) FROM studies")" = 1 ]
[ "$(sql "SELECT status FROM studies WHERE id = 1")" = done ]
[ "$(sql "SELECT count(*) - count(DISTINCT config_key) FROM trials WHERE study_id = 1")" = 0 ]
[ "$(sql "SELECT count(*) FROM trials WHERE study_id = 1 AND cache_key IS NOT NULL")" = 16 ]
grep -q "^compiled $((16 - done2)) (" rerun.out || { echo "FAIL: expected $((16 - done2)) compiled in the last run" >&2; cat rerun.out >&2; exit 1; }
grep -q "^taken up: $done2 survivors and [0-9]* trials in all recorded by the study's earlier run" rerun.out
echo "ok: study 1 finished by the third run, $((16 - done2)) compiled in it"

# 4. A read-only query killed with kill -9 leaves no -wal or -shm behind.
[ ! -e fattn.db-wal ] && [ ! -e fattn.db-shm ] || { echo "FAIL: -wal or -shm left by the compile" >&2; exit 1; }
"$tool" query --db fattn.db --sql-timeout 0 \
    --sql "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c" >/dev/null 2>&1 &
pid=$!
sleep 1
kill -9 $pid
wait $pid 2>/dev/null || true
pid=
[ ! -e fattn.db-wal ] && [ ! -e fattn.db-shm ] || { echo "FAIL: the killed query left -wal or -shm" >&2; ls -la >&2; exit 1; }
echo "ok: a query killed with kill -9 left no -wal or -shm"
