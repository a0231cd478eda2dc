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

/* Prints rows as they come, holding none but, for a table, the first `hold`
 * (0: all), which size its columns (a later, longer cell widens its line
 * only). CSV's header and JSON's '[' are printed at open; close prints what
 * is held and ends the JSON array, so that a result cut short (a timeout)
 * is still well-formed. */
typedef struct fattn_printer fattn_printer;
fattn_printer *fattn_printer_open(FILE *f, int format, int max_width, int hold, int ncols, const char *const *names);
void fattn_printer_row(fattn_printer *p, const char *const *cells, const unsigned char *numeric);
void fattn_printer_close(fattn_printer **p);

/* Prints one row as "name: value" lines (table), or as CSV/JSON. */
void fattn_rows_print_record(FILE *f, const fattn_rows *r, int row, int format);

#endif
