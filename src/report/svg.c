/*
 * svg.c - the report's charts.
 */
#include "report/svg.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "run/compare.h"
#include "util/err.h"

/* A chart's size and its margins; the plot area is what they leave. */
typedef struct frame {
    int w, h, left, right, top, bottom;
} frame;

enum { WIDE, SMALL };
static const frame frames[] = {
    [WIDE] = {640, 340, 70, 24, 48, 62},
    [SMALL] = {420, 280, 62, 16, 48, 62},
};

#define LANE 18 /* the lane under the plot area for points without a value */

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};
static const char *const ref_colors[] = {"#1a7f37", "#6f42c1", "#444"};

static const char *color(size_t i)
{
    return colors[i % (sizeof colors / sizeof colors[0])];
}

/* A tick step of 1, 2 or 5 times a power of ten giving about 5 ticks. */
static double nice_step(double span)
{
    if (!(span > 0))
        return 1;
    double raw = span / 5, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/* One axis's map from values to pixels p0 (at lo) .. p1 (at hi). */
typedef struct scale {
    double lo, hi;
    int log;
    double p0, p1;
} scale;

/* 1 when v can be placed on an axis: a number, and positive on a log one. */
static int placeable(int log, double v)
{
    return isfinite(v) && (!log || v > 0);
}

static double at(const scale *s, double v)
{
    double t = s->log ? (log10(v) - log10(s->lo)) / (log10(s->hi) - log10(s->lo)) : (v - s->lo) / (s->hi - s->lo);
    return s->p0 + t * (s->p1 - s->p0);
}

/* The pixel of v, or of the scale's low end where v cannot be placed on it
 * (NaN, or not positive on a log scale). */
static double at_or_lo(const scale *s, double v)
{
    return at(s, placeable(s->log, v) ? v : s->lo);
}

/* An extent: the smallest and largest of the values taken in (on a log
 * axis only positive ones count). */
typedef struct extent {
    double lo, hi;
    int log;
} extent;

static void take(extent *e, double v)
{
    if (!placeable(e->log, v))
        return;
    e->lo = fmin(e->lo, v), e->hi = fmax(e->hi, v);
}

enum { MAX_TICKS = 24 };

/* The scale's ends from the extent (and the axis's own lo and hi), made
 * round: a linear axis to whole steps, a log axis padded; its ticks in t,
 * their count returned. */
static size_t fit(scale *s, const fattn_axis *a, extent e, double *t)
{
    take(&e, a->lo), take(&e, a->hi);
    s->log = a->log;
    size_t n = 0;
    if (!s->log) {
        if (!(e.hi >= e.lo))
            e.lo = 0, e.hi = 1;
        if (!(e.hi > e.lo))
            e.hi = e.lo + (e.lo ? fabs(e.lo) * 0.1 : 1);
        /* A little room at the ends, so that no point sits on the frame. */
        const double pad = 0.03 * (e.hi - e.lo), step = nice_step(e.hi - e.lo + 2 * pad);
        s->lo = e.lo == 0 ? 0 : floor((e.lo - pad) / step) * step, s->hi = ceil((e.hi + pad) / step) * step;
        for (double v = s->lo; v <= s->hi + step * 1e-9 && n < MAX_TICKS; v += step)
            t[n++] = fabs(v) < step * 1e-9 ? 0 : v;
        return n;
    }
    if (!(e.hi >= e.lo))
        e.lo = 1, e.hi = 10;
    if (!(e.hi > e.lo * 1.2))
        e.lo /= 1.25, e.hi *= 1.25;
    s->lo = e.lo / pow(e.hi / e.lo, 0.05), s->hi = e.hi * pow(e.hi / e.lo, 0.05);
    static const double sets[][7] = {{1}, {1, 2, 5}, {1, 1.5, 2, 3, 5, 7}};
    static const int lens[] = {1, 3, 6};
    for (int k = 0; k < 3; ++k) {
        n = 0;
        for (double d = pow(10, floor(log10(s->lo))); d <= s->hi && n < MAX_TICKS; d *= 10)
            for (int i = 0; i < lens[k] && n < MAX_TICKS; ++i)
                if (sets[k][i] * d >= s->lo && sets[k][i] * d <= s->hi)
                    t[n++] = sets[k][i] * d;
        if (n >= 3)
            return n;
    }
    /* Less than half a decade: about four linear steps on the log axis. */
    double step = nice_step(1.5 * (s->hi - s->lo));
    n = 0;
    for (double v = ceil(s->lo / step) * step; v <= s->hi && n < MAX_TICKS; v += step)
        t[n++] = v;
    return n;
}

static void open_svg(FILE *f, const frame *fr, const char *id, const char *title)
{
    fprintf(f,
            "<svg id=\"%s\" class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" width=\"%d\" "
            "height=\"%d\" role=\"img\">\n<title>",
            id, fr->w, fr->h, fr->w, fr->h);
    fattn_html_escape(f, title);
    fprintf(f, "</title>\n<text x=\"%d\" y=\"18\" class=\"t\">", fr->left);
    fattn_html_escape(f, title);
    fputs("</text>\n", f);
}

static void text(FILE *f, double x, double y, const char *anchor, const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor);
    fattn_html_escape(f, s);
    fputs("</text>\n", f);
}

/* The plot area's frame and the axis labels; with `lane`, the lane under
 * it and its label. */
static void draw_frame(FILE *f, const frame *fr, const char *xlabel, const char *ylabel, const char *lane)
{
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>\n", fr->left,
            fr->top, fr->w - fr->left - fr->right, fr->h - fr->top - fr->bottom);
    if (lane) {
        fprintf(f, "<rect class=\"lane\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f6f6f6\"/>\n", fr->left,
                fr->h - fr->bottom + 2, fr->w - fr->left - fr->right, LANE - 4);
        text(f, fr->left - 6, fr->h - fr->bottom + LANE / 2 + 4, "end", lane);
    }
    text(f, (fr->left + fr->w - fr->right) / 2.0, fr->h - 10, "middle", xlabel);
    fprintf(f, "<text transform=\"translate(14 %d) rotate(-90)\" text-anchor=\"middle\">",
            (fr->top + fr->h - fr->bottom) / 2);
    fattn_html_escape(f, ylabel);
    fputs("</text>\n", f);
}

/* The x ticks' grid lines, their labels `below` pixels under the plot area. */
static void x_ticks(FILE *f, const frame *fr, const scale *x, const double *t, size_t n, int below)
{
    for (size_t i = 0; i < n; ++i)
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/><text x=\"%.1f\" y=\"%d\" "
                "text-anchor=\"middle\">%g</text>\n",
                at(x, t[i]), fr->top, at(x, t[i]), fr->h - fr->bottom, at(x, t[i]), fr->h - fr->bottom + below, t[i]);
}

static void y_ticks(FILE *f, const frame *fr, const scale *y, const double *t, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        fprintf(f,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/><text x=\"%d\" y=\"%.1f\" "
                "text-anchor=\"end\">%g</text>\n",
                fr->left, at(y, t[i]), fr->w - fr->right, at(y, t[i]), fr->left - 6, at(y, t[i]) + 4, t[i]);
}

/* Legend entries in a row under the title, wrapping. */
typedef struct legend {
    const frame *fr;
    double x;
    int row;
} legend;

static void legend_add(FILE *f, legend *l, const char *name, const char *col)
{
    double w = 22 + 6.2 * (double)strlen(name);
    if (l->x > l->fr->left && l->x + w > l->fr->w - l->fr->right)
        l->x = l->fr->left, ++l->row;
    int y = 26 + 12 * l->row;
    fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>", l->x, y, col);
    text(f, l->x + 14, y + 9, "start", name);
    l->x += w;
}

/* Reference lines across the plot at y (horizontal) or x (vertical). */
static void refs_draw(FILE *f, const frame *fr, const scale *sc, int vertical, const fattn_ref *r, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        if (!placeable(sc->log, r[i].v))
            continue;
        const char *c = ref_colors[i < 3 ? i : 2];
        double p = at(sc, r[i].v);
        char label[160];
        snprintf(label, sizeof label, "%s %.4g", r[i].name, r[i].v);
        fprintf(f, "<line class=\"ref\" data-ref=\"");
        fattn_html_escape(f, r[i].name);
        if (vertical) {
            fprintf(f,
                    "\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" stroke-width=\"1.5\" "
                    "stroke-dasharray=\"6 3\"/>\n",
                    p, fr->top, p, fr->h - fr->bottom, c);
            fprintf(f, "<text class=\"ref-label\" x=\"%.1f\" y=\"%d\" fill=\"%s\" text-anchor=\"start\">", p + 3,
                    fr->top + 12 + 12 * (int)i, c);
        } else {
            fprintf(f,
                    "\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\" "
                    "stroke-dasharray=\"6 3\"/>\n",
                    fr->left, p, fr->w - fr->right, p, c);
            fprintf(f, "<text class=\"ref-label\" x=\"%d\" y=\"%.1f\" fill=\"%s\" text-anchor=\"end\">",
                    fr->w - fr->right - 4, p - 4, c);
        }
        fattn_html_escape(f, label);
        fputs("</text>\n", f);
    }
}

/* A trial's mark: a dot, or a cross where marked (rejected). */
static void point(FILE *f, const char *series, long long trial, int mark, double x, double y, const char *col)
{
    fprintf(f, "<%s class=\"pt%s\" data-series=\"", mark ? "path" : "circle", mark ? " rejected" : "");
    fattn_html_escape(f, series);
    fputs("\"", f);
    if (trial)
        fprintf(f, " data-trial=\"%lld\"", trial);
    if (mark)
        fprintf(f,
                " d=\"M%.1f %.1fl6 6m0 -6l-6 6\" stroke=\"%s\" stroke-width=\"1.3\" fill=\"none\" "
                "opacity=\"0.8\"/>\n",
                x - 3, y - 3, col);
    else
        fprintf(f, " cx=\"%.1f\" cy=\"%.1f\" r=\"2.4\" fill=\"%s\" opacity=\"0.7\"/>\n", x, y, col);
}

/* The y of a point: its value, or the lane's middle. */
static double point_y(const frame *fr, const scale *y, double v)
{
    return placeable(y->log, v) ? at(y, v) : fr->h - fr->bottom + LANE / 2.0;
}

static int any_lane(const double *y, size_t n, int log)
{
    for (size_t i = 0; i < n; ++i)
        if (!placeable(log, y[i]))
            return 1;
    return 0;
}

void fattn_svg_scatter(FILE *f, const char *id, const char *title, const fattn_axis *xa, const fattn_axis *ya,
                       const fattn_points *s, size_t ns, const fattn_ref *refs, size_t nrefs)
{
    const frame *fr = &frames[WIDE];
    extent ex = {INFINITY, -INFINITY, xa->log}, ey = {INFINITY, -INFINITY, ya->log};
    int lane = 0;
    for (size_t k = 0; k < ns; ++k) {
        for (size_t i = 0; i < s[k].n; ++i)
            take(&ex, s[k].x[i]), take(&ey, s[k].y[i]);
        for (size_t i = 0; i < s[k].ns; ++i)
            take(&ex, s[k].sx[i]), take(&ey, s[k].sy[i]);
        lane |= any_lane(s[k].y, s[k].n, ya->log);
    }
    for (size_t i = 0; i < nrefs; ++i)
        take(&ey, refs[i].v);
    double tx[MAX_TICKS], ty[MAX_TICKS];
    scale x = {.p0 = fr->left, .p1 = fr->w - fr->right}, y = {.p0 = fr->h - fr->bottom, .p1 = fr->top};
    size_t ntx = fit(&x, xa, ex, tx), nty = fit(&y, ya, ey, ty);
    open_svg(f, fr, id, title);
    fputs("<g class=\"axes\">\n", f);
    x_ticks(f, fr, &x, tx, ntx, LANE + 12);
    y_ticks(f, fr, &y, ty, nty);
    draw_frame(f, fr, xa->label, ya->label, lane ? ya->lane : NULL);
    fputs("</g>\n", f);
    legend l = {fr, fr->left, 0};
    for (size_t k = 0; k < ns; ++k) {
        const fattn_points *p = &s[k];
        if (p->ns) {
            fputs("<polyline class=\"series\" data-series=\"", f);
            fattn_html_escape(f, p->name);
            fprintf(f, "\" data-points=\"%zu\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" points=\"", p->ns,
                    color(k));
            for (size_t i = 0; i < p->ns; ++i) {
                if (i)
                    fprintf(f, " %.1f,%.1f", at(&x, p->sx[i]), at(&y, p->sy[i - 1]));
                fprintf(f, " %.1f,%.1f", at(&x, p->sx[i]), at(&y, p->sy[i]));
            }
            fputs("\"/>\n", f);
        }
        for (size_t i = 0; i < p->n; ++i)
            point(f, p->name, p->trial ? p->trial[i] : 0, p->mark && p->mark[i], at(&x, p->x[i]),
                  point_y(fr, &y, p->y[i]), color(k));
        if (ns > 1)
            legend_add(f, &l, p->name, color(k));
    }
    refs_draw(f, fr, &y, 0, refs, nrefs);
    fputs("</svg>\n", f);
}

/* A point's offset across its category, the same on every run. */
static double jitter(size_t i)
{
    uint32_t h = (uint32_t)i * 2654435761u;
    h ^= h >> 15;
    return (double)(h % 1001) / 1000.0 - 0.5;
}

void fattn_svg_strip(FILE *f, const char *id, const fattn_strip *s, const fattn_axis *ya, const fattn_ref *refs,
                     size_t nrefs)
{
    const frame *fr = &frames[SMALL];
    extent ey = {INFINITY, -INFINITY, ya->log};
    for (size_t i = 0; i < s->n; ++i)
        take(&ey, s->y[i]);
    for (size_t i = 0; i < nrefs; ++i)
        take(&ey, refs[i].v);
    double ty[MAX_TICKS];
    scale y = {.p0 = fr->h - fr->bottom, .p1 = fr->top};
    size_t nty = fit(&y, ya, ey, ty);
    const double plot = fr->w - fr->left - fr->right, band = plot / (double)(s->ncats ? s->ncats : 1);
    const double spread = fmin(0.3 * band, 30);
    open_svg(f, fr, id, s->param);
    fputs("<g class=\"axes\">\n", f);
    y_ticks(f, fr, &y, ty, nty);
    for (size_t c = 0; c < s->ncats; ++c)
        text(f, fr->left + band * ((double)c + 0.5), fr->h - fr->bottom + LANE + 12, "middle", s->cats[c]);
    draw_frame(f, fr, s->param, ya->label, any_lane(s->y, s->n, ya->log) ? ya->lane : NULL);
    fputs("</g>\n", f);
    double *vals = fattn_xmalloc((s->n ? s->n : 1) * sizeof *vals);
    for (size_t c = 0; c < s->ncats; ++c) {
        const double mid = fr->left + band * ((double)c + 0.5);
        size_t nv = 0;
        for (size_t i = 0; i < s->n; ++i) {
            if (s->cat[i] != (int)c)
                continue;
            point(f, s->param, s->trial ? s->trial[i] : 0, s->mark && s->mark[i], mid + jitter(i) * 2 * spread,
                  point_y(fr, &y, s->y[i]), color(0));
            if (placeable(ya->log, s->y[i]))
                vals[nv++] = s->y[i];
        }
        if (nv) {
            const double m = fattn_median(vals, nv);
            fprintf(f,
                    "<line class=\"cat-median\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222\" "
                    "stroke-width=\"2\"><title>median %.4g</title></line>\n",
                    mid - spread - 4, at(&y, m), mid + spread + 4, at(&y, m), m);
        }
    }
    free(vals);
    refs_draw(f, fr, &y, 0, refs, nrefs);
    fputs("</svg>\n", f);
}

void fattn_svg_ranges(FILE *f, const char *id, const char *title, const fattn_axis *xa, const char *const *labels,
                      const double *lo, const double *mid, const double *hi, size_t n, const fattn_ref *refs,
                      size_t nrefs)
{
    enum { ROW = 16 };
    frame fr = {860, 0, 260, 40, 60, 44};
    fr.h = fr.top + ROW * (int)(n ? n : 1) + fr.bottom;
    extent ex = {INFINITY, -INFINITY, xa->log};
    for (size_t i = 0; i < n; ++i)
        take(&ex, lo[i]), take(&ex, mid[i]), take(&ex, hi[i]);
    for (size_t i = 0; i < nrefs; ++i)
        take(&ex, refs[i].v);
    double tx[MAX_TICKS];
    scale x = {.p0 = fr.left, .p1 = fr.w - fr.right};
    size_t ntx = fit(&x, xa, ex, tx);
    open_svg(f, &fr, id, title);
    fputs("<g class=\"axes\">\n", f);
    x_ticks(f, &fr, &x, tx, ntx, 14);
    draw_frame(f, &fr, xa->label, "", NULL);
    fputs("</g>\n", f);
    for (size_t i = 0; i < n; ++i) {
        double y = fr.top + ROW * ((double)i + 0.5);
        text(f, fr.left - 6, y + 4, "end", labels[i]);
        fputs("<line class=\"range\" data-series=\"", f);
        fattn_html_escape(f, labels[i]);
        const double l = at_or_lo(&x, lo[i]), h = at_or_lo(&x, hi[i]);
        fprintf(f, "\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"/>\n", l, y,
                fmax(h, l + 1), y, color(0));
        fprintf(f, "<circle class=\"mid\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.2\" fill=\"#222\"/>\n", at_or_lo(&x, mid[i]),
                y);
    }
    refs_draw(f, &fr, &x, 1, refs, nrefs);
    fputs("</svg>\n", f);
}

void fattn_svg_histograms(FILE *f, const char *id, const char *title, const char *xlabel, const fattn_hist_side *a,
                          const fattn_hist_side *b)
{
    enum { BINS = 30 };
    const frame *fr = &frames[WIDE];
    const fattn_hist_side *side[2] = {a, b};
    extent ex = {INFINITY, -INFINITY, 0};
    for (int k = 0; k < 2; ++k)
        for (size_t i = 0; i < side[k]->n; ++i)
            take(&ex, side[k]->v[i]);
    if (!(ex.hi >= ex.lo))
        ex.lo = 0, ex.hi = 1;
    const double lo = ex.lo, hi = ex.hi > ex.lo ? ex.hi : ex.lo + 1e-3, width = (hi - lo) / BINS;
    int count[2][BINS] = {{0}}, top = 1;
    for (int k = 0; k < 2; ++k)
        for (size_t i = 0; i < side[k]->n; ++i) {
            int bin = (int)((side[k]->v[i] - lo) / width);
            bin = bin < 0 ? 0 : bin >= BINS ? BINS - 1 : bin;
            if (++count[k][bin] > top)
                top = count[k][bin];
        }
    const fattn_axis xa = {xlabel, 0, lo, hi}, ya = {"samples per bin", 0, 0, top * 1.15};
    double tx[MAX_TICKS], ty[MAX_TICKS];
    scale x = {.p0 = fr->left, .p1 = fr->w - fr->right}, y = {.p0 = fr->h - fr->bottom, .p1 = fr->top};
    size_t ntx = fit(&x, &xa, (extent){lo, hi, 0}, tx), nty = fit(&y, &ya, (extent){0, top * 1.15, 0}, ty);
    open_svg(f, fr, id, title);
    fputs("<g class=\"axes\">\n", f);
    x_ticks(f, fr, &x, tx, ntx, LANE + 12);
    y_ticks(f, fr, &y, ty, nty);
    draw_frame(f, fr, xa.label, ya.label, NULL);
    fputs("</g>\n", f);
    legend l = {fr, fr->left, 0};
    for (int k = 0; k < 2; ++k) {
        const fattn_hist_side *s = side[k];
        fputs("<rect class=\"ci\" data-series=\"", f);
        fattn_html_escape(f, s->name);
        fprintf(f, "\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" opacity=\"0.15\"/>\n",
                at(&x, s->lo), fr->top, fmax(1.0, at(&x, s->hi) - at(&x, s->lo)), fr->h - fr->top - fr->bottom,
                color(k));
        for (int i = 0; i < BINS; ++i)
            if (count[k][i])
                fprintf(f,
                        "<rect class=\"bar\" data-series=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                        "fill=\"%s\" opacity=\"0.6\"/>\n",
                        k ? "baseline" : "candidate", at(&x, lo + i * width), at(&y, count[k][i]),
                        at(&x, lo + (i + 1) * width) - at(&x, lo + i * width), at(&y, 0) - at(&y, count[k][i]),
                        color(k));
        fprintf(
            f,
            "<line class=\"median\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>\n",
            at(&x, s->median), fr->top, at(&x, s->median), fr->h - fr->bottom, color(k));
        char name[300];
        snprintf(name, sizeof name, "%s: median %.3f us, 95%% CI %.3f-%.3f, n=%zu", s->name, s->median, s->lo, s->hi,
                 s->n);
        legend_add(f, &l, name, color(k));
    }
    fputs("</svg>\n", f);
}

void fattn_svg_bars(FILE *f, const char *id, const char *title, const char *const *labels, const double *v, size_t n)
{
    enum { ROW = 22 };
    frame fr = {640, 0, 150, 70, 32, 12};
    fr.h = fr.top + ROW * (int)(n ? n : 1) + fr.bottom;
    open_svg(f, &fr, id, title);
    double top = 0;
    for (size_t i = 0; i < n; ++i)
        top = fmax(top, v[i]);
    const double span = fr.w - fr.left - fr.right;
    for (size_t i = 0; i < n; ++i) {
        double y = fr.top + ROW * (double)i, w = top > 0 ? v[i] / top * span : 0;
        text(f, fr.left - 6, y + ROW / 2.0 + 4, "end", labels[i]);
        fputs("<rect class=\"bar\" data-series=\"", f);
        fattn_html_escape(f, labels[i]);
        fprintf(f,
                "\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/><text x=\"%.1f\" "
                "y=\"%.1f\">%g</text>\n",
                fr.left, y + ROW * 0.15, fmax(w, 1), ROW * 0.7, color(0), fr.left + fmax(w, 1) + 4, y + ROW / 2.0 + 4,
                v[i]);
    }
    fputs("</svg>\n", f);
}
