#!/usr/bin/env bash
# run-case.sh - runs one declarative CLI case (tests/cli/cases/*.case).
#
#   run-case.sh TOOL FIXTURE_DB SOURCE_ROOT CASE_FILE
#
# A case file holds "Key: value" lines:
#   Setup: NAME [NAME...]    prepare the case folder (see setup_* below)
#   Row: TEXT                the row of the bad-input table this case is
#                            (docs/bad-input.md, scripts/bad-input-table.sh)
#   Args: ...                fattn-tune's arguments (shell words; $SRC is the
#                            source root, $HERE the case folder)
#   Env: VAR=value           extra environment (repeatable)
#   AsNobody: yes            run as an unprivileged user (read-only tests as root)
#   ExpectedExitCode: N      (default 0)
#   ExpectedStdout: REGEX    a line of stdout matches (repeatable, grep -E)
#   NotExpectedStdout: REGEX no line of stdout matches (repeatable)
#   ExpectedStderr: REGEX    a line of stderr matches (repeatable)
#   StderrLines: N           stderr has exactly N lines
#   DbUnchanged: yes         fattn.db and the folder's file list are byte-for-
#                            byte what they were before the command
#   FileUnchanged: PATH      the same for another file
#   Then: SHELL              a command run in the case folder afterwards must
#                            succeed (repeatable; $FATTN_TOOL is fattn-tune,
#                            $SRC the source root, out.txt and err.txt the
#                            command's output)
# Exit: 0 pass, 1 fail, 77 skip (AsNobody without a way to drop privileges).
set -u

tool=$(realpath "$1")
fixture=$(realpath "$2")
SRC=$(realpath "$3")
case_file=$4
name=$(basename "$case_file" .case)

HERE=$(mktemp -d "/tmp/fattn-cli-$name.XXXXXX")
chmod 755 "$HERE"
trap 'chmod -R u+w "$HERE" 2>/dev/null; rm -rf "$HERE"' EXIT
cd "$HERE" || exit 99

fail() {
    echo "FAIL $name: $*" >&2
    echo "--- args: ${args[*]:-}" >&2
    echo "--- stdout:" >&2
    cat out.txt >&2 2>/dev/null
    echo "--- stderr:" >&2
    cat err.txt >&2 2>/dev/null
    exit 1
}

field() { sed -n "s/^$1: //p" "$case_file"; }

# Setups.
setup_db() { "$tool" -q compile --arch sm_90 --shape 2,8,512,64 --filter BLOCK_M=32,NUM_WARPS=8 --db fattn.db >/dev/null || exit 99; }
setup_timed_db() { "$fixture" timed fattn.db >/dev/null || exit 99; }
setup_mixed_db() { setup_timed_db; "$fixture" compiled fattn.db >/dev/null || exit 99; }
setup_corrupt_db() { head -c 8192 /dev/urandom >fattn.db; }
setup_truncated_db() { setup_db; truncate -s 3000 fattn.db; }
setup_newer_db() { setup_db; "$fixture" version fattn.db 99 || exit 99; }
setup_negative_version_db() { setup_db; "$fixture" version fattn.db -3 || exit 99; }
setup_newer_timed_db() { setup_timed_db; "$fixture" version fattn.db 99 || exit 99; }
# Campaign files, one per mistake, and one without (ok.tsv).
setup_campaign_files() {
    printf 'shape\ttrials\n2,8,512,64\t3\n4,16,2048,128\t3\n' >ok.tsv
    printf '# a comment\nshape\tseqlen\n' >unknown-column.tsv
    printf 'shape\ttrials\n2,8,512,64\t3\n2,8,512\t3\n' >bad-shape.tsv
    printf 'shape\tmask\ttrials\n2,8,512,64\tsliding\t3\n' >bad-mask.tsv
    printf 'shape\ttrials\tbudget\n2,8,512,64\t3\t-\n4,16,2048,128\t-\t-\n' >no-limit.tsv
    printf 'shape\tmask\ttrials\n2,8,512,64\tcausal\t3\n2,8,512,64\tnone\t3\n2,8,512,64\tcausal\t5\n' >duplicate.tsv
    printf '{"rows": [{"shape": "2,8,512,64", "budget": "1m"}, {"shape": "4,16,2048,128", "budget": "5s"}]}' >short-budget.json
    printf '[{"shape": "2,8,512,64", "trials": 3, "seq_len": 512}]' >unknown-key.json
}
# A second database beside fattn.db (merge).
setup_second_db() { "$fixture" timed second.db >/dev/null || exit 99; }
setup_foreign_db() { "$fixture" foreign fattn.db || exit 99; }
setup_readonly_db() { setup_db; chmod 444 fattn.db; }
# Page 2's b-tree header zeroed: a damage SQLite's quick_check finds.
setup_flipped_db() {
    setup_timed_db
    local page
    page=$(od -An -tu1 -j16 -N2 fattn.db | awk '{ print $1 * 256 + $2 }')
    printf '\000' | dd of=fattn.db bs=1 seek="$page" conv=notrunc status=none || exit 99
}
# A file the user may write, in a folder they may not (SQLite needs it for its journal).
setup_readonly_folder_db() { mkdir ro && "$fixture" timed ro/fattn.db >/dev/null && chmod 666 ro/fattn.db && chmod 555 ro || exit 99; }
setup_kernels() { mkdir kernels && cp "$SRC"/kernels/*.cu "$SRC"/kernels/*.h kernels/; }
# A syntax error at the end of the tunable kernel: every configuration fails alike.
setup_broken_kernel() { setup_kernels; echo 'this is not C++;' >>kernels/fattn_fwd.cu; }
# The kernels with a hardware record of their own source (src/space/hardware.h).
setup_kernels_proven() {
    setup_kernels
    local hash
    hash=$("$tool" space --family mma --kernel-dir kernels --format json | sed -n 's/^  "kernel_sha256": "\([0-9a-f]*\)",$/\1/p')
    [ ${#hash} = 64 ] || exit 99
    printf 'mma\t2026-12-01\tTest GPU 80GB\t%s\tthe test check\n' "$hash" >kernels/hardware-records.tsv
    # A second copy whose records are of other sources only: its own is unproven.
    mkdir old && cp kernels/*.cu kernels/*.h old/ &&
        printf '# a comment\nmma\t2026-10-01\tOld GPU\t%064d\tan older check\nmma\t2026-11-01\tNewer GPU\t%064d\ta later check\nwgmma\t2026-12-01\tAny GPU\t%s\tanother family\nnot a record\n' 1 2 "$hash" >old/hardware-records.tsv || exit 99
}
setup_kernels_without_header() { setup_kernels; rm kernels/fattn_tile.h; }
# The wgmma kernel with its producer one setmaxnreg step over the pool (two consumers: 65,536 registers asked, 64,512 given).
setup_kernels_pool_short() {
    setup_kernels
    sed -i 's/(CONSUMERS == 1 ? 56 : CONSUMERS == 2 ? 24 : 32)/(CONSUMERS == 1 ? 56 : CONSUMERS == 2 ? 32 : 32)/' kernels/fattn_wgmma.cu
    grep -q 'CONSUMERS == 2 ? 32 : 32' kernels/fattn_wgmma.cu || exit 99
}
setup_unreadable_kernel() { setup_kernels; chmod 000 kernels/fattn_fwd.cu; }
setup_space_files() { cp "$SRC"/tests/data/space-*.json .; }
# Paths -o must not replace: a FIFO, a device node, a link to a regular file.
setup_fifo() { mkfifo out.fifo || exit 99; }
setup_device_node() {
    mknod dev-full c 1 7 2>/dev/null || { echo "SKIP $name: cannot make a device node (mknod needs root)" >&2; exit 77; }
}
setup_nul_file() { printf '{"a": 1,\0}' >nul.json || exit 99; }
# The H100 landscape with one line added at its end (line 3896), for the reader's checks.
landscape_plus() { cp "$SRC"/tests/data/landscape-h100-2-8-512-64.csv land.csv && echo "$1" >>land.csv || exit 99; }
setup_landscape_duplicate() { landscape_plus "$(grep -m1 ',ok,' "$SRC"/tests/data/landscape-h100-2-8-512-64.csv)"; }
setup_landscape_p10() { landscape_plus 'bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-pad8,ok,,6.1,6.5,6.9'; }
setup_landscape_huge() { landscape_plus 'bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-pad8,ok,,1e308,1e308,1e308'; }
setup_landscape_tiny() { landscape_plus 'bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-pad8,ok,,1e-300,1e-300,1e-300'; }
setup_landscape_compiled() { landscape_plus 'bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-pad8,compiled,,,,'; }
# A parameter name of 1 MB; a space of 8,388,608 configurations (64^3 x 4 x 8).
setup_long_name_space() { printf '{"parameters": {"%s": [1]}}' "$(head -c 1000000 /dev/zero | tr '\0' X)" >long.json; }
setup_huge_space() {
    local v
    v=$(seq -s, 16 79)
    printf '{"parameters": {"BLOCK_M": [%s], "BLOCK_N": [%s], "BLOCK_K": [%s], "STAGES": [1,2,3,4], "UNROLL": [1,2,3,4,5,6,7,8]}}' \
        "$v" "$v" "$v" >huge.json
}
setup_big_file() { truncate -s $((16 * 1024 * 1024 + 1)) big.json || exit 99; }
setup_symlink() { echo before >target.txt && ln -s target.txt link.h || exit 99; }

for s in $(field Setup); do
    "setup_${s//-/_}"
done

digest() {
    [ -e "$1" ] || { echo missing; return; }
    sha256sum "$1" | cut -d' ' -f1
}
listing() { ls -A1 | grep -v -e '^out.txt$' -e '^err.txt$' | tr '\n' ' '; }
db_before=$(digest fattn.db)
list_before=$(listing)
declare -A file_before
while IFS= read -r f; do file_before[$f]=$(digest "$f"); done < <(field FileUnchanged)

eval "args=($(field Args))"
envs=()
while IFS= read -r e; do [ -n "$e" ] && envs+=("$e"); done < <(field Env)

runner=()
if [ "$(field AsNobody)" = yes ] && [ "$(id -u)" = 0 ]; then
    if command -v setpriv >/dev/null; then
        runner=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    else
        echo "SKIP $name: running as root and no setpriv to drop privileges" >&2
        exit 77
    fi
fi

env "${envs[@]}" "${runner[@]}" "$tool" "${args[@]}" >out.txt 2>err.txt
code=$?

expected=$(field ExpectedExitCode)
[ "$code" = "${expected:-0}" ] || fail "exit code $code, expected ${expected:-0}"
while IFS= read -r re; do
    [ -z "$re" ] || grep -Eq -- "$re" out.txt || fail "no stdout line matches: $re"
done < <(field ExpectedStdout)
while IFS= read -r re; do
    [ -z "$re" ] || ! grep -Eq -- "$re" out.txt || fail "a stdout line matches: $re"
done < <(field NotExpectedStdout)
while IFS= read -r re; do
    [ -z "$re" ] || grep -Eq -- "$re" err.txt || fail "no stderr line matches: $re"
done < <(field ExpectedStderr)
lines=$(field StderrLines)
if [ -n "$lines" ]; then
    got=$(wc -l <err.txt)
    [ "$got" = "$lines" ] || fail "stderr has $got lines, expected $lines"
fi
if [ "$(field DbUnchanged)" = yes ]; then
    [ "$(digest fattn.db)" = "$db_before" ] || fail "fattn.db changed"
    [ "$(listing)" = "$list_before" ] || fail "files changed: before [$list_before] after [$(listing)]"
fi
while IFS= read -r cmd; do
    [ -z "$cmd" ] || FATTN_TOOL=$tool SRC=$SRC bash -c "$cmd" >/dev/null 2>&1 || fail "afterwards, failed: $cmd"
done < <(field Then)
for f in "${!file_before[@]}"; do
    [ "$(digest "$f")" = "${file_before[$f]}" ] || fail "$f changed"
done
echo "ok $name"
exit 0
