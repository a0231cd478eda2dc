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
#include "report/svg.h"
#include "store/read.h"
#include "util/err.h"
#include "util/misc.h"

/* A growable array of doubles. */
typedef struct vec {
    double *v;
    size_t n, cap;
} vec;

static void push(vec *a, double x)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 64;
        a->v = fattn_xrealloc(a->v, a->cap * sizeof *a->v);
    }
    a->v[a->n++] = x;
}

static const char *col(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

/* The best-so-far curves of a study, against trials run and seconds. */
typedef struct curve {
    char name[96];
    vec trials, secs, best;
} curve;

static int load_curve(fattn_store *s, long long study, curve *c)
{
    sqlite3_stmt *st;
    memset(c, 0, sizeof *c);
    if (fattn_store_read(s, FATTN_READ_CURVE, &(fattn_read_args){.id = study}, &st))
        return FATTN_EFAIL;
    double best = INFINITY, last_secs = 0;
    int run = 0, r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const char *status = col(st, 0), *reason = col(st, 1);
        snprintf(c->name, sizeof c->name, "study %lld (%s)", study, col(st, 4));
        /* Trials that reached the GPU count; gate rejections do not. */
        int rr = fattn_reason_find(reason);
        int ran =
            !strcmp(status, "ok") || !strcmp(status, "error") || (rr && fattn_reason(rr)->stage == FATTN_STAGE_RUN);
        if (!ran)
            continue;
        ++run;
        last_secs = sqlite3_column_double(st, 3);
        if (!strcmp(status, "ok") && sqlite3_column_double(st, 2) < best) {
            best = sqlite3_column_double(st, 2);
            push(&c->trials, run);
            push(&c->secs, sqlite3_column_double(st, 3));
            push(&c->best, best);
        }
    }
    /* The curves run on to the last trial. */
    if (c->best.n && c->trials.v[c->trials.n - 1] < run) {
        push(&c->trials, run);
        push(&c->secs, last_secs);
        push(&c->best, best);
    }
    sqlite3_finalize(st);
    return r == SQLITE_DONE ? FATTN_OK : fattn_store_fail(s, "cannot read trials");
}

static void curve_release(curve *c)
{
    free(c->trials.v), free(c->secs.v), free(c->best.v);
}

static void css(FILE *f)
{
    fputs("<style>\nbody{font:14px/1.4 system-ui,sans-serif;margin:24px auto;max-width:1320px;color:#222}\n"
          "h1{font-size:22px}h2{font-size:17px;margin-top:28px}\n"
          "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}\n"
          "td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f4f4f4}\n"
          ".plots{display:flex;flex-wrap:wrap;gap:16px}svg.plot{border:1px solid #ddd;background:#fff;font-size:11px}\n"
          "svg .t{font-size:14px;font-weight:600}.verdict-success{color:#1a7f37;font-weight:600}\n"
          ".note{color:#666}\n</style>\n",
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
        fprintf(f, "<tr><th>%s</th><td>", rows[i].k);
        fattn_html_escape(f, col(st, rows[i].c));
        fputs("</td></tr>\n", f);
        if (rows[i].c == 5) {
            fputs("<tr><th>shape</th><td>", f);
            fattn_html_escape(f, shape);
            fputs("</td></tr>\n", f);
        }
    }
    fattn_hw_status hw;
    char hwline[FATTN_HW_LINE_MAX];
    fattn_hw_lookup(NULL, col(st, 20), col(st, 19), &hw);
    fattn_hw_describe(&hw, hwline, sizeof hwline);
    fprintf(f, "<tr><th>hardware</th><td id=\"hardware\" class=\"%s\">", hw.proven ? "proven" : "unproven");
    fattn_html_escape(f, hwline);
    fputs("</td></tr>\n", f);
    fprintf(f, "<tr><th>trials</th><td>%d stored, %d timed; search time %.1f s</td></tr>\n</table>\n",
            sqlite3_column_int(st, 17), sqlite3_column_int(st, 18), sqlite3_column_double(st, 15) / 1000.0);
    sqlite3_finalize(st);
    return FATTN_OK;
}

/* The class of a verdict's cell: the verdict when it is one word of
 * letters and underscores (as confirm writes them), else "other". */
static const char *verdict_class(const char *v)
{
    size_t n = strspn(v, "abcdefghijklmnopqrstuvwxyz_");
    return n && !v[n] ? v : "other";
}

/* The latest measured confirmation of the study: its samples, its numbers. */
static int confirm_section(fattn_store *s, long long study, FILE *f)
{
    sqlite3_stmt *st, *ss;
    if (fattn_store_read(s, FATTN_READ_LAST_CONFIRMATION, &(fattn_read_args){.id = study}, &st))
        return FATTN_EFAIL;
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        fprintf(f,
                "<p class=\"note\" id=\"no-confirmation\">Not confirmed yet: <code>fattn-tune confirm --study %lld "
                "--n 100</code> re-measures the best configuration against a baseline.</p>\n",
                study);
        fattn_hist_side none = {"none", NULL, 0, 0, 0, 0};
        fattn_svg_histograms(f, "plot-confirm", "Confirmation samples", "us per launch", &none, &none);
        return FATTN_OK;
    }
    long long id = sqlite3_column_int64(st, 0);
    vec v[2] = {{0}};
    if (fattn_store_read(s, FATTN_READ_CONFIRMATION_SAMPLES, &(fattn_read_args){.id = id}, &ss)) {
        sqlite3_finalize(st);
        return FATTN_EFAIL;
    }
    while (sqlite3_step(ss) == SQLITE_ROW)
        push(&v[strcmp(col(ss, 0), "candidate") != 0], sqlite3_column_double(ss, 1));
    sqlite3_finalize(ss);
    char cand[32] = "candidate", base[160];
    snprintf(base, sizeof base, "baseline %s", col(st, 2));
    fattn_hist_side a = {
        cand, v[0].v, v[0].n, sqlite3_column_double(st, 5), sqlite3_column_double(st, 6), sqlite3_column_double(st, 7)};
    fattn_hist_side b = {base,
                         v[1].v,
                         v[1].n,
                         sqlite3_column_double(st, 9),
                         sqlite3_column_double(st, 10),
                         sqlite3_column_double(st, 11)};
    fprintf(f, "<table id=\"confirm-table\"><tr><th>confirmation</th><th>config</th><th>median us (95%% CI)</th>"
               "<th>p90 us</th><th>baseline</th><th>baseline median us (95%% CI)</th><th>baseline p90</th>"
               "<th>speedup (95%% CI)</th><th>Mann-Whitney p</th><th>Cliff's delta</th><th>verdict</th></tr>\n");
    fprintf(f, "<tr><td class=\"n\">%lld</td><td>", id);
    fattn_html_escape(f, col(st, 1));
    fprintf(f, "</td><td class=\"n\">%.3f (%.3f-%.3f)</td><td class=\"n\">%.3f</td><td>", a.median, a.lo, a.hi,
            sqlite3_column_double(st, 8));
    fattn_html_escape(f, col(st, 2));
    fputs(" (", f);
    fattn_html_escape(f, col(st, 3));
    fprintf(f, ")</td><td class=\"n\">%.3f (%.3f-%.3f)</td><td class=\"n\">%.3f</td>", b.median, b.lo, b.hi,
            sqlite3_column_double(st, 12));
    fprintf(f, "<td class=\"n\">%.3f (%.3f-%.3f)</td><td class=\"n\">%.3g</td><td class=\"n\">%.3f</td>",
            sqlite3_column_double(st, 13), sqlite3_column_double(st, 14), sqlite3_column_double(st, 15),
            sqlite3_column_double(st, 16), sqlite3_column_double(st, 17));
    fprintf(f, "<td class=\"verdict-%s\">", verdict_class(col(st, 18)));
    fattn_html_escape(f, col(st, 18));
    fprintf(f, "</td></tr>\n</table>\n<p class=\"note\">%d interleaved samples a side (", sqlite3_column_int(st, 4));
    fattn_html_escape(f, col(st, 19));
    fprintf(f, "); %d bootstrap resamples; the shaded bands are the 95%% confidence intervals of the medians.</p>\n",
            sqlite3_column_int(st, 20));
    fattn_svg_histograms(f, "plot-confirm", "Confirmation samples: candidate and baseline", "us per launch", &a, &b);
    sqlite3_finalize(st);
    free(v[0].v), free(v[1].v);
    return FATTN_OK;
}

static int rejections_plot(fattn_store *s, long long study, FILE *f)
{
    sqlite3_stmt *st;
    if (fattn_store_read(s, FATTN_READ_REJECTION_COUNTS, &(fattn_read_args){.id = study}, &st))
        return FATTN_EFAIL;
    char *labels[64];
    const char *clabels[64];
    double v[64];
    size_t n = 0;
    while (n < 64 && sqlite3_step(st) == SQLITE_ROW) {
        labels[n] = fattn_xstrdup(col(st, 0));
        clabels[n] = labels[n];
        v[n++] = sqlite3_column_double(st, 1);
    }
    sqlite3_finalize(st);
    fattn_svg_bars(f, "plot-rejections", "Rejections by reason (trials)", clabels, v, n);
    for (size_t i = 0; i < n; ++i)
        free(labels[i]);
    return FATTN_OK;
}

static int top_table(fattn_store *s, long long study, FILE *f)
{
    sqlite3_stmt *st;
    if (fattn_store_read(s, FATTN_READ_TOP10, &(fattn_read_args){.id = study}, &st))
        return FATTN_EFAIL;
    fputs("<table id=\"top10\"><tr><th>#</th><th>trial</th><th>config</th><th>median us</th><th>p10</th><th>p90</th>"
          "<th>TFLOP/s</th><th>GB/s</th><th>registers</th><th>occupancy</th><th>rel L2</th>"
          "<th>confirmed us (verdict)</th></tr>\n",
          f);
    int rank = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        fprintf(f, "<tr><td class=\"n\">%d</td><td class=\"n\">%lld</td><td>", ++rank, sqlite3_column_int64(st, 0));
        fattn_html_escape(f, col(st, 1));
        fprintf(f,
                "</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td><td "
                "class=\"n\">%.1f</td><td class=\"n\">%.1f</td><td class=\"n\">",
                sqlite3_column_double(st, 2), sqlite3_column_double(st, 3), sqlite3_column_double(st, 4),
                sqlite3_column_double(st, 5), sqlite3_column_double(st, 6));
        fattn_html_escape(f, col(st, 7));
        fprintf(f, "</td><td class=\"n\">%.2f</td><td class=\"n\">", sqlite3_column_double(st, 8));
        if (sqlite3_column_type(st, 9) != SQLITE_NULL) /* NULL before schema v9 */
            fprintf(f, "%.2g", sqlite3_column_double(st, 9));
        fputs("</td><td>", f);
        fattn_html_escape(f, col(st, 10));
        fputs("</td></tr>\n", f);
    }
    sqlite3_finalize(st);
    fputs("</table>\n", f);
    if (!rank)
        fputs("<p class=\"note\">No timed trial: trials are timed by fattn-tune search on a GPU.</p>\n", f);
    return FATTN_OK;
}

int fattn_report_write(fattn_store *s, const long long *studies, int n, FILE *f)
{
    int rc = FATTN_OK;
    for (int i = 0; i < n && !rc; ++i)
        rc = fattn_study_exists(s, studies[i]) ? FATTN_EUSAGE : FATTN_OK;
    if (rc)
        return rc;
    curve *c = fattn_xcalloc((size_t)n, sizeof *c);
    for (int i = 0; i < n && !rc; ++i)
        rc = load_curve(s, studies[i], &c[i]);
    char now[32];
    fattn_utc_now(now);
    if (!rc) {
        fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n", f);
        fprintf(f, "<title>fattn-tune report: study %lld</title>\n", studies[0]);
        css(f);
        fprintf(f, "</head>\n<body>\n<h1>fattn-tune report: study %lld</h1>\n", studies[0]);
        fprintf(f, "<p class=\"note\">Generated by fattn-tune %s on %s from ", FATTN_VERSION, now);
        fattn_html_escape(f, fattn_store_path(s));
        fputs(".</p>\n<h2>Study</h2>\n", f);
        rc = study_table(s, studies[0], f);
    }
    if (!rc) {
        fattn_series *ser = fattn_xcalloc((size_t)n, sizeof *ser), *sec = fattn_xcalloc((size_t)n, sizeof *sec);
        for (int i = 0; i < n; ++i) {
            ser[i] = (fattn_series){c[i].name, c[i].trials.v, c[i].best.v, c[i].trials.n};
            sec[i] = (fattn_series){c[i].name, c[i].secs.v, c[i].best.v, c[i].secs.n};
        }
        fputs("<h2>Search</h2>\n<div class=\"plots\">\n", f);
        fattn_svg_lines(f, "plot-best-trials", "Best so far vs trials run", "trials run (gate rejections not counted)",
                        "best median, us per launch", ser, (size_t)n);
        fattn_svg_lines(f, "plot-best-time", "Best so far vs wall time", "seconds since the first trial",
                        "best median, us per launch", sec, (size_t)n);
        fputs("</div>\n", f);
        free(ser), free(sec);
        fputs("<h2>Confirmation</h2>\n", f);
        rc = confirm_section(s, studies[0], f);
    }
    if (!rc) {
        fputs("<h2>Rejections</h2>\n", f);
        rc = rejections_plot(s, studies[0], f);
    }
    if (!rc) {
        fputs("<h2>Top 10</h2>\n", f);
        rc = top_table(s, studies[0], f);
    }
    if (!rc)
        fputs("</body>\n</html>\n", f);
    for (int i = 0; i < n; ++i)
        curve_release(&c[i]);
    free(c);
    return rc;
}
