/*
 * view.h - a study as the HTML report draws it: the trials it tried (the
 * configurations it compiled, ran or timed, in order), its rejections
 * before compiling (the static gates, the simulator's findings) and after
 * (errors among them), by reason, and each parameter's values across the
 * trials it tried.
 */
#ifndef FATTN_REPORT_VIEW_H
#define FATTN_REPORT_VIEW_H

#include <stddef.h>

#include "space/family.h"
#include "store/store.h"

/* A trial the study tried. Values it lacks are NaN. */
typedef struct fattn_view_trial {
    long long id;
    double secs; /* since the study's first trial */
    double median_us, p10_us, p90_us;
    double compile_ms, registers, spills, smem, occupancy;
    int cache_hit;
    int timed;  /* status ok */
    int marked; /* rejected or an error (an error may not have compiled) */
    int family; /* the index of its family in the view's families */
    char *key;
} fattn_view_trial;

/* A reason and how many trials it stopped. */
typedef struct fattn_view_count {
    char *reason;
    double n;
} fattn_view_count;

/* How many trials counts c[0..n) stopped in all. */
double fattn_view_count_total(const fattn_view_count *c, size_t n);

/* A parameter: its distinct values over the trials tried, ascending, and
 * each tried trial's value's index among them (-1: none). */
typedef struct fattn_view_param {
    char *name;
    double *values;
    size_t nvalues;
    int *cat; /* one per tried trial */
} fattn_view_param;

typedef struct fattn_study_view {
    long long study;
    int compile;     /* a compile study (no times) */
    char name[96];   /* "study 1 (gp)" */
    double end_secs; /* the study's end since its first trial; NaN when running */
    fattn_view_trial *t;
    size_t n;
    fattn_view_count *before, *after; /* by count, descending */
    size_t nbefore, nafter;
    fattn_view_param *params; /* with_params only */
    size_t nparams;
    /* The families of its trials, in the order they first came (a study
     * of several families: its plots show each in a colour of its own);
     * NULL: the trials of a family this build does not know, together. */
    const fattn_family *families[FATTN_MAX_FAMILIES];
    int nfamilies;
} fattn_study_view;

/* Reads study `id` (which exists); with_params, its parameters too. */
int fattn_study_view_load(fattn_store *s, long long id, int with_params, fattn_study_view *v);
void fattn_study_view_release(fattn_study_view *v);

#endif
