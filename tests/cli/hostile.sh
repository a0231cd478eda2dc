#!/usr/bin/env bash
# hostile.sh - a database whose text columns hold hostile text (fixture_db
# hostile: comment ends, quotes and newlines, trigraphs, a trailing
# backslash, <script>, terminal escapes, malformed UTF-8): the exported
# header and the dispatch header still compile with cc -std=c11 (trigraphs
# on) -Wall -Wextra -Werror -pedantic and define only what they should; their
# string macros hold the database's bytes exactly; the report carries the
# markup as text; query's table shows no control character; JSON parses.
#
#   hostile.sh TOOL FIXTURE_DB
set -euo pipefail
tool=$(realpath "$1")
fixture=$(realpath "$2")
work=$(mktemp -d /tmp/fattn-hostile.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$fixture" hostile h.db
"$tool" -q export --db h.db --study 1 -o tuned.h
"$tool" -q export --db h.db --study 1 --study 2 -o dispatch.h

# Only the definitions fattn-tune writes: none injected by a string.
defs=$(grep -c '^#define' tuned.h)
[ "$defs" = 34 ] || fail "tuned.h has $defs #define lines, expected 34"

cat >check.c <<'C'
#include <stdio.h>
#include "tuned.h"
#include "dispatch.h"
_Static_assert(FATTN_BLOCK_M == 128 && FATTN_NUM_WARPS == 8, "the configuration");
_Static_assert(FATTN_TUNED_STUDY == 1 && FATTN_TUNED_CONFIRMED == 1, "the study");
_Static_assert(FATTN_TUNED_COUNT == 2, "two entries");
static void hex(const char *s)
{
    for (; *s; ++s)
        printf("%02X", (unsigned char)*s);
    printf("\n");
}
int main(void)
{
    hex(FATTN_TUNED_ARCH);
    hex(FATTN_TUNED_CONFIG);
    hex(FATTN_TUNED_BASELINE);
    hex(FATTN_TUNED_VERDICT);
    const fattn_tuned_entry *e = fattn_tuned_lookup(FATTN_TUNED_ARCH, 1, 4, 1024, 128, 1);
    hex(e ? e->config : "");
    printf("%lld\n", e ? e->study : 0LL);
    return 0;
}
C
cc -std=c11 -Wall -Wextra -Werror -pedantic -o check check.c 2>cc.log || { cat cc.log >&2; fail "cc"; }
./check >got
"$tool" -q query --db h.db --format csv --sql "SELECT hex(arch) FROM studies WHERE id = 1
    UNION ALL SELECT * FROM (SELECT hex(config_key) FROM trials WHERE study_id = 1 AND status = 'ok' LIMIT 1)
    UNION ALL SELECT hex(baseline) FROM confirmations WHERE id = 1
    UNION ALL SELECT hex(verdict) FROM confirmations WHERE id = 1
    UNION ALL SELECT * FROM (SELECT hex(config_key) FROM trials WHERE study_id = 2 AND status = 'ok' LIMIT 1)
    UNION ALL SELECT 2" | tail -n +2 >want
diff want got || fail "the header's strings are not the database's bytes"
[ "$(wc -l <want)" = 6 ] || fail "the query found $(wc -l <want) of 6 values"
echo "ok: headers compile; their strings are the database's bytes"

"$tool" -q report --db h.db --study 1 --study 2 -o r.html
grep -q '<script>' r.html && fail "the report holds a <script> tag"
grep -q '&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;' r.html || fail "the report dropped the text"
LC_ALL=C grep -q $'[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]' r.html && fail "the report holds control bytes"
echo "ok: report escapes markup"

# Every text column of studies, whichever holds the terminal escape (column k
# holds string k mod n: a column added anywhere moves the strings along).
"$tool" -q query --db h.db studies >table.txt
"$tool" -q query --db h.db --sql "SELECT * FROM studies" >>table.txt
LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' table.txt && fail "query's table passes control bytes to the terminal"
grep -q 'red?\[0m' table.txt || fail "query's table dropped the text"
echo "ok: query table"

"$tool" -q export --db h.db --study 1 --format json -o best.json
"$tool" -q export --db h.db --study 1 --format t4 -o t4.json
if command -v python3 >/dev/null; then
    python3 - best.json t4.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:  # strict UTF-8: malformed bytes would raise
        json.load(f)
PY
    echo "ok: JSON exports parse as strict UTF-8 JSON"
fi
