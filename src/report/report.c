/*
 * report.c - the HTML report.
 */
#include "report/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "run/compare.h"
#include "export/export.h"
#include "space/hardware.h"
#include "gates/gates.h"
#include "report/html.h"
#include "store/read.h"
#include "tune/tune.h"
#include "util/err.h"
#include "util/misc.h"

static void css(FILE *f)
{
    fputs("<style>\nbody{font:14px/1.4 system-ui,sans-serif;margin:24px auto;max-width:1320px;color:#222}\n"
          "h1{font-size:22px}h2{font-size:17px;margin-top:28px}\n"
          "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}\n"
          "td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f4f4f4}\n"
          ".plots{display:flex;flex-wrap:wrap;gap:16px}svg.plot{border:1px solid #ddd;background:#fff;font-size:11px}\n"
          "svg .t{font-size:14px;font-weight:600}.verdict-success{color:#1a7f37;font-weight:600}\n"
          ".note{color:#666}section{margin-bottom:8px}svg .ref-label{font-size:11px}\n</style>\n",
          f);
}

static int study_table(fattn_store *s, long long study, FILE *f)
{
    sqlite3_stmt *st;
    if (fattn_store_read(s, FATTN_READ_STUDY, &(fattn_read_args){.id = study}, &st))
        return FATTN_EFAIL;
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return fattn_store_fail(s, "cannot read studies");
    }
    fattn_shape sh = {sqlite3_column_int(st, 6), sqlite3_column_int(st, 7), sqlite3_column_int(st, 8),
                      sqlite3_column_int(st, 9), sqlite3_column_int(st, 10)};
    char shape[96];
    fattn_shape_format(&sh, shape, sizeof shape);
    fprintf(f, "<table class=\"study\" id=\"study-%lld\">\n", study);
    const struct {
        const char *k;
        int c;
    } rows[] = {{"study", 0},      {"created", 1}, {"status", 2}, {"command", 3},
                {"strategy", 4},   {"seed", 5},    {"arch", 11},  {"device", 12},
                {"evaluator", 13}, {"timing", 14}, {"runs", 16},  {"kernel sha256", 19}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        if (*fattn_store_text(st, rows[i].c)) { /* a compile study has no device, evaluator or timing */
            fprintf(f, "<tr><th>%s</th><td>", rows[i].k);
            fattn_html_escape(f, fattn_store_text(st, rows[i].c));
            fputs("</td></tr>\n", f);
        }
        if (rows[i].c == 5) {
            fputs("<tr><th>shape</th><td>", f);
            fattn_html_escape(f, shape);
            fputs("</td></tr>\n", f);
        }
    }
    if (sqlite3_column_int(st, 21) > 1 && sqlite3_column_type(st, 22) != SQLITE_NULL) {
        /* A search over several GPUs: how far apart the reference found them. */
        const double spread = sqlite3_column_double(st, 22);
        fprintf(
            f,
            "<tr><th>GPUs</th><td id=\"gpus\" class=\"%s\">%d, the reference configuration %.1f%% apart%s</td></tr>\n",
            spread > FATTN_TUNE_SPREAD_PCT ? "spread" : "even", sqlite3_column_int(st, 21), spread,
            spread > FATTN_TUNE_SPREAD_PCT ? " (over 2%: the trials' times come from GPUs that differ; fattn-tune "
                                             "query gpus)"
                                           : "");
    }
    fattn_hw_status hw;
    char hwline[FATTN_HW_LINE_MAX];
    fattn_hw_lookup(NULL, fattn_store_text(st, 20), fattn_store_text(st, 19), &hw);
    fattn_hw_describe(&hw, hwline, sizeof hwline);
    fprintf(f, "<tr><th>hardware</th><td id=\"hardware\" class=\"%s\">", hw.proven ? "proven" : "unproven");
    fattn_html_escape(f, hwline);
    fputs("</td></tr>\n", f);
    /* A study of several families: each other family's kernel and record. */
    sqlite3_stmt *fs;
    if (fattn_store_read(s, FATTN_READ_STUDY_FAMILIES, &(fattn_read_args){.id = study}, &fs)) {
        sqlite3_finalize(st);
        return FATTN_EFAIL;
    }
    int r;
    while ((r = sqlite3_step(fs)) == SQLITE_ROW) {
        const char *family = fattn_store_text(fs, 0), *hash = fattn_store_text(fs, 2);
        if (!strcmp(family, fattn_store_text(st, 20)) || !fattn_family_find(family))
            continue; /* the study's own, above; or a family this build does not know */
        fattn_hw_lookup(NULL, family, hash, &hw);
        fattn_hw_describe(&hw, hwline, sizeof hwline);
        fputs("<tr><th>kernel sha256 (", f);
        fattn_html_escape(f, family);
        fputs(")</th><td>", f);
        fattn_html_escape(f, hash);
        fputs("</td></tr>\n<tr><th>hardware (", f);
        fattn_html_escape(f, family);
        fprintf(f, ")</th><td class=\"hardware %s\" data-family=\"", hw.proven ? "proven" : "unproven");
        fattn_html_escape(f, family);
        fputs("\">", f);
        fattn_html_escape(f, hwline);
        fputs("</td></tr>\n", f);
    }
    sqlite3_finalize(fs);
    if (r != SQLITE_DONE) {
        sqlite3_finalize(st);
        return fattn_store_fail(s, "cannot read the study's families");
    }
    if (!strcmp(fattn_store_text(st, 3), "compile"))
        fprintf(f, "<tr><th>trials</th><td>%d stored</td></tr>\n</table>\n", sqlite3_column_int(st, 17));
    else
        fprintf(f, "<tr><th>trials</th><td>%d stored, %d timed; search time %.1f s</td></tr>\n</table>\n",
                sqlite3_column_int(st, 17), sqlite3_column_int(st, 18), sqlite3_column_double(st, 15) / 1000.0);
    sqlite3_finalize(st);
    return FATTN_OK;
}

int fattn_report_write(fattn_store *s, const long long *studies, int n, FILE *f)
{
    int rc = FATTN_OK;
    for (int i = 0; i < n && !rc; ++i)
        rc = fattn_study_exists(s, studies[i]) ? FATTN_EUSAGE : FATTN_OK;
    if (rc)
        return rc;
    fattn_study_view *v = fattn_xcalloc((size_t)n, sizeof *v);
    int loaded = 0;
    for (; loaded < n && !rc; ++loaded)
        rc = fattn_study_view_load(s, studies[loaded], loaded == 0, &v[loaded]);
    if (rc)
        --loaded; /* the one that failed released itself */
    for (int i = 1; i < n && !rc; ++i)
        if (v[i].compile != v[0].compile)
            rc = fattn_error(
                FATTN_EUSAGE, "--study %lld is a %s study and --study %lld a %s: a report compares studies of one kind",
                studies[0], v[0].compile ? "compile" : "search", studies[i], v[i].compile ? "compile" : "search");
    if (!rc) {
        char now[32];
        fattn_utc_now(now);
        fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n", f);
        fprintf(f, "<title>fattn-tune report: %s study %lld</title>\n", v[0].compile ? "compile" : "search",
                studies[0]);
        css(f);
        fprintf(f, "</head>\n<body>\n<h1>fattn-tune report: %s study %lld</h1>\n", v[0].compile ? "compile" : "search",
                studies[0]);
        fprintf(f, "<p class=\"note\">Generated by fattn-tune %s on %s from ", FATTN_VERSION, now);
        fattn_html_escape(f, fattn_store_path(s));
        fputs(".</p>\n", f);
        fattn_html_section(f, "study", "Study");
        rc = study_table(s, studies[0], f);
        fattn_html_section_end(f);
    }
    if (!rc)
        rc = v[0].compile ? fattn_html_compile(s, v, n, f) : fattn_html_search(s, v, n, f);
    if (!rc)
        fputs("</body>\n</html>\n", f);
    for (int i = 0; i < loaded; ++i)
        fattn_study_view_release(&v[i]);
    free(v);
    return rc;
}
