# shellcheck shell=bash
# shellcheck disable=SC2046,SC2154 # $(causal_flag ...) and $(timing_for ...) expand to zero or more words; device-check.sh sets root, tool, work, ...
# The speed stage of scripts/device-check.sh (issues 33 and 52), sourced by
# it: its helpers (say, bad, run, sql, md_table, gpu_slug, shape_tag,
# causal_flag, timing_for, confirm_report, sanitize, scaled, fattn_duration_s)
# and variables (tool, arch, work, OUT, report, log, root, filter,
# est_sanitize_s) are device-check.sh's.
#
# Every pair of search/speed-budgets.tsv (a seed shape, causal or not)
# searched over both attention families' pruned spaces in one study
# (search/space-speed.json, the mma family's, $FATTN_SPEED_SPACE;
# search/space-wgmma-v2.json, the wgmma family's, $FATTN_SPEED_WGMMA_SPACE,
# "none" for the mma family alone), confirmed, exported and compared with
# PyTorch SDPA; the table names each pair's winning family and each family's
# best in the search.

# The speed stage's pairs: "SHAPE CAUSAL BUDGET_S" from search/speed-budgets.tsv,
# narrowed to $FATTN_SPEED_SHAPES and $FATTN_SPEED_CAUSAL where set, each
# budget $FATTN_SPEED_BUDGET (a duration) where set.
speed_pairs() {
    local shape causal budget
    while read -r shape causal budget; do
        case $shape in '#'* | '') continue ;; esac
        if [ -n "${FATTN_SPEED_SHAPES:-}" ]; then case " $FATTN_SPEED_SHAPES " in *" $shape "*) ;; *) continue ;; esac; fi
        if [ -n "${FATTN_SPEED_CAUSAL:-}" ]; then case " $FATTN_SPEED_CAUSAL " in *" $causal "*) ;; *) continue ;; esac; fi
        [ -n "${FATTN_SPEED_BUDGET:-}" ] && budget=$(fattn_duration_s "$FATTN_SPEED_BUDGET")
        echo "$shape $causal $budget"
    done <"${FATTN_SPEED_TABLE:-$root/search/speed-budgets.tsv}"
}
# Our own baseline on causal shapes (cuDNN's fused attention is non-causal
# in our worker): the FlashAttention-2 forward's shape of work in our kernel,
# 128-row blocks over 4 warps, 2 stages, with the widest key tile our kernel
# holds there without spilling (FA2's own 128 x 128 at D = 64 and 128 x 64 at
# D = 128 spill in it: 255 registers): 64 keys at D = 64, 32 at D = 128.
fa2_like() { case $1 in *,64) echo bm128-bn64-bk64-w4-s2-u1-cp1-sw1-h1 ;; *) echo bm128-bn32-bk64-w4-s2-u1-cp1-sw1-h1 ;; esac; }
speed_space() { echo "${FATTN_SPEED_SPACE:-$root/search/space-speed.json}"; }
speed_wgmma_space() { echo "${FATTN_SPEED_WGMMA_SPACE:-$root/search/space-wgmma-v2.json}"; }
# The --space options of the speed stage's searches: one per family.
speed_spaces() {
    printf -- '--space\n%s\n' "$(speed_space)"
    [ "$(speed_wgmma_space)" = none ] || printf -- '--space\n%s\n' "$(speed_wgmma_space)"
}
# The stage's estimate (device-check.sh's `estimate speed`): the pairs'
# budgets, 25 s a pair besides (confirm, export, compare), the sanitizers'
# runs on the two bests the pairs hold (2 each), 20 s to start.
est_speed() {
    local s=0 n=0 san=0 shape causal b
    while read -r shape causal b; do
        [ -n "$b" ] || continue
        s=$((s + b + 25))
        n=$((n + 1))
    done <<<"$(speed_pairs)"
    speed_pairs | grep -q ',64 0 ' && san=$((san + 2))
    speed_pairs | grep -q ',128 1 ' && san=$((san + 2))
    echo "$((s + san * est_sanitize_s + 20)) $n shape and mask pairs over both families: the search budgets of search/speed-budgets.tsv, confirm, export, compare_sdpa.py (one process), $san sanitizer runs"
}

# speed_one SHAPE CAUSAL BUDGET_S DB: search, confirm --n 100 against our
# baseline, export; one line into $OUT/speed-pairs.jsonl, the pair into the
# compare process (waiting for its answer), the table rewritten.
speed_one() {
    local shape=$1 causal=$2 budget=$3 sdb=$4 tag id t0 rc key surv base desc
    tag=$(shape_tag "$shape" "$causal")
    say "### $shape $([ "$causal" = 1 ] && echo causal || echo non-causal) (search budget ${budget} s)"
    say ""
    local spaces
    mapfile -t spaces < <(speed_spaces)
    surv=$("$tool" -q gates "${spaces[@]}" --arch "$arch" --shape "$shape" $(causal_flag "$causal") \
        --smem-limit max ${filter:+--filter "$filter"} 2>>"$log" |
        sed -n 's/^ *survivors *\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
    t0=$(date +%s)
    run "$tool" search --arch "$arch" --shape "$shape" $(causal_flag "$causal") "${spaces[@]}" \
        ${filter:+--filter "$filter"} --budget "${budget}s" --smem-limit max $(timing_for "$shape") --db "$sdb" -q
    rc=$?
    id=$(sql "$sdb" "SELECT max(id) FROM studies WHERE command = 'search'")
    [ $rc = 0 ] || { bad "search of $shape causal=$causal exited $rc"; return; }
    say "study $id: $(($(date +%s) - t0)) s wall; $(sql "$sdb" "SELECT count(*) FROM trials WHERE study_id = $id AND status = 'ok'") measured of ${surv:-?} gate survivors, $(sql "$sdb" "SELECT count(*) FROM trials WHERE study_id = $id AND reason = 'numerics'") failed numerics, $(sql "$sdb" "SELECT count(*) FROM trials WHERE study_id = $id AND reason = 'runtime_fault'") faulted"
    say ""
    "$tool" -q query --db "$sdb" --format csv --sql "SELECT family, count(*) AS measured, min(median_us) AS best_us FROM trials WHERE study_id = $id AND status = 'ok' GROUP BY family ORDER BY best_us" | md_table >>"$report"
    say ""
    "$tool" -q query --db "$sdb" --format csv --sql "SELECT config_key, round(median_us, 3) AS median_us, round(p90_us, 3) AS p90_us, round(tflops, 1) AS tflops, registers, smem_dynamic AS smem, printf('%.2g', rel_l2) AS rel_l2 FROM trials WHERE study_id = $id AND status = 'ok' ORDER BY median_us LIMIT 5" | md_table >>"$report"
    say ""
    base=cudnn
    [ "$causal" = 1 ] && base=config:$(fa2_like "$shape")
    confirm_report "$sdb" "$id" "$OUT/speed-confirm-$tag.txt" --baseline "$base" ||
        bad "confirm on $shape causal=$causal exited $?"
    # The configuration export hands on (the confirmed fastest), which the
    # comparison times and the sanitizers check.
    run "$tool" export --db "$sdb" --study "$id" --format json -o "$OUT/speed-$tag.json" &&
        run "$tool" export --db "$sdb" --study "$id" --format cubin -o "$OUT/speed-$tag.cubin" ||
        { bad "export of $shape causal=$causal"; return; }
    key=$(sed -n 's/^ *"config_key": "\([^"]*\)".*/\1/p' "$OUT/speed-$tag.json" | head -1)
    desc=$([ "$causal" = 1 ] && echo "FA2-like $(fa2_like "$shape")" || echo "cuDNN (worker)")
    # fattn-tune's side of the table, from the confirmation just stored.
    python3 - "$sdb" "$id" "$desc" "${surv:-0}" "$budget" >>"$OUT/speed-pairs.jsonl" 2>>"$log" <<'PY' ||
import json, sqlite3, sys
db, study, desc, surv, budget = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
c = sqlite3.connect(db)
r = c.execute("SELECT s.batch, s.heads, s.seqlen, s.head_dim, s.causal, c.config_key, s.device, c.n, c.median_us, "
              "c.ci_lo_us, c.ci_hi_us, c.base_median_us, c.base_ci_lo_us, c.base_ci_hi_us, c.rel_l2, "
              "(SELECT count(*) FROM trials WHERE study_id = s.id AND status = 'ok') FROM confirmations c "
              "JOIN studies s ON s.id = c.study_id WHERE c.study_id = ? ORDER BY c.id DESC LIMIT 1", (study,)).fetchone()
if r is None:
    sys.exit(f"study {study} has no confirmation")
fams = {f: {"best_us": b, "measured": m} for f, b, m in c.execute(
    "SELECT coalesce(family, 'mma'), min(median_us), count(*) FROM trials WHERE study_id = ? AND status = 'ok' "
    "GROUP BY 1", (study,))}
family = c.execute("SELECT coalesce(family, 'mma') FROM trials WHERE study_id = ? AND config_key = ? LIMIT 1",
                   (study, r[5])).fetchone()
for (f,) in c.execute("SELECT family FROM study_families WHERE study_id = ?", (study,)):
    fams.setdefault(f, {"best_us": None, "measured": 0})
print(json.dumps({"shape": list(r[0:4]), "causal": r[4], "config": r[5], "device": r[6], "n": r[7],
                  "median_us": r[8], "ci_us": [r[9], r[10]], "base_desc": desc, "base_median_us": r[11],
                  "base_ci_us": [r[12], r[13]], "rel_l2": r[14], "measured": r[15], "survivors": surv or None,
                  "budget_s": budget, "study": study, "family": family[0] if family else None, "families": fams}))
PY
        bad "no confirmation of $shape causal=$causal to tabulate"
    [ "$key" = "$(tail -1 "$OUT/speed-pairs.jsonl" | sed -n 's/.*"config": "\([^"]*\)".*/\1/p')" ] ||
        bad "the exported configuration of $shape causal=$causal ($key) is not the confirmed one"
    if [ -n "${cmp_pid:-}" ]; then
        local answer=""
        echo "$OUT/speed-$tag.json $OUT/speed-$tag.cubin" >&"${cmp_in}"
        if ! read -r -t "$(scaled 300)" answer <&"${cmp_out}"; then
            # A late answer would be read as the next pair's, and its GPU
            # work would overlap the next search: the process goes.
            answer="no answer in $(scaled 300) s: the comparison process was stopped"
            kill "$cmp_pid" 2>/dev/null
            exec {cmp_in}>&- {cmp_out}<&-
            cmp_pid=""
        fi
        [ "$answer" = "done 0" ] || bad "compare_sdpa.py on $key ($shape causal=$causal): $answer"
    else
        say "not compared: no comparison process"
        say ""
    fi
    speed_table
    # The sanitizers' two: the first D = 64 non-causal pair, the first D = 128 causal one.
    case "$causal $shape" in
    "0 "*,64) [ -n "${san64:-}" ] || san64="$key $shape 0" ;;
    "1 "*,128) [ -n "${san128:-}" ] || san128="$key $shape 1" ;;
    esac
    rm -f "$OUT/speed-$tag.cubin"
}

# The table so far ($OUT/speed-GPU.md; docs/speed-h100.md and speed-h200.md
# are these files committed).
speed_table() {
    local t=$OUT/speed-$(gpu_slug).md
    python3 "$root/scripts/speed_table.py" --pairs "$OUT/speed-pairs.jsonl" \
        $([ -s "$OUT/speed.jsonl" ] && echo "$OUT/speed.jsonl") >"$t.tmp" 2>>"$log"
    speed_rc=$?
    mv "$t.tmp" "$t"
}

stage_speed() {
    local sdb=$work/device-speed.db shape causal budget pairs n=0 total=0 left scale cmp_pid="" cmp_in cmp_out
    local san64="" san128="" speed_rc=0 pick S D
    say "## Speed: $(speed_spaces | grep -v -- '^--space$' | sed "s|$root/||" | paste -sd ' ' | sed 's/ / and /g') searched per seed shape (one study over the families), confirmed, compared with PyTorch SDPA"
    say ""
    pairs=$(speed_pairs)
    [ -n "$pairs" ] || { bad "speed: no pair in the budget table for '${FATTN_SPEED_SHAPES:-}' '${FATTN_SPEED_CAUSAL:-}'"; return; }
    rm -f "$OUT/speed-pairs.jsonl" "$OUT/speed.jsonl"
    # One comparison process for every pair (PyTorch starts once);
    # $FATTN_COMPARE_CMD stands in for it in the dry run (the same protocol).
    local cmp_cmd=${FATTN_COMPARE_CMD:-}
    if [ -z "$cmp_cmd" ] && [ -z "${FATTN_WORKER_HOOK:-}" ] &&
        python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
        cmp_cmd="python3 $root/scripts/compare_sdpa.py"
    fi
    if [ -n "$cmp_cmd" ]; then
        # shellcheck disable=SC2086
        coproc CMP { exec $cmp_cmd --serve --n 100 --markdown "$report" \
            --samples-csv "$OUT/speed-samples.csv" --summary-json "$OUT/speed.jsonl" 2>>"$log"; }
        cmp_pid=$CMP_PID cmp_in=${CMP[1]} cmp_out=${CMP[0]}
    else
        say "compare_sdpa.py skipped: no PyTorch with CUDA, or no GPU (fake engine)"
        say ""
    fi
    # Budgets scaled to what is left of the stage ($FATTN_SPEED_LEFT_S,
    # device-session.sh's), every pair's overhead (about 25 s) and the
    # sanitizers (2 x 2 runs) kept apart.
    while read -r shape causal budget; do n=$((n + 1)) total=$((total + budget)); done <<<"$pairs"
    left=${FATTN_SPEED_LEFT_S:-0}
    scale=100
    if [ "$left" -gt 0 ]; then
        scale=$(( (left - 25 * n - 4 * est_sanitize_s) * 100 / total ))
        [ $scale -gt 100 ] && scale=100
        [ $scale -lt 100 ] && say "(budgets scaled to ${scale}% to fit the ${left} s left)" && say ""
    fi
    while read -r shape causal budget; do
        budget=$((budget * scale / 100))
        [ $budget -lt 10 ] && budget=10  # search refuses less
        speed_one "$shape" "$causal" "$budget" "$sdb" </dev/null
    done <<<"$pairs"
    if [ -n "$cmp_pid" ]; then
        # End of input ends it; a hung one is stopped after a minute.
        exec {cmp_in}>&-
        (sleep 60 && kill "$cmp_pid" 2>/dev/null) &
        local guard=$!
        wait "$cmp_pid" 2>/dev/null
        kill "$guard" 2>/dev/null
    fi
    if command -v compute-sanitizer >/dev/null && [ -z "${FATTN_WORKER_HOOK:-}" ]; then
        local k sh c t res row
        for pick in "$san64" "$san128"; do
            [ -n "$pick" ] || continue
            read -r k sh c <<<"$pick"
            IFS=, read -r _ _ S D <<<"$sh"
            row="compute-sanitizer on $k at 1,2,$S,$D$([ "$c" = 1 ] && echo " causal"):"
            for t in memcheck racecheck; do
                res=$(sanitize "$t" "$k" "1,2,$S,$D" "$c" --smem-limit max) || bad "$t on $k ($sh causal=$c): $res"
                row="$row $t $res;"
            done
            say "$row"
            say ""
        done
    else
        say "sanitizers skipped: no compute-sanitizer, or no GPU (fake engine); they would check ${san64%% *} and ${san128%% *}"
        say ""
    fi
    if [ -s "$OUT/speed-pairs.jsonl" ]; then
        speed_table
        cat "$OUT/speed-$(gpu_slug).md" >>"$report"
        say ""
        [ "$speed_rc" = 0 ] || [ -n "${FATTN_WORKER_HOOK:-}" ] ||
            bad "speed_table.py: not every pair's chain is complete (see the table)"
    fi
}
