#!/usr/bin/env bash
# study-limits.sh - the commands that re-gate or re-compile a stored study's
# configuration (confirm, bench --trial, export --kernel) take the gate
# limits, arch and kernel source the study was searched with, on the fake
# engine (FATTN_WORKER_HOOK): a one-configuration search of a 57,344-byte
# configuration under --smem-limit max is confirmed (not refused at the
# default 48 KiB), an explicit --smem-limit overrides the study's with a
# line, a study that stored no limits gets the defaults with a line, another
# arch or kernel source stops the command with one line naming both unless
# --allow-arch-change / --allow-kernel-change. Refusals write nothing.
#
#   study-limits.sh TOOL SOURCE_ROOT
set -euo pipefail
tool=$(realpath "$1")
src=$(realpath "$2")
work=$(mktemp -d /tmp/fattn-study-limits.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
export FATTN_WORKER_HOOK=fake
fail() { echo "FAIL: $*" >&2; cat out.txt err.txt >&2 2>/dev/null || true; exit 1; }
run() { set +e; "$@" >out.txt 2>err.txt; rc=$?; set -e; }
sql() { "$tool" -q query --db "${db:-fattn.db}" --format csv --sql "$1" | tail -n +2; }
digest() { sha256sum fattn.db | cut -d' ' -f1; }
key=bm64-bn128-bk64-w4-s3-u1-cp1-sw1-h1
note_study="^fattn-tune: note: confirm re-gates on sm_90 under the gate limits study 1 was searched with \(shared memory <= 232448 B, spills <= 0 B, occupancy >= 0.5, cp.async waived,"

# A search of one configuration of 57,344 bytes of shared memory.
"$tool" -q search --strategy exhaustive --arch sm_90 --shape 2,8,512,64 --space "$src/search/space-h100.json" \
    --smem-limit max --filter BLOCK_M=64,BLOCK_N=128,BLOCK_K=64,NUM_WARPS=4,STAGES=3,UNROLL=1,SPLIT_KV=1,Q_REGS=0 \
    --samples 8 --db fattn.db >/dev/null || fail "search"
[ "$(sql "SELECT config_key || ':' || smem_dynamic FROM trials WHERE status = 'ok'")" = "$key:57344" ] ||
    fail "the search measured $key at 57,344 bytes"

# 1. confirm takes the study's limit, and says so in one line.
run "$tool" confirm --db fattn.db --n 20
[ $rc = 0 ] || fail "confirm of a study searched with --smem-limit max: exit $rc"
grep -Eq "$note_study" err.txt || fail "the study's limits line"
[ "$(grep -c 'note:' err.txt)" = 1 ] || fail "one note line"
grep -q "^$key " out.txt || fail "the candidate in the table"
[ "$(sql "SELECT count(*) FROM confirmations WHERE config_key = '$key' AND arch = 'sm_90' AND median_us > 0")" = 1 ] ||
    fail "the confirmation stored"

# 2. An explicit limit overrides the study's: below the configuration, the gate refuses in one line and
# nothing is written; above it, a line says so.
before=$(digest)
run "$tool" confirm --db fattn.db --n 20 --smem-limit 48K
[ $rc = 1 ] || fail "confirm --smem-limit 48K: exit $rc, expected 1"
grep -q "^fattn-tune: candidate $key is rejected by the smem_overflow gate: .* 57344 B over limit 49152 B" err.txt &&
    [ "$(wc -l <err.txt)" = 1 ] || fail "the smem gate under the override, in one line"
[ "$before" = "$(digest)" ] || fail "a refused confirm wrote to the database"
# An override the configuration passes says so.
run "$tool" confirm --db fattn.db --n 20 --smem-limit 60K
[ $rc = 0 ] || fail "confirm --smem-limit 60K: exit $rc"
grep -q "^fattn-tune: note: --smem-limit overrides study 1's limit: shared memory <= 61440 B, not shared memory <= 232448 B$" \
    err.txt || fail "the override line"

# 3. bench --trial: the same limits.
run "$tool" bench --trial 1 --db fattn.db --samples 5
[ $rc = 0 ] || fail "bench --trial: exit $rc"
grep -Eq "^fattn-tune: note: bench --trial re-gates on sm_90 under the gate limits study 1 was searched with \(shared memory <= 232448 B" err.txt ||
    fail "bench's limits line"
[ "$(wc -l <err.txt)" = 1 ] || fail "bench: one line"
grep -q "^$key  *ok " out.txt || fail "bench measured it"

# 4. Another arch: one line naming both, exit 1; allowed, re-gated for sm_89 (its opt-in maximum).
before=$(digest)
run env FATTN_WORKER_HOOK=fake,arch=sm_89 "$tool" confirm --db fattn.db --n 20
[ $rc = 1 ] || fail "confirm on another arch: exit $rc"
grep -q "^fattn-tune: study 1 was searched on sm_90, this GPU is sm_89: confirm takes the study's arch; .* --allow-arch-change" \
    err.txt || fail "the arch line"
[ "$(wc -l <err.txt)" = 1 ] || fail "one line for the arch"
[ "$before" = "$(digest)" ] || fail "a refused confirm wrote to the database"
run env FATTN_WORKER_HOOK=fake,arch=sm_89 "$tool" confirm --db fattn.db --n 20 --allow-arch-change
[ $rc = 0 ] || fail "confirm --allow-arch-change: exit $rc"
grep -q "^fattn-tune: note: --allow-arch-change: study 1 was searched on sm_90; confirm re-gates and re-compiles for sm_89$" \
    err.txt || fail "the allowed arch line"
grep -q "^fattn-tune: note: study 1's shared-memory limit of 232448 B is over sm_89's opt-in maximum; confirm takes 101376 B$" \
    err.txt || fail "the opt-in clamp line"
grep -q "^confirm: study 1, .* on sm_89," out.txt || fail "confirmed on sm_89"
[ "$(sql "SELECT arch FROM confirmations ORDER BY id DESC LIMIT 1")" = sm_89 ] || fail "the confirmation's arch"
# The header claims the study's own last confirmation (on sm_90), not the sm_89 one.
own=$(sql "SELECT max(id) FROM confirmations WHERE arch = 'sm_90' AND kernel_hash = (SELECT kernel_hash FROM studies)")
"$tool" -q export --db fattn.db -o claimed.h
grep -q "^ \* confirmed: median .*; confirmation $own, " claimed.h || fail "the header claims another arch's confirmation"

# 5. Another kernel source: one line naming both hashes, exit 1, for each command; allowed, re-gated and re-compiled.
cp -r "$src/kernels" k2
echo "// changed" >>k2/fattn_fwd.cu
before=$(digest)
for cmd in "confirm --n 20" "bench --trial 1" "export --kernel k.cu"; do
    run "$tool" $cmd --db fattn.db --kernel-dir k2
    [ $rc = 1 ] || fail "$cmd on a changed kernel: exit $rc"
    grep -q "^fattn-tune: k2/fattn_fwd.cu changed since study 1 measured it (sha256 [0-9a-f]\{12\}\.\.\., the study's [0-9a-f]\{12\}\.\.\.): ${cmd%% *}.* --allow-kernel-change" \
        err.txt || fail "$cmd: the kernel line"
    [ "$(wc -l <err.txt)" = 1 ] || fail "$cmd: one line for the kernel"
done
[ ! -e k.cu ] || fail "export --kernel wrote a refused kernel"
[ "$before" = "$(digest)" ] || fail "a refused command wrote to the database"
run "$tool" export --db fattn.db --kernel-dir k2 --kernel k.cu -o k.h --allow-kernel-change
[ $rc = 0 ] || fail "export --kernel --allow-kernel-change: exit $rc"
grep -q "^fattn-tune: note: --allow-kernel-change: k2/fattn_fwd.cu (sha256 [0-9a-f]*\.\.\.) is not the kernel study 1 measured ([0-9a-f]*\.\.\.); export --kernel re-gates and re-compiles under it$" \
    err.txt || fail "export's allowed kernel line"
grep -q "NOT the kernel the study measured" k.cu || fail "the exported kernel names both"
run "$tool" confirm --db fattn.db --kernel-dir k2 --n 20 --allow-kernel-change
[ $rc = 0 ] || fail "confirm --allow-kernel-change: exit $rc"
grep -q "^fattn-tune: note: --allow-kernel-change: .*; confirm re-gates and re-compiles under it$" err.txt ||
    fail "confirm's allowed kernel line"
[ "$(sql "SELECT kernel_hash = (SELECT kernel_hash FROM studies) FROM confirmations ORDER BY id DESC LIMIT 1")" = 0 ] ||
    fail "the confirmation records the source it measured"
"$tool" -q export --db fattn.db -o claimed.h
grep -q "^ \* confirmed: median .*; confirmation $own, " claimed.h || fail "the header claims another kernel's confirmation"
# Allowed kernel, refused arch: the refusal alone, one line.
run env FATTN_WORKER_HOOK=fake,arch=sm_89 "$tool" confirm --db fattn.db --kernel-dir k2 --n 20 --allow-kernel-change
[ $rc = 1 ] && [ "$(wc -l <err.txt)" = 1 ] && grep -q "this GPU is sm_89" err.txt ||
    fail "a refusal after an allowed change: exit $rc, $(wc -l <err.txt) lines"
# Re-compiled: a kernel that no longer compiles stops the allowed export.
cp -r "$src/kernels" k3
echo "this is not C++;" >>k3/fattn_fwd.cu
run "$tool" export --db fattn.db --kernel-dir k3 --kernel k3.cu --allow-kernel-change
[ $rc = 1 ] && grep -q "^fattn-tune: $key is rejected by the compile_error gate" err.txt && [ "$(wc -l <err.txt)" = 1 ] ||
    fail "an allowed kernel that does not compile: exit $rc, $(wc -l <err.txt) lines"
[ ! -e k3.cu ] || fail "export wrote a kernel that does not compile"

# 6. A study that stored no limits: the defaults; the 57,344-byte configuration is then refused, in one line.
python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE studies SET limits_json = ''\"); c.execute(\"UPDATE study_families SET limits_json = ''\"); c.commit()" fattn.db
before=$(digest)
run "$tool" confirm --db fattn.db --n 20
[ $rc = 1 ] || fail "confirm of a study without limits: exit $rc"
grep -q "smem_overflow gate: .* 57344 B over limit 49152 B" err.txt && [ "$(wc -l <err.txt)" = 1 ] ||
    fail "refused under the default limit, in one line"
[ "$before" = "$(digest)" ] || fail "a refused confirm wrote to the database"
run "$tool" confirm --db fattn.db --n 20 --smem-limit max
[ $rc = 0 ] || fail "confirm --smem-limit max of a study without limits: exit $rc"
grep -q "^fattn-tune: note: study 1 stores no gate limits (an older fattn-tune): confirm re-gates on sm_90 under the defaults (shared memory <= 49152 B," \
    err.txt || fail "the defaults line"
grep -q "^fattn-tune: note: --smem-limit overrides study 1's limit: shared memory <= 232448 B, not shared memory <= 49152 B (the default)$" \
    err.txt || fail "the override of the defaults"
echo "ok: confirm, bench --trial and export --kernel take the study's limits, arch and kernel"
