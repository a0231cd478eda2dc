/*
 * svg.h - small inline SVG charts for the HTML report: scatter plots of
 * trials (with step lines and reference lines), strip plots of a value
 * against a parameter's values, ranges (p10-p90 with the median), two
 * overlaid histograms with bands and markers, and horizontal bars.
 *
 * Axes are linear or logarithmic with "nice" ticks (1, 2, 5 times a power of
 * ten; on a log axis also finer steps where it spans less than a decade).
 * A point without a value (NaN: a trial rejected before it was timed) is
 * drawn in a lane under the axis, so that no trial is left out. Every data
 * element carries a class and data- attributes for tests and readers:
 * class "pt" (and "rejected" when marked) with data-series and data-trial,
 * "ref" with data-ref, "range", "bar", "series".
 */
#ifndef FATTN_REPORT_SVG_H
#define FATTN_REPORT_SVG_H

#include <stddef.h>
#include <stdio.h>

#include "util/escape.h" /* fattn_html_escape */

/* An axis: its label, logarithmic or not, and its range (NaN where the data
 * gives it; the range always takes in the data and the reference lines);
 * on a value axis, the label of the lane of points without a value. */
typedef struct fattn_axis {
    const char *label;
    int log;
    double lo, hi;
    const char *lane;
} fattn_axis;

/* A reference line across the chart at value v of the value axis, with its
 * name and value written beside it. */
typedef struct fattn_ref {
    const char *name; /* data-ref, and the label's start */
    double v;
} fattn_ref;

/* One series of a scatter: points (x[i], y[i]) with trial[i] as data-trial;
 * mark[i] set draws a cross (a rejected trial) instead of a dot; y[i] NaN
 * puts it in the lane. A step line through (sx, sy) (best so far) where
 * ns > 0. */
typedef struct fattn_points {
    const char *name;
    const double *x, *y;
    const long long *trial;
    const unsigned char *mark;
    size_t n;
    const double *sx, *sy;
    size_t ns;
} fattn_points;

void fattn_svg_scatter(FILE *f, const char *id, const char *title, const fattn_axis *x, const fattn_axis *y,
                       const fattn_points *s, size_t nseries, const fattn_ref *refs, size_t nrefs);

/* A strip plot: point i at category cat[i] (cats[0..ncats), in order) and
 * value y[i], jittered across its category; each category's median of the
 * values as a short line. */
typedef struct fattn_strip {
    const char *param;
    const char *const *cats;
    size_t ncats;
    const int *cat;
    const double *y;
    const long long *trial;
    const unsigned char *mark;
    size_t n;
} fattn_strip;

void fattn_svg_strip(FILE *f, const char *id, const fattn_strip *s, const fattn_axis *y, const fattn_ref *refs,
                     size_t nrefs);

/* Horizontal ranges, one a row: labels[i] from lo[i] to hi[i] with a dot at
 * mid[i]; the reference lines run down the chart. */
void fattn_svg_ranges(FILE *f, const char *id, const char *title, const fattn_axis *x, const char *const *labels,
                      const double *lo, const double *mid, const double *hi, size_t n, const fattn_ref *refs,
                      size_t nrefs);

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

/* Horizontal bars: labels[i] with value v[i], on a scale of their own. */
void fattn_svg_bars(FILE *f, const char *id, const char *title, const char *const *labels, const double *v, size_t n);

#endif
