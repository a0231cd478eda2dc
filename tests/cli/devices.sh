#!/usr/bin/env bash
# devices.sh - `search --devices` over fake GPUs (the fake engine's gpus=N,
# each worker process its own GPU with its own UUID): every trial runs on
# one GPU and records its UUID, every GPU takes trials, the reference
# configuration is timed on each (gpu_checks, query gpus); GPUs that differ
# by over 2% (speed=N:F) are flagged in the search's output, the study and
# the report; GPUs of two models are refused (one line naming both, nothing
# written), as is --devices with a replayed landscape; a worker that dies
# mid-trial loses that trial only; and kill -9 of the search mid-trial
# leaves the trials running marked, which `search --resume` proposes first,
# each configuration tried once in all.
#
#   devices.sh TOOL SOURCE_ROOT
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/slowdown.sh"
tool=$(realpath "$1")
src=$(realpath "$2")
work=$(mktemp -d /tmp/fattn-devices.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
sql() { "$tool" -q query --db "${2:-fattn.db}" --format csv --sql "$1" | tail -n +2; }
fail() { echo "FAIL: $*" >&2; exit 1; }
space=$src/tests/data/space-search.json # 8 configurations
search() { # DB HOOK ARGS...: a search of the 8 over fake GPUs
    local db=$1 hook=$2
    shift 2
    FATTN_WORKER_HOOK=$hook "$tool" search --arch sm_90 --shape 2,8,512,64 --space "$space" --db "$db" --samples 8 \
        --jobs 2 --kernel-timeout "$(scaled 20)s" "$@"
}

# 1. Four GPUs, one of them 5% slower; one configuration crashes its worker.
crash=bn32-bk32-w4-s2-u1-cp1-sw1-h1
search fattn.db "fake,slow=100,gpus=4,speed=2:1.05,crash=$crash" --strategy exhaustive --devices all \
    >out.txt 2>err.txt || { cat out.txt err.txt >&2; fail "search --devices all: exit $?"; }
[ "$(sql "SELECT count(*) FROM trials WHERE run_ms IS NOT NULL")" = 8 ] || fail "expected 8 trials run"
[ "$(sql "SELECT count(*) FROM trials WHERE run_ms IS NOT NULL AND gpu_uuid IS NULL")" = 0 ] ||
    fail "a trial without its GPU's UUID"
[ "$(sql "SELECT count(DISTINCT gpu_uuid) FROM trials")" = 4 ] || fail "not every GPU took trials"
[ "$(sql "SELECT count(*) FROM trials WHERE reason = 'runtime_fault' AND config_key LIKE '%$crash'")" = 1 ] ||
    fail "the crash was not recorded as the trial's fault"
[ "$(sql "SELECT count(*) FROM trials WHERE status = 'ok'")" = 7 ] || fail "the other 7 were not all measured"
[ "$(sql "SELECT count(*) FROM trials_running")" = 0 ] || fail "trials left running after a finished search"
# The reference: round 1 on each GPU, GPU 2 5% over the others.
[ "$(sql "SELECT count(DISTINCT device) FROM gpu_checks WHERE round = 1 AND status = 'ok'")" = 4 ] ||
    fail "the reference was not timed on every GPU"
spread=$(sql "SELECT printf('%.1f', gpu_spread_pct) FROM studies WHERE id = 1")
[ "$spread" = 5.0 ] || fail "studies.gpu_spread_pct $spread, expected 5.0"
grep -q "warning: the GPUs differ by 5.0%" err.txt || fail "no warning of the GPUs' spread"
grep -q "^GPUs: 4 (0,1,2,3).*spread 5.0% (over 2%" out.txt || { cat out.txt >&2; fail "no GPUs line in the summary"; }
"$tool" -q query gpus --db fattn.db >gpus.txt
grep -q "GPU-fa4e0000-0000-4000-8000-000000000002" gpus.txt || fail "query gpus: GPU 2 missing"
"$tool" -q report --db fattn.db --study 1 -o report.html
grep -q 'id="gpus" class="spread">4, the reference configuration 5.0% apart' report.html ||
    fail "the report does not flag the GPUs' spread"
echo "ok: 4 fake GPUs: 8 trials, each on one GPU, a crash lost one trial only, the 5% GPU flagged"

# The GPUs run side by side: again over the warm cache, --trials 6, 300 ms a
# trial: 6 trials run, and some two of them at once (each trial's interval
# ends at its record and lasts its run_ms).
search fattn.db "fake,slow=300,gpus=4" --strategy exhaustive --devices all --trials 6 >out.txt 2>err.txt ||
    { cat err.txt >&2; fail "search --devices all --trials 6: exit $?"; }
[ "$(sql "SELECT count(*) FROM trials WHERE study_id = 2 AND run_ms IS NOT NULL")" = 6 ] ||
    fail "--trials 6 over 4 GPUs: not 6 trials run"
end() { echo "julianday($1.created_at) * 86400000"; }
overlap=$(sql "SELECT count(*) FROM trials a JOIN trials b ON a.id < b.id WHERE a.study_id = 2 AND b.study_id = 2
    AND a.run_ms IS NOT NULL AND b.run_ms IS NOT NULL AND $(end a) - a.run_ms < $(end b)
    AND $(end b) - b.run_ms < $(end a)")
[ "$overlap" -ge 1 ] || fail "no two trials ran at once on 4 GPUs"
echo "ok: --trials 6 over 4 GPUs: 6 trials, $overlap pairs of them side by side"

# 2. GPUs of one model, even: no warning, the spread stored as measured.
search even.db "fake,gpus=2" --strategy exhaustive --devices 0,1 >out.txt 2>err.txt ||
    { cat err.txt >&2; fail "search --devices 0,1: exit $?"; }
! grep -q "differ" err.txt || fail "a warning for even GPUs"
[ "$(sql "SELECT gpu_spread_pct < 2 FROM studies" even.db)" = 1 ] || fail "even GPUs: spread not stored below 2%"

# 3. Refusals: two models; a replayed landscape. One line, exit 2, nothing written.
rc=0
search two.db "fake,model=1:NVIDIA H100 80GB HBM3" --devices 0,1 >out.txt 2>err.txt || rc=$?
[ $rc = 2 ] || fail "two models: exit $rc, expected 2"
[ "$(wc -l <err.txt)" = 1 ] && grep -q "GPU 0 is fake engine .* and GPU 1 is NVIDIA H100 80GB HBM3; a study is measured on one GPU model" err.txt ||
    { cat err.txt >&2; fail "two models: not one line naming both"; }
[ ! -e two.db ] || fail "two models: a database was written"
rc=0
"$tool" search --db replay.db --devices 0,1 --evaluator "replay:$src/tests/data/landscape-synthetic-sm_90-2-8-512-64.csv" \
    >out.txt 2>err.txt || rc=$?
[ $rc = 2 ] && grep -q "a replayed landscape (--evaluator replay:FILE) runs on no GPU" err.txt ||
    { cat err.txt >&2; fail "--devices with replay: exit $rc"; }
[ ! -e replay.db ] || fail "--devices with replay: a database was written"
rc=0
search both.db fake --device 1 --devices 0,1 >out.txt 2>err.txt || rc=$?
[ $rc = 2 ] && grep -q "^fattn-tune: --device and --devices: expected one of them" err.txt ||
    { cat err.txt >&2; fail "--device with --devices: exit $rc"; }
[ ! -e both.db ] || fail "--device with --devices: a database was written"
echo "ok: two GPU models, a replayed landscape, --device with --devices refused, nothing written"

# 4. kill -9 with trials running: --resume proposes them first.
FATTN_WORKER_HOOK="fake,slow=$(scaled 1500),gpus=4" "$tool" -q search --arch sm_90 --shape 2,8,512,64 \
    --space "$space" --db kill.db --samples 8 --jobs 2 --strategy gp --devices all >/dev/null 2>&1 &
pid=$!
for _ in $(seq "$(scaled 600)"); do
    n=$(sql "SELECT count(*) FROM trials_running" kill.db 2>/dev/null || echo 0)
    [ "${n:-0}" -ge 2 ] && break
    sleep 0.1
done
kill -9 $pid
wait $pid 2>/dev/null || true
pid=
running=$(sql "SELECT config_key FROM trials_running ORDER BY seq" kill.db)
[ "$(wc -l <<<"$running")" -ge 2 ] || fail "kill -9: not 2 trials marked running: '$running'"
before=$(sql "SELECT max(seq) FROM trials" kill.db)
FATTN_WORKER_HOOK="fake,gpus=4" "$tool" -q search --resume 1 --db kill.db >/dev/null 2>err.txt ||
    { cat err.txt >&2; fail "search --resume: exit $?"; }
n=$(wc -l <<<"$running")
first=$(sql "SELECT config_key FROM trials WHERE seq > coalesce(${before:-NULL}, -1) ORDER BY seq LIMIT $n" kill.db)
[ "$(sort <<<"$first")" = "$(sort <<<"$running")" ] ||
    fail "--resume did not propose the trials running first: running '$running', first '$first'"
[ "$(sql "SELECT count(*) FROM trials" kill.db)" = 8 ] && [ "$(sql "SELECT count(DISTINCT config_key) FROM trials" kill.db)" = 8 ] ||
    fail "after --resume: not every configuration tried exactly once"
[ "$(sql "SELECT count(*) FROM trials_running" kill.db)" = 0 ] || fail "after --resume: trials still marked running"
echo "ok: kill -9 with $n trials running; --resume proposed them first, each configuration once"
