#!/usr/bin/env bash
# campaign.sh - fattn-tune campaign (issue 53, point 2) on the replay
# evaluator: a file of three rows (the H100 landscapes of tests/data) runs a
# study each; run again, it runs nothing; killed with -9 (the campaign and
# its searches) and run again, it resumes the row in flight and runs the
# rest, nothing twice; export --campaign writes a header that compiles,
# keyed by GPU model: a row run on two models (two databases merged, the
# campaign's --uuid shared) has an entry each, found by its GPU. Tasks of a
# campaign (--rows, --uuid) merged are the campaign run in one process:
# tests/cli/slurm.sh. The later databases start with the first's compile
# cache (its studies deleted): the 2 cores spend their time on the
# campaigns, not on NVRTC.
#
#   campaign.sh TOOL SOURCE_ROOT FIXTURE_DB
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/slowdown.sh"
tool=$(realpath "$1")
src=$(realpath "$2")
fixture=$(realpath "$3")
work=$(mktemp -d /tmp/fattn-campaign.XXXXXX)
pgid=
trap '[ -n "$pgid" ] && kill -9 -- -"$pgid" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
sql() { "$tool" -q query --db "$1" --format csv --sql "$2" | tail -n +2; }

mkdir data
cp "$src"/tests/data/landscape-h100-2-8-512-64.csv "$src"/tests/data/landscape-h100-2-8-512-64-causal.csv \
    "$src"/tests/data/landscape-h100-4-16-2048-128.csv data/
# shellcheck disable=SC2016 # the file's text
printf '# three shapes, replayed\nshape\tmask\ttrials\tevaluator\tname\n%s\n%s\n%s\n' \
    "2,8,512,64	none	2	replay:data/landscape-h100-2-8-512-64.csv	small" \
    "2,8,512,64	causal	2	replay:data/landscape-h100-2-8-512-64-causal.csv	small, causal" \
    "4,16,2048,128	-	2	replay:data/landscape-h100-4-16-2048-128.csv	big" >c.tsv
search=(-- --jobs 2 --seed 3 --filter BLOCK_M=64) # a smaller space: the gates' time halved

"$tool" campaign c.tsv --db one.db "${search[@]}" >one.out 2>one.err || { cat one.out one.err >&2; fail "campaign"; }
grep -q "^3 of 3 rows done$" one.out || fail "the table: $(cat one.out)"
[ "$(sql one.db "SELECT count(*) FROM campaign_rows r JOIN campaigns c ON c.id = r.campaign_id JOIN studies s
                 ON s.campaign_uuid = c.uuid AND s.campaign_row = r.row AND s.status = 'done' AND s.batch = r.batch
                 AND s.seqlen = r.seqlen AND s.causal = r.causal")" = 3 ] ||
    fail "each row's study: $(sql one.db "SELECT * FROM campaign_rows")"
[ "$(sql one.db "SELECT count(*) FROM trials WHERE run_ms IS NOT NULL")" = 6 ] || fail "not 2 trials a row"
echo "ok: a campaign of three rows, a study each"
# A database holding one.db's compile cache alone.
cached() {
    cp one.db "$1"
    "$fixture" sql "$1" "DELETE FROM campaign_rows; DELETE FROM campaigns; DELETE FROM samples; DELETE FROM trials;
        DELETE FROM study_families; DELETE FROM studies"
}

"$tool" campaign c.tsv --db one.db "${search[@]}" >again.out 2>again.err || fail "the campaign run again"
[ "$(grep -c "done (before)" again.out)" = 3 ] || fail "run again: $(cat again.out)"
[ "$(sql one.db "SELECT count(*) FROM studies")" = 3 ] || fail "run again started a study"
echo "ok: run again, every row done before, nothing run"

# Killed with -9, campaign and searches alike, once the first row has a trial
# (its first two cached, its last two compiled: it is still running).
sed '3s/\t2\treplay/\t4\treplay/' c.tsv >k.tsv
cached k.db
setsid "$tool" campaign k.tsv --db k.db "${search[@]}" >k.out 2>k.err &
pgid=$!
disown
for _ in $(seq "$(scaled 600)"); do
    [ "$(sql k.db "SELECT count(*) FROM trials WHERE run_ms IS NOT NULL" 2>/dev/null || echo 0)" -ge 1 ] && break
    sleep 0.1
done
kill -9 -- -"$pgid"
for _ in $(seq 100); do pgrep -g "$pgid" >/dev/null || break; sleep 0.1; done # the searches too
pgid=
[ "$(sql k.db "SELECT count(*) FROM studies WHERE status = 'running'")" = 1 ] || fail "no study in flight at the kill"
"$tool" campaign k.tsv --db k.db "${search[@]}" >k2.out 2>k2.err || { cat k2.out k2.err >&2; fail "after kill -9"; }
grep -q "row 1 (2,8,512,64 none): resuming study 1" k2.err || fail "row 1 not resumed: $(cat k2.err)"
[ "$(sql k.db "SELECT group_concat(runs || status, ' ') FROM studies")" = "2done 1done 1done" ] ||
    fail "after the kill: $(sql k.db "SELECT id, runs, status FROM studies")"
[ "$(sql k.db "SELECT count(*) - count(DISTINCT study_id || config_key) FROM trials")" = 0 ] || fail "a trial twice"
[ "$(sql k.db "SELECT count(*) FROM trials WHERE run_ms IS NOT NULL")" = 8 ] || fail "not 4, 2 and 2 trials"
echo "ok: killed with -9 and run again: row 1 resumed, the others run, nothing twice"

# Export: the dispatch table of the three rows, keyed by GPU model, which compiles and looks up.
uuid=$(sql one.db "SELECT uuid FROM campaigns")
"$tool" -q export --db one.db --campaign -o one.h
grep -q '"sm_90", "NVIDIA H100 80GB HBM3", ' one.h || fail "no GPU model in the table"
grep -q "^#define FATTN_TUNED_COUNT 3$" one.h || fail "not three entries"
echo "ok: export --campaign: the three rows' bests"

# The campaign on another GPU model too (row 1's landscape relabelled an H200's, the file unchanged): a
# study per row and model; merged, the dispatch table holds both models' entries of row 1, each found
# by its GPU.
sed -i 's/^# device: .*/# device: NVIDIA H200/' data/landscape-h100-2-8-512-64.csv
cached h200.db
"$tool" -q campaign c.tsv --db h200.db --rows 1 --uuid "$uuid" "${search[@]}" >/dev/null || fail "the H200 row"
"$tool" -q merge one.db h200.db -o models.db
[ "$(sql models.db "SELECT count(*) FROM campaigns")" = 1 ] || fail "one campaign in models.db"
"$tool" -q export --db models.db --campaign -o models.h
if [ "$(grep -c '"sm_90", "NVIDIA H200", ' models.h)" != 1 ] ||
    [ "$(grep -c '"sm_90", "NVIDIA H100 80GB HBM3", ' models.h)" != 3 ]; then
    fail "models.h: $(grep '"sm_90"' models.h)"
fi
cat >models.c <<'EOF'
#include <string.h>
#include "models.h"
int main(void)
{
    const fattn_tuned_entry *h200 = fattn_tuned_lookup_gpu("NVIDIA H200", "sm_90", 2, 8, 512, 64, 0);
    const fattn_tuned_entry *h100 = fattn_tuned_lookup_gpu("NVIDIA H100 80GB HBM3", "sm_90", 2, 8, 512, 64, 0);
    const fattn_tuned_entry *other = fattn_tuned_lookup_gpu("NVIDIA B200", "sm_90", 2, 8, 512, 64, 0);
    return !(h200 && !strcmp(h200->gpu, "NVIDIA H200") && h100 && !strcmp(h100->gpu, "NVIDIA H100 80GB HBM3") &&
             h200 != h100 && other);
}
EOF
cc -std=c11 -Wall -Werror -o models models.c || fail "models.h does not compile"
./models || fail "fattn_tuned_lookup_gpu does not tell the H100's entry from the H200's"
echo "ok: an H100's and an H200's studies of one row merged: the table holds both, each found by its GPU"
