#!/usr/bin/env bash
# confirm.sh - `fattn-tune confirm` end to end without a GPU, through the
# fake engine of the worker (FATTN_WORKER_HOOK): a study of the space-search
# configurations measured by search, then confirmed against the default
# baseline (cuDNN, faked) and against stored trials; every sample stored; the
# verdict consistent with the printed statistics; --against previous passing
# on the same times and failing (exit 3) when the fake makes the best
# configuration 10% slower; a numerics failure recorded; the family's
# default baseline of a causal study (FA2-like for mma, FA3-like for wgmma);
# a baseline of another family refused; usage errors that write nothing.
#
#   confirm.sh TOOL SOURCE_ROOT
set -euo pipefail
tool=$(realpath "$1")
src=$(realpath "$2")
work=$(mktemp -d /tmp/fattn-confirm.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
sql() { "$tool" -q query --db "${db:-fattn.db}" --format csv --sql "$1" | tail -n +2; }
fail() { echo "FAIL: $*" >&2; cat out.txt err.txt >&2 2>/dev/null || true; exit 1; }
export FATTN_WORKER_HOOK=fake

"$tool" -q search --strategy exhaustive --arch sm_90 --shape 2,8,512,64 --space "$src/tests/data/space-search.json" \
    --db fattn.db --samples 12 >/dev/null || fail "search"
best=$(sql "SELECT config_key FROM trials WHERE status = 'ok' ORDER BY median_us LIMIT 1")
slowest=$(sql "SELECT id FROM trials WHERE status = 'ok' ORDER BY median_us DESC LIMIT 1")

# 1. The default baseline, 40 rounds: one confirmation, 40 samples a side.
"$tool" confirm --db fattn.db --n 40 >out.txt 2>err.txt || fail "confirm exit $?"
grep -q "^baseline: cudnn, fake cuDNN (FATTN_WORKER_HOOK) (the default for non-causal shapes): median " out.txt ||
    fail "baseline line"
grep -q "one sample of each kernel per round" out.txt || fail "interleaving in the method"
grep -q "^$best " out.txt || fail "the best configuration in the table"
[ "$(sql "SELECT count(*) FROM confirmations")" = 1 ] || fail "one confirmation"
[ "$(sql "SELECT count(*) FROM confirmation_samples WHERE confirmation_id = 1 AND side = 'candidate'")" = 40 ] ||
    fail "candidate samples"
[ "$(sql "SELECT count(*) FROM confirmation_samples WHERE confirmation_id = 1 AND side = 'baseline'")" = 40 ] ||
    fail "baseline samples"
[ "$(sql "SELECT config_key || ':' || baseline || ':' || base_kind || ':' || n || ':' || resamples FROM confirmations")" = \
    "$best:cudnn:cudnn:40:10000" ] || fail "the confirmation row"
[ "$(sql "SELECT count(*) FROM confirmations WHERE ci_lo_us <= median_us AND median_us <= ci_hi_us AND
        base_ci_lo_us <= base_median_us AND base_median_us <= base_ci_hi_us AND
        speedup_ci_lo <= speedup AND speedup <= speedup_ci_hi AND mwu_p BETWEEN 0 AND 1 AND
        cliffs_delta BETWEEN -1 AND 1 AND max_abs_err > 0 AND rel_l2 > 0 AND base_rel_l2 > 0 AND trial_id IS NOT NULL")" = 1 ] || fail "statistics"
# The stored median is the median of the stored samples.
[ "$(sql "SELECT abs(c.median_us - (SELECT avg(us) FROM (SELECT us FROM confirmation_samples WHERE confirmation_id = 1
        AND side = 'candidate' ORDER BY us LIMIT 2 OFFSET 19))) < 1e-9 AS ok FROM confirmations c WHERE c.id = 1")" = 1 ] ||
    fail "median of the stored samples"
# The verdict follows from the statistics.
v=$(sql "SELECT verdict FROM confirmations WHERE id = 1")
expect=$(sql "SELECT CASE WHEN ci_hi_us < base_ci_lo_us THEN (CASE WHEN speedup < 1.10 THEN 'faster' WHEN p90_us > base_p90_us
        THEN 'p90-worse' ELSE 'success' END) WHEN base_ci_hi_us < ci_lo_us THEN 'slower' ELSE 'inconclusive' END AS v
        FROM confirmations WHERE id = 1")
[ "$v" = "$expect" ] || fail "verdict $v, the statistics say $expect"
grep -q "^$best: $v; confirmation 1 " out.txt || fail "verdict printed"

"$tool" query confirmations --db fattn.db >out.txt 2>err.txt || fail "query confirmations"
grep -q "^ 1 .* $best  *cudnn  *40 .* $v" out.txt || fail "query confirmations lists it"

# 2. Against the slowest stored trial, top 2: both faster than it.
"$tool" confirm --db fattn.db --n 30 --top 2 --baseline "trial:$slowest" --format json >out.txt 2>err.txt ||
    fail "confirm --baseline trial: exit $?"
grep -q "\"given\": \"trial:$slowest\"" out.txt || fail "json baseline"
[ "$(grep -c '"confirmation": ' out.txt)" = 2 ] || fail "two candidates in the json"
[ "$(sql "SELECT count(*) FROM confirmations WHERE baseline = 'trial:$slowest' AND base_kind = 'config' AND speedup > 1
        AND verdict IN ('success', 'faster') AND success = (verdict = 'success')")" = 2 ] || fail "faster than the slowest"

# 3. The regression gate: the same times pass, 10% slower fails with exit 3.
"$tool" confirm --db fattn.db --n 40 --against previous >out.txt 2>err.txt || fail "against previous, unchanged: exit $?"
# (the last confirmation of the best configuration is the top-2 run's, #2)
grep -q "against previous: confirmation 2 (.*): median .*: no regression (threshold 3%)" out.txt ||
    fail "no regression line"
set +e
FATTN_WORKER_HOOK="fake,slower=$best" "$tool" confirm --db fattn.db --n 40 --against previous --threshold 3% \
    >out.txt 2>err.txt
rc=$?
set -e
[ $rc = 3 ] || fail "a regression exits 3, not $rc"
grep -q "(+10.00%).*: REGRESSION (threshold 3%)" out.txt || fail "regression line"
grep -q "^fattn-tune: 1 configuration regressed against the previous confirmation$" err.txt || fail "regression message"
last=$(sql "SELECT max(id) FROM confirmations")
[ "$(sql "SELECT regression || ':' || previous_id || ':' || CAST(round(change_pct) AS INTEGER) FROM confirmations WHERE id = $last")" = \
    "1:$((last - 1)):10" ] || fail "regression stored"

# 4. A numerics failure is recorded, without samples, and fails the command.
set +e
FATTN_WORKER_HOOK="fake,numerics=$best" "$tool" confirm --db fattn.db --n 20 >out.txt 2>err.txt
rc=$?
set -e
[ $rc = 1 ] || fail "numerics exit $rc"
last=$(sql "SELECT max(id) FROM confirmations")
[ "$(sql "SELECT verdict || ':' || (median_us IS NULL) FROM confirmations WHERE id = $last")" = "numerics:1" ] ||
    fail "numerics stored"
[ "$(sql "SELECT count(*) FROM confirmation_samples WHERE confirmation_id = $last AND side = 'candidate'")" = 0 ] ||
    fail "no candidate samples"

# 5. A causal study: no cuDNN; the FA2-like configuration is the default.
db=causal.db
"$tool" -q search --strategy exhaustive --arch sm_90 --shape 1,2,128,64 --causal --db causal.db \
    --space "$src/tests/data/space-search.json" --samples 12 >/dev/null || fail "causal search"
"$tool" confirm --db causal.db --n 20 >out.txt 2>err.txt || fail "causal confirm exit $?"
grep -q "^baseline: config:bm128-bn128-bk64-w8-s2-u1-cp1-sw1-h1 (the FlashAttention-2-like configuration of our kernel (causal shape" out.txt ||
    fail "FA2-like default"
before=$(sha256sum causal.db)
set +e
"$tool" confirm --db causal.db --baseline cudnn >out.txt 2>err.txt
rc=$?
set -e
[ $rc = 2 ] && grep -q "study 1 is causal" err.txt || fail "cudnn on a causal study: exit $rc"
[ "$before" = "$(sha256sum causal.db)" ] || fail "a refused confirm wrote to the database"

# 6. A causal study of the wgmma family: its FA3-like configuration is the
# default (one kernel source measures both sides: an mma configuration was
# the default, compiled from the wgmma source, on the H200), and a baseline
# of another family is refused, nothing written.
db=wgmma.db
"$tool" -q search --strategy exhaustive --arch sm_90 --shape 1,2,130,128 --causal --db wgmma.db \
    --space "$src/search/space-wgmma.json" --smem-limit max --samples 12 \
    --filter BLOCK_M=128,BLOCK_N=128,STAGES=2,PV_RS=1,OVERLAP=1 >/dev/null || fail "wgmma causal search"
"$tool" confirm --db wgmma.db --n 20 >out.txt 2>err.txt || fail "wgmma causal confirm exit $?"
grep -q "^baseline: config:wgmma-bm128-bn128-s2-rs1-ov1-pp1 (the FlashAttention-3-like configuration of our kernel (causal shape" out.txt ||
    fail "FA3-like default"
before=$(sha256sum wgmma.db)
set +e
"$tool" confirm --db wgmma.db --baseline config:bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1 >out.txt 2>err.txt
rc=$?
set -e
[ $rc = 2 ] && grep -q "^fattn-tune: --baseline config:bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1: a configuration of the mma family, and study 1 searched the wgmma family; expected a wgmma configuration or cudnn$" err.txt ||
    fail "an mma baseline on a wgmma study: exit $rc"
[ "$before" = "$(sha256sum wgmma.db)" ] || fail "a refused confirm wrote to the database"
echo "ok: confirm over the fake worker: samples, statistics, verdicts, regression gate, numerics, FA2-like and FA3-like baselines"
