/*
 * families.c - the output of a command over several families (cli.h).
 */
#include <stdio.h>

#include "cli/cli.h"
#include "export/table.h"
#include "util/err.h"

int cli_families_format(const fattn_targets *ts, int format, const char *cmd)
{
    char names[256];
    if (ts->n < 2 || format != FATTN_FMT_CSV)
        return FATTN_OK;
    fattn_targets_names(ts, names, sizeof names);
    return fattn_error(FATTN_EUSAGE,
                       "%s --format csv: %d families (%s), whose tables differ; pass --family NAME for one "
                       "family's, or --format json for all",
                       cmd, ts->n, names);
}

void cli_families_begin(const fattn_targets *ts, int format, FILE *f)
{
    if (ts->n > 1 && format == FATTN_FMT_JSON)
        fputs("[\n", f);
}

void cli_families_next(const fattn_targets *ts, int k, int format, FILE *f)
{
    if (ts->n > 1 && k > 0)
        fputs(format == FATTN_FMT_JSON ? ",\n" : "\n", f);
}

void cli_families_end(const fattn_targets *ts, int format, FILE *f)
{
    if (ts->n > 1 && format == FATTN_FMT_JSON)
        fputs("]\n", f);
}
