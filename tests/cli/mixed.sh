#!/usr/bin/env bash
# mixed.sh - one search over two kernel families (issue 52), replaying the
# H100's mma landscape beside a SYNTHETIC wgmma landscape of the same shape
# (tests/data/landscape-synthetic-wgmma-2-8-512-64.csv: tests/tools/
# family_pairs.py seed 3, invented times, no GPU ran those kernels): the
# study records both families (study_families: each its space, kernel and
# limits, the wgmma family at the arch's opt-in shared memory), every trial
# its family; both families' seeds run; killed with -9 and resumed, the study
# finishes with nothing twice; the seed reproduces the schedule whether the
# compile cache is cold or warm (costs modelled under replay); the queries
# read it; on the fake engine, confirm --top 3 measures the best of both
# families, each compiled from its own kernel under its own limits; every
# export format and the report take it; a dispatch table of it and a
# one-family study names each entry's family and kernel.
#
#   mixed.sh TOOL SOURCE_ROOT FIXTURE_DB [CUDA_ROOT]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/slowdown.sh"
tool=$(realpath "$1")
src=$(realpath "$2")
fixture=$(realpath "$3")
cuda=${4:-/usr/local/cuda}
work=$(mktemp -d /tmp/fattn-mixed.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
sql() { "$tool" -q query --db fattn.db --format csv --sql "$1" | tail -n +2; }
fail() { echo "FAIL: $*" >&2; exit 1; }

mma=$src/tests/data/landscape-h100-2-8-512-64.csv
wgmma=$src/tests/data/landscape-synthetic-wgmma-2-8-512-64.csv
# shellcheck disable=SC2054 # commas inside values
args=(search --evaluator "replay:$mma" --evaluator "replay:$wgmma" --filter BLOCK_N=64,STAGES=2 --trials 16
      --seed 3 --jobs 1 --db fattn.db)

# Killed with -9 once 4 trials have run (a fresh database: the compiles keep it busy), then resumed.
"$tool" "${args[@]}" >run.out 2>run.err &
pid=$!
for _ in $(seq "$(scaled 600)"); do
    [ "$(sql "SELECT count(*) FROM trials WHERE run_ms IS NOT NULL" 2>/dev/null || echo 0)" -ge 4 ] && break
    sleep 0.2
done
kill -9 $pid
wait $pid 2>/dev/null || true
pid=
[ "$(sql "SELECT status FROM studies WHERE id = 1")" = running ] || fail "the search ended before kill -9"
"$tool" search --resume 1 --db fattn.db >resume.out 2>resume.err || { cat resume.out resume.err >&2; fail resume; }
[ "$(sql "SELECT status || ' ' || runs FROM studies WHERE id = 1")" = "done 2" ] || fail "resumed study status"
[ "$(sql "SELECT count(*) - count(DISTINCT config_key) FROM trials WHERE study_id = 1")" = 0 ] || fail "a trial repeated"
[ "$(sql "SELECT count(*) FROM trials WHERE study_id = 1 AND run_ms IS NOT NULL")" = 16 ] || fail "not 16 trials run"
echo "ok: kill -9 and --resume of a two-family study: 16 trials run, none twice"

# The study's families, each with its space, kernel source and limits.
[ "$(sql "SELECT group_concat(family, ' ') FROM (SELECT family FROM study_families WHERE study_id = 1 ORDER BY position)")" = "mma wgmma" ] ||
    fail "study_families: $(sql "SELECT * FROM study_families")"
for f in mma:space.json wgmma:space-wgmma.json; do
    hash=$(sha256sum "$src/search/${f#*:}" | cut -d' ' -f1)
    [ "$(sql "SELECT space_hash FROM study_families WHERE study_id = 1 AND family = '${f%%:*}'")" = "$hash" ] ||
        fail "${f%%:*}: the space's hash"
done
[ "$(sql "SELECT json_extract(limits_json, '$.smem_limit') FROM study_families WHERE study_id = 1 AND family = 'wgmma'")" = 232448 ] ||
    fail "the wgmma family's shared-memory limit is not sm_90's opt-in maximum"
[ "$(sql "SELECT json_extract(limits_json, '$.smem_limit') FROM study_families WHERE study_id = 1 AND family = 'mma'")" = 49152 ] ||
    fail "the mma family's shared-memory limit is not the default"
[ "$(sql "SELECT count(DISTINCT kernel_hash) FROM study_families WHERE study_id = 1")" = 2 ] || fail "one kernel hash for two families"
# Every trial names its family, as its key does; both families' seeds ran.
[ "$(sql "SELECT count(*) FROM trials WHERE study_id = 1 AND family != CASE WHEN config_key LIKE 'wgmma-%' THEN 'wgmma' ELSE 'mma' END")" = 0 ] ||
    fail "a trial's family is not its key's"
for f in mma wgmma; do
    [ "$(sql "SELECT count(*) FROM trials WHERE study_id = 1 AND family = '$f' AND status = 'ok'")" -ge 2 ] ||
        fail "the $f family's seeds did not run"
done
grep -q "^  wgmma  .*space-wgmma.json: 144 configurations, 40 survive$" resume.out || fail "the summary's families"
for f in mma wgmma; do
    grep -Eq "^hardware: $f: (un)?proven on hardware" resume.out || fail "the summary does not say whether $f is proven on hardware"
done
echo "ok: both families on record: $(sql "SELECT group_concat(family || ' ' || n, ', ') FROM (SELECT family, count(*) AS n FROM trials WHERE study_id = 1 AND run_ms IS NOT NULL GROUP BY family)") trials run"

# The seed reproduces the schedule, the compile cache cold or warm (the
# scheduler charges modelled costs under replay, not the clock's): a fresh
# database, then the same search again in it.
"$tool" -q "${args[@]}" --db cold.db >cold.out || fail "cold run"
"$tool" -q "${args[@]}" --db cold.db >warm.out || fail "warm run"
seq_of() {
    "$tool" -q query --db cold.db --format csv --sql "SELECT group_concat(config_key, ' ') FROM (SELECT config_key
        FROM trials WHERE study_id = $1 AND compile_ms IS NOT NULL ORDER BY seq)" | tail -n +2
}
if [ -z "$(seq_of 1)" ] || [ "$(seq_of 1)" != "$(seq_of 2)" ]; then
    fail "the same seed, cache cold and warm, differ: $(seq_of 1) / $(seq_of 2)"
fi
echo "ok: the same seed, the cache cold or warm: the same $(seq_of 1 | wc -w) trials in the same order"

# The reading commands take it.
"$tool" query trials --db fattn.db --study 1 --status ok --limit 0 >trials.txt || fail "query trials"
"$tool" query top --db fattn.db --study 1 --limit 40 >top.txt || fail "query top"
{ grep -q "wgmma-bm" top.txt && grep -q " bm[0-9]*-bn" top.txt; } || fail "query top is not across the families"
grep -q "wgmma-bm" trials.txt || fail "query trials shows no wgmma trial"
"$tool" query studies --db fattn.db >/dev/null || fail "query studies"
# A landscape holds one family: query landscape --family, each replayable again.
if "$tool" query landscape --db fattn.db --study 1 >/dev/null 2>err.txt; then fail "a landscape of two families"; fi
grep -q "^fattn-tune: query landscape: study 1 searched several families (mma, wgmma), and a landscape holds one: pass --family NAME$" err.txt ||
    fail "the landscape refusal: $(cat err.txt)"
for f in mma wgmma; do
    "$tool" query landscape --db fattn.db --study 1 --family $f >land-$f.csv || fail "query landscape --family $f"
    grep -q "^# family: $f$" land-$f.csv || fail "the $f landscape's family"
done
if grep -q '^wgmma-' land-mma.csv || grep -q '^bm' land-wgmma.csv; then fail "a landscape mixes families"; fi
"$tool" -q search --evaluator replay:land-mma.csv --evaluator replay:land-wgmma.csv --trials 4 --db again.db >/dev/null ||
    fail "the two landscapes do not replay"
echo "ok: the queries read a two-family study"

# A study from before a search took every family of the arch (one family,
# its args naming none: made here by removing the wgmma family from a fresh
# fake-engine study) goes on with its one family when resumed on sm_90.
cp fattn.db old.db
FATTN_WORKER_HOOK=fake "$tool" -q search --arch sm_90 --shape 2,8,512,64 --filter BLOCK_N=64,STAGES=2 --trials 6 \
    --jobs 1 --db old.db >/dev/null 2>&1 || fail "the fake-engine study"
old=$("$tool" -q query --db old.db --format csv --sql "SELECT max(id) FROM studies" | tail -1)
"$fixture" sql old.db "DELETE FROM samples WHERE trial_id IN (SELECT id FROM trials WHERE study_id = $old AND family = 'wgmma');
    DELETE FROM trials WHERE study_id = $old AND family = 'wgmma';
    DELETE FROM study_families WHERE study_id = $old AND family = 'wgmma'" || fail "the older study"
ran=$("$tool" -q query --db old.db --format csv --sql "SELECT count(*) FROM trials WHERE study_id = $old AND run_ms IS NOT NULL" | tail -1)
FATTN_WORKER_HOOK=fake "$tool" search --resume "$old" --trials $((ran + 2)) --jobs 2 --db old.db >old.out 2>old.err ||
    { cat old.out old.err >&2; fail "an older one-family study does not resume on sm_90"; }
[ "$("$tool" -q query --db old.db --format csv --sql "SELECT count(*) || ' ' || sum(family = 'mma') FROM trials
      WHERE study_id = $old AND run_ms IS NOT NULL" | tail -1)" = "$((ran + 2)) $((ran + 2))" ] ||
    fail "the older study did not go on with its mma family alone"
echo "ok: a one-family study from before goes on with its family alone"

# confirm --top 3 on the fake engine: the three fastest of the study, of
# both families, each from its family's kernel as searched.
top=$(sql "SELECT group_concat(family, ' ') FROM (SELECT family FROM trials WHERE study_id = 1 AND status = 'ok' ORDER BY median_us, id LIMIT 3)")
case $top in *mma*wgmma* | *wgmma*mma*) ;; *) fail "the study's top 3 are not of both families: $top" ;; esac
FATTN_WORKER_HOOK=fake "$tool" confirm --db fattn.db --study 1 --top 3 --n 10 >confirm.out 2>confirm.err ||
    { cat confirm.out confirm.err >&2; fail "confirm --top 3"; }
[ "$(sql "SELECT count(*) FROM confirmations c JOIN trials t ON t.id = c.trial_id JOIN study_families f
          ON f.study_id = 1 AND f.family = t.family WHERE c.study_id = 1 AND c.kernel_hash = f.kernel_hash AND c.as_searched = 1")" = 3 ] ||
    fail "confirm: not 3 confirmations each of its family's kernel as searched"
echo "ok: confirm --top 3 across the families: $top"

# Every export format, the report.
"$tool" export --db fattn.db --study 1 -o tuned.h 2>err.txt || fail "export header"
best=$(sql "SELECT config_key FROM trials WHERE study_id = 1 AND status = 'ok' ORDER BY median_us, id LIMIT 1")
fam=$(sql "SELECT family FROM trials WHERE study_id = 1 AND config_key = '$best'")
kernel=$([ "$fam" = wgmma ] && echo fattn_wgmma.cu || echo fattn_fwd.cu)
grep -q "$best" tuned.h || fail "the header is not of the best, $best"
"$tool" export --db fattn.db --study 1 --format json -o tuned.json 2>err.txt || fail "export json"
"$tool" export --db fattn.db --study 1 --format t4 -o t4.json 2>err.txt || fail "export t4"
{ grep -q '"PV_RS": ' t4.json && grep -q '"BLOCK_K": ' t4.json; } || fail "t4 holds not both families' configurations"
"$tool" export --db fattn.db --study 1 --format cubin -o tuned.cubin 2>err.txt || fail "export cubin"
"$tool" export --db fattn.db --study 1 --kernel tuned.cu -o tuned2.h 2>err.txt || { cat err.txt >&2; fail "export --kernel"; }
grep -q "$kernel, sha256" tuned.cu || fail "export --kernel: not the $fam family's kernel"
"$tool" report --db fattn.db --study 1 -o report.html 2>err.txt || fail "report"
grep -Eq '<th>hardware \(wgmma\)</th><td class="hardware (un)?proven" data-family="wgmma">' report.html ||
    fail "the report does not say whether the wgmma family is proven on hardware"
# The trials plotted a series a family (each its colour and its best-so-far line).
for f in mma wgmma; do
    grep -q "data-series=\"study 1 (gp) $f\"" report.html || fail "the report has no series of the $f family"
done
echo "ok: every export format and the report of a two-family study (best $best, $fam)"

# A dispatch table of it (its best: $fam) and an mma study at 1,4,256,64.
FATTN_WORKER_HOOK=fake "$tool" -q search --strategy random --trials 3 --arch sm_90 --shape 1,4,256,64 \
    --space "$src/tests/data/space-search.json" --db fattn.db --samples 12 >out.txt 2>err.txt || fail "mma search"
mma_study=$(sql "SELECT max(id) FROM studies")
"$tool" export --db fattn.db --study 1 --study "$mma_study" -o dispatch.h 2>err.txt || fail "the dispatch table"
cat >lookup.c <<C
#include <stdio.h>
#include <string.h>
#include "dispatch.h"
int main(void)
{
    const fattn_tuned_entry *x = fattn_tuned_lookup("sm_90", 2, 8, 512, 64, 0);
    const fattn_tuned_entry *m = fattn_tuned_lookup("sm_90", 1, 4, 256, 64, 0);
    if (FATTN_TUNED_COUNT != 2 || !x || !m || x == m)
        return 1;
    if (strcmp(x->family, "$fam") || strcmp(x->kernel, "$kernel") || strcmp(x->config, "$best"))
        return 2;
    if (strcmp(m->family, "mma") || strcmp(m->kernel, "fattn_fwd.cu"))
        return 3;
    printf("%s\\n", x->nvcc_flags);
    return 0;
}
C
cc -std=c11 -Wall -Wextra -Werror -o lookup lookup.c 2>err.txt || { cat err.txt >&2; fail "the dispatch header does not compile"; }
./lookup >flags.txt || fail "the dispatch lookup: $?"
if [ -x "$cuda/bin/nvcc" ]; then
    read -ra flags <flags.txt
    "$cuda/bin/nvcc" "${flags[@]}" -c -I"$src/kernels" "$src/kernels/$kernel" -o entry.o 2>err.txt ||
        { cat err.txt >&2; fail "nvcc does not build the $fam entry from its flags"; }
fi
echo "ok: a dispatch table of the two-family study and an mma study names each entry's family and kernel"
