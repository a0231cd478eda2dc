#!/usr/bin/env bash
# bad-input-table.sh - prints docs/bad-input.md: the bad-input table, one row
# per case tests/cli/cases/bad-*.case (its Row, Setup, Args, exit code and
# the one stderr line it asserts). Every row also asserts that the database
# is byte-for-byte what it was and that no file appeared (DbUnchanged). The
# test bad-input-doc fails when docs/bad-input.md differs from this output.
#
#   scripts/bad-input-table.sh [SOURCE_ROOT] >docs/bad-input.md
set -euo pipefail
root=${1:-$(dirname "$0")/..}
field() { sed -n "s/^$1: //p" "$2"; }
cat <<'HEAD'
# Bad input: what each mistake gets

Each row is a CLI case, `tests/cli/cases/bad-NAME.case`, run by
`tests/cli/run-case.sh` in the `cli` suite: the command runs on a folder
holding a fattn-tune database (`Setup`: `timed-db` is a study with measured
trials; the others damage or lock that database), and the case asserts the
exit code (1 a failure, 2 a usage error), that stderr is the one line
matching the pattern shown (which names the input), and that the database
and the folder's file list are byte-for-byte what they were before.
Made by `scripts/bad-input-table.sh`; the test `bad-input-doc` keeps it current.

| case | the bad input | setup | command | exit | the one line on stderr (pattern) |
|---|---|---|---|---|---|
HEAD
for c in "$root"/tests/cli/cases/bad-*.case; do
    name=$(basename "$c" .case)
    [ "$(field DbUnchanged "$c")" = yes ] && [ "$(field StderrLines "$c")" = 1 ] ||
        { echo "bad-input-table.sh: $c: expected 'DbUnchanged: yes' and 'StderrLines: 1'" >&2; exit 1; }
    printf '| %s | %s | %s | `fattn-tune %s` | %s | `%s` |\n' "${name#bad-}" "$(field Row "$c")" "$(field Setup "$c")" \
        "$(field Args "$c" | sed 's/|/\\|/g')" "$(field ExpectedExitCode "$c")" "$(field ExpectedStderr "$c" | sed 's/|/\\|/g')"
done
