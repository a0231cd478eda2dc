/*
 * html.h - the parts of the HTML report (report.c writes the page): the
 * sections a search study gets (html_search.c), those a compile study gets
 * (html_compile.c), and what both draw (html.c): a plot of every trial, a
 * strip plot per parameter, the rejections before and after compiling.
 *
 * A section is written only where it has data; where it has none a note
 * says why, once, where the reader looks for it.
 */
#ifndef FATTN_REPORT_HTML_H
#define FATTN_REPORT_HTML_H

#include <stdio.h>

#include "report/svg.h"
#include "report/view.h"
#include "store/store.h"

/* <section id="id"><h2>title</h2> and its end. */
void fattn_html_section(FILE *f, const char *id, const char *title);
void fattn_html_section_end(FILE *f);

/* A trial's value on an axis (NaN: none). */
typedef double fattn_html_value(const fattn_view_trial *t, size_t ordinal);

/* The trial's place in the order tried (its ordinal, from 1). */
fattn_html_value fattn_html_order;

/* Every tried trial of views v[0..n) as a point (a series per study): x and
 * y of it; a step line through the lowest y so far where `steps`. */
void fattn_html_trials(FILE *f, const char *id, const char *title, const fattn_study_view *v, int n,
                       fattn_html_value *x, const fattn_axis *xa, fattn_html_value *y, const fattn_axis *ya, int steps,
                       const fattn_ref *refs, size_t nrefs);

/* A strip plot of y for each parameter that takes more than one value
 * among v's tried trials; those that take one are named in a note. 0 when
 * there was nothing to draw (no such parameter). */
int fattn_html_params(FILE *f, const fattn_study_view *v, fattn_html_value *y, const fattn_axis *ya,
                      const fattn_ref *refs, size_t nrefs, const char *what);

/* The rejections section: before compiling and after (errors among them),
 * a chart each; none where nothing was rejected. */
void fattn_html_rejections(FILE *f, const fattn_study_view *v);

/* The note of a study without a trial tried: everything rejected before
 * it could be `done` ("compiled"), or nothing stored yet. */
void fattn_html_no_trials(FILE *f, const fattn_study_view *v, const char *done);

/* The sections of a search's report, of a compile study's report. */
int fattn_html_search(fattn_store *s, const fattn_study_view *v, int n, FILE *f);
int fattn_html_compile(fattn_store *s, const fattn_study_view *v, int n, FILE *f);

#endif
