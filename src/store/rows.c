/*
 * rows.c - a result set in memory (rows.h).
 */
#include "store/rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

void fattn_rows_init(fattn_rows *r, int ncols, const char *const *names)
{
    memset(r, 0, sizeof *r);
    r->ncols = ncols;
    r->names = fattn_xcalloc((size_t)ncols, sizeof *r->names);
    for (int i = 0; i < ncols; ++i)
        r->names[i] = fattn_xstrdup(names[i]);
}

void fattn_rows_clear(fattn_rows *r)
{
    for (int i = 0; i < r->nrows; ++i) {
        for (int c = 0; c < r->ncols; ++c)
            free(r->cells[i][c]);
        free(r->cells[i]);
        free(r->numeric[i]);
    }
    r->nrows = 0;
}

void fattn_rows_release(fattn_rows *r)
{
    fattn_rows_clear(r);
    for (int c = 0; c < r->ncols; ++c)
        free(r->names[c]);
    free(r->names);
    free(r->cells);
    free(r->numeric);
    memset(r, 0, sizeof *r);
}

void fattn_rows_add(fattn_rows *r, const char *const *cells, const unsigned char *numeric)
{
    if (r->nrows == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->cells = fattn_xrealloc(r->cells, (size_t)r->cap * sizeof *r->cells);
        r->numeric = fattn_xrealloc(r->numeric, (size_t)r->cap * sizeof *r->numeric);
    }
    char **row = fattn_xcalloc((size_t)r->ncols, sizeof *row);
    unsigned char *num = fattn_xcalloc((size_t)r->ncols, 1);
    for (int c = 0; c < r->ncols; ++c) {
        row[c] = cells[c] ? fattn_xstrdup(cells[c]) : NULL;
        num[c] = numeric ? numeric[c] : 0;
    }
    r->cells[r->nrows] = row;
    r->numeric[r->nrows] = num;
    ++r->nrows;
}

int fattn_rows_stream(sqlite3_stmt *st, const fattn_row_sink *sink)
{
    int n = sqlite3_column_count(st), rc;
    const char **names = fattn_xcalloc((size_t)(n ? n : 1), sizeof *names);
    for (int c = 0; c < n; ++c)
        names[c] = sqlite3_column_name(st, c);
    sink->begin(sink->arg, n, names);
    free(names);
    const char **cells = fattn_xcalloc((size_t)(n ? n : 1), sizeof *cells);
    char(*bufs)[64] = fattn_xcalloc((size_t)(n ? n : 1), sizeof *bufs);
    unsigned char *num = fattn_xcalloc((size_t)(n ? n : 1), 1);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int c = 0; c < n; ++c) {
            int type = sqlite3_column_type(st, c);
            num[c] = type == SQLITE_INTEGER || type == SQLITE_FLOAT;
            if (type == SQLITE_NULL) {
                cells[c] = NULL;
            } else if (type == SQLITE_FLOAT) {
                snprintf(bufs[c], sizeof bufs[c], "%.6g", sqlite3_column_double(st, c));
                cells[c] = bufs[c];
            } else if (type == SQLITE_BLOB) {
                snprintf(bufs[c], sizeof bufs[c], "<blob %d bytes>", sqlite3_column_bytes(st, c));
                cells[c] = bufs[c];
            } else {
                const unsigned char *t = sqlite3_column_text(st, c);
                cells[c] = t ? (const char *)t : "";
            }
        }
        sink->row(sink->arg, cells, num);
    }
    free((void *)cells);
    free(bufs);
    free(num);
    return rc == SQLITE_DONE ? 0 : rc;
}

static void collect_begin(void *arg, int ncols, const char *const *names)
{
    fattn_rows_init(arg, ncols, names);
}

static void collect_row(void *arg, const char *const *cells, const unsigned char *numeric)
{
    fattn_rows_add(arg, cells, numeric);
}

int fattn_rows_from_stmt(fattn_rows *r, sqlite3_stmt *st)
{
    return fattn_rows_stream(st, &(fattn_row_sink){collect_begin, collect_row, r});
}
