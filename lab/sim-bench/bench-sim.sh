#!/usr/bin/env bash
# bench-sim.sh - the simulator's speed targets (issue 13), measured and
# written to lab/sim-bench/sim-bench.md:
#  1. the default configuration at B=1 H=2 S=130 D=64 through `fattn-tune
#     check --config`, with an empty simulator cache (the host build
#     included) and again with the build cached; target: the simulation under
#     2 s;
#  2. `fattn-tune check` over every gate survivor of the default space at that
#     shape for sm_90, from an empty cache, --jobs = the processors; target:
#     under 30 minutes on 2 cores.
#
#   lab/sim-bench/bench-sim.sh [BUILD_DIR] [--quick]
# --quick checks a sample of 40 survivors instead of all (a dry run of the
# script; the document then says so).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build
quick=0
for a in "$@"; do
    case $a in
    --quick) quick=1 ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) build=$(realpath "$a") ;;
    esac
done
tool=$build/fattn-tune
[ -x "$tool" ] || { echo "bench-sim.sh: no $tool; build first (scripts/bootstrap.sh)" >&2; exit 1; }
work=$(mktemp -d /tmp/fattn-bench-sim.XXXXXX)
trap 'rm -rf "$work"' EXIT
export FATTN_SIM_CACHE=$work/cache
shape=1,2,130,64
default=bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1
db=$work/bench.db
sql() { "$tool" -q query --db "$db" --format csv --sql "$1" | tail -n +2; }
now() { date +%s.%N; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { print a - b }'; }

# 1. One configuration, cold then warm.
t0=$(now)
"$tool" -q --db "$db" check --config $default --shape $shape --kernel-dir "$root/kernels" >"$work/one.txt"
t1=$(now)
"$tool" -q --db "$db" check --config $default --shape $shape --kernel-dir "$root/kernels" >>"$work/one.txt"
t2=$(now)
cold_wall=$(minus "$t1" "$t0")
warm_wall=$(minus "$t2" "$t1")
read -r cold_build cold_run < <(sql "SELECT round(compile_ms / 1000.0, 3), round(run_ms / 1000.0, 3) FROM sim_checks WHERE run_id = 1" | tr ',' ' ')
read -r warm_run warm_verdict < <(sql "SELECT round(run_ms / 1000.0, 3), verdict FROM sim_checks WHERE run_id = 2" | tr ',' ' ')
[ "$warm_verdict" = ok ] || { cat "$work/one.txt" >&2; echo "bench-sim.sh: the default configuration is not ok" >&2; exit 1; }

# 2. Every survivor (or a sample), from an empty cache.
rm -rf "$FATTN_SIM_CACHE"
jobs=$(nproc)
sample=()
[ $quick = 1 ] && sample=(--sample 40)
t0=$(now)
set +e
"$tool" -q --db "$db" check --arch sm_90 --shape $shape --jobs "$jobs" "${sample[@]}" --kernel-dir "$root/kernels" >"$work/all.txt" 2>"$work/all.err"
rc=$?
set -e
t1=$(now)
all_wall=$(minus "$t1" "$t0")
run=$(sql "SELECT max(id) FROM sim_runs")
checked=$(sql "SELECT count(*) FROM sim_checks WHERE run_id = $run")
verdicts=$(sql "SELECT verdict || ' ' || count(*) FROM sim_checks WHERE run_id = $run GROUP BY verdict ORDER BY verdict" | paste -sd, - | sed 's/,/, /g')
read -r build_s sim_s max_run < <(sql "SELECT round(sum(compile_ms) / 1000.0, 1), round(sum(run_ms) / 1000.0, 1), round(max(run_ms) / 1000.0, 2) FROM sim_checks WHERE run_id = $run" | tr ',' ' ')
read -r mean_build mean_run < <(sql "SELECT round(avg(compile_ms) / 1000.0, 3), round(avg(run_ms) / 1000.0, 3) FROM sim_checks WHERE run_id = $run" | tr ',' ' ')

cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
cxx=$(sql "SELECT compiler FROM sim_runs WHERE id = $run")
kernel=$(sql "SELECT substr(kernel_hash, 1, 12) FROM sim_runs WHERE id = $run")
out=$root/lab/sim-bench/sim-bench.md
{
    echo "# Simulator speed (lab/sim-bench/bench-sim.sh)"
    echo
    echo "Measured $(date -u +%Y-%m-%d) on $(nproc) processors ($cpu), $(free -g | awk '/Mem:/ {print $2}') GiB,"
    echo "host compiler $cxx; kernel source $kernel. Regenerate with \`lab/sim-bench/bench-sim.sh\`."
    echo
    echo "## One configuration: $default at B=1 H=2 S=130 D=64"
    echo
    echo "| | host build | simulation | whole command |"
    echo "|---|---|---|---|"
    printf '| empty cache | %s s | %s s | %.2f s |\n' "$cold_build" "$cold_run" "$cold_wall"
    printf '| cached build | - | %s s | %.2f s |\n' "$warm_run" "$warm_wall"
    echo
    echo "Target: the simulation under 2 s."
    echo
    if [ $quick = 1 ]; then
        echo "## A sample of 40 gate survivors of search/space.json, sm_90, B=1 H=2 S=130 D=64 (--quick)"
    else
        echo "## Every gate survivor of search/space.json, sm_90, B=1 H=2 S=130 D=64"
    fi
    echo
    echo "\`fattn-tune check --arch sm_90 --shape $shape --jobs $jobs\` from an empty simulator cache:"
    echo
    echo "| configurations | wall time | host builds (sum, mean) | simulations (sum, mean, max) | verdicts | exit |"
    echo "|---|---|---|---|---|---|"
    printf '| %s | %.1f min | %s s, %s s | %s s, %s s, %s s | %s | %s |\n' "$checked" "$(awk -v s="$all_wall" 'BEGIN { print s / 60 }')" \
        "$build_s" "$mean_build" "$sim_s" "$mean_run" "$max_run" "$verdicts" "$rc"
    echo
    echo "Target: under 30 minutes on 2 cores."
} >"$out"
cat "$out"
