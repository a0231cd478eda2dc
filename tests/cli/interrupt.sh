#!/usr/bin/env bash
# interrupt.sh - `fattn-tune compile` stopped by Ctrl-C (SIGINT) finishes the
# compiles in flight, marks the study interrupted and exits 1; killed with
# kill -9, it loses nothing committed: the database passes integrity_check,
# every stored trial is whole, and a rerun takes the compiled ones from the
# cache.
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
args=(compile --arch sm_90 --shape 2,8,512,64 --sample 16 --seed 3 --jobs 1 --db fattn.db)

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

# 2. kill -9.
"$tool" "${args[@]}" >kill.out 2>kill.err &
pid=$!
wait_compiled $((done1 + 2))
seen=$(sql "SELECT count(*) FROM trials WHERE study_id = 2")
kill -9 $pid
wait $pid 2>/dev/null || true
pid=
[ "$(sql "PRAGMA integrity_check")" = ok ]
[ "$(sql "SELECT status FROM studies WHERE id = 2")" = running ]
after=$(sql "SELECT count(*) FROM trials WHERE study_id = 2")
[ "$after" -ge "$seen" ] || { echo "FAIL: $seen trials seen before kill -9, $after after" >&2; exit 1; }
whole=$(sql "SELECT count(*) FROM trials WHERE study_id = 2 AND cache_key IS NOT NULL AND (registers IS NULL OR smem_dynamic IS NULL OR status IS NULL)")
[ "$whole" = 0 ]
done2=$(sql "SELECT count(*) FROM trials WHERE study_id = 2 AND cache_key IS NOT NULL")
echo "ok: kill -9 after $done2 compiles, $after trials intact"

# 3. A rerun finishes, with every cubin compiled before taken from the cache.
"$tool" "${args[@]}" >rerun.out
cached=$(sed -n 's/^compiled 16 (\([0-9]*\) by NVRTC, \([0-9]*\) from the cache).*/\2/p' rerun.out)
[ -n "$cached" ] && [ "$cached" -ge "$done2" ] || { echo "FAIL: rerun took $cached from the cache, expected >= $done2" >&2; cat rerun.out >&2; exit 1; }
[ "$(sql "SELECT status FROM studies WHERE id = 3")" = done ]
echo "ok: rerun done, $cached from the cache"
