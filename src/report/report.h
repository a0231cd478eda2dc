/*
 * report.h - what a user reads of the procedures' results: confirm's,
 * bench's, check's, compile's, search's, the gates' and the space's reports, and the
 * HTML report.
 *
 * The HTML report is a self-contained page about one or more studies: the
 * study, best-so-far against trials and against wall time (one line per
 * study), the distribution of the latest confirmation's samples for
 * candidate and baseline, rejections by reason, and the ten fastest
 * configurations with their confirmations. Inline SVG and CSS; no script,
 * nothing fetched.
 */
#ifndef FATTN_REPORT_REPORT_H
#define FATTN_REPORT_REPORT_H

#include <stdio.h>

#include "bench/bench.h"
#include "confirm/run.h"
#include "study/check.h"
#include "study/compile.h"
#include "study/explain.h"
#include "tune/search.h"
#include "store/store.h"

/* studies[0] is the main study (confirmation, rejections, top 10); every
 * study gets a line in the best-so-far plots. */
int fattn_report_write(fattn_store *s, const long long *studies, int n, FILE *out);

/* Confirm's report in `format` (export/table.h): the study, the timing, the
 * baseline and the statistics, a table of the candidates, and each one's
 * verdict and its comparison with the previous confirmation (o->against);
 * or all of it as one JSON object. */
void fattn_report_confirm(const fattn_confirm_opts *o, const fattn_confirm_report *r, int format, FILE *f);

/* One configuration of check --config: its verdict, the fix, every finding
 * of the simulator, the host build. */
void fattn_report_check_one(const fattn_sim_job *job, const fattn_sim_check *c, FILE *f);

/* Check's summary: the run, the count of each verdict, and each failure's
 * verdict and kernel lines with how many configurations share it and an
 * example (not for a single configuration, whose lines came as it ran). */
void fattn_report_check(const fattn_check_report *r, const fattn_check_plan *p, int single, FILE *f);

/* Check's progress line, redrawn in place: done of njobs, failed, the rate
 * and the time left. */
void fattn_report_check_progress(size_t done, size_t njobs, size_t failed, double elapsed_ms, FILE *f);

/* Check --list: the cases, one a line: KEY B,H,S,D and "causal" where
 * masked. */
void fattn_report_check_list(const fattn_check_plan *p, FILE *f);

/* Search's summary of study rep->study: `strategy` over t's space, the
 * static rejections and trials by reason, the best, and why it stopped
 * (--trials `trials`, --budget `budget` as given: ran_ms of budget_ms). */
void fattn_report_search(const fattn_search_report *rep, const char *strategy, const fattn_target *t, long trials,
                         const char *budget, double ran_ms, double budget_ms, FILE *f);

/* Search's progress line: tried, measured, rejected, errors, the best and
 * the time left (by the pace so far, or to deadline_ms when that comes
 * first, both against `now`); redrawn in place on a terminal (tty), else a
 * whole line. */
void fattn_report_search_progress(const fattn_tune_progress *p, int tty, double now, double deadline_ms, FILE *f);

/* The static gates over t's space (sv, gates.h): each reason's count with
 * nex examples, their numbers and the fix, and the survivors; in a table
 * with the target above and what to change below, or as CSV or JSON. */
void fattn_report_gates(const fattn_target *t, const fattn_space_verdicts *sv, size_t nex, int format, FILE *f);

/* Every gate's verdict on cfg (x, explain.h), the first rejection's fix. */
void fattn_report_explain(const fattn_target *t, const fattn_config *cfg, const fattn_explanation *x, int format,
                          FILE *f);

/* Bench's report: a table (or JSON) of the kernel and, with `baseline`,
 * cuDNN's measurement, the ratio of their medians. */
void fattn_report_bench(const fattn_bench_report *r, int baseline, int format, FILE *f);

/* A space's report: its file and hash, its family, each parameter's values
 * and meaning, and how many configurations it has (`matching` its filter). */
void fattn_report_space(const fattn_target *t, size_t matching, int format, FILE *f);

/* Configurations indices[0..n) of `space` as rows: index, key and the
 * family's tunables. */
void fattn_report_configs(const fattn_space *space, const size_t *indices, size_t n, int format, FILE *out);

/* Compile's summary of study r->study over t's space: the static gates, the
 * compiles, the trials by status and reason, the layout check. */
void fattn_report_compile(const fattn_compile_study_report *r, const fattn_target *t, FILE *f);

#endif
