/*
 * outcomes.h - the table of a study's configurations by outcome that compile's
 * and search's summaries print: a "rejected" row per reason, the row of the
 * configurations that passed, and an "error" row when there are errors.
 */
#ifndef FATTN_REPORT_OUTCOMES_H
#define FATTN_REPORT_OUTCOMES_H

#include <stddef.h>
#include <stdio.h>

/* Each reason's count is statics[r], the configurations set aside before
 * any trial (for reasons up to last_static: compile takes the static
 * gates' reasons, search every reason, its simulator skips among them),
 * plus the trials' by_reason[r]; reasons with none are left out. `passed`
 * configurations are counted under the status `passed_label`, `errors`
 * under "error". */
void fattn_report_outcomes(const int *statics, int last_static, const int *by_reason, const char *passed_label,
                           size_t passed, size_t errors, FILE *f);

#endif
