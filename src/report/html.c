/*
 * html.c - what the search's and the compile study's reports both draw
 * (html.h).
 */
#include "report/html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

void fattn_html_section(FILE *f, const char *id, const char *title)
{
    fprintf(f, "<section id=\"%s\">\n<h2>", id);
    fattn_html_escape(f, title);
    fputs("</h2>\n", f);
}

void fattn_html_section_end(FILE *f)
{
    fputs("</section>\n", f);
}

double fattn_html_order(const fattn_view_trial *t, size_t ordinal)
{
    (void)t;
    return (double)ordinal;
}

void fattn_html_no_trials(FILE *f, const fattn_study_view *v, const char *done)
{
    if (v->nbefore)
        fprintf(f,
                "<p class=\"note\" id=\"no-trials\">No configuration got past the static gates: nothing was %s "
                "(see Rejections).</p>\n",
                done);
    else
        fputs("<p class=\"note\" id=\"no-trials\">No trial stored yet: the study is running, or stopped before "
              "its first.</p>\n",
              f);
}

void fattn_html_trials(FILE *f, const char *id, const char *title, const fattn_study_view *v, int n,
                       fattn_html_value *x, const fattn_axis *xa, fattn_html_value *y, const fattn_axis *ya, int steps,
                       const fattn_ref *refs, size_t nrefs)
{
    /* A series per study, or per family of a study of several (each its
     * colour, its best-so-far line). */
    size_t nseries = 0;
    for (int k = 0; k < n; ++k)
        nseries += v[k].nfamilies > 1 ? (size_t)v[k].nfamilies : 1;
    fattn_points *p = fattn_xcalloc(nseries ? nseries : 1, sizeof *p);
    char(*names)[160] = fattn_xcalloc(nseries ? nseries : 1, sizeof *names);
    size_t si = 0;
    for (int k = 0; k < n; ++k) {
        const int nf = v[k].nfamilies > 1 ? v[k].nfamilies : 1;
        for (int fam = 0; fam < nf; ++fam, ++si) {
            const size_t m = v[k].n ? v[k].n : 1;
            double *px = fattn_xcalloc(m, sizeof *px), *py = fattn_xcalloc(m, sizeof *py);
            double *sx = fattn_xcalloc(m + 1, sizeof *sx), *sy = fattn_xcalloc(m + 1, sizeof *sy);
            long long *trial = fattn_xcalloc(m, sizeof *trial);
            unsigned char *mark = fattn_xcalloc(m, 1);
            size_t ns = 0, np = 0;
            double best = INFINITY, last_x = NAN;
            for (size_t i = 0; i < v[k].n; ++i) {
                const fattn_view_trial *t = &v[k].t[i];
                const double xi = x(t, i + 1);
                last_x = xi;
                if (nf > 1 && t->family != fam)
                    continue;
                px[np] = xi, py[np] = y(t, i + 1), trial[np] = t->id, mark[np] = (unsigned char)t->marked;
                if (steps && !t->marked && py[np] < best)
                    best = py[np], sx[ns] = px[np], sy[ns++] = best;
                ++np;
            }
            /* The step line runs on to the study's last trial. */
            if (ns && v[k].n && sx[ns - 1] < last_x)
                sx[ns] = last_x, sy[ns] = best, ++ns;
            if (nf > 1)
                snprintf(names[si], sizeof names[si], "%s %s", v[k].name,
                         v[k].families[fam] ? v[k].families[fam]->name : "(unknown family)");
            else
                snprintf(names[si], sizeof names[si], "%s", v[k].name);
            p[si] = (fattn_points){names[si], px, py, trial, mark, np, sx, sy, ns};
        }
    }
    fattn_svg_scatter(f, id, title, xa, ya, p, nseries, refs, nrefs);
    for (size_t k = 0; k < nseries; ++k) {
        free((void *)p[k].x), free((void *)p[k].y), free((void *)p[k].trial), free((void *)p[k].mark);
        free((void *)p[k].sx), free((void *)p[k].sy);
    }
    free(p);
    free(names);
}

int fattn_html_params(FILE *f, const fattn_study_view *v, fattn_html_value *y, const fattn_axis *ya,
                      const fattn_ref *refs, size_t nrefs, const char *what)
{
    size_t varying = 0;
    for (size_t k = 0; k < v->nparams; ++k)
        varying += v->params[k].nvalues > 1;
    if (!v->n || !varying)
        return 0;
    const size_t m = v->n;
    double *ys = fattn_xcalloc(m, sizeof *ys);
    long long *trial = fattn_xcalloc(m, sizeof *trial);
    unsigned char *mark = fattn_xcalloc(m, 1);
    for (size_t i = 0; i < m; ++i)
        ys[i] = y(&v->t[i], i + 1), trial[i] = v->t[i].id, mark[i] = (unsigned char)v->t[i].marked;
    fattn_html_section(f, "params", "Parameters");
    fputs("<p class=\"note\">", f);
    fattn_html_escape(f, what);
    int fixed = 0;
    for (size_t k = 0; k < v->nparams; ++k)
        if (v->params[k].nvalues == 1) {
            char value[32];
            snprintf(value, sizeof value, "=%g", v->params[k].values[0]);
            fputs(fixed++ ? ", " : " The same in every trial: ", f);
            fattn_html_escape(f, v->params[k].name);
            fputs(value, f);
        }
    fputs(fixed ? ".</p>\n<div class=\"plots\">\n" : "</p>\n<div class=\"plots\">\n", f);
    for (size_t k = 0; k < v->nparams; ++k) {
        const fattn_view_param *q = &v->params[k];
        if (q->nvalues < 2)
            continue;
        char **cats = fattn_xcalloc(q->nvalues, sizeof *cats), id[160];
        for (size_t j = 0; j < q->nvalues; ++j) {
            cats[j] = fattn_xmalloc(32);
            snprintf(cats[j], 32, "%g", q->values[j]);
        }
        /* Trials without this parameter (another family's) are left out. */
        size_t nk = 0;
        int *cat = fattn_xcalloc(m, sizeof *cat);
        double *yk = fattn_xcalloc(m, sizeof *yk);
        long long *tk = fattn_xcalloc(m, sizeof *tk);
        unsigned char *mk = fattn_xcalloc(m, 1);
        for (size_t i = 0; i < m; ++i)
            if (q->cat[i] >= 0)
                cat[nk] = q->cat[i], yk[nk] = ys[i], tk[nk] = trial[i], mk[nk++] = mark[i];
        fattn_strip s = {q->name, (const char *const *)cats, q->nvalues, cat, yk, tk, mk, nk};
        snprintf(id, sizeof id, "strip-%zu", k);
        fattn_svg_strip(f, id, &s, ya, refs, nrefs);
        for (size_t j = 0; j < q->nvalues; ++j)
            free(cats[j]);
        free(cats), free(cat), free(yk), free(tk), free(mk);
    }
    fputs("</div>\n", f);
    fattn_html_section_end(f);
    free(ys), free(trial), free(mark);
    return 1;
}

static void counts_chart(FILE *f, const char *id, const char *title, const fattn_view_count *c, size_t n)
{
    const char **labels = fattn_xcalloc(n ? n : 1, sizeof *labels);
    double *v = fattn_xcalloc(n ? n : 1, sizeof *v);
    for (size_t i = 0; i < n; ++i)
        labels[i] = c[i].reason, v[i] = c[i].n;
    fattn_svg_bars(f, id, title, labels, v, n);
    free(labels), free(v);
}

void fattn_html_rejections(FILE *f, const fattn_study_view *v)
{
    if (!v->nbefore && !v->nafter)
        return;
    fattn_html_section(f, "rejections", "Rejections");
    const double nb = fattn_view_count_total(v->before, v->nbefore), na = fattn_view_count_total(v->after, v->nafter);
    int sim = 0;
    for (size_t i = 0; i < v->nbefore; ++i)
        sim |= !strcmp(v->before[i].reason, "simulator");
    fprintf(f,
            "<p class=\"note\">%g configurations rejected before compiling (the static gates%s), %g trials "
            "rejected after compiling or running or failed (an error, under its status); each chart has its own "
            "scale.</p>\n<div class=\"plots\">\n",
            nb, sim ? ", the simulator's findings" : "", na);
    char title[128];
    if (v->nbefore) {
        snprintf(title, sizeof title, "Before compiling: %g configurations", nb);
        counts_chart(f, "plot-rejected-before", title, v->before, v->nbefore);
    }
    if (v->nafter) {
        snprintf(title, sizeof title, "After compiling or running, or failed: %g trials", na);
        counts_chart(f, "plot-rejected-after", title, v->after, v->nafter);
    }
    fputs("</div>\n", f);
    fattn_html_section_end(f);
}
