/*
 * html_compile.c - the sections of a compile study's report (html.h): the
 * compile time of every configuration compiled, the resources they took
 * (registers, spills, shared memory, occupancy) with the registers against
 * each parameter's values, the configurations ready for a GPU, and the
 * rejections. Nothing of times on a GPU: a compile study has none.
 */
#include <math.h>
#include <stdlib.h>

#include "report/html.h"
#include "run/stats.h"
#include "util/err.h"

#define MAX_REGISTERS 255 /* per thread, on every architecture fattn-tune targets */

/* A cache hit took no compiling (compile_ms 0), an error before NVRTC
 * none (-1 or NULL): no time. */
static double y_compile(const fattn_view_trial *t, size_t ordinal)
{
    (void)ordinal;
    return t->cache_hit || !(t->compile_ms >= 0) ? NAN : t->compile_ms;
}

static double y_registers(const fattn_view_trial *t, size_t ordinal)
{
    (void)ordinal;
    return t->registers;
}

static double y_spills(const fattn_view_trial *t, size_t ordinal)
{
    (void)ordinal;
    return t->spills;
}

static double y_smem(const fattn_view_trial *t, size_t ordinal)
{
    (void)ordinal;
    return t->smem;
}

static double y_occupancy(const fattn_view_trial *t, size_t ordinal)
{
    (void)ordinal;
    return t->occupancy;
}

/* How one value spreads over the trials that have it. */
typedef struct spread {
    size_t n;
    double min, median, p90, max, sum;
} spread;

static spread spread_of(const fattn_study_view *v, fattn_html_value *get)
{
    double *x = fattn_xcalloc(v->n ? v->n : 1, sizeof *x);
    spread s = {0};
    for (size_t i = 0; i < v->n; ++i) {
        const double d = get(&v->t[i], i + 1);
        if (isfinite(d))
            x[s.n++] = d, s.sum += d;
    }
    if (s.n) /* percentiles as the tool takes them everywhere (run/stats.h) */
        s.min = fattn_percentile(x, s.n, 0), s.median = fattn_percentile(x, s.n, 50),
        s.p90 = fattn_percentile(x, s.n, 90), s.max = fattn_percentile(x, s.n, 100);
    free(x);
    return s;
}

/* A row of the resources table; none where no trial has the value. */
static void spread_row(FILE *f, const char *what, const spread *s, const char *fmt)
{
    if (!s->n)
        return;
    char cell[4][48];
    const double v[4] = {s->min, s->median, s->p90, s->max};
    for (int i = 0; i < 4; ++i)
        snprintf(cell[i], sizeof cell[i], fmt, v[i]);
    fprintf(f,
            "<tr><th>%s</th><td class=\"n\">%zu</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td "
            "class=\"n\">%s</td><td class=\"n\">%s</td></tr>\n",
            what, s->n, cell[0], cell[1], cell[2], cell[3]);
}

static int by_readiness(const void *a, const void *b)
{
    const fattn_view_trial *x = *(const fattn_view_trial *const *)a, *y = *(const fattn_view_trial *const *)b;
    /* A missing value sorts last. */
    double ox = isfinite(x->occupancy) ? x->occupancy : -1, oy = isfinite(y->occupancy) ? y->occupancy : -1;
    double rx = isfinite(x->registers) ? x->registers : INFINITY, ry = isfinite(y->registers) ? y->registers : INFINITY;
    if (ox != oy)
        return (ox < oy) - (ox > oy);
    return (rx > ry) - (rx < ry);
}

/* A number's cell, "-" where it is missing. */
static void cell(FILE *f, double v, const char *fmt)
{
    char text[48] = "-";
    if (isfinite(v))
        snprintf(text, sizeof text, fmt, v);
    fprintf(f, "<td class=\"n\">%s</td>", text);
}

/* The configurations that passed every gate, the most occupying first. */
static void ready_table(FILE *f, const fattn_study_view *v)
{
    enum { SHOWN = 20 };
    const fattn_view_trial **t = fattn_xcalloc(v->n ? v->n : 1, sizeof *t);
    size_t n = 0;
    for (size_t i = 0; i < v->n; ++i)
        if (!v->t[i].marked)
            t[n++] = &v->t[i];
    if (!n) {
        fputs("<p class=\"note\" id=\"none-ready\">None passed the post-compile gates: nothing is ready for a "
              "GPU.</p>\n",
              f);
        free(t);
        return;
    }
    qsort(t, n, sizeof *t, by_readiness);
    fprintf(f,
            "<p class=\"note\">%zu configuration%s passed every gate and %s ready for a GPU%s:</p>\n<table "
            "id=\"ready\"><tr><th>trial</th><th>config</th><th>registers</th><th>spill bytes</th><th>shared "
            "memory bytes</th><th>occupancy</th><th>compile ms</th></tr>\n",
            n, n == 1 ? "" : "s", n == 1 ? "is" : "are", n > SHOWN ? ", the 20 of highest occupancy" : "");
    for (size_t i = 0; i < n && i < SHOWN; ++i) {
        fprintf(f, "<tr><td class=\"n\">%lld</td><td>", t[i]->id);
        fattn_html_escape(f, t[i]->key);
        fputs("</td>", f);
        cell(f, t[i]->registers, "%g");
        cell(f, t[i]->spills, "%g");
        cell(f, t[i]->smem, "%g");
        cell(f, t[i]->occupancy, "%.2f");
        if (t[i]->cache_hit)
            fputs("<td class=\"n\">cached</td></tr>\n", f);
        else if (t[i]->compile_ms >= 0)
            fprintf(f, "<td class=\"n\">%.0f</td></tr>\n", t[i]->compile_ms);
        else
            fputs("<td class=\"n\">-</td></tr>\n", f);
    }
    fprintf(f,
            "</table>\n<p class=\"note\">All of them: <code>fattn-tune query trials --study %lld --status "
            "compiled</code>; <code>fattn-tune search</code> on a GPU times them.</p>\n",
            v->study);
    free(t);
}

int fattn_html_compile(fattn_store *s, const fattn_study_view *v, int n, FILE *f)
{
    (void)s;
    if (!v->n) {
        fattn_html_no_trials(f, v, "compiled");
        fattn_html_rejections(f, v);
        return FATTN_OK;
    }
    const spread ms = spread_of(v, y_compile);
    size_t nvrtc = 0, cached = 0, timed = 0;
    for (size_t i = 0; i < v->n; ++i)
        nvrtc += !v->t[i].cache_hit && v->t[i].compile_ms >= 0, cached += v->t[i].cache_hit != 0;
    for (int k = 0; k < n; ++k)
        for (size_t i = 0; i < v[k].n; ++i)
            timed += isfinite(y_compile(&v[k].t[i], i + 1));
    if (timed) {
        fattn_html_section(f, "compile-times", "Compile times");
        fprintf(f,
                "<p class=\"note\">Every configuration compiled is a point, in the order compiled: a dot one that "
                "passed the post-compile gates, a cross one they rejected or that failed; in the lane, one taken "
                "from the compile cache or never compiled (an error before NVRTC). Study %lld: %zu compiled by "
                "NVRTC, %zu from the cache; %.1f s of compiling in all.</p>\n",
                v->study, nvrtc, cached, ms.sum / 1000.0);
        const fattn_ref median = {"median", ms.median};
        const fattn_axis order = {"configuration, in the order compiled", 0, 0, NAN},
                         msa = {"compile time, ms (log)", 1, NAN, NAN, "none"};
        fattn_html_trials(f, "plot-compile", "Compile time of every configuration", v, n, fattn_html_order, &order,
                          y_compile, &msa, 0, &median, ms.n ? 1 : 0);
        fattn_html_section_end(f);
    }
    fattn_html_section(f, "resources", "Resources");
    if (!ms.n)
        fprintf(f,
                "<p class=\"note\">None of the %zu configurations was compiled by NVRTC in this study (taken from "
                "the compile cache, or failed before NVRTC): no compile times.</p>\n",
                v->n);
    fputs("<table id=\"resources\"><tr><th></th><th>configurations</th><th>min</th><th>median</th><th>p90</th>"
          "<th>max</th></tr>\n",
          f);
    if (ms.n)
        spread_row(f, "compile ms", &ms, "%.0f");
    const spread regs = spread_of(v, y_registers), spills = spread_of(v, y_spills), smem = spread_of(v, y_smem),
                 occ = spread_of(v, y_occupancy);
    spread_row(f, "registers per thread", &regs, "%g");
    spread_row(f, "spill bytes", &spills, "%g");
    spread_row(f, "shared memory bytes", &smem, "%g");
    spread_row(f, "occupancy", &occ, "%.2f");
    fputs("</table>\n", f);
    ready_table(f, v);
    fattn_html_section_end(f);

    const fattn_ref most = {"most per thread", MAX_REGISTERS};
    const fattn_axis ra = {"registers per thread", 0, 0, NAN, "none"};
    fattn_html_params(f, v, y_registers, &ra, &most, 1,
                      "Registers per thread of each compiled configuration against each parameter's values (a "
                      "cross: rejected after compiling); the black bar is each value's median.");
    fattn_html_rejections(f, v);
    return FATTN_OK;
}
