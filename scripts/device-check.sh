#!/usr/bin/env bash
# device-check.sh - the GPU engine's acceptance run on the device machine.
# Build here first (scripts/device-build.sh), then through the device tool,
# from the repository root with the build folder carried:
#
#   run(command="scripts/device-check.sh first", carry=["build-device"])
#   run(command="scripts/device-check.sh env tests", carry=["build-device"])
#   run(command="scripts/device-check.sh small", carry=["build-device"])
#   run(command="scripts/device-check.sh small-causal", carry=["build-device"])
#   run(command="scripts/device-check.sh large", carry=["build-device"])
#   run(command="scripts/device-check.sh large-causal numerics", carry=["build-device"])
#   run(command="scripts/device-check.sh sanitizer", carry=["build-device"])
#   run(command="scripts/device-check.sh sanitizer-large compare", carry=["build-device"])
#   run(command="scripts/device-check.sh tune", carry=["build-device"])
#   run(command="FATTN_SPEED_SHAPES='1,8,512,64 2,8,512,64 4,8,512,64' FATTN_SPEED_CAUSAL=0 scripts/device-check.sh speed",
#       carry=["build-device"])
#
# Stages (each estimated, from its own work counts, at under 8 minutes on an
# H100; the estimate is printed before a stage runs and beside its wall time
# after, in the report too):
#   first         the first questions on a new GPU, in order, stopping at the
#                 first failure with its log: driver and device found, the
#                 reference kernel vs CPU fp64, the default configuration
#                 through the worker, one SPLIT_KV cluster configuration, its
#                 timing through a CUDA graph, the cuDNN baseline, and
#                 compute-sanitizer memcheck on one configuration (under 5
#                 minutes)
#   env           GPU, driver, toolkit, cuDNN and PyTorch versions
#   hopper        issue 35: every tensor map of the planned Hopper space
#                 encoded through the driver (answering as the mock does),
#                 then each primitive mode of kernels/fattn_prim_sm90_test.cu
#                 in its own launch under a 2 s watchdog, bit for bit against
#                 the simulator: one table row a mode
#   wgmma         issues 37 and 51 (scripts/device-stages/wgmma.sh): the
#                 wgmma family in order, the first failure stopping the rest:
#                 the primitives bit for bit, every tensor map of
#                 search/space-wgmma.json through the driver, the simplest
#                 configuration with bounded waits (1,1,64,64, then
#                 1,2,130,{64,128} causal and not), the persistent schedules
#                 with every block looping, the covering sample's numerics in
#                 the worker (1 s watchdog; those a gate refuses counted),
#                 memcheck on three configurations, exhaustive searches of
#                 4,16,2048,128 causal and not over search/space-wgmma-v2.json
#                 (the compile cache of scripts/device-cache.sh --wgmma when
#                 carried), confirm --n 100 of each, ncu on the non-causal
#                 best ($OUT/ncu-wgmma.txt, the tensor pipes' activity), and
#                 per shape compare_sdpa.py beside PyTorch with the ablation
#                 (the best with OVERLAP, PINGPONG and SCHED each switched,
#                 interleaved); the SM clock and power from the searches on
#                 ($OUT/gpu-clocks.csv)
#   family        issue 36: the second kernel family (tmacopy, O = V through
#                 TMA with tensor maps built per input set): exhaustive search
#                 at 2,8,512,64 and the tail shape 2,8,500,128 (every trial
#                 verified against the family's reference and timed through
#                 the graph), confirm --n 30 of the best, its header exported
#                 and its host launcher compiled
#   tests         the GPU test programs (reference vs fp64 CPU, fill vs host,
#                 the engine across S in {500,512,1000,2048}, D in {64,128},
#                 causal and not, cuDNN; a test that skips (77) is reported
#                 as skipped with its reason), then the seeds' 2-byte pad
#                 forced past the gates: runtime_fault, and the search goes on
#   small         exhaustive search of the default space on 2,8,512,64,
#                 non-causal; kill -9 of a search mid-run, then search
#                 --resume for 10 more trials
#   small-causal  the same search, causal
#   large         exhaustive search on 4,16,2048,128, non-causal
#   large-causal  the same, causal
#   numerics      each study's best config on S in {500,512,1000,2048}
#   sanitizer     compute-sanitizer memcheck and racecheck on the best three
#                 configs of the two S=512 studies
#   sanitizer-large  the same for the two S=2048 studies
#   compare       scripts/compare_sdpa.py: each study's best config, confirmed
#                 (confirm --n 100), beside PyTorch SDPA's flash, efficient
#                 and cuDNN backends
#   tune          the user's loop on 2,8,512,64: search --budget 6m (the
#                 default strategy), confirm --n 100 --baseline cudnn, the
#                 HTML report (into $OUT) and the exported header; about
#                 7 device-minutes ($FATTN_TUNE_BUDGET changes the budget)
#   speed         the speed table (issue 33): for each pair of
#                 search/speed-budgets.tsv (every seed shape, causal and not;
#                 $FATTN_SPEED_SHAPES and $FATTN_SPEED_CAUSAL narrow them,
#                 $FATTN_SPEED_BUDGET overrides the budgets, and
#                 $FATTN_SPEED_LEFT_S scales them to fit), one search of
#                 both families (search/space-speed.json, $FATTN_SPEED_SPACE,
#                 and search/space-wgmma-v2.json, $FATTN_SPEED_WGMMA_SPACE,
#                 "none": the mma family alone; scripts/device-stages/
#                 speed.sh) with --smem-limit max, confirm --n 100 against our baseline
#                 (cuDNN non-causal, the FA2-like configuration causal),
#                 export, and the exported cubin through one
#                 scripts/compare_sdpa.py --serve process beside PyTorch
#                 SDPA; the table (scripts/speed_table.py, $OUT/speed-GPU.md)
#                 rewritten after every pair; then compute-sanitizer memcheck
#                 and racecheck on two bests (the first D=64 non-causal, the
#                 first D=128 causal)
#   scaleout      issue 53 (scripts/device-stages/scaleout.sh): a 2-row
#                 campaign with --devices 0 ($FATTN_SCALEOUT_BUDGET a row,
#                 default 45s), run again (nothing runs), confirm --n 30 of
#                 a row's best, export --campaign compiled, merge
#   all           every stage but speed and scaleout, in order (longer than one device
#                 command)
#
# Each stage appends its section to $OUT/report.md and its commands' output
# to $OUT/check.log; searches leave their landscapes in $OUT (commit them
# under tests/data/ as landscape-GPU-B-H-S-D[-causal].csv; later stages read
# the best configurations from the database if this machine ran the search,
# else from those files). Concatenate the calls' report.md files, in order,
# into docs/device-report.md. Exit status: 0 when every check of the stages
# run holds, 1 otherwise.
#
# FATTN_CHECK_ESTIMATE=1 prints each named stage's estimate ("STAGE SECONDS
# WHAT") and runs nothing.
# Without a GPU, FATTN_WORKER_HOOK=fake runs the same plumbing on the fake
# engine (the GPU test programs, sanitizer and compare then skip);
# FATTN_CHECK_FILTER=EXPR narrows the searched space, FATTN_BUILD=DIR names
# the build, FATTN_CHECK_WORK=DIR the folder of its databases (default
# results/). That dry run, not an acceptance run, is tests/scripts/device-dry.sh.
# FATTN_TEST_SLOWDOWN=F (default 1) multiplies the waits whose bound decides
# a verdict (the kill -9 stage's wait for progress, the sanitizer's timeout)
# on a machine F times slower than an idle one (tests/cli/slowdown.sh).
# shellcheck disable=SC2046 # $(causal_flag ...) and $(timing_for ...) expand to zero or more words
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD
. "$root/tests/cli/slowdown.sh" # scaled: FATTN_TEST_SLOWDOWN times a wait
build=${FATTN_BUILD:-build-device}
case $build in /*) ;; *) build=$root/$build ;; esac
tool=$build/fattn-tune
OUT=${OUT:-$root/device-out}
work=${FATTN_CHECK_WORK:-$root/results} # the databases
mkdir -p "$OUT" "$work"
report=$OUT/report.md
log=$OUT/check.log
db=$work/device.db
space=$root/search/space.json
filter=${FATTN_CHECK_FILTER:-}
export FATTN_KERNEL_DIR=$root/kernels
export PYTHONUNBUFFERED=1
failed=0
# The GPU's arch (sm_90 on the H100 and H200); the fake engine pretends sm_90.
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
arch=sm_${cap/./}
[ -n "$cap" ] || arch=sm_90

[ -x "$tool" ] || { echo "device-check.sh: $tool not built: run scripts/device-build.sh and carry build-device" >&2; exit 1; }

say() { printf '%s\n' "$*" >>"$report"; }
note() { printf '\n== %s\n' "$*" >>"$log"; printf '%s\n' "$*" >&2; }
bad() { say "- **FAIL**: $*"; echo "device-check.sh: FAIL: $*" >&2; failed=1; }
ok() { say "- ok: $*"; }
# run CMD...: the command's output goes to the log; its exit status is returned.
run() { note "\$ $*"; "$@" >>"$log" 2>&1; }
sql() { "$tool" -q query --db "$1" --format csv --sql "$2" | tail -n +2 | sed 's/^"\(.*\)"$/\1/'; }
# A markdown table from query's CSV output (no quoted commas in our columns).
md_table() {
    awk -F, 'NR == 1 { h = "|"; s = "|"; for (i = 1; i <= NF; i++) { h = h " " $i " |"; s = s "---|" }
                       print h; print s; next }
             { r = "|"; for (i = 1; i <= NF; i++) r = r " " $i " |"; print r }'
}
gpu_slug() {
    local name
    name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
    case "$name" in
    *H200*) echo h200 ;; *H100*) echo h100 ;; "") echo fake ;;
    *) echo "$name" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-' ;;
    esac
}
shape_tag() { echo "${1//,/-}$([ "$2" = 1 ] && echo -causal)"; } # 2,8,512,64 1 -> 2-8-512-64-causal
key_filter() { # bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1[-kv2][-qr1] -> NAME=VALUE,...
    local t n out=""
    for t in ${1//-/ }; do
        case $t in
        bm*) n=BLOCK_M ;; bn*) n=BLOCK_N ;; bk*) n=BLOCK_K ;; w*) n=NUM_WARPS ;; sw*) n=SWIZZLE ;;
        s*) n=STAGES ;; u*) n=UNROLL ;; cp*) n=CP_ASYNC ;; h*) n=HALF2 ;; kv*) n=SPLIT_KV ;; qr*) n=Q_REGS ;;
        *) echo "$1"; return ;;
        esac
        out+="${out:+,}$n=${t##*[a-z]}"
    done
    echo "$out"
}
causal_flag() { [ "$1" = 1 ] && echo --causal; }

# ---- Device-time estimates, from each stage's own work counts ----
# The constants are the H100's, from the first device session (2026-11-25,
# docs/device-report.md): first 9-10 s, env 6, tests 32; small 15 s (534
# GPU trials in 10 s from a precompiled compile cache: 0.019 s a trial,
# launches included; kill -9 and --resume 5 s); small-causal 166 s and
# large 258 s with every survivor compiled there (NVRTC about 1.3 s a
# configuration per core at D=64, 2.2 at D=128, over 16 cores); a bench
# run about 1 s; memcheck of 1,2,130,64 3 s. The trial and bench constants
# keep about twice those (scripts/device-session.sh starts a stage when
# half its estimate fits); the compile ones are as measured. A middling
# configuration runs at 150 TFLOP/s (the best of 4,16,2048,128 at 291, of
# 2,8,512,64 at 115 with its launch cost), the fp32 reference at 5.
# A dry run (fake engine) estimates for the H100's 16 cores.
cores=$(nproc 2>/dev/null || echo 16)
[ -n "${FATTN_WORKER_HOOK:-}" ] && cores=16
est_compile_s=1.4 est_compile128_s=2.3 est_trial_s=0.04 est_tflops=150 est_ref_tflops=5 est_sanitize_s=10 est_bench_s=2
# survivors SHAPE CAUSAL SPACE: the configurations the static gates pass.
survivors() {
    "$tool" -q gates --arch "$arch" --shape "$1" $(causal_flag "$2") --space "$3" ${filter:+--filter "$filter"} \
        --format csv 2>/dev/null | awk -F, '$1 == "survivors" { print $2 }'
}
# flops SHAPE CAUSAL
flops() { IFS=, read -r B H S D <<<"$1"; awk -v b="$B" -v h="$H" -v s="$S" -v d="$D" -v c="$2" 'BEGIN { print 4 * b * h * s * s * d * (c == 1 ? 0.5 : 1) }'; }
# est_search SHAPE CAUSAL SPACE TRIALS: seconds for TRIALS trials (default:
# every survivor) of SHAPE with its timing options.
est_search() {
    local n=${4:-} f launches
    [ -n "$n" ] || n=$(survivors "$1" "$2" "$3")
    f=$(flops "$1" "$2")
    case $1 in 4,16,2048,128) launches=60 ;; *) launches=400 ;; esac
    local c=$est_compile_s
    case $1 in *,128) c=$est_compile128_s ;; esac
    awk -v n="${n:-0}" -v f="$f" -v l="$launches" -v cores="$cores" -v c="$c" -v t="$est_trial_s" \
        -v tf="$est_tflops" -v rf="$est_ref_tflops" \
        'BEGIN { printf "%.0f", n * (c / cores + t + l * f / (tf * 1e12) + f / (rf * 1e12)) }'
}
# estimate STAGE: "SECONDS WHAT" for the stage, from its work counts.
estimate() {
    local s n a
    case $1 in
    first) echo "$((5 * est_bench_s + est_sanitize_s + 30)) 2 GPU test programs, 5 bench runs, a sanitizer run" ;;
    env) echo "15 version queries" ;;
    hopper) echo "60 140 tensor maps encoded, 21 primitive launches, two in a cluster (an NVRTC compile a process)" ;;
    family) echo "60 two exhaustive searches of 6 tmacopy configurations, confirm --n 30, an export" ;;
    wgmma) wgmma_estimate ;;
    tests) echo "60 GPU test programs (the engine across 16 shapes) and a 4-configuration fault search" ;;
    small | small-causal)
        a=$([ "$1" = small ] && echo 0 || echo 1)
        n=$(survivors 2,8,512,64 "$a" "$space")
        s=$(est_search 2,8,512,64 "$a" "$space" "$n")
        [ "$1" = small ] && s=$((s + 15))
        echo "$s $n survivors at ${est_compile_s} s a compile over $cores cores and ${est_trial_s} s + their launches a trial$([ "$1" = small ] && echo ', kill -9 and --resume 15 s')" ;;
    large | large-causal)
        a=$([ "$1" = large ] && echo 0 || echo 1)
        n=$(survivors 4,16,2048,128 "$a" "$space")
        echo "$(est_search 4,16,2048,128 "$a" "$space" "$n") $n survivors at ${est_compile128_s} s a compile over $cores cores, ${est_trial_s} s + launches + the reference a trial" ;;
    numerics) echo "$((${#studies[@]} * 4 * est_bench_s)) $((${#studies[@]} * 4)) bench runs" ;;
    sanitizer | sanitizer-large) echo "$((2 * 3 * 2 * est_sanitize_s)) 12 compute-sanitizer runs of ${est_sanitize_s} s" ;;
    compare) echo "$((${#studies[@]} * (2 * est_bench_s + 10 + 30))) ${#studies[@]} configurations: a search of one, confirm --n 100, compare_sdpa.py" ;;
    tune) echo "$(($(fattn_duration_s "${FATTN_TUNE_BUDGET:-6m}") + 40)) the search budget, confirm --n 100, report, export" ;;
    speed) est_speed ;;
    scaleout) est_scaleout ;;
    all) echo "0 the sum of the stages" ;;
    esac
}
# fattn_duration_s 6m -> 360 (s, m, h; plain seconds)
fattn_duration_s() {
    case $1 in *h) echo $((${1%h} * 3600)) ;; *m) echo $((${1%m} * 60)) ;; *s) echo "${1%s}" ;; *) echo "$1" ;; esac
}

# The studies the acceptance names: shape, causal, timing options. The large
# shape runs ~1 ms per launch, so it is timed with fewer launches per sample.
studies=("2,8,512,64 0" "2,8,512,64 1" "4,16,2048,128 0" "4,16,2048,128 1")
timing_for() { case $1 in 4,16,2048,128) echo "--reps 5 --samples 10 --warmup 2" ;; *) echo "--samples 15" ;; esac; }

# The landscape of a study: from this machine's database, else the
# committed file. Prints its path, or nothing.
landscape_of() {
    local shape=$1 causal=$2 tag f id
    tag=$(shape_tag "$shape" "$causal")
    f=$OUT/landscape-$(gpu_slug)-$tag.csv
    [ -f "$f" ] && { echo "$f"; return; }
    if [ -f "$db" ]; then
        IFS=, read -r B H S D <<<"$shape"
        id=$(sql "$db" "SELECT max(id) FROM studies WHERE command = 'search' AND evaluator = 'gpu' AND status = 'done' AND batch = $B AND heads = $H AND seqlen = $S AND head_dim = $D AND causal = $causal AND space_path LIKE '%search/space.json'" 2>/dev/null)
        if [ -n "$id" ]; then
            "$tool" query landscape --db "$db" --study "$id" -o "$OUT/landscape-$tag.tmp" >/dev/null 2>&1 &&
                { echo "$OUT/landscape-$tag.tmp"; return; }
        fi
    fi
    for f in "$root"/tests/data/landscape-*-"$tag".csv; do [ -f "$f" ] && { echo "$f"; return; }; done
}
best_of() { # LANDSCAPE N: the N fastest measured keys
    grep -v '^#' "$1" | awk -F, 'NR > 1 && $2 == "ok"' | sort -t, -k4,4g | awk -v n="$2" 'NR <= n' | cut -d, -f1
}

# skip_reason FILE: the reason of a test's skip (its last "SKIP: " line), fit for a table cell.
skip_reason() { grep '^SKIP: ' "$1" | tail -1 | cut -c7- | tr '|' '/'; }

# The first questions on a new GPU, in order; the first failure stops the
# stage with its log (the command's output) in the report.
first_step() { # NAME CMD...: runs it; on failure reports it with its log and returns 1 (step_goes_on=1: says the stage goes on)
    local name=$1 t0 rc out=$OUT/first.tmp
    shift
    t0=$(date +%s)
    note "\$ $*"
    "$@" >"$out" 2>&1
    rc=$?
    cat "$out" >>"$log"
    if [ $rc = 77 ] && [ -n "${FATTN_WORKER_HOOK:-}" ]; then
        say "| $name | skipped: $(skip_reason "$out") | $(($(date +%s) - t0)) |"
        return 0
    fi
    if [ $rc != 0 ]; then
        say "| $name | **FAIL** (exit $rc) | $(($(date +%s) - t0)) |"
        say ""
        say "Log of \`$*\`:"
        say ""
        say '```'
        tail -40 "$out" >>"$report"
        say '```'
        bad "first: $name (exit $rc); $([ "${step_goes_on:-0}" = 1 ] && echo 'the stage goes on' || echo 'the stage stops here')"
        return 1
    fi
    say "| $name | ok | $(($(date +%s) - t0)) |"
}

# bench_ok WANT KEY BENCH-OPTION...: bench KEY (json); every entry ok, and
# the output holds WANT (a fixed string) when WANT is not empty.
# shellcheck disable=SC2317 # called through first_step's "$@"
bench_ok() {
    local want=$1 key=$2 json n w
    shift 2
    json=$("$tool" bench "$key" --arch "$arch" --format json --db "$work/device-bench.db" "$@") || return $?
    printf '%s\n' "$json"
    n=$(grep -c '"status": "ok"' <<<"$json")
    w=$(grep -c '"status"' <<<"$json")
    [ "$w" -gt 0 ] && [ "$n" = "$w" ] || { echo "$((w - n)) of $w entries not ok"; return 1; }
    [ -z "$want" ] || grep -qF "$want" <<<"$json" || { echo "no '$want' in the output"; return 1; }
}

stage_first() {
    local key=bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1
    say "## First contact: the first questions, in order"
    say ""
    say "| step | result | seconds |"
    say "|---|---|---|"
    first_step "driver and device found" "$build/tests/test_gpu" &&
        first_step "reference kernel vs CPU fp64" "$build/tests/test_gpu_reference" &&
        first_step "default configuration through the worker (2,8,512,64)" \
            bench_ok "" "$key" --shape 2,8,512,64 --samples 10 &&
        first_step "the same, causal, with tails (1,2,130,64)" \
            bench_ok "" "$key" --shape 1,2,130,64 --causal --samples 10 &&
        first_step "a SPLIT_KV cluster configuration (kv2, 2,8,512,64)" \
            bench_ok "" "$key-kv2" --shape 2,8,512,64 --samples 10 &&
        first_step "timing through a CUDA graph" bench_ok '"timing": "graph"' "$key" --shape 2,8,512,64 --samples 10 &&
        first_step "cuDNN baseline (2,8,512,64)" bench_ok "" "$key" --shape 2,8,512,64 --samples 10 --baseline cudnn &&
        { if [ -n "${FATTN_WORKER_HOOK:-}" ] || ! command -v compute-sanitizer >/dev/null; then
            say "| compute-sanitizer memcheck | skipped: no compute-sanitizer or no GPU (fake engine) | 0 |"
        else
            first_step "compute-sanitizer memcheck ($key, 1,2,130,64)" sanitize memcheck "$key" 1,2,130,64 0
        fi; } &&
        { say ""; ok "first: every step held"; }
    say ""
    rm -f "$OUT/first.tmp"
}

stage_env() {
    say "## Environment"
    say ""
    say '```'
    {
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
        echo "fattn-tune: $("$tool" --version 2>&1)"
        echo "nvcc: $(nvcc --version 2>/dev/null | tail -1)"
        echo "cudnn (as the worker finds it): $("$build/tests/test_cudnn" 2>&1 | sed -n 's/^found: //p; s/^SKIP: //p' | head -1)"
        python3 -c 'import torch; print("torch:", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())' 2>&1
        echo "compute-sanitizer: $(compute-sanitizer --version 2>/dev/null | tail -1)"
        "$build/tests/test_gpu" 2>&1 | tail -3
    } >>"$report"
    say '```'
    say ""
}

# Issue 35: Hopper's primitives on the GPU. First every tensor map the
# planned Hopper space asks for, through the driver (test_tmap --gpu, which
# also holds the mock's refusals to the driver's); then each primitive mode
# of kernels/fattn_prim_sm90_test.cu in its own launch under a 2 s
# watchdog, bit for bit against the simulator, in the kernel's order
# (mbarrier/TMA, wgmma SS, MN-major, RS, D to A, TMA store, setmaxnreg,
# named barriers, the pipeline); a hung mode is reported and the next one
# runs in a fresh process.
stage_hopper() {
    say "## Hopper primitives (issue 35)"
    say ""
    local rc t0 from=0 out=$OUT/hopper.tmp last
    t0=$(date +%s)
    run "$build/tests/test_tmap" --gpu
    rc=$?
    if [ $rc = 77 ]; then
        say "- tensor maps: skipped: $(skip_reason "$log")"
    elif [ $rc = 0 ]; then
        ok "tensor maps: $(grep -a 'planned tensor maps encode' "$log" | tail -1), the driver answering every case as the mock ($(($(date +%s) - t0)) s)"
    else
        bad "test_tmap --gpu exited $rc: the driver and the mock disagree (see check.log)"
    fi
    say ""
    say "| mode | what | result | ms |"
    say "|---|---|---|---|"
    while [ "$from" -lt 21 ]; do
        note "\$ test_sim_prims_sm90 --gpu --from $from"
        "$build/tests/test_sim_prims_sm90" --gpu --from "$from" >"$out" 2>&1
        rc=$?
        cat "$out" >>"$log"
        grep -a '^MODE | ' "$out" | sed 's/^MODE //' >>"$report"
        if [ $rc = 77 ]; then
            say "| - | every mode | skipped: $(skip_reason "$out") | |"
            break
        fi
        last=$(grep -a '^MODE | ' "$out" | tail -1 | awk -F' [|] ' '{ print $2 }')
        if [ $rc = 3 ] && [ -n "$last" ]; then
            bad "mode $last hung (the 2 s watchdog fired)"
            from=$((last + 1))
            continue
        fi
        [ $rc = 0 ] || bad "test_sim_prims_sm90 --gpu --from $from exited $rc (see check.log)"
        break
    done
    rm -f "$out"
    say ""
}

stage_family() {
    say "## The tmacopy family (issue 36)"
    say ""
    local db=$work/family.db shape
    rm -f "$db" "$db"-*
    for shape in 2,8,512,64 2,8,500,128; do
        if ! run "$tool" search --strategy exhaustive --arch "$arch" --shape "$shape" \
            --space "$root/tests/data/space-tmacopy.json" \
            --smem-limit max --db "$db"; then
            bad "tmacopy search at $shape failed (see check.log)"
            continue
        fi
        local st n ok
        st=$(sql "$db" "SELECT max(id) FROM studies")
        n=$(sql "$db" "SELECT count(*) FROM trials WHERE study_id = $st AND status <> 'rejected'")
        ok=$(sql "$db" "SELECT count(*) FROM trials WHERE study_id = $st AND status = 'ok'")
        if [ "$ok" = "$n" ] && [ "$n" -gt 0 ]; then
            ok "tmacopy at $shape: $ok of $n configurations verified (O = V) and timed"
        else
            bad "tmacopy at $shape: $ok of $n configurations ok"
        fi
        say ""
        # (V read and O written: 4 B an element; the search's GB/s are attention's)
        sql "$db" "SELECT config_key, status, reason, round(median_us, 3) AS median_us,
                   round(4.0 * ${shape//,/ * } / median_us / 1000, 1) AS copy_gbps
                   FROM trials WHERE study_id = $st ORDER BY seq" | { echo "config_key,status,reason,median_us,copy_gbps"; cat; } |
            md_table >>"$report"
        say ""
    done
    if run "$tool" confirm --db "$db" --n 30; then
        local c="config_key || ' ' || round(median_us, 3) || ' us against ' || baseline || ' ' || round(base_median_us, 3)"
        ok "confirm: $(sql "$db" "SELECT $c || ' us: ' || verdict AS c FROM confirmations ORDER BY id DESC LIMIT 1")"
    else
        bad "tmacopy confirm failed (see check.log)"
    fi
    if run "$tool" export --db "$db" -o "$work/family-tuned.h" &&
        run cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -DFATTN_TUNED_HOST -I"${CUDA_HOME:-/usr/local/cuda}/include" \
            -x c "$work/family-tuned.h"; then
        ok "export: the header and its host launcher compile"
    else
        bad "tmacopy export failed (see check.log)"
    fi
    say ""
}

# The wgmma stage (issues 37 and 51): its own file.
# shellcheck source=scripts/device-stages/wgmma.sh
. "$root/scripts/device-stages/wgmma.sh"

stage_tests() {
    say "## GPU tests"
    say ""
    say "| test | exit | seconds |"
    say "|---|---|---|"
    local t rc t0 engine_rc=77
    for t in test_gpu test_gpu_reference "test_sim_prims --gpu" test_cudnn "test_gpu_engine $tool"; do
        t0=$(date +%s)
        # shellcheck disable=SC2086
        run "$build/tests/"$t
        rc=$?
        [ "${t%% *}" != test_gpu_engine ] || engine_rc=$rc
        if [ $rc = 77 ]; then
            # A skip is a skip, with its reason (the test's last SKIP line).
            say "| ${t%% *} | 77: skipped: $(skip_reason "$log") | $(($(date +%s) - t0)) |"
            continue
        fi
        say "| ${t%% *} | $rc | $(($(date +%s) - t0)) |"
        [ $rc = 0 ] || bad "${t%% *} exited $rc"
    done
    say ""
    # A hardware record says the mma kernel ran and passed on this GPU: the engine's test ran (not skipped) and held.
    [ "$failed" = 1 ] || [ "$engine_rc" != 0 ] ||
        "$root/scripts/hw-record.sh" "$tool" "$root/search/space.json" "the GPU tests (test_gpu_engine)"
    local fdb=$work/device-fault.db
    rm -f "$fdb"*
    say "### A faulting configuration, forced past the gates"
    say ""
    run "$tool" search --strategy exhaustive --arch "$arch" --shape 2,8,512,64 --space "$root/tests/data/space-fault.json" --db "$fdb" \
        --unsafe-skip-gate misaligned_cp_async --unsafe-skip-gate misaligned_ldmatrix \
        --unsafe-skip-gate bank_conflicts --max-spill-bytes 100000 --min-occupancy 0 --samples 5 -q ||
        bad "the fault search exited non-zero"
    say '```'
    "$tool" query trials --db "$fdb" --study 1 >>"$report" 2>&1
    say '```'
    local faults after
    faults=$(sql "$fdb" "SELECT count(*) FROM trials WHERE config_key LIKE '%-pad2' AND reason = 'runtime_fault' AND detail LIKE '%MISALIGNED%'")
    after=$(sql "$fdb" "SELECT count(*) FROM trials WHERE status = 'ok' AND seq > (SELECT min(seq) FROM trials WHERE reason = 'runtime_fault')")
    if [ "${faults:-0}" = 2 ] && [ "${after:-0}" -ge 1 ]; then
        ok "both 2-byte-pad configurations recorded as runtime_fault (CUDA_ERROR_MISALIGNED_ADDRESS); $after measured after the first fault"
    else
        bad "pad faults recorded: ${faults:-0} of 2; measured after a fault: ${after:-0}"
    fi
    say ""
}

search_one() { # SHAPE CAUSAL
    local shape=$1 causal=$2 tag t0 id land
    tag=$(shape_tag "$shape" "$causal")
    say "## Exhaustive search: $shape $([ "$causal" = 1 ] && echo causal || echo non-causal)"
    say ""
    t0=$(date +%s)
    run "$tool" search --arch "$arch" --strategy exhaustive --shape "$shape" $(causal_flag "$causal") --space "$space" \
        ${filter:+--filter "$filter"} --db "$db" $(timing_for "$shape") -q
    local rc=$?
    id=$(sql "$db" "SELECT max(id) FROM studies WHERE command = 'search'")
    [ $rc = 0 ] || bad "search exited $rc"
    say "study $id, $(($(date +%s) - t0)) s wall; $(sql "$db" "SELECT device FROM studies WHERE id = $id")"
    say ""
    sql "$db" "SELECT timing_method FROM studies WHERE id = $id" | sed 's/^/timing: /' >>"$report"
    say ""
    "$tool" -q query --db "$db" --format csv --sql "SELECT status, coalesce(reason, '') AS reason, count(*) AS trials FROM trials WHERE study_id = $id GROUP BY 1, 2 ORDER BY 1, 3 DESC" | md_table >>"$report"
    say ""
    local total left considered
    total=$(sql "$db" "SELECT count(*) FROM trials WHERE study_id = $id")
    left=$(sql "$db" "SELECT count(*) FROM trials WHERE study_id = $id AND status NOT IN ('ok', 'rejected')")
    considered=$("$tool" -q space --count --space "$space" ${filter:+--filter "$filter"} 2>/dev/null)
    if [ "$total" = "$considered" ] && [ "$left" = 0 ]; then
        ok "all $total configurations measured (ok) or rejected with a reason"
    else
        bad "$total trials of $considered configurations, $left neither measured nor rejected (see the table)"
    fi
    say ""
    say "Fastest five:"
    say ""
    "$tool" -q query --db "$db" --format csv --sql "SELECT config_key, round(median_us, 3) AS median_us, round(p10_us, 3) AS p10_us, round(p90_us, 3) AS p90_us, round(tflops, 1) AS tflops, round(gbps, 1) AS gbps, registers, smem_dynamic AS smem, printf('%.2g', max_abs_err) AS max_abs_err FROM trials WHERE study_id = $id AND status = 'ok' ORDER BY median_us LIMIT 5" | md_table >>"$report"
    say ""
    land=$OUT/landscape-$(gpu_slug)-$tag.csv
    if "$tool" query landscape --db "$db" --study "$id" -o "$land" >>"$log" 2>&1; then
        ok "landscape written: $(basename "$land") ($(grep -vc '^#' "$land") lines)"
    else
        bad "landscape export failed"
    fi
    say ""
}

kill_check() {
    say "## kill -9 mid-search"
    say ""
    local kdb=$work/device-kill.db pid n seen after
    rm -f "$kdb"*
    cp "$db" "$kdb" 2>/dev/null || true # the compile cache: the killed search reaches the GPU at once
    "$tool" search --arch "$arch" --strategy random --trials 400 --shape 2,8,512,64 --space "$space" \
        --db "$kdb" --samples 15 -q >>"$log" 2>&1 &
    pid=$!
    local study0
    study0=$(sql "$kdb" "SELECT coalesce(max(id), 0) FROM studies" 2>/dev/null)
    for _ in $(seq "$(scaled 600)"); do # 2 minutes times FATTN_TEST_SLOWDOWN
        n=$(sql "$kdb" "SELECT count(*) FROM trials t JOIN studies s ON s.id = t.study_id WHERE s.id > ${study0:-0} AND t.run_ms IS NOT NULL" 2>/dev/null)
        [ "${n:-0}" -ge 20 ] && break
        kill -0 $pid 2>/dev/null || break
        sleep 0.2
    done
    seen=$(sql "$kdb" "SELECT count(*) FROM trials t JOIN studies s ON s.id = t.study_id WHERE s.id > ${study0:-0}")
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    after=$(sql "$kdb" "SELECT count(*) FROM trials t JOIN studies s ON s.id = t.study_id WHERE s.id > ${study0:-0}")
    local integ status partial
    integ=$(sql "$kdb" "PRAGMA integrity_check")
    status=$(sql "$kdb" "SELECT status FROM studies WHERE id > ${study0:-0} ORDER BY id DESC LIMIT 1")
    partial=$(sql "$kdb" "SELECT count(*) FROM trials WHERE study_id > ${study0:-0} AND status = 'ok' AND (SELECT count(*) FROM samples WHERE trial_id = trials.id) != 15")
    if [ "$integ" = ok ] && [ "$status" = running ] && [ "${after:-0}" -ge "${seen:-1}" ] && [ "${n:-0}" -ge 20 ] &&
        [ "$partial" = 0 ] && "$tool" query trials --db "$kdb" --limit 0 >/dev/null 2>&1; then
        ok "killed after $n trials had run on the GPU: $seen trials (static rejections included) seen before, $after after, integrity ok, study 'running', every measured trial has its 15 samples, query reads it"
    else
        bad "kill -9: integrity '$integ', study '$status', $seen trials before, $after after, $n run, $partial measured trials missing samples"
    fi
    # --resume goes on with the killed study (10 more GPU trials: --trials
    # counts the study's earlier ones): nothing it held changes, nothing runs twice.
    local sid before_sum after_sum dups ran n0 want
    sid=$(sql "$kdb" "SELECT max(id) FROM studies")
    before_sum=$(sql "$kdb" "SELECT count(*) || ':' || total(id) || ':' || total(coalesce(median_us, 0)) FROM trials WHERE study_id = $sid")
    ran=$(sql "$kdb" "SELECT count(*) FROM trials WHERE study_id = $sid")
    n0=$(sql "$kdb" "SELECT count(*) FROM trials WHERE study_id = $sid AND run_ms IS NOT NULL")
    want=$((n0 + 10))
    if run "$tool" search --resume "$sid" --trials "$want" --db "$kdb" -q; then
        after_sum=$(sql "$kdb" "SELECT count(*) || ':' || total(id) || ':' || total(coalesce(median_us, 0)) FROM trials WHERE id IN (SELECT id FROM trials WHERE study_id = $sid ORDER BY id LIMIT $ran)")
        dups=$(sql "$kdb" "SELECT count(*) - count(DISTINCT config_key) FROM trials WHERE study_id = $sid")
        n=$(sql "$kdb" "SELECT count(*) FROM trials WHERE study_id = $sid AND run_ms IS NOT NULL")
        if [ "$before_sum" = "$after_sum" ] && [ "$dups" = 0 ] && [ "$n" = "$want" ]; then
            ok "--resume $sid --trials $want went on with the killed study: $n0 GPU trials before, $n after, the $ran trials from before unchanged, no configuration twice"
        else
            bad "--resume $sid: before '$before_sum', after '$after_sum', $dups repeated, $n run (wanted $want)"
        fi
    else
        bad "--resume $sid exited non-zero"
    fi
    say ""
}

stage_numerics() {
    say "## The best configurations across sequence lengths"
    say ""
    say "Each study's best configuration, benchmarked (numerics gates: atol = rtol = 1e-2 elementwise and a"
    say "relative L2 error within 0.004, against the reference kernel on fresh seeded uniform and peaky inputs,"
    say "then timed) at B=2, H=8."
    say ""
    say "| study | config | S | causal | status | max abs err | median us |"
    say "|---|---|---|---|---|---|---|"
    local st shape causal land key S D json status err med
    for st in "${studies[@]}"; do
        read -r shape causal <<<"$st"
        land=$(landscape_of "$shape" "$causal")
        [ -n "$land" ] || { bad "no landscape for $shape causal=$causal: run its search stage first"; continue; }
        key=$(best_of "$land" 1)
        [ -n "$key" ] || { bad "nothing measured in $land"; continue; }
        D=${shape##*,}
        for S in 500 512 1000 2048; do
            json=$("$tool" bench "$key" --arch "$arch" --shape "2,8,$S,$D" $(causal_flag "$causal") --samples 5 --format json \
                --db "$work/device-bench.db" 2>>"$log")
            printf '%s\n' "$json" >>"$log"
            status=$(printf '%s' "$json" | sed -n 's/.*"status": *"\([a-z_]*\)".*/\1/p' | head -1)
            err=$(printf '%s' "$json" | sed -n 's/.*"max_abs_err": *"\{0,1\}\([0-9.eE+-]*\).*/\1/p' | head -1)
            med=$(printf '%s' "$json" | sed -n 's/.*"median_us": *"\{0,1\}\([0-9.eE+-]*\).*/\1/p' | head -1)
            say "| $shape | $key | $S | $causal | ${status:-?} | ${err:--} | ${med:--} |"
            [ "$status" = ok ] || bad "$key at 2,8,$S,$D causal=$causal: ${status:-no result}"
        done
    done
    say ""
}

# sanitize TOOL KEY SHAPE CAUSAL [BENCH-OPTION...]: one launch per sample of
# KEY under compute-sanitizer; prints "clean (summary)" or "**exit N**
# (summary)" and fails in the second case.
sanitize() {
    local t=$1 key=$2 shape=$3 causal=$4 rc res
    shift 4
    note "compute-sanitizer --tool $t $key $shape"
    timeout "$(scaled 240)" compute-sanitizer --tool "$t" --target-processes all --error-exitcode 99 \
        "$tool" bench "$key" --arch "$arch" --shape "$shape" $(causal_flag "$causal") "$@" --samples 1 --reps 1 \
        --warmup 1 --timing-sets 2 --kernel-timeout 200s --db "$work/device-bench.db" >"$OUT/san.tmp" 2>&1
    rc=$?
    cat "$OUT/san.tmp" >>"$log"
    res=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/san.tmp" | tail -1 | sed 's/^========= //')
    if [ $rc = 0 ] && grep -qE "(ERROR|RACECHECK) SUMMARY: 0 (errors|hazards)" "$OUT/san.tmp"; then
        rm -f "$OUT/san.tmp"
        echo "clean ($res)"
        return 0
    fi
    rm -f "$OUT/san.tmp"
    echo "**exit $rc** ($res)"
    return 1
}

stage_sanitizer() { # STUDY... ("SHAPE CAUSAL")
    say "## compute-sanitizer on the best three of each study: $(printf '%s; ' "$@" | sed 's/ 0;/ non-causal;/g; s/ 1;/ causal;/g; s/; $//')"
    say ""
    if ! command -v compute-sanitizer >/dev/null || [ -n "${FATTN_WORKER_HOOK:-}" ]; then
        say "skipped: no compute-sanitizer or no GPU (fake engine)"
        say ""
        return
    fi
    say "One launch per sample on B=1, H=2 at the study's S and D (the kernel's code path per block is the"
    say "same), the worker launched with the exact dynamic shared memory the compiled kernel declares."
    say ""
    say "| study | config | dynamic smem B | memcheck | racecheck |"
    say "|---|---|---|---|---|"
    local st shape causal land key S D smem tool_ res row
    for st in "$@"; do
        read -r shape causal <<<"$st"
        land=$(landscape_of "$shape" "$causal")
        [ -n "$land" ] || { bad "no landscape for $shape causal=$causal"; continue; }
        IFS=, read -r _ _ S D <<<"$shape"
        for key in $(best_of "$land" 3); do
            smem=$("$tool" gates --explain "$key" --arch "$arch" --shape "1,2,$S,$D" $(causal_flag "$causal") 2>/dev/null |
                awk '/^smem_mismatch/ { for (i = 1; i <= NF; i++) if ($i == "compiled") print $(i + 1) }')
            row="| $shape$([ "$causal" = 1 ] && echo ' causal') | $key | ${smem:-?} |"
            for tool_ in memcheck racecheck; do
                res=$(sanitize "$tool_" "$key" "1,2,$S,$D" "$causal") ||
                    bad "$tool_ on $key ($shape causal=$causal): $res"
                row="$row $res |"
            done
            say "$row"
        done
    done
    say ""
}

# compare_study DB STUDY TAG WHAT [OPTION...]: the study's exported best (its
# exact cubin) timed by compare_sdpa.py beside PyTorch SDPA, --n 100, its
# table into the report; OPTIONs go to compare_sdpa.py.
compare_study() {
    local db_=$1 id=$2 tag=$3 what=$4
    shift 4
    if run "$tool" export --db "$db_" --study "$id" --format json -o "$OUT/best-$tag.json" &&
        run "$tool" export --db "$db_" --study "$id" --format cubin -o "$OUT/best-$tag.cubin"; then
        run python3 "$root/scripts/compare_sdpa.py" --json "$OUT/best-$tag.json" --cubin "$OUT/best-$tag.cubin" \
            --n 100 --markdown "$report" "$@" ||
            bad "compare_sdpa.py on $what failed or disagreed with fattn-tune by more than 10%"
    else
        bad "export of $what"
    fi
    rm -f "$OUT/best-$tag.json" "$OUT/best-$tag.cubin"
}

# confirm_report DB STUDY FILE [OPTION...]: confirm --n 100 of the study,
# its output into FILE, the log and (fenced) the report; confirm's status.
confirm_report() {
    local db_=$1 id=$2 out=$3 rc
    shift 3
    note "\$ $tool confirm --db $db_ --study $id --n 100 $*"
    "$tool" confirm --db "$db_" --study "$id" --n 100 "$@" >"$out" 2>>"$log"
    rc=$?
    cat "$out" >>"$log"
    say '```'
    cat "$out" >>"$report"
    say '```'
    say ""
    return $rc
}

stage_compare() {
    say "## fattn-tune beside PyTorch SDPA (scripts/compare_sdpa.py)"
    say ""
    if [ -n "${FATTN_WORKER_HOOK:-}" ] || ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
        say "skipped: no PyTorch with CUDA, or no GPU (fake engine)"
        say ""
        return
    fi
    local cdb=$work/device-compare.db st shape causal land key id tag
    rm -f "$cdb"*
    for st in "${studies[@]}"; do
        read -r shape causal <<<"$st"
        land=$(landscape_of "$shape" "$causal")
        [ -n "$land" ] || { bad "no landscape for $shape causal=$causal"; continue; }
        key=$(best_of "$land" 1)
        tag=$(shape_tag "$shape" "$causal")
        # fattn-tune's own measurement of the config, in this command, then its exact cubin.
        run "$tool" search --strategy exhaustive --arch "$arch" --shape "$shape" $(causal_flag "$causal") --space "$space" --filter "$(key_filter "$key")" \
            --db "$cdb" -q || { bad "search of $key on $shape"; continue; }
        id=$(sql "$cdb" "SELECT max(id) FROM studies")
        # The reference compare_sdpa.py checks itself against: a confirmation
        # (interleaved samples on fresh inputs), not the search's median.
        confirm_report "$cdb" "$id" "$OUT/compare-confirm-$tag.txt" || { bad "confirm of $key on $shape"; continue; }
        compare_study "$cdb" "$id" "$tag" "$key ($shape causal=$causal)" --samples-csv "$OUT/compare-samples.csv"
    done
    say ""
}

stage_tune() {
    local budget=${FATTN_TUNE_BUDGET:-6m} tdb=$work/device-tune.db id t0 rc
    say "## The user's loop: search --budget $budget, confirm --n 100 --baseline cudnn (2,8,512,64)"
    say ""
    rm -f "$tdb"*
    # The small stage's database, when this machine has one, lends its
    # compile cache (a user's second search has one too): the budget goes
    # to the GPU, not to NVRTC on the device's cores.
    if [ -f "$db" ]; then
        cp "$db" "$tdb"
        say "(compile cache: the small stage's database)"
        say ""
    fi
    t0=$(date +%s)
    run "$tool" search --arch "$arch" --shape 2,8,512,64 --space "$space" ${filter:+--filter "$filter"} \
        --budget "$budget" --samples 15 --db "$tdb" -q
    rc=$?
    [ $rc = 0 ] || bad "search --budget $budget exited $rc"
    id=$(sql "$tdb" "SELECT max(id) FROM studies")
    say "study $id ($(sql "$tdb" "SELECT strategy FROM studies WHERE id = $id")), $(($(date +%s) - t0)) s wall; $(sql "$tdb" "SELECT device FROM studies WHERE id = $id")"
    say ""
    "$tool" -q query --db "$tdb" --format csv --sql "SELECT status, coalesce(reason, '') AS reason, count(*) AS trials FROM trials WHERE study_id = $id GROUP BY 1, 2 ORDER BY 1, 3 DESC" | md_table >>"$report"
    say ""
    confirm_report "$tdb" "$id" "$OUT/confirm-2-8-512-64.txt" --baseline cudnn || bad "confirm exited $?"
    local n
    n=$(sql "$tdb" "SELECT count(*) FROM confirmation_samples s JOIN confirmations c ON c.id = s.confirmation_id WHERE c.study_id = $id")
    if [ "$n" = 200 ]; then ok "confirm stored 100 samples of the best configuration and 100 of cuDNN"; else bad "confirm stored $n samples, not 200"; fi
    run "$tool" report --db "$tdb" --study "$id" -o "$OUT/report-2-8-512-64.html" &&
        ok "HTML report written (report-2-8-512-64.html)" || bad "report failed"
    run "$tool" export --db "$tdb" --study "$id" -o "$OUT/fattn_tuned-2-8-512-64.h" &&
        grep -q '^ \* confirmed: median' "$OUT/fattn_tuned-2-8-512-64.h" &&
        ok "the exported header carries the confirmation" || bad "export of the confirmed header"
    say ""
}

# The speed stage (issues 33 and 52): its own file.
# shellcheck source=scripts/device-stages/speed.sh
. "$root/scripts/device-stages/speed.sh"
# The scale-out stage (issue 53): its own file.
# shellcheck source=scripts/device-stages/scaleout.sh
. "$root/scripts/device-stages/scaleout.sh"

stage() {
    case $1 in
    env) stage_env ;;
    tests) stage_tests ;;
    first) stage_first ;;
    hopper) stage_hopper ;;
    family) stage_family ;;
    wgmma) stage_wgmma ;;
    small) search_one 2,8,512,64 0; kill_check ;;
    small-causal) search_one 2,8,512,64 1 ;;
    large) search_one 4,16,2048,128 0 ;;
    large-causal) search_one 4,16,2048,128 1 ;;
    numerics) stage_numerics ;;
    sanitizer) stage_sanitizer "${studies[0]}" "${studies[1]}" ;;
    sanitizer-large) stage_sanitizer "${studies[2]}" "${studies[3]}" ;;
    compare) stage_compare ;;
    tune) stage_tune ;;
    speed) stage_speed ;;
    scaleout) stage_scaleout ;;
    all) for s in $all_stages; do run_stage "$s"; done ;;
    *) echo "device-check.sh: unknown stage '$1' ($stage_names)" >&2; exit 2 ;;
    esac
}
all_stages="first env hopper family wgmma tests small small-causal large large-causal numerics sanitizer sanitizer-large compare tune"
stage_names="${all_stages// /, }, speed, scaleout, all"

# run_stage STAGE: its estimate first (stderr and the report), then the
# stage, then its wall time beside the estimate.
run_stage() {
    local s=$1 est what t0 took
    read -r est what <<<"$(estimate "$s")"
    if [ "$s" != all ]; then
        echo "device-check.sh: stage $s: estimated $est s on this machine ($what)" >&2
        say "_Stage $s: estimated $est s ($what)._"
        say ""
    fi
    t0=$(date +%s)
    stage "$s"
    took=$(($(date +%s) - t0))
    if [ "$s" != all ]; then
        echo "device-check.sh: stage $s done in $took s (estimated $est s)" >&2
        say "_Stage $s: $took s wall (estimated $est s)._"
        say ""
    fi
}

[ $# -gt 0 ] || { sed -n '2,/^# shellcheck/p' "$0" | sed '$d'; exit 2; }
for s in "$@"; do
    case " $all_stages speed scaleout all " in *" $s "*) ;; *) stage "$s" ;; esac
done
# FATTN_CHECK_ESTIMATE=1: print each named stage's estimate and stop (no GPU work).
if [ "${FATTN_CHECK_ESTIMATE:-0}" = 1 ]; then
    named=()
    for s in "$@"; do
        # shellcheck disable=SC2206 # all is the list of stages, split on purpose
        if [ "$s" = all ]; then named+=($all_stages); else named+=("$s"); fi
    done
    for s in "${named[@]}"; do
        read -r est what <<<"$(estimate "$s")"
        echo "$s $est $what"
    done
    exit 0
fi
for s in "$@"; do
    run_stage "$s"
done
rm -f "$OUT"/landscape-*.tmp
if [ $failed = 0 ]; then
    say "**Stages $*: every check held.**"
else
    say "**Stages $*: some checks FAILED (see above and check.log).**"
fi
say ""
exit $failed
