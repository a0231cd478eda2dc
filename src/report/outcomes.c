/*
 * outcomes.c - a study's configurations by outcome (outcomes.h), as a table.
 */
#include "report/outcomes.h"

#include "export/table.h"
#include "gates/gates.h"

static void row(fattn_rows *rows, const char *status, const char *reason, size_t n)
{
    static const unsigned char numeric[] = {0, 0, 1};
    char count[32];
    snprintf(count, sizeof count, "%zu", n);
    const char *cells[] = {status, reason, count};
    fattn_rows_add(rows, cells, numeric);
}

void fattn_report_outcomes(const int *statics, int last_static, const int *by_reason, const char *passed_label,
                           size_t passed, size_t errors, FILE *f)
{
    const char *names[] = {"status", "reason", "count"};
    fattn_rows rows;
    fattn_rows_init(&rows, 3, names);
    for (int r = 1; r < FATTN_R_COUNT; ++r) {
        int n = (r <= last_static ? statics[r] : 0) + by_reason[r];
        if (n)
            row(&rows, "rejected", fattn_reason(r)->code, (size_t)n);
    }
    row(&rows, passed_label, "", passed);
    if (errors)
        row(&rows, "error", "", errors);
    fattn_rows_print(f, &rows, FATTN_FMT_TABLE, 0);
    fattn_rows_release(&rows);
}
