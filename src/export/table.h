/*
 * table.h - printing rows (store/rows.h) as an aligned table, CSV
 * (RFC 4180) or JSON.
 */
#ifndef FATTN_EXPORT_TABLE_H
#define FATTN_EXPORT_TABLE_H

#include <stdio.h>

#include "store/rows.h"
#include "util/escape.h" /* fattn_json_string */

enum fattn_format { FATTN_FMT_TABLE, FATTN_FMT_CSV, FATTN_FMT_JSON };

/* Parses "table", "csv" or "json"; reports a usage error naming `option`. */
int fattn_format_parse(const char *s, const char *option, int *out);

/* Prints the rows. Table cells longer than `max_width` (0: no limit) are cut
 * with "...". */
void fattn_rows_print(FILE *f, const fattn_rows *r, int format, int max_width);

/* Prints one row as "name: value" lines (table), or as CSV/JSON. */
void fattn_rows_print_record(FILE *f, const fattn_rows *r, int row, int format);

#endif
