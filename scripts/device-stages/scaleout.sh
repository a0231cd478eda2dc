# shellcheck shell=bash
# shellcheck disable=SC2154 # device-check.sh sets root, tool, work, OUT, report, log, arch
# The scale-out stage of scripts/device-check.sh (issue 53), sourced by it:
# its helpers (say, ok, bad, run, sql, md_table) and variables (tool, arch,
# work, OUT, report, log, root) are device-check.sh's.
#
# search --devices all on the lease's GPUs (one, or more): 12 trials, each
# recording its GPU's UUID as the driver gives it (and with several GPUs,
# the reference configuration timed on each). Then a campaign on the GPU as
# a user runs one: two rows (a launch-bound shape
# and a compute-bound causal one) over every family the GPU runs, with
# --devices 0, each row's budget $FATTN_SCALEOUT_BUDGET (default 45s); the
# campaign run again, which must find both rows done and run nothing; the
# first row's best confirmed against cuDNN (--n 30); export --campaign, the
# dispatch table keyed by the GPU's model, compiled; and the database
# merged into another, which the export reads the same. The table and the
# header go to $OUT.

scaleout_budget() { fattn_duration_s "${FATTN_SCALEOUT_BUDGET:-45s}"; }
# The estimate: both rows' budgets, confirm --n 30, the rest 30 s.
est_scaleout() {
    local b
    b=$(scaleout_budget)
    echo "$((2 * b + 120)) search --devices all (12 trials), a 2-row campaign (2 x ${b} s of search), run again, confirm --n 30, export, merge"
}

stage_scaleout() {
    local dir=$work/scaleout b study gpu
    b=$(scaleout_budget)
    mkdir -p "$dir"
    say "## Scale-out (issue 53): search --devices all, a campaign of two rows on GPU 0"
    say ""
    local uuids ngpu
    if run "$tool" --db "$dir/d.db" search --shape 1,8,512,64 --arch "$arch" --devices all --trials 12 --jobs "$(nproc)"; then
        uuids=$(sql "$dir/d.db" "SELECT group_concat(u, ' ') FROM (SELECT DISTINCT gpu_uuid AS u FROM trials WHERE run_ms IS NOT NULL)")
        ngpu=$(sql "$dir/d.db" "SELECT count(DISTINCT gpu_uuid) FROM trials WHERE run_ms IS NOT NULL")
        if [ "$(sql "$dir/d.db" "SELECT count(*) FROM trials WHERE run_ms IS NOT NULL AND gpu_uuid GLOB 'GPU-[0-9a-f]*-*-*-*-*'")" = \
            "$(sql "$dir/d.db" "SELECT count(*) FROM trials WHERE run_ms IS NOT NULL")" ]; then
            ok "search --devices all: 12 trials on $ngpu GPU(s), each with its GPU's UUID ($uuids); spread $(sql "$dir/d.db" "SELECT CASE WHEN gpu_spread_pct IS NULL THEN 'not measured (one GPU)' ELSE printf('%.2f%%', gpu_spread_pct) END FROM studies")"
        else
            bad "search --devices all: a trial without its GPU's UUID ($uuids)"
        fi
    else
        bad "search --devices all --trials 12 failed (check.log)"
    fi
    printf 'shape\tmask\tbudget\tname\n1,8,512,64\tnone\t%ss\tlaunch-bound\n4,16,2048,128\tcausal\t%ss\tcompute-bound, causal\n' \
        "$b" "$b" >"$dir/campaign.tsv"
    if run "$tool" --db "$dir/c.db" campaign "$dir/campaign.tsv" --devices 0 -- --arch "$arch" --jobs "$(nproc)"; then
        ok "campaign of 2 rows with --devices 0: both done"
    else
        bad "the campaign did not finish both rows (check.log)"
    fi
    "$tool" --db "$dir/c.db" campaign "$dir/campaign.tsv" --devices 0 -- --arch "$arch" --jobs "$(nproc)" \
        >"$dir/again.txt" 2>&1
    if [ "$(grep -c 'done (before)' "$dir/again.txt")" = 2 ]; then
        ok "run again: both rows done before, nothing run"
    else
        bad "run again: $(tr '\n' ' ' <"$dir/again.txt" | cut -c1-300)"
    fi
    say ""
    "$tool" -q query --db "$dir/c.db" --format csv --sql "SELECT r.row, r.batch || 'x' || r.heads || 'x' || r.seqlen || 'x' || r.head_dim AS shape, r.causal,
        s.id AS study, s.status, replace(s.device, ',', ';') AS device, (SELECT min(median_us) FROM trials t WHERE t.study_id = s.id AND
        t.status = 'ok') AS best_us, (SELECT count(*) FROM trials t WHERE t.study_id = s.id AND t.run_ms IS NOT NULL)
        AS trials FROM campaign_rows r JOIN campaigns c ON c.id = r.campaign_id LEFT JOIN studies s ON
        s.campaign_uuid = c.uuid AND s.campaign_row = r.row ORDER BY r.row" | md_table >>"$report"
    say ""
    study=$(sql "$dir/c.db" "SELECT id FROM studies WHERE campaign_row = 1 ORDER BY id DESC LIMIT 1")
    if [ -n "$study" ] && run "$tool" --db "$dir/c.db" confirm --study "$study" --n 30; then
        ok "confirm --n 30 of row 1's best (study $study): $(sql "$dir/c.db" "SELECT config_key || ' ' || printf('%.3f', median_us) || ' us, ' || verdict || ' (x' || printf('%.2f', speedup) || ' vs cuDNN)' AS line FROM confirmations ORDER BY id DESC LIMIT 1")"
    else
        bad "confirm of row 1's best (study ${study:-none})"
    fi
    gpu=$(sql "$dir/c.db" "SELECT device FROM studies WHERE campaign_row = 1 LIMIT 1")
    if run "$tool" --db "$dir/c.db" export --campaign -o "$OUT/scaleout-dispatch.h" &&
        grep -qF "\"$gpu\"" "$OUT/scaleout-dispatch.h" && run cc -std=c11 -fsyntax-only -x c "$OUT/scaleout-dispatch.h"; then
        ok "export --campaign: scaleout-dispatch.h, keyed by $gpu, compiles"
    else
        bad "export --campaign (scaleout-dispatch.h)"
    fi
    if run "$tool" merge "$dir/c.db" -o "$dir/merged.db" &&
        run "$tool" --db "$dir/merged.db" export --campaign -o "$dir/merged.h" &&
        diff <(grep -v "Generated by" "$OUT/scaleout-dispatch.h") <(grep -v "Generated by" "$dir/merged.h") >>"$log"; then
        ok "merge of the campaign's database: its export is the same table"
    else
        bad "merge, or the merged database's export, differs"
    fi
    say ""
}
