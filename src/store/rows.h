/*
 * rows.h - a small in-memory result set: column names and rows of cells,
 * each cell text (or NULL) with a flag saying whether it is a number
 * (right-aligned in tables, unquoted in JSON: export/table.h prints them).
 * Rows come from a SQLite statement (fattn_rows_from_stmt) or are added by
 * hand.
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

/* Appends a row of `ncols` cells; numeric[i] flags numbers (NULL: none). */
void fattn_rows_add(fattn_rows *r, const char *const *cells, const unsigned char *numeric);

/* Steps `st` to the end, collecting every row (columns named as in the
 * statement). Returns 0, or the sqlite3_step error code. */
int fattn_rows_from_stmt(fattn_rows *r, sqlite3_stmt *st);

#endif
