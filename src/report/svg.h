/*
 * svg.h - small inline SVG charts for the HTML report: line charts (step
 * lines, one series each), two overlaid histograms with bands and markers,
 * and horizontal bar charts. Axes get "nice" ticks; every data element
 * carries a class and data-series attribute so that tests can find them.
 */
#ifndef FATTN_REPORT_SVG_H
#define FATTN_REPORT_SVG_H

#include <stddef.h>
#include <stdio.h>

#include "util/escape.h" /* fattn_html_escape */

typedef struct fattn_series {
    const char *name;
    const double *x, *y;
    size_t n;
} fattn_series;

/* A chart of step lines (best-so-far curves). */
void fattn_svg_lines(FILE *f, const char *id, const char *title, const char *xlabel, const char *ylabel,
                     const fattn_series *s, size_t ns);

/* Histograms of two samples on shared bins, each with its median line and
 * a shaded band [lo, hi] (its confidence interval). */
typedef struct fattn_hist_side {
    const char *name;
    const double *v;
    size_t n;
    double median, lo, hi;
} fattn_hist_side;

void fattn_svg_histograms(FILE *f, const char *id, const char *title, const char *xlabel, const fattn_hist_side *a,
                          const fattn_hist_side *b);

/* Horizontal bars: labels[i] with value v[i]. */
void fattn_svg_bars(FILE *f, const char *id, const char *title, const char *const *labels, const double *v, size_t n);

#endif
