/*
 * landscape.c - a search study as a landscape (run/landscape.h), the file
 * the replay evaluator reads: the header from the study, one line per
 * configuration (its last trial: a study taken up may hold several).
 */
#include <stdio.h>
#include <string.h>

#include "export/export.h"
#include "run/landscape.h"
#include "store/read.h"
#include "util/err.h"

int fattn_export_landscape(fattn_store *s, long long study, const char *family, FILE *out)
{
    sqlite3_stmt *st;
    fattn_read_args a = {.id = study, .text = family};
    int rc = fattn_store_read(s, FATTN_READ_LANDSCAPE_HEAD, &a, &st);
    if (rc)
        return rc;
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return fattn_store_fail(s, "cannot read the study");
    }
    const char *command = (const char *)sqlite3_column_text(st, 9);
    if (command && strcmp(command, "search")) {
        int rc2 = fattn_error(FATTN_EUSAGE,
                              "query landscape: study %lld is a %s study, which measured nothing; a landscape holds "
                              "a search's verdicts and times (fattn-tune query lists the studies; pass --study N)",
                              study, command);
        sqlite3_finalize(st);
        return rc2;
    }
    /* One family's: the study's one, or the one named among its several. */
    const char *families = (const char *)sqlite3_column_text(st, 10);
    const int several = sqlite3_column_int(st, 11) > 1, known = sqlite3_column_int(st, 12) > 0;
    if ((several && !family) || (family && !known)) {
        int rc2 = family ? fattn_error(FATTN_EUSAGE,
                                       "query landscape --family %s: study %lld searched %s; expected one of them",
                                       family, study, families ? families : "another family")
                         : fattn_error(FATTN_EUSAGE,
                                       "query landscape: study %lld searched several families (%s), and a landscape "
                                       "holds one: pass --family NAME",
                                       study, families);
        sqlite3_finalize(st);
        return rc2;
    }
    fattn_shape shape = {sqlite3_column_int(st, 2), sqlite3_column_int(st, 3), sqlite3_column_int(st, 4),
                         sqlite3_column_int(st, 5), sqlite3_column_int(st, 6)};
    fattn_landscape_write_header(
        out, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
        family ? family : (const char *)sqlite3_column_text(st, 8), &shape, (const char *)sqlite3_column_text(st, 7));
    sqlite3_finalize(st);
    if ((rc = fattn_store_read(s, FATTN_READ_LANDSCAPE, &a, &st)))
        return rc;
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        fprintf(out, "%s,%s,%s", sqlite3_column_text(st, 0), sqlite3_column_text(st, 1), sqlite3_column_text(st, 2));
        for (int c = 3; c < 6; ++c) {
            if (sqlite3_column_type(st, c) == SQLITE_NULL)
                fputs(",", out);
            else
                fprintf(out, ",%.17g", sqlite3_column_double(st, c));
        }
        fputc('\n', out);
    }
    sqlite3_finalize(st);
    return r == SQLITE_DONE ? FATTN_OK : fattn_store_fail(s, "cannot read the trials");
}
