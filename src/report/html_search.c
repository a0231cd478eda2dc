/*
 * html_search.c - the sections of a search's report (html.h): every trial
 * against its order and against wall time, the fastest configurations'
 * spread and table, each parameter's strip plot, the latest confirmation,
 * the rejections. The best time and, once confirmed, the baseline's are
 * reference lines in every plot of times.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/html.h"
#include "store/read.h"
#include "util/err.h"

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

/* The class of a verdict's cell: the verdict when it is one word of
 * letters and underscores (as confirm writes them), else "other". */
static const char *verdict_class(const char *v)
{
    size_t n = strspn(v, "abcdefghijklmnopqrstuvwxyz_");
    return n && !v[n] ? v : "other";
}

/* The latest measured confirmation of the study, `st` on its row
 * (FATTN_READ_LAST_CONFIRMATION): its samples, its numbers. */
static int confirm_section(fattn_store *s, sqlite3_stmt *st, FILE *f)
{
    sqlite3_stmt *ss;
    long long id = sqlite3_column_int64(st, 0);
    vec v[2] = {{0}};
    if (fattn_store_read(s, FATTN_READ_CONFIRMATION_SAMPLES, &(fattn_read_args){.id = id}, &ss))
        return FATTN_EFAIL;
    int r;
    while ((r = sqlite3_step(ss)) == SQLITE_ROW)
        push(&v[strcmp(fattn_store_text(ss, 0), "candidate") != 0], sqlite3_column_double(ss, 1));
    sqlite3_finalize(ss);
    if (r != SQLITE_DONE) {
        free(v[0].v), free(v[1].v);
        return fattn_store_fail(s, "cannot read confirmation samples");
    }
    char cand[32] = "candidate", base[160];
    snprintf(base, sizeof base, "baseline %s", fattn_store_text(st, 2));
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
    fattn_html_escape(f, fattn_store_text(st, 1));
    fprintf(f, "</td><td class=\"n\">%.3f (%.3f-%.3f)</td><td class=\"n\">%.3f</td><td>", a.median, a.lo, a.hi,
            sqlite3_column_double(st, 8));
    fattn_html_escape(f, fattn_store_text(st, 2));
    fputs(" (", f);
    fattn_html_escape(f, fattn_store_text(st, 3));
    fprintf(f, ")</td><td class=\"n\">%.3f (%.3f-%.3f)</td><td class=\"n\">%.3f</td>", b.median, b.lo, b.hi,
            sqlite3_column_double(st, 12));
    fprintf(f, "<td class=\"n\">%.3f (%.3f-%.3f)</td><td class=\"n\">%.3g</td><td class=\"n\">%.3f</td>",
            sqlite3_column_double(st, 13), sqlite3_column_double(st, 14), sqlite3_column_double(st, 15),
            sqlite3_column_double(st, 16), sqlite3_column_double(st, 17));
    fprintf(f, "<td class=\"verdict-%s\">", verdict_class(fattn_store_text(st, 18)));
    fattn_html_escape(f, fattn_store_text(st, 18));
    fprintf(f, "</td></tr>\n</table>\n<p class=\"note\">%d interleaved samples a side (", sqlite3_column_int(st, 4));
    fattn_html_escape(f, fattn_store_text(st, 19));
    fprintf(f, "); %d bootstrap resamples; the shaded bands are the 95%% confidence intervals of the medians.</p>\n",
            sqlite3_column_int(st, 20));
    fattn_svg_histograms(f, "plot-confirm", "Confirmation samples: candidate and baseline", "us per launch", &a, &b);
    free(v[0].v), free(v[1].v);
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
    int rank = 0, r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        fprintf(f, "<tr><td class=\"n\">%d</td><td class=\"n\">%lld</td><td>", ++rank, sqlite3_column_int64(st, 0));
        fattn_html_escape(f, fattn_store_text(st, 1));
        fprintf(f,
                "</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td><td "
                "class=\"n\">%.1f</td><td class=\"n\">%.1f</td><td class=\"n\">",
                sqlite3_column_double(st, 2), sqlite3_column_double(st, 3), sqlite3_column_double(st, 4),
                sqlite3_column_double(st, 5), sqlite3_column_double(st, 6));
        fattn_html_escape(f, fattn_store_text(st, 7));
        fprintf(f, "</td><td class=\"n\">%.2f</td><td class=\"n\">", sqlite3_column_double(st, 8));
        if (sqlite3_column_type(st, 9) != SQLITE_NULL) /* NULL before schema v9 */
            fprintf(f, "%.2g", sqlite3_column_double(st, 9));
        fputs("</td><td>", f);
        fattn_html_escape(f, fattn_store_text(st, 10));
        fputs("</td></tr>\n", f);
    }
    sqlite3_finalize(st);
    fputs("</table>\n", f);
    return r == SQLITE_DONE ? FATTN_OK : fattn_store_fail(s, "cannot read trials");
}

static double x_secs(const fattn_view_trial *t, size_t ordinal)
{
    (void)ordinal;
    return t->secs;
}

static double y_median(const fattn_view_trial *t, size_t ordinal)
{
    (void)ordinal;
    return t->timed ? t->median_us : NAN;
}

/* The study's latest measured confirmation: *st on its row, or NULL when
 * the study has none. */
static int last_confirmation(fattn_store *s, long long study, sqlite3_stmt **st)
{
    if (fattn_store_read(s, FATTN_READ_LAST_CONFIRMATION, &(fattn_read_args){.id = study}, st))
        return FATTN_EFAIL;
    const int r = sqlite3_step(*st);
    if (r == SQLITE_ROW)
        return FATTN_OK;
    sqlite3_finalize(*st);
    *st = NULL;
    return r == SQLITE_DONE ? FATTN_OK : fattn_store_fail(s, "cannot read confirmations");
}

static int by_median(const void *a, const void *b)
{
    const fattn_view_trial *x = *(const fattn_view_trial *const *)a, *y = *(const fattn_view_trial *const *)b;
    return (x->median_us > y->median_us) - (x->median_us < y->median_us);
}

/* The p10-p90 spread of the (up to) 20 fastest timed trials. */
static void spread(FILE *f, const fattn_study_view *v, const fattn_ref *refs, size_t nrefs)
{
    enum { TOP = 20 };
    const fattn_view_trial **t = fattn_xcalloc(v->n ? v->n : 1, sizeof *t);
    size_t n = 0;
    for (size_t i = 0; i < v->n; ++i)
        if (v->t[i].timed)
            t[n++] = &v->t[i];
    qsort(t, n, sizeof *t, by_median);
    n = n < TOP ? n : TOP;
    const char **labels = fattn_xcalloc(n, sizeof *labels);
    double *lo = fattn_xcalloc(n, sizeof *lo), *mid = fattn_xcalloc(n, sizeof *mid), *hi = fattn_xcalloc(n, sizeof *hi);
    for (size_t i = 0; i < n; ++i) {
        labels[i] = t[i]->key, mid[i] = t[i]->median_us;
        lo[i] = isfinite(t[i]->p10_us) ? t[i]->p10_us : mid[i];
        hi[i] = isfinite(t[i]->p90_us) ? t[i]->p90_us : mid[i];
    }
    char title[96];
    snprintf(title, sizeof title, "The %zu fastest: p10 to p90 of each one's samples, the dot its median", n);
    const fattn_axis xa = {"us per launch (log)", 1, NAN, NAN};
    fattn_svg_ranges(f, "plot-spread", title, &xa, labels, lo, mid, hi, n, refs, nrefs);
    free(t), free(labels), free(lo), free(mid), free(hi);
}

/* The sections, with `conf` the study's latest confirmation (NULL: none). */
static int sections(fattn_store *s, const fattn_study_view *v, int n, sqlite3_stmt *conf, FILE *f)
{
    fattn_ref refs[2];
    size_t nrefs = 0, tried = 0, timed = 0;
    double best = INFINITY, end = 0;
    const double rejected_before = fattn_view_count_total(v[0].before, v[0].nbefore);
    for (int k = 0; k < n; ++k) {
        tried += v[k].n;
        end = fmax(end, isfinite(v[k].end_secs) ? v[k].end_secs : 0);
    }
    for (size_t i = 0; i < v[0].n; ++i)
        if (v[0].t[i].timed)
            ++timed, best = fmin(best, v[0].t[i].median_us);
    char base_name[160];
    int rc;
    const int confirmed = conf != NULL;
    if (timed)
        refs[nrefs++] = (fattn_ref){"best", best};
    if (confirmed) {
        snprintf(base_name, sizeof base_name, "baseline %.120s", fattn_store_text(conf, 2));
        refs[nrefs++] = (fattn_ref){base_name, sqlite3_column_double(conf, 9)};
    }
    const fattn_axis ya = {"median, us per launch (log)", 1, NAN, NAN, "no time"};
    if (tried) {
        fattn_html_section(f, "trials", "Trials");
        fputs("<p class=\"note\">Every configuration the search tried (compiled, ran, timed or failed) is a point, "
              "in the order tried: a dot is a trial's median time, a cross one rejected after compiling or failed "
              "(in the lane under the axis when it has no time); the line is the best so far.",
              f);
        if (rejected_before > 0)
            fprintf(f,
                    " The %g configurations of study %lld rejected before compiling are not trials here (see "
                    "Rejections).",
                    rejected_before, v[0].study);
        fputs("</p>\n<div class=\"plots\">\n", f);
        const fattn_axis order = {"trial, in the order tried", 0, 0, NAN},
                         secs = {"seconds since the study's first trial", 0, 0, end};
        fattn_html_trials(f, "plot-trials", "Every trial by its order", v, n, fattn_html_order, &order, y_median, &ya,
                          1, refs, nrefs);
        fattn_html_trials(f, "plot-time", "Every trial by wall time", v, n, x_secs, &secs, y_median, &ya, 1, refs,
                          nrefs);
        fputs("</div>\n", f);
        fattn_html_section_end(f);
    } else {
        fattn_html_no_trials(f, &v[0], "compiled or run");
    }
    if (timed) {
        fattn_html_section(f, "fastest", "Fastest configurations");
        spread(f, &v[0], refs, nrefs);
        rc = top_table(s, v[0].study, f);
        if (!rc && !confirmed)
            fprintf(f,
                    "<p class=\"note\" id=\"no-confirmation\">Not confirmed yet: <code>fattn-tune confirm --study "
                    "%lld --n 100</code> re-measures the best configurations against a baseline on a GPU.</p>\n",
                    v[0].study);
        fattn_html_section_end(f);
        if (rc)
            return rc;
        fattn_html_params(f, &v[0], y_median, &ya, refs, nrefs,
                          "Each trial's median against each parameter's values, on a log scale (a cross in the "
                          "lane: rejected after compiling or failed); the black bar is the median of each value's "
                          "timed trials.");
    }
    if (confirmed) {
        fattn_html_section(f, "confirmation", "Confirmation");
        rc = confirm_section(s, conf, f);
        fattn_html_section_end(f);
        if (rc)
            return rc;
    }
    fattn_html_rejections(f, &v[0]);
    return FATTN_OK;
}

int fattn_html_search(fattn_store *s, const fattn_study_view *v, int n, FILE *f)
{
    sqlite3_stmt *conf; /* the latest confirmation, kept on its row while the sections are written */
    int rc = last_confirmation(s, v[0].study, &conf);
    if (!rc)
        rc = sections(s, v, n, conf, f);
    sqlite3_finalize(conf); /* a no-op on NULL */
    return rc;
}
