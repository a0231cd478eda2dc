#!/usr/bin/env bash
# check.sh - `fattn-tune check` end to end: the simulator's verdicts printed,
# stored under the kernel source hash, and honoured by search.
#  - the seeds' 2-byte pad (--config, past the gates it fails) is misaligned
#    at the kernel's cp.async and ldmatrix lines, with the fix; the default
#    configuration is ok;
#  - a kernel copy without the ring loop's __syncthreads races: check finds
#    it in two configurations, and search with that kernel skips exactly
#    those two (reason simulator, the check named) while the same search
#    with the real kernel skips none;
#  - every survivor of a small space with a kernel copy that crashes for one
#    configuration and loops forever for another: sim_crash and sim_timeout
#    are recorded, the other six checked, in two processes;
#  - usage errors exit 2 and write nothing.
#
#   check.sh TOOL SOURCE_ROOT
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/slowdown.sh"
tool=$(realpath "$1")
src=$(realpath "$2")
work=$(mktemp -d /tmp/fattn-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
sql() { "$tool" -q query --db fattn.db --format csv --sql "$1" | tail -n +2; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# plant DIR OLD NEW: replaces the one occurrence of OLD in DIR/fattn_fwd.cu.
plant() {
    python3 - "$1/fattn_fwd.cu" "$2" "$3" <<'EOF'
import sys
path, old, new = sys.argv[1], sys.argv[2].encode().decode('unicode_escape'), sys.argv[3].encode().decode('unicode_escape')
text = open(path).read()
if text.count(old) != 1:
    sys.exit(f"plant: {old!r} occurs {text.count(old)} times in {path}")
open(path, 'w').write(text.replace(old, new))
EOF
}

# 1. The seeds' pad: misaligned at the copy and the ldmatrix, past the gates.
pad=bm64-bn64-bk32-w4-s2-u1-cp1-sw0-h1-pad2
set +e
"$tool" --db fattn.db check --config "$pad" --shape 1,2,130,64 --arch sm_90 >pad.txt 2>pad.err
rc=$?
set -e
[ $rc = 1 ] || { cat pad.txt pad.err >&2; fail "pad: exit $rc, expected 1"; }
grep -q "note: $pad is rejected by the misaligned_cp_async gate on sm_90" pad.err || fail "pad: gate note"
grep -q "^$pad at B=1 H=2 S=130 D=64 non-causal: misaligned$" pad.txt || { cat pad.txt >&2; fail "pad verdict"; }
cp_line=$(grep -n "cp_async<kLoadBytes>(" "$src/kernels/fattn_fwd.cu" | head -1 | cut -d: -f1)
grep -q "misaligned: cp.async.cg 16 at shared 0x[0-9a-f]* is not 16-byte aligned (block (0,0,0) thread [0-9]*) at fattn_fwd.cu:$cp_line$" pad.txt ||
    { cat pad.txt >&2; fail "pad: cp.async at line $cp_line"; }
grep -q "misaligned: ldmatrix.x4 at shared 0x82 is not 16-byte aligned .* at fattn_fwd.cu:[0-9]*" pad.txt || fail "pad: ldmatrix"
grep -q "fix: keep every shared-memory row a multiple of 16 bytes" pad.txt || fail "pad: fix"
grep -q "1 of 1 configuration failed the simulator (1 defective" pad.err || fail "pad: error line"
[ "$(sql "SELECT verdict || ':' || defect || ':' || line || ':' || insn FROM sim_checks")" = "misaligned:1:$cp_line:cp.async.cg 16" ] ||
    fail "pad: stored verdict"
[ "$(sql "SELECT kernel_hash = (SELECT kernel_hash FROM sim_runs WHERE id = 1) AND length(kernel_hash) = 64 FROM sim_checks")" = 1 ] ||
    fail "pad: kernel hash"
"$tool" -q --db fattn.db check --config bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1 --shape 1,2,130,64 >ok.txt ||
    { cat ok.txt >&2; fail "default config"; }
grep -q ": ok$" ok.txt || fail "default config verdict"
[ "$(sql "SELECT verdict || ':' || n_bad FROM sim_checks WHERE run_id = 2")" = "ok:0" ] || fail "default stored"
grep -q "fattn_fwd.cu:$cp_line" <<<"$("$tool" --db fattn.db query sim --run 1)" || fail "query sim"
[ "$("$tool" --db fattn.db query simruns --format csv | tail -n +2 | cut -d, -f3,4 | tr '\n' ' ')" = "done,config done,config " ] ||
    fail "query simruns"
echo "ok: the seeds' pad is misaligned at the cp.async (line $cp_line) and ldmatrix sites; the default is ok"

# 2. A removed ring __syncthreads: a race in both checked configurations,
#    and search with that kernel skips them.
cp -r "$src/kernels" racy
plant racy 'cp_async_wait<STAGES - 2>();\n            __syncthreads();' 'cp_async_wait<STAGES - 2>();'
a=bm64-bn32-bk32-w4-s2-u1-cp1-sw1-h0
b=bm64-bn64-bk64-w4-s2-u1-cp1-sw1-h1
if "$tool" -q --db fattn.db --kernel-dir racy check --config $a --config $b --shape 1,2,130,64 >race.txt 2>&1; then
    cat race.txt >&2
    fail "race: exit 0"
fi
[ "$(sql "SELECT count(*) FROM sim_checks WHERE run_id = 3 AND verdict LIKE 'race_%' AND defect = 1 AND other_line > 0")" = 2 ] ||
    { cat race.txt >&2; fail "race verdicts"; }
export FATTN_WORKER_HOOK=fake
"$tool" search --strategy exhaustive --arch sm_90 --shape 2,8,512,64 --space "$src/tests/data/space-search.json" --db fattn.db \
    --kernel-dir racy --samples 4 --jobs 2 >s1.txt 2>s1.err || { cat s1.txt s1.err >&2; fail "search racy"; }
grep -q "skipping 2 configurations the simulator found defective with this kernel source" s1.err || { cat s1.err >&2; fail "skip note"; }
grep -q "^8 configurations: 0 rejected by the static gates, 2 skipped as the simulator found them defective, 6 survive; 6 tried" s1.txt ||
    { cat s1.txt >&2; fail "skip summary"; }
study=$(sql "SELECT max(id) FROM studies")
[ "$(sql "SELECT group_concat(config_key, ' ') FROM (SELECT config_key FROM trials WHERE study_id = $study AND reason = 'simulator' ORDER BY config_key)")" = "$a $b" ] ||
    fail "skipped trials"
grep -q "sim check [0-9]*: race_" <<<"$(sql "SELECT detail FROM trials WHERE study_id = $study AND config_key = '$a'")" || fail "skip detail"
"$tool" -q search --strategy exhaustive --arch sm_90 --shape 2,8,512,64 --space "$src/tests/data/space-search.json" --db fattn.db \
    --samples 4 --jobs 2 >s2.txt 2>&1 || { cat s2.txt >&2; fail "search real kernel"; }
grep -q "^8 configurations: 0 rejected by the static gates, 8 survive; 8 tried" s2.txt || { cat s2.txt >&2; fail "no skip with the real kernel"; }
"$tool" -q search --strategy exhaustive --arch sm_90 --shape 2,8,512,64 --causal --space "$src/tests/data/space-search.json" --db fattn.db \
    --kernel-dir racy --samples 4 --jobs 2 >s3.txt 2>&1 || { cat s3.txt >&2; fail "search causal"; }
grep -q "^8 configurations: 0 rejected by the static gates, 8 survive" s3.txt || fail "causal: checked non-causal only, nothing skipped"
unset FATTN_WORKER_HOOK
echo "ok: a removed ring __syncthreads races; search with that kernel skips the 2 configurations, with the real one none"

# 3. Every survivor of a space, one crashing and one looping forever.
cp -r "$src/kernels" broken
plant broken '    const int lane = threadIdx.x % 32;\n' '    const int lane = threadIdx.x % 32;\n#if BLOCK_N == 32 && BLOCK_K == 32\n    if (threadIdx.x == 5) *(volatile int *)nullptr = 1;\n#elif BLOCK_N == 32 && BLOCK_K == 64 && HALF2 == 1\n    if (threadIdx.x == 5) for (volatile int spin = 0;; spin = spin + 1) {}\n#endif\n'
set +e
"$tool" --db fattn.db --kernel-dir broken check --space "$src/tests/data/space-search.json" --shape 1,2,33,64 --arch sm_90 \
    --jobs 2 --timeout "$(scaled 10)" >all.txt 2>all.err
rc=$?
set -e
[ $rc = 1 ] || { cat all.txt all.err >&2; fail "all: exit $rc, expected 1"; }
run=$(sql "SELECT max(id) FROM sim_runs")
[ "$(sql "SELECT mode || ':' || status FROM sim_runs WHERE id = $run")" = "all:done" ] || fail "all: run"
[ "$(sql "SELECT group_concat(verdict, ' ') FROM (SELECT verdict FROM sim_checks WHERE run_id = $run ORDER BY verdict)")" = "ok ok ok ok ok sim_crash sim_crash sim_timeout" ] ||
    { cat all.txt >&2; sql "SELECT config_key, verdict, detail FROM sim_checks WHERE run_id = $run" >&2; fail "all: verdicts"; }
grep -q "died (signal\|died (exit status" <<<"$(sql "SELECT detail FROM sim_checks WHERE run_id = $run AND verdict = 'sim_crash' LIMIT 1")" || fail "crash detail"
[ "$(sql "SELECT config_key FROM sim_checks WHERE run_id = $run AND verdict = 'sim_timeout'")" = bm64-bn32-bk64-w4-s2-u1-cp1-sw1-h1 ] || fail "timeout config"
[ "$(sql "SELECT count(*) FROM sim_checks WHERE run_id = $run AND defect = 1")" = 0 ] || fail "crash and timeout are no defects"
grep -q "^8 configurations checked in" all.txt || fail "all: summary"
grep -q "^sim_timeout: 1 configuration, e.g. bm64-bn32-bk64-w4-s2-u1-cp1-sw1-h1 at B=1 H=2 S=33 D=64 non-causal" all.txt ||
    { cat all.txt >&2; fail "all: timeout group"; }
echo "ok: every survivor in 2 processes: a crash and an endless loop contained (sim_crash, sim_timeout), 5 ok"

# 4. Usage errors: exit 2, nothing written.
before=$(sql "SELECT count(*) FROM sim_runs")
for args in "--covering --shape 1,2,33,64 --arch sm_90" "--arch sm_90" "--config bm64 --sample 3 --shape 1,2,33,64" \
    "--shape 1,2,33,64 --arch sm_91" "--config NOPE=1 --shape 1,2,33,64" "--shape 1,2,33,64 --arch sm_90 --jobs 0"; do
    set +e
    # shellcheck disable=SC2086
    "$tool" --db fattn.db check $args >u.txt 2>u.err
    rc=$?
    set -e
    [ $rc = 2 ] || { cat u.err >&2; fail "usage '$args': exit $rc"; }
    [ "$(wc -l <u.err)" = 1 ] || { cat u.err >&2; fail "usage '$args': one line"; }
done
[ "$(sql "SELECT count(*) FROM sim_runs")" = "$before" ] || fail "usage errors wrote runs"
grep -q -- "--covering" <<<"$("$tool" check --help)" || fail help
grep -q "^  check " <<<"$("$tool" --help)" || fail "check in the command list"
echo "ok: usage errors exit 2 in one line and write nothing"
