/*
 * rows.h - a small in-memory result set: column names and rows of cells,
 * each cell text (or NULL) with a flag saying whether it is a number
 * (right-aligned in tables, unquoted in JSON: export/table.h prints them).
 * Rows come from a SQLite statement (fattn_rows_from_stmt) or are added by
 * hand; a statement's rows may also be streamed to a sink, never held
 * (fattn_rows_stream).
 */
#ifndef FATTN_STORE_ROWS_H
#define FATTN_STORE_ROWS_H

#include <sqlite3.h>

typedef struct fattn_rows {
    int ncols;
    char **names;
    int nrows, cap;
    char ***cells;           /* cells[row][col], NULL for SQL NULL */
    unsigned char **numeric; /* numeric[row][col] */
} fattn_rows;

void fattn_rows_init(fattn_rows *r, int ncols, const char *const *names);
void fattn_rows_release(fattn_rows *r);

/* Drops the rows, keeping the column names. */
void fattn_rows_clear(fattn_rows *r);

/* Appends a row of `ncols` cells; numeric[i] flags numbers (NULL: none). */
void fattn_rows_add(fattn_rows *r, const char *const *cells, const unsigned char *numeric);

/* Steps `st` to the end, collecting every row (columns named as in the
 * statement). Returns 0, or the sqlite3_step error code. */
int fattn_rows_from_stmt(fattn_rows *r, sqlite3_stmt *st);

/* Where a statement's rows go one at a time (nothing is held): begin once
 * with the column names, before the first step; then each row, its cells
 * valid only during the call. */
typedef struct fattn_row_sink {
    void (*begin)(void *arg, int ncols, const char *const *names);
    void (*row)(void *arg, const char *const *cells, const unsigned char *numeric);
    void *arg;
} fattn_row_sink;

/* Steps `st` to the end, handing each row to the sink as text: a REAL as
 * %.6g ("inf" for an infinity), a BLOB as "<blob N bytes>", NULL as NULL.
 * Returns 0, or the sqlite3_step error code. */
int fattn_rows_stream(sqlite3_stmt *st, const fattn_row_sink *sink);

#endif
