# shellcheck shell=bash
# shellcheck disable=SC2046,SC2154 # $(causal_flag ...) and $(timing_for ...) expand to zero or more words; device-check.sh sets root, tool, work, ...
# The wgmma stage of scripts/device-check.sh (issues 37 and 51), sourced by
# it: its helpers (say, ok, bad, run, sql, first_step, bench_ok, sanitize,
# md_table, est_search, survivors) and variables (tool, arch, work, OUT,
# report, root) are device-check.sh's.
#
# The wgmma family (warp-specialised wgmma + TMA attention) on the GPU, one
# ordered list whose first failure stops the rest with its log: the
# primitives bit for bit (the cluster's reported without stopping the stage:
# see wgmma_no_cluster), every tensor map of the family's space through the
# driver, the simplest configuration with bounded mbarrier waits at 1,1,64,64
# and then 1,2,130,{64,128} causal and not, the persistent schedules with
# every block looping (more tiles than SMs), the covering sample's numerics
# in the worker under a 1 s kernel watchdog, memcheck on three
# configurations (one persistent); then, the SM clock logged, exhaustive
# searches of 4,16,2048,128 non-causal and causal over the pruned v2 space
# (search/space-wgmma-v2.json; the compile cache scripts/device-cache.sh
# --wgmma made, when carried), confirm --n 100 of each best (non-causal
# against cuDNN, causal against the family's reference: cuDNN's fused
# operation has no mask), Nsight Compute on the non-causal best, and per
# shape one compare_sdpa.py process: the best beside PyTorch's backends and
# beside itself with each of OVERLAP, PINGPONG, SCHED and CLUSTER switched (issue 51's
# ablation, interleaved, with the reverse-order rerun), after ncu (the
# compare's check that confirm's median agrees within 10% stopped the H200
# session of 2026-11-28 before ncu, the GPU's clock lower in confirm); last
# the same search, confirm and compare for 8,16,512,64 over the whole space
# under a budget.
#
# The cluster primitives (modes 19-20) failing on the GPU take CLUSTER=2 out
# of the rest of the stage (covering cases, searches: wgmma_no_cluster), so
# that the searches still measure everything else.
#
# FATTN_WGMMA_FILTER=EXPR narrows the searches (the dry run's, on 2 cores);
# FATTN_WGMMA_BUDGET=D bounds each (default none: every survivor);
# FATTN_WGMMA_CASES=N runs the covering sample's first N cases only.
wgmma_space=$root/search/space-wgmma.json
wgmma_v2=$root/search/space-wgmma-v2.json
wgmma_simple=wgmma-bm128-bn128-s2-rs1
wgmma_shape=4,16,2048,128
# Issue 51's third speed shape, searched over the whole space (no landscape
# of it to prune by: the H200's 2,8,512,64 is 8 times smaller, its best
# BLOCK_M 64) by the default strategy for 40 s, after the two above (45 s
# until the ablation's CLUSTER=2 variant took some of the stage's time).
wgmma_small=8,16,512,64 wgmma_small_budget=40s
# The tunables the ablation switches, as the key names them, each with the
# value it takes when the best has its default (absent from the key).
wgmma_ablate="ov:1 pp:1 sc:1 cl:2"
wgmma_no_cluster=0

# shellcheck disable=SC2317 # called through first_step's "$@"
wgmma_bench() { # KEY SHAPE CAUSAL [OPTION...]
    local key=$1 shape=$2 causal=$3
    shift 3
    bench_ok "" "$key" --space "$wgmma_space" --shape "$shape" $(causal_flag "$causal") --smem-limit max "$@"
}
# The covering sample (check --covering --list): "KEY SHAPE causal|-" lines.
wgmma_cases() {
    local list
    list=$("$tool" check --covering --space "$wgmma_space" --arch "$arch" --list) || return 1
    # FATTN_WGMMA_CASES: the first N cases only (the dry run's plumbing test)
    [ "$wgmma_no_cluster" = 0 ] || list=$(grep -v -- '-cl2 ' <<<"$list")
    if [ -n "${FATTN_WGMMA_CASES:-}" ]; then head -n "$FATTN_WGMMA_CASES" <<<"$list"; else echo "$list"; fi
}
# shellcheck disable=SC2317
wgmma_covering() {
    local key shape causal n=0 list
    list=$(wgmma_cases) || return 1
    # The sample holds every pair a kernel can tile (the simulator runs
    # them all); the GPU runs what the static and post-compile gates let
    # through (register_budget refuses some), and the refused are counted.
    local out refused=0
    while read -r key shape causal; do
        if out=$(wgmma_bench "$key" "$shape" "$([ "$causal" = causal ] && echo 1 || echo 0)" \
            --samples 3 --kernel-timeout 1s 2>&1); then
            n=$((n + 1))
        elif grep -q 'is rejected by the [a-z_]* gate' <<<"$out"; then
            refused=$((refused + 1))
        else
            printf '%s\n' "$out"
            echo "covering case $key at $shape $causal failed"
            return 1
        fi
        printf '%s\n' "$out"
    done <<<"$list"
    echo "$n covering cases verified, $refused refused by a gate"
}
# wgmma_db: the stages' database. The compile cache device-session.sh
# unpacked (results/device.db) is copied in when there is one, so that the
# searches run what was compiled before the lease.
wgmma_db() {
    local db=$work/wgmma.db
    rm -f "$db" "$db"-*
    if [ -f "$work/device.db" ]; then
        cp "$work/device.db" "$db"
        echo "compile cache from $work/device.db: $(sql "$db" "SELECT count(*) FROM compile_cache WHERE family = 'wgmma'") wgmma cubins"
    fi
}
# shellcheck disable=SC2317
wgmma_search() { # DB SHAPE CAUSAL SPACE [BUDGET]: exhaustive, or the default strategy for BUDGET
    local budget=${FATTN_WGMMA_BUDGET:-${5:-}} filter=${FATTN_WGMMA_FILTER:-} strategy=exhaustive
    [ "$wgmma_no_cluster" = 0 ] || filter=${filter:+$filter,}CLUSTER=1
    [ -z "${5:-}" ] || strategy=gp
    "$tool" search --strategy "$strategy" --space "$4" --arch "$arch" --shape "$2" \
        $(causal_flag "$3") --smem-limit max ${budget:+--budget "$budget"} ${filter:+--filter "$filter"} \
        --db "$1" $(timing_for "$2") || return 1
    [ "$(sql "$1" "SELECT count(*) FROM trials WHERE status = 'ok' AND study_id = (SELECT max(id) FROM studies)")" -gt 0 ] ||
        { echo "no trial measured"; return 1; }
}
# wgmma_latest DB: "STUDY KEY", the latest study and its fastest timed
# configuration (what a search just made).
wgmma_latest() {
    sql "$1" "SELECT id || ' ' || coalesce((SELECT config_key FROM trials t WHERE t.study_id = s.id AND t.status = 'ok'
              ORDER BY t.median_us LIMIT 1), '') AS latest FROM studies s ORDER BY id DESC LIMIT 1"
}
# wgmma_variants KEY: the keys of the ablation, one a line: KEY with each of
# $wgmma_ablate switched (a value in the key back to the default; the
# default to the value named; CLUSTER=2 with SCHED back to 0), and those
# the tiling gate takes (SCHED=2 is causal-only, CLUSTER=2 non-causal at
# D = 128) left to the study's trials to say.
wgmma_variants() {
    local key=$1 t tag
    for t in $wgmma_ablate; do
        tag=${t%%:*}
        if [[ $key =~ -${tag}[1-9] ]]; then
            sed -E "s/-${tag}[1-9]//" <<<"$key"
        elif [ "$tag" = cl ]; then # CLUSTER=2 pairs with SCHED 0 only
            sed -E "s/-sc[1-9]//; s/$/-cl${t#*:}/" <<<"$key"
        else
            echo "$key-$tag${t#*:}"
        fi
    done
}
json_key() { sed -n 's/^  "config_key": "\(.*\)",$/\1/p' "$1" | head -1; } # an export's configuration
# wgmma_alone DB JSON SHAPE CAUSAL SET: the configuration of an export (its
# JSON) with SET's values (NAME=VALUE,...) searched alone, a study of its
# own in DB; prints the study. For a variant outside the searched space
# (CLUSTER=2: the v2 space keeps CLUSTER 1).
# shellcheck disable=SC2317
wgmma_alone() {
    local filter kv
    filter=$(sed -n 's/^  "config": {\(.*\)},$/\1/p' "$2" | sed -E 's/"([A-Z_0-9]+)": /\1=/g; s/ //g')
    for kv in ${5//,/ }; do
        filter=$(sed -E "s/(^|,)${kv%%=*}=[0-9]+/\1$kv/" <<<"$filter")
    done
    "$tool" -q search --strategy exhaustive --space "$wgmma_space" --arch "$arch" --shape "$3" $(causal_flag "$4") \
        --smem-limit max --filter "$filter" --db "$1" $(timing_for "$3") >&2 || return 1
    sql "$1" "SELECT max(id) FROM studies"
}
# shellcheck disable=SC2317
wgmma_compare() { # DB STUDY SHAPE CAUSAL: its exported cubin beside PyTorch SDPA and the ablation's variants
    local db=$1 st=$2 tag best v vst vargs=() n=0
    tag=$(shape_tag "$3" "$4")
    "$tool" export --db "$db" --study "$st" --format json -o "$OUT/best-wgmma-$tag.json" &&
        "$tool" export --db "$db" --study "$st" --format cubin -o "$OUT/best-wgmma-$tag.cubin" || return 1
    best=$(json_key "$OUT/best-wgmma-$tag.json")
    # Each variant the study measured (a canonical key; one the gates
    # refused has no timed trial, and is said so); the CLUSTER=2 variant,
    # outside the searched space, searched alone first (with SCHED 0, the
    # only schedule it pairs with; where the tiling gate refuses it, that
    # study holds the refusal).
    for v in $(wgmma_variants "$best"); do
        n=$((n + 1))
        vst=$st
        if [[ $v == *-cl2* ]] && [ "$wgmma_no_cluster" = 0 ]; then
            vst=$(wgmma_alone "$db" "$OUT/best-wgmma-$tag.json" "$3" "$4" CLUSTER=2,SCHED=0) || vst=$st
        fi
        if "$tool" export --db "$db" --study "$vst" --config "$v" --format json -o "$OUT/ablate-$tag-$n.json" &&
            "$tool" export --db "$db" --study "$vst" --config "$v" --format cubin -o "$OUT/ablate-$tag-$n.cubin"; then
            vargs+=(--variant "$OUT/ablate-$tag-$n.json:$OUT/ablate-$tag-$n.cubin")
            echo "ablation: $(json_key "$OUT/ablate-$tag-$n.json")"
        else
            echo "ablation: $v not measured in study $st (a gate refused it, or outside the searched space)"
        fi
    done
    if [ -n "${FATTN_WORKER_HOOK:-}" ]; then
        echo "compare_sdpa.py skipped: no GPU (fake engine); $((${#vargs[@]} / 2)) variants ready"
        return 0
    fi
    python3 "$root/scripts/compare_sdpa.py" --json "$OUT/best-wgmma-$tag.json" --cubin "$OUT/best-wgmma-$tag.cubin" \
        "${vargs[@]}" --n 100 --markdown "$report" --summary-json "$OUT/compare-wgmma.jsonl"
}
# shellcheck disable=SC2317
wgmma_ncu() { # KEY
    if [ -n "${FATTN_WORKER_HOOK:-}" ] || ! command -v ncu >/dev/null; then
        echo "skipped: no ncu or no GPU (fake engine)"
        return 0
    fi
    local bench=("$tool" bench "$1" --space "$wgmma_v2" --arch "$arch" --shape "$wgmma_shape" --smem-limit max
        --samples 1 --reps 1 --warmup 1 --timing-sets 2 --db "$work/device-bench.db")
    ncu --target-processes all -k regex:fattn_wgmma -c 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
        --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy \
        --section MemoryWorkloadAnalysis "${bench[@]}" >"$OUT/ncu-wgmma.txt" 2>&1 || return 1
    # The tensor pipes' activity (issue 51's bar: 70% of peak at this
    # shape), HMMA and GMMA alike, in a run of its own: a metric name this
    # ncu lacks fails only this one. ncu locks the clocks at base.
    ncu --target-processes all -k regex:fattn_wgmma -c 1 \
        --metrics 'regex:^sm__pipe_tensor_op_[a-z]*_cycles_active\.avg\.pct_of_peak_sustained_(active|elapsed)$' \
        "${bench[@]}" >>"$OUT/ncu-wgmma.txt" 2>&1 || echo "ncu: the tensor-pipe metrics failed (see \$OUT/ncu-wgmma.txt)"
    grep -E 'sm__pipe_tensor_op|Duration|Compute \(SM\) Throughput|Registers Per Thread' "$OUT/ncu-wgmma.txt"
}

# gpu_clocks_start / gpu_clocks_stop: the SM clock, power and temperature
# every 200 ms into $OUT/gpu-clocks.csv (the H200 session of 2026-11-28
# measured the same kernels 12% slower in confirm, after a 90 s search,
# than in the search and in compare_sdpa.py: both sides of confirm alike).
gpu_clocks_pid=
gpu_clocks_start() {
    [ -z "${FATTN_WORKER_HOOK:-}" ] && command -v nvidia-smi >/dev/null || return 0
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
        --format=csv -lms 200 >>"$OUT/gpu-clocks.csv" 2>/dev/null &
    gpu_clocks_pid=$!
}
gpu_clocks_stop() {
    [ -n "$gpu_clocks_pid" ] || return 0
    kill "$gpu_clocks_pid" 2>/dev/null
    wait "$gpu_clocks_pid" 2>/dev/null
    gpu_clocks_pid=
    # Each step's span in the log, for reading the clocks against the steps.
    awk -F', ' 'NR > 1 && $2 + 0 > 0 { n++; s += $2; if (!lo || $2 + 0 < lo) lo = $2 + 0; if ($2 + 0 > hi) hi = $2 + 0 }
        END { if (n) printf "SM clock over %d samples: mean %.0f MHz, %d-%d\n", n, s / n, lo, hi }' "$OUT/gpu-clocks.csv"
}

# The stage's estimate: "SECONDS WHAT" (device-check.sh's estimate()).
wgmma_survivors() { # SHAPE CAUSAL SPACE: the static survivors of a search
    local filter=${FATTN_WGMMA_FILTER:-}
    "$tool" -q gates --arch "$arch" --shape "$1" $(causal_flag "$2") --space "$3" --smem-limit max \
        ${filter:+--filter "$filter"} --format csv 2>/dev/null | awk -F, '$1 == "survivors" { print $2 }'
}
wgmma_estimate() {
    local cases n0 n1 n2 c128=0 s0 s1 s2
    cases=$(wgmma_cases 2>/dev/null | grep -c .)
    n0=$(wgmma_survivors "$wgmma_shape" 0 "$wgmma_v2")
    n1=$(wgmma_survivors "$wgmma_shape" 1 "$wgmma_v2")
    n2=$(wgmma_survivors "$wgmma_small" 0 "$wgmma_space")
    # Compiles the carried cache saves in the two exhaustive searches (its
    # D = 128 wgmma cubins; a cubin of another kernel source is compiled
    # again, which this does not see); the budgeted search takes its budget
    # either way (its D = 64 cubins let it measure more in it).
    [ ! -f "$work/device.db" ] ||
        c128=$(sql "$work/device.db" "SELECT count(*) FROM compile_cache WHERE family = 'wgmma' AND options LIKE '%-DHEAD_DIM=128 %'" 2>/dev/null)
    [ "${c128:-0}" -le $((n0 + n1)) ] || c128=$((n0 + n1))
    s0=$(est_search "$wgmma_shape" 0 "$wgmma_v2" "$n0")
    s1=$(est_search "$wgmma_shape" 1 "$wgmma_v2" "$n1")
    s2=$(fattn_duration_s "$wgmma_small_budget")
    local back
    back=$(awk -v n="${c128:-0}" -v c="$est_compile128_s" -v cores="$cores" 'BEGIN { printf "%.0f", n * c / cores }')
    if [ -n "${FATTN_WGMMA_BUDGET:-}" ]; then
        s0=$(fattn_duration_s "$FATTN_WGMMA_BUDGET") s1=$s0 s2=$s0 back=0
    fi
    # The ablation's CLUSTER=2 variant at 4,16,2048,128, compiled and timed
    # alone (one compile, not spread over the cores): est_compile128_s + 1.
    local alone
    alone=$(awk -v c="$est_compile128_s" 'BEGIN { printf "%.0f", c + 1 }')
    echo "$((10 + 7 * est_bench_s + cases * est_bench_s + 3 * est_sanitize_s + s0 + s1 + s2 - back + alone + 3 * 15 + 60 + 3 * 30)) the primitives (two processes), the maps, 7 bounded runs, $cases covering cases, 3 memchecks, 2 searches of $n0 and $n1 survivors and one of $wgmma_small_budget ($n2) (${c128:-0} of their cubins carried), 3 confirms, ncu, 3 compare_sdpa.py with the ablation (its CLUSTER=2 variant measured alone)"
}

stage_wgmma() {
    say "## The wgmma family (issues 37, 51): warp-specialised wgmma + TMA attention"
    say ""
    say "| step | result | seconds |"
    say "|---|---|---|"
    local db=$work/wgmma.db st0 st1 st2 best0 best1 best2 wb=-wb4000000 c compared=1
    # A compare that fails (a check of its own: the medians' agreement with
    # confirm, the reverse-order rerun, the numerics) is reported as a step
    # does, and the steps after it still run: they measure other shapes.
    compare_step() { step_goes_on=1 first_step "$@" || compared=0; }
    # Persistent schedules on more tiles than the GPU has SMs: 4 x 16 x 8
    # tiles of 128 rows at S = 1024, every block looping (the covering
    # sample's shapes are too small for that on a GPU).
    local sc1=wgmma-bm128-bn128-s2-rs1-ov1-pp1-sc1 sc2=wgmma-bm128-bn128-s2-rs1-ov1-pp1-sc2
    first_step "the Hopper primitives bit for bit (test_sim_prims_sm90 --gpu --to 19)" \
        "$build/tests/test_sim_prims_sm90" --gpu --to 19 &&
        { step_goes_on=1 first_step "the cluster primitives bit for bit, multicast and remote arrivals (--from 19)" \
            "$build/tests/test_sim_prims_sm90" --gpu --from 19 ||
            { wgmma_no_cluster=1 && say "| CLUSTER=2 left out of the steps below | the cluster primitives failed | 0 |"; }; } &&
        first_step "every tensor map of the family's space through the driver (test_tmap --gpu)" \
            "$build/tests/test_tmap" --gpu &&
        first_step "$wgmma_simple, bounded waits, 1,1,64,64" \
            wgmma_bench "$wgmma_simple$wb" 1,1,64,64 0 --samples 3 --kernel-timeout 2s &&
        first_step "the same at 1,2,130,64" wgmma_bench "$wgmma_simple$wb" 1,2,130,64 0 --samples 3 --kernel-timeout 2s &&
        first_step "the same at 1,2,130,64 causal" \
            wgmma_bench "$wgmma_simple$wb" 1,2,130,64 1 --samples 3 --kernel-timeout 2s &&
        first_step "the same at 1,2,130,128" wgmma_bench "$wgmma_simple$wb" 1,2,130,128 0 --samples 3 --kernel-timeout 2s &&
        first_step "the same at 1,2,130,128 causal" \
            wgmma_bench "$wgmma_simple$wb" 1,2,130,128 1 --samples 3 --kernel-timeout 2s &&
        first_step "$sc1, bounded waits, 4,16,1024,128 (every block looping)" \
            wgmma_bench "$sc1$wb" 4,16,1024,128 0 --samples 3 --kernel-timeout 2s &&
        first_step "$sc2 the same, causal" wgmma_bench "$sc2$wb" 4,16,1024,128 1 --samples 3 --kernel-timeout 2s &&
        first_step "the covering sample in the worker (1 s kernel watchdog)" wgmma_covering &&
        { if [ -n "${FATTN_WORKER_HOOK:-}" ] || ! command -v compute-sanitizer >/dev/null; then
            say "| compute-sanitizer memcheck | skipped: no compute-sanitizer or no GPU (fake engine) | 0 |"
        else
            first_step "memcheck $wgmma_simple at 1,2,130,128 causal" \
                sanitize memcheck "$wgmma_simple" 1,2,130,128 1 --space "$wgmma_space" --smem-limit max &&
                first_step "memcheck wgmma-bm192-bn80-s2-rs0 at 2,1,257,64" \
                    sanitize memcheck wgmma-bm192-bn80-s2-rs0 2,1,257,64 0 --space "$wgmma_space" --smem-limit max &&
                first_step "memcheck $sc2 at 1,32,1024,64 causal (every block looping)" \
                    sanitize memcheck "$sc2" 1,32,1024,64 1 --space "$wgmma_space" --smem-limit max
        fi; } &&
        first_step "the searches' database" wgmma_db &&
        { gpu_clocks_start; :; } &&
        first_step "search of $wgmma_shape over the v2 space" wgmma_search "$db" "$wgmma_shape" 0 "$wgmma_v2" &&
        read -r st0 best0 <<<"$(wgmma_latest "$db")" &&
        first_step "search of $wgmma_shape causal over the v2 space" wgmma_search "$db" "$wgmma_shape" 1 "$wgmma_v2" &&
        read -r st1 best1 <<<"$(wgmma_latest "$db")" &&
        first_step "confirm --n 100 of $best0 against cuDNN" \
            "$tool" confirm --db "$db" --study "$st0" --n 100 --baseline cudnn &&
        first_step "confirm --n 100 of $best1 (causal) against the family's reference" \
            "$tool" confirm --db "$db" --study "$st1" --n 100 &&
        first_step "Nsight Compute on $best0 (\$OUT/ncu-wgmma.txt)" wgmma_ncu "$best0" &&
        compare_step "compare_sdpa.py and the ablation, $wgmma_shape" \
            wgmma_compare "$db" "$st0" "$wgmma_shape" 0 &&
        compare_step "compare_sdpa.py and the ablation, $wgmma_shape causal" \
            wgmma_compare "$db" "$st1" "$wgmma_shape" 1 &&
        first_step "search of $wgmma_small over the whole space ($wgmma_small_budget)" \
            wgmma_search "$db" "$wgmma_small" 0 "$wgmma_space" "$wgmma_small_budget" &&
        read -r st2 best2 <<<"$(wgmma_latest "$db")" &&
        first_step "confirm --n 100 of $best2 against cuDNN" \
            "$tool" confirm --db "$db" --study "$st2" --n 100 --baseline cudnn &&
        compare_step "compare_sdpa.py and the ablation, $wgmma_small" \
            wgmma_compare "$db" "$st2" "$wgmma_small" 0 &&
        [ "$compared" = 1 ] &&
        { say ""; ok "wgmma: every step held"; } &&
        "$root/scripts/hw-record.sh" "$tool" "$wgmma_space" \
            "the wgmma stage: the Hopper primitives bit for bit, the covering sample, three searches, confirm, compare"
    [ -z "$gpu_clocks_pid" ] || say "$(gpu_clocks_stop)"
    rm -f "$OUT/first.tmp"
    say ""
    local st shape
    for c in 0 1 2; do
        case $c in 0) st=${st0:-} shape=$wgmma_shape ;; 1) st=${st1:-} shape=$wgmma_shape ;; 2) st=${st2:-} shape=$wgmma_small ;; esac
        [ -n "$st" ] || continue
        say "Search of $shape$([ $c = 1 ] && echo ' causal') (study $st), the ten fastest:"
        say ""
        sql "$db" "SELECT config_key, round(median_us, 2) AS median_us, round(tflops, 1) AS tflops, registers, smem_dynamic AS smem
                   FROM trials WHERE study_id = $st AND status = 'ok' ORDER BY median_us LIMIT 10" |
            { echo "config_key,median_us,tflops,registers,smem"; cat; } | md_table >>"$report"
        say ""
        "$tool" -q query --db "$db" --format csv -o "$OUT/trials-wgmma-$(shape_tag "$shape" "$((c == 1))").csv" --sql \
            "SELECT study_id, config_key, status, reason, registers, smem_dynamic, median_us, p10_us AS p10, p90_us AS p90, tflops, max_abs_err
             FROM trials WHERE study_id = $st ORDER BY seq" 2>>"$log"
    done
}
