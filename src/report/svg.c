/*
 * svg.c - the report's charts.
 */
#include "report/svg.h"

#include <math.h>
#include <string.h>

#define W      640
#define H      320
#define LEFT   70
#define RIGHT  20
#define TOP    36
#define BOTTOM 50

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};

/* A tick step of 1, 2 or 5 times a power of ten giving about 5 ticks. */
static double nice_step(double span)
{
    if (!(span > 0))
        return 1;
    double raw = span / 5, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

typedef struct axes {
    double x0, x1, y0, y1;
} axes;

static double px(const axes *a, double x)
{
    return LEFT + (x - a->x0) / (a->x1 - a->x0) * (W - LEFT - RIGHT);
}

static double py(const axes *a, double y)
{
    return H - BOTTOM - (y - a->y0) / (a->y1 - a->y0) * (H - TOP - BOTTOM);
}

static void open_svg(FILE *f, const char *id, const char *title)
{
    fprintf(f,
            "<svg id=\"%s\" class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" width=\"%d\" "
            "height=\"%d\" role=\"img\">\n<title>",
            id, W, H, W, H);
    fattn_html_escape(f, title);
    fprintf(f, "</title>\n<text x=\"%d\" y=\"20\" class=\"t\">", LEFT);
    fattn_html_escape(f, title);
    fputs("</text>\n", f);
}

/* Frame, ticks, grid and labels. */
static void draw_axes(FILE *f, axes *a, const char *xlabel, const char *ylabel)
{
    if (!(a->x1 > a->x0))
        a->x1 = a->x0 + 1;
    if (!(a->y1 > a->y0))
        a->y1 = a->y0 + 1;
    double sx = nice_step(a->x1 - a->x0), sy = nice_step(a->y1 - a->y0);
    a->y0 = floor(a->y0 / sy) * sy, a->y1 = ceil(a->y1 / sy) * sy;
    fprintf(f,
            "<g class=\"axes\">\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>\n",
            LEFT, TOP, W - LEFT - RIGHT, H - TOP - BOTTOM);
    for (double x = ceil(a->x0 / sx) * sx; x <= a->x1 + sx * 1e-9; x += sx)
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/><text x=\"%.1f\" y=\"%d\" "
                "text-anchor=\"middle\">%g</text>\n",
                px(a, x), TOP, px(a, x), H - BOTTOM, px(a, x), H - BOTTOM + 16, x);
    for (double y = a->y0; y <= a->y1 + sy * 1e-9; y += sy)
        fprintf(f,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/><text x=\"%d\" y=\"%.1f\" "
                "text-anchor=\"end\">%g</text>\n",
                LEFT, py(a, y), W - RIGHT, py(a, y), LEFT - 6, py(a, y) + 4, y);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (LEFT + W - RIGHT) / 2, H - 12);
    fattn_html_escape(f, xlabel);
    fprintf(f, "</text>\n<text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">",
            (TOP + H - BOTTOM) / 2);
    fattn_html_escape(f, ylabel);
    fputs("</text>\n</g>\n", f);
}

static void legend(FILE *f, int x, int i, const char *name)
{
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">", x,
            TOP + 8 + 16 * i, colors[i % 6], x + 15, TOP + 17 + 16 * i);
    fattn_html_escape(f, name);
    fputs("</text>\n", f);
}

void fattn_svg_lines(FILE *f, const char *id, const char *title, const char *xlabel, const char *ylabel,
                     const fattn_series *s, size_t ns)
{
    axes a = {INFINITY, -INFINITY, INFINITY, -INFINITY};
    for (size_t k = 0; k < ns; ++k)
        for (size_t i = 0; i < s[k].n; ++i) {
            a.x0 = fmin(a.x0, s[k].x[i]), a.x1 = fmax(a.x1, s[k].x[i]);
            a.y0 = fmin(a.y0, s[k].y[i]), a.y1 = fmax(a.y1, s[k].y[i]);
        }
    open_svg(f, id, title);
    if (!isfinite(a.x0)) {
        fputs("<text x=\"320\" y=\"160\" text-anchor=\"middle\" class=\"empty\">no timed trials</text>\n</svg>\n", f);
        return;
    }
    a.x0 = fmin(a.x0, 0);
    draw_axes(f, &a, xlabel, ylabel);
    for (size_t k = 0; k < ns; ++k) {
        if (!s[k].n)
            continue;
        fprintf(f, "<polyline class=\"series\" data-series=\"");
        fattn_html_escape(f, s[k].name);
        fprintf(f, "\" data-points=\"%zu\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", s[k].n,
                colors[k % 6]);
        for (size_t i = 0; i < s[k].n; ++i) {
            if (i)
                fprintf(f, " %.1f,%.1f", px(&a, s[k].x[i]), py(&a, s[k].y[i - 1]));
            fprintf(f, " %.1f,%.1f", px(&a, s[k].x[i]), py(&a, s[k].y[i]));
        }
        fputs("\"/>\n", f);
        for (size_t i = 0; i < s[k].n; ++i)
            fprintf(f, "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n", px(&a, s[k].x[i]),
                    py(&a, s[k].y[i]), colors[k % 6]);
        legend(f, W - 230, (int)k, s[k].name);
    }
    fputs("</svg>\n", f);
}

void fattn_svg_histograms(FILE *f, const char *id, const char *title, const char *xlabel, const fattn_hist_side *a,
                          const fattn_hist_side *b)
{
    enum { BINS = 30 };
    const fattn_hist_side *side[2] = {a, b};
    double lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < 2; ++k)
        for (size_t i = 0; i < side[k]->n; ++i)
            lo = fmin(lo, side[k]->v[i]), hi = fmax(hi, side[k]->v[i]);
    open_svg(f, id, title);
    if (!isfinite(lo)) {
        fputs("<text x=\"320\" y=\"160\" text-anchor=\"middle\" class=\"empty\">no samples</text>\n</svg>\n", f);
        return;
    }
    if (!(hi > lo))
        hi = lo + 1e-3;
    double width = (hi - lo) / BINS;
    int count[2][BINS] = {{0}}, top = 1;
    for (int k = 0; k < 2; ++k)
        for (size_t i = 0; i < side[k]->n; ++i) {
            int bin = (int)((side[k]->v[i] - lo) / width);
            bin = bin < 0 ? 0 : bin >= BINS ? BINS - 1 : bin;
            if (++count[k][bin] > top)
                top = count[k][bin];
        }
    axes ax = {lo, hi, 0, top * 1.35}; /* headroom for the legend */
    draw_axes(f, &ax, xlabel, "samples per bin");
    for (int k = 0; k < 2; ++k) {
        const fattn_hist_side *s = side[k];
        fprintf(f, "<rect class=\"ci\" data-series=\"");
        fattn_html_escape(f, s->name);
        fprintf(f, "\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" opacity=\"0.15\"/>\n",
                px(&ax, s->lo), TOP, fmax(1.0, px(&ax, s->hi) - px(&ax, s->lo)), H - TOP - BOTTOM, colors[k]);
        for (int i = 0; i < BINS; ++i)
            if (count[k][i])
                fprintf(f,
                        "<rect class=\"bar\" data-series=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                        "fill=\"%s\" opacity=\"0.6\"/>\n",
                        k ? "baseline" : "candidate", px(&ax, lo + i * width), py(&ax, count[k][i]),
                        px(&ax, lo + (i + 1) * width) - px(&ax, lo + i * width), py(&ax, 0) - py(&ax, count[k][i]),
                        colors[k]);
        fprintf(
            f,
            "<line class=\"median\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>\n",
            px(&ax, s->median), TOP, px(&ax, s->median), H - BOTTOM, colors[k]);
        char name[300];
        snprintf(name, sizeof name, "%s: median %.3f us, 95%% CI %.3f-%.3f, n=%zu", s->name, s->median, s->lo, s->hi,
                 s->n);
        legend(f, LEFT + 8, k, name);
    }
    fputs("</svg>\n", f);
}

void fattn_svg_bars(FILE *f, const char *id, const char *title, const char *const *labels, const double *v, size_t n)
{
    open_svg(f, id, title);
    if (!n) {
        fputs("<text x=\"320\" y=\"160\" text-anchor=\"middle\" class=\"empty\">nothing rejected</text>\n</svg>\n", f);
        return;
    }
    double top = 0;
    for (size_t i = 0; i < n; ++i)
        top = fmax(top, v[i]);
    double row = (double)(H - TOP - 20) / (double)n, left = 150, span = W - left - 70;
    for (size_t i = 0; i < n; ++i) {
        double y = TOP + row * (double)i, w = top > 0 ? v[i] / top * span : 0;
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">", left - 6, y + row / 2 + 4);
        fattn_html_escape(f, labels[i]);
        fprintf(f, "</text><rect class=\"bar\" data-series=\"");
        fattn_html_escape(f, labels[i]);
        fprintf(f,
                "\" x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/><text x=\"%.1f\" "
                "y=\"%.1f\">%g</text>\n",
                left, y + row * 0.15, fmax(w, 1), row * 0.7, colors[0], left + w + 4, y + row / 2 + 4, v[i]);
    }
    fputs("</svg>\n", f);
}
