#!/usr/bin/env bash
# search.sh - `fattn-tune search` end to end without a GPU, through the fake
# engine of the worker (FATTN_WORKER_HOOK): eight configurations, four of
# which the worker is told to crash on, hang on, send garbage for, and get
# wrong. Each is recorded (runtime_fault, timeout, error, numerics) and the
# search goes on; the other four are measured, their raw samples stored.
# The seeds' 2-byte pad, pushed past the gates by --unsafe-skip-gate, faults
# and is recorded as runtime_fault. The study exported as a landscape and
# replayed gives the same verdicts and the same best configuration.
#
#   search.sh TOOL SOURCE_ROOT
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/slowdown.sh"
tool=$(realpath "$1")
src=$(realpath "$2")
work=$(mktemp -d /tmp/fattn-search.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
sql() { "$tool" -q query --db fattn.db --format csv --sql "$1" | tail -n +2; }
fail() { echo "FAIL: $*" >&2; exit 1; }

export FATTN_WORKER_HOOK="fake,crash=bn32-bk32-w4-s2-u1-cp1-sw1-h0,hang=bn32-bk64-w4-s2-u1-cp1-sw1-h1,garbage=bn64-bk32-w4-s2-u1-cp1-sw1-h0,numerics=bn64-bk64-w4-s2-u1-cp1-sw1-h1"
"$tool" search --strategy exhaustive --arch sm_90 --shape 2,8,512,64 --space "$src/tests/data/space-search.json" --db fattn.db \
    --kernel-timeout "$(scaled 2)s" --samples 12 --jobs 2 >out.txt 2>err.txt || { cat out.txt err.txt >&2; fail "search exit $?"; }
grep -q "^8 configurations: 0 rejected by the static gates, 8 survive; 8 tried, 8 run, 4 measured" out.txt ||
    { cat out.txt >&2; fail "summary"; }
grep -q "^stopped: every survivor tried$" out.txt
[ "$(sql "SELECT status || ':' || coalesce(reason, '') FROM trials WHERE config_key = 'bm64-bn32-bk32-w4-s2-u1-cp1-sw1-h0'")" = "rejected:runtime_fault" ] || fail crash
grep -q "the worker was killed by .*signal 9" <<<"$(sql "SELECT detail FROM trials WHERE config_key = 'bm64-bn32-bk32-w4-s2-u1-cp1-sw1-h0'")" || fail "crash detail"
[ "$(sql "SELECT status || ':' || coalesce(reason, '') FROM trials WHERE config_key = 'bm64-bn32-bk64-w4-s2-u1-cp1-sw1-h1'")" = "rejected:timeout" ] || fail hang
[ "$(sql "SELECT status FROM trials WHERE config_key = 'bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h0'")" = "error" ] || fail garbage
grep -q "worker protocol error" <<<"$(sql "SELECT detail FROM trials WHERE config_key = 'bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h0'")" || fail "garbage detail"
[ "$(sql "SELECT status || ':' || reason || ':' || n_bad FROM trials WHERE config_key = 'bm64-bn64-bk64-w4-s2-u1-cp1-sw1-h1'")" = "rejected:numerics:17" ] || fail numerics
[ "$(sql "SELECT count(*) FROM trials WHERE status = 'ok' AND median_us > 0 AND p10_us <= median_us AND median_us <= p90_us AND tflops > 0 AND numerics_seed IS NOT NULL AND run_ms > 0")" = 4 ] || fail "measured trials"
[ "$(sql "SELECT count(*) FROM samples")" = 48 ] || fail "samples: 4 trials x 12"
[ "$(sql "SELECT count(*) FROM trials WHERE status = 'ok' AND rel_l2 > 0 AND rel_l2 <= 0.004 AND numerics_inputs IN ('uniform', 'peaky')")" = 4 ] || fail "rel_l2 of the measured trials"
[ "$(sql "SELECT printf('%.2f', rel_l2) FROM trials WHERE config_key = 'bm64-bn64-bk64-w4-s2-u1-cp1-sw1-h1'")" = 0.02 ] || fail "rel_l2 of the wrong one"
grep -q "both gates failed on uniform inputs: rel L2 0.02 (> 0.004)" <<<"$(sql "SELECT detail FROM trials WHERE config_key = 'bm64-bn64-bk64-w4-s2-u1-cp1-sw1-h1'")" || fail "numerics detail names the gates"
grep -Eq "^rel_l2: +0\.000[0-9]+$" <<<"$("$tool" query trial "$(sql "SELECT id FROM trials WHERE status = 'ok' LIMIT 1")" --db fattn.db)" || fail "query trial shows rel_l2"
grep -q "numerics on uniform and peaky inputs: |o - r| <= 0.01 + 0.01|r| and rel L2 <= 0.004" <<<"$(sql "SELECT timing_method FROM studies WHERE id = 1")" || fail "the study records the numerics bounds"
[ "$(sql "SELECT count(DISTINCT numerics_seed) FROM trials WHERE numerics_seed IS NOT NULL")" = 8 ] || fail "fresh seed per check"
[ "$(sql "SELECT evaluator || ':' || status FROM studies WHERE id = 1")" = "gpu:done" ] || fail study
grep -q "CUDA graph of 20 back-to-back launches" <<<"$(sql "SELECT timing_method FROM studies WHERE id = 1")" || fail method
best=$(sql "SELECT config_key || ' ' || median_us FROM trials WHERE status = 'ok' ORDER BY median_us LIMIT 1")
grep -q "^best: ${best% *}, " out.txt || fail "best in the summary"
echo "ok: search over the fake worker: faults, hang, garbage and numerics recorded, 4 measured"

# The measured kernel itself: export --format cubin gives the cached bytes.
"$tool" export --db fattn.db --study 1 --format cubin -o best.cubin
want=$(sql "SELECT lower(hex(c.cubin)) FROM compile_cache c JOIN trials t ON t.cache_key = c.key WHERE t.study_id = 1 AND t.status = 'ok' ORDER BY t.median_us, t.id LIMIT 1")
[ -n "$want" ] && [ "$(od -An -v -tx1 best.cubin | tr -d ' \n')" = "$want" ] || fail "exported cubin differs from the cache"
[ "$(head -c 4 best.cubin | od -An -tx1 | tr -d ' ')" = 7f454c46 ] || fail "cubin is not ELF"
grep -q "\"cache_key\": \"${want:+[0-9a-f]}" <<<"$("$tool" export --db fattn.db --study 1 --format json)" || fail "json cache_key"
echo "ok: export --format cubin writes the measured kernel, byte for byte"

# The seeds' pad, forced past the gates: a runtime fault, recorded.
"$tool" -q search --strategy exhaustive --arch sm_90 --shape 2,8,512,64 --space "$src/tests/data/space-seeds-pad.json" --db fattn.db \
    --unsafe-skip-gate misaligned_cp_async --unsafe-skip-gate misaligned_ldmatrix --unsafe-skip-gate bank_conflicts \
    --samples 12 >pad.txt 2>&1 || { cat pad.txt >&2; fail "pad search"; }
[ "$(sql "SELECT status || ':' || reason FROM trials WHERE study_id = 2")" = "rejected:runtime_fault" ] || fail "pad fault"
grep -q "CUDA_ERROR_MISALIGNED_ADDRESS" <<<"$(sql "SELECT detail FROM trials WHERE study_id = 2")" || fail "pad detail"
echo "ok: the seeds' pad, forced past the gates, is recorded as runtime_fault"

# Replay: the landscape of study 1 gives the same verdicts and best.
"$tool" query landscape --study 1 --db fattn.db >land.csv
"$tool" query landscape --study 1 --db fattn.db -o land-o.csv
cmp -s land.csv land-o.csv || fail "query -o writes what standard output gets"
unset FATTN_WORKER_HOOK
"$tool" search --strategy exhaustive --arch sm_90 --shape 2,8,512,64 --space "$src/tests/data/space-search.json" --db fattn.db \
    --evaluator replay:land.csv >replay.txt 2>&1 || { cat replay.txt >&2; fail "replay search"; }
same=$(sql "SELECT count(*) FROM trials a JOIN trials b ON a.config_key = b.config_key WHERE a.study_id = 1 AND b.study_id = 3 AND a.status = b.status AND coalesce(a.reason, '') = coalesce(b.reason, '') AND coalesce(a.median_us, 0) = coalesce(b.median_us, 0)")
[ "$same" = 8 ] || fail "replay differs from the run ($same of 8 alike)"
grep -q "^best: ${best% *}, " replay.txt || fail "replayed best"
[ "$(sql "SELECT evaluator FROM studies WHERE id = 3")" = replay ] || fail "replay study"
echo "ok: the replayed landscape gives the same 8 verdicts and the same best"

# The default strategy (gp) waits for each outcome; meanwhile the idle
# compile thread compiles its hints ahead into the cache. Over a replayed landscape of the default space,
# in a fresh database: some compiles were done ahead of any proposal (cache
# rows beyond the trials that compiled), and no configuration ran twice.
"$tool" -q search --arch sm_90 --shape 2,8,512,64 --space "$src/search/space.json" --db ahead.db --trials 14 --jobs 2 \
    --evaluator replay:"$src/tests/data/landscape-suite-interact-s1.csv" >ahead.txt 2>&1 || { cat ahead.txt >&2; fail "gp replay search"; }
asql() { "$tool" -q query --db ahead.db --format csv --sql "$1" | tail -n +2; }
[ "$(asql "SELECT count(*) FROM trials WHERE status = 'ok'")" = 14 ] || fail "gp replay: 14 measured"
[ "$(asql "SELECT count(*) - count(DISTINCT config_key) FROM trials")" = 0 ] || fail "gp replay: a configuration tried twice"
compiled=$(asql "SELECT count(*) FROM trials WHERE cache_key IS NOT NULL AND cache_hit = 0")
cached=$(asql "SELECT count(*) FROM compile_cache")
hits=$(asql "SELECT count(*) FROM trials WHERE cache_hit = 1")
[ "$cached" -gt "$compiled" ] || fail "gp replay: nothing compiled ahead ($cached cache rows, $compiled trials compiled)"
echo "ok: gp's hints compiled ahead: $((cached - compiled)) compiles before any proposal, $hits proposals served by them"
