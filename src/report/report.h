/*
 * report.h - a self-contained HTML page about one or more studies: the
 * study, best-so-far against trials and against wall time (one line per
 * study), the distribution of the latest confirmation's samples for
 * candidate and baseline, rejections by reason, and the ten fastest
 * configurations with their confirmations. Inline SVG and CSS; no script,
 * nothing fetched.
 */
#ifndef FATTN_REPORT_REPORT_H
#define FATTN_REPORT_REPORT_H

#include <stdio.h>

#include "store/store.h"

/* studies[0] is the main study (confirmation, rejections, top 10); every
 * study gets a line in the best-so-far plots. */
int fattn_report_write(fattn_store *s, const long long *studies, int n, FILE *out);

#endif
