/*
 * fuzz_export.c - the export and report writers over a database whose text
 * columns hold whatever the fuzzer makes: the input, split at NUL bytes into
 * up to 8 strings, goes into every text column (tests/hostile.h), and the C
 * header, the dispatch header, the HTML report, the JSON and T4 exports and
 * query's table must keep each string inside its comment, literal, text or
 * attribute (the structure of the output made from benign stand-ins), carry
 * the exact bytes in the header's string macros, parse as JSON, and show a
 * terminal no control character.
 */
#include <unistd.h>

#include "fuzz.h"
#include "hostile.h"

static fattn_store *db;
static char *columns;
static char path[64];

static void drop(void)
{
    fattn_store_close(&db);
    free(columns);
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    if (!db) {
        snprintf(path, sizeof path, "/tmp/fattn-fuzz-export-%d.db", (int)getpid());
        unlink(path);
        FUZZ_ASSERT(fattn_store_open(path, FATTN_DB_WRITE, &db) == FATTN_OK && hostile_build(db) == 0);
        FUZZ_ASSERT(hostile_sql(fattn_store_db(db), "PRAGMA synchronous = OFF") == 0);
        columns = hostile_columns(fattn_store_db(db));
        atexit(drop);
    }
    char *text = malloc(size + 1);
    FUZZ_ASSERT(text != NULL);
    memcpy(text, data, size);
    text[size] = 0;
    const char *strings[8];
    int n = 0;
    for (char *p = text; n < 8; p += strlen(p) + 1) {
        strings[n++] = p;
        if (p + strlen(p) >= text + size)
            break;
    }
    char why[256];
    const char *bad = hostile_check(db, columns, strings, n, why, sizeof why);
    if (bad)
        fprintf(stderr, "fuzz_export: %s\n", bad);
    FUZZ_ASSERT(bad == NULL);
    free(text);
    return 0;
}
