/*
 * table.h - printing rows as an aligned table, CSV (RFC 4180) or JSON.
 *
 * A fattn_rows is a small in-memory result set: column names and rows of
 * cells, each cell text (or NULL) with a flag saying whether it is a number
 * (right-aligned in tables, unquoted in JSON). Rows come from a SQLite
 * statement (fattn_rows_from_stmt) or are added by hand.
 */
#ifndef FATTN_EXPORT_TABLE_H
#define FATTN_EXPORT_TABLE_H

#include <sqlite3.h>
#include <stdio.h>

#include "util/escape.h" /* fattn_json_string */

enum fattn_format { FATTN_FMT_TABLE, FATTN_FMT_CSV, FATTN_FMT_JSON };

/* Parses "table", "csv" or "json"; reports a usage error naming `option`. */
int fattn_format_parse(const char *s, const char *option, int *out);

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

/* Prints the rows. Table cells longer than `max_width` (0: no limit) are cut
 * with "...". */
void fattn_rows_print(FILE *f, const fattn_rows *r, int format, int max_width);

/* Prints one row as "name: value" lines (table), or as CSV/JSON. */
void fattn_rows_print_record(FILE *f, const fattn_rows *r, int row, int format);

#endif
