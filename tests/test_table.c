/*
 * test_table.c - result sets printed as tables, CSV and JSON, from SQLite.
 */
#include "t.h"

#include <sqlite3.h>

#include "export/table.h"
#include "util/err.h"

static char *render(const fattn_rows *r, int format, int max_width)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fattn_rows_print(f, r, format, max_width);
    fclose(f);
    return buf;
}

static void from_sqlite(void)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    fattn_rows r;
    sqlite3_open(":memory:", &db);
    sqlite3_prepare_v2(db,
                       "SELECT 1 AS id, 'a,b' AS name, 2.5 AS x, NULL AS n, x'0102' AS b "
                       "UNION ALL SELECT 22, 'say \"hi\"', 0.125, 'z', NULL",
                       -1, &st, NULL);
    CHECK_INT(fattn_rows_from_stmt(&r, st), 0);
    sqlite3_finalize(st);
    CHECK_INT(r.ncols, 5);
    CHECK_INT(r.nrows, 2);

    char *csv = render(&r, FATTN_FMT_CSV, 0);
    CHECK_STR(csv, "id,name,x,n,b\n1,\"a,b\",2.5,,<blob 2 bytes>\n22,\"say \"\"hi\"\"\",0.125,z,\n");
    free(csv);

    char *json = render(&r, FATTN_FMT_JSON, 0);
    CHECK_STR(json, "[\n  {\n    \"id\": 1,\n    \"name\": \"a,b\",\n    \"x\": 2.5,\n    \"n\": null,\n"
                    "    \"b\": \"<blob 2 bytes>\"\n  },\n  {\n    \"id\": 22,\n    \"name\": \"say \\\"hi\\\"\",\n"
                    "    \"x\": 0.125,\n    \"n\": \"z\",\n    \"b\": null\n  }\n]\n");
    free(json);

    char *table = render(&r, FATTN_FMT_TABLE, 0);
    CHECK_STR(table, "id  name      x      n  b\n"
                     "--  --------  -----  -  --------------\n"
                     " 1  a,b         2.5     <blob 2 bytes>\n"
                     "22  say \"hi\"  0.125  z\n");
    free(table);
    fattn_rows_release(&r);
    sqlite3_close(db);
}

/* Rows printed as they come: a table sized by its first `hold` rows (a
 * later, longer cell widens its own line only), CSV and JSON line by line;
 * a non-finite number is null in JSON, never a bare inf. */
static void streamed(void)
{
    const char *names[] = {"n", "what"};
    const char *rows[][2] = {{"1", "a"}, {"22", "bb"}, {"333", "ccc"}, {"inf", "d"}};
    const unsigned char num[] = {1, 0};
    const char *want[] = {
        "n   what\n--  ----\n 1  a\n22  bb\n333  ccc\ninf  d\n",
        "n,what\n1,a\n22,bb\n333,ccc\ninf,d\n",
        "[\n  {\n    \"n\": 1,\n    \"what\": \"a\"\n  },\n  {\n    \"n\": 22,\n    \"what\": \"bb\"\n  },\n"
        "  {\n    \"n\": 333,\n    \"what\": \"ccc\"\n  },\n  {\n    \"n\": null,\n    \"what\": \"d\"\n  }\n]\n",
    };
    const int formats[] = {FATTN_FMT_TABLE, FATTN_FMT_CSV, FATTN_FMT_JSON};
    for (int k = 0; k < 3; ++k) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        fattn_printer *p = fattn_printer_open(f, formats[k], 0, 2, 2, names);
        for (int i = 0; i < 4; ++i) {
            fattn_printer_row(p, rows[i], num);
            if (i == 2 && formats[k] != FATTN_FMT_TABLE) { /* nothing held back */
                fflush(f);
                CHECK(strstr(buf, "333") != NULL);
            }
        }
        fattn_printer_close(&p);
        CHECK(p == NULL);
        fclose(f);
        CHECK_STR(buf, want[k]);
        free(buf);
    }
    /* A JSON result cut short (a timeout) is still an array. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fattn_printer *p = fattn_printer_open(f, FATTN_FMT_JSON, 0, 0, 2, names);
    fattn_printer_close(&p);
    fclose(f);
    CHECK_STR(buf, "[]\n");
    free(buf);
    CHECK(fattn_json_number_text("-1.5e+3") && fattn_json_number_text("0") && !fattn_json_number_text("inf")
          && !fattn_json_number_text("-Inf") && !fattn_json_number_text("nan") && !fattn_json_number_text("1.")
          && !fattn_json_number_text(".5") && !fattn_json_number_text("+1") && !fattn_json_number_text("01")
          && !fattn_json_number_text("0x10") && !fattn_json_number_text(""));
}

static void cut_and_record(void)
{
    const char *names[] = {"key", "detail"};
    const char *cells[] = {"k", "0123456789abcdef"};
    fattn_rows r;
    fattn_rows_init(&r, 2, names);
    fattn_rows_add(&r, cells, NULL);
    char *t = render(&r, FATTN_FMT_TABLE, 8);
    CHECK_STR(t, "key  detail\n---  --------\nk    01234...\n");
    free(t);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fattn_rows_print_record(f, &r, 0, FATTN_FMT_TABLE);
    fclose(f);
    CHECK_STR(buf, "key:    k\ndetail: 0123456789abcdef\n");
    free(buf);
    fattn_rows_release(&r);
    /* A log keeps its lines, indented under the first; a control byte
     * within a line is still a '?', a CRLF ending and the last newline go. */
    const char *log[] = {"k", "ptxas info : a\r\n\nptxas info\x1b[31m : b\n"};
    fattn_rows_init(&r, 2, names);
    fattn_rows_add(&r, log, NULL);
    f = open_memstream(&buf, &len);
    fattn_rows_print_record(f, &r, 0, FATTN_FMT_TABLE);
    fclose(f);
    CHECK_STR(buf, "key:    k\ndetail: ptxas info : a\n        \n        ptxas info?[31m : b\n");
    free(buf);
    fattn_rows_release(&r);
    /* Empty JSON result. */
    fattn_rows_init(&r, 2, names);
    t = render(&r, FATTN_FMT_JSON, 0);
    CHECK_STR(t, "[]\n");
    free(t);
    fattn_rows_release(&r);
    int fmt;
    fattn_error_set_quiet(1);
    CHECK_INT(fattn_format_parse("xml", "--format", &fmt), FATTN_EUSAGE);
    CHECK_CONTAINS(fattn_last_error(), "--format 'xml': expected table, csv or json");
    CHECK_INT(fattn_format_parse("csv", "--format", &fmt), FATTN_OK);
    CHECK_INT(fmt, FATTN_FMT_CSV);
}

static void json_escapes(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fattn_json_string(f, "a\"b\\c\nd\te\x01");
    fclose(f);
    CHECK_STR(buf, "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
    free(buf);
}

int main(void)
{
    T_RUN(from_sqlite);
    T_RUN(streamed);
    T_RUN(cut_and_record);
    T_RUN(json_escapes);
    return t_exit();
}
