/*
 * search.h - the search procedure: the study around the search loop. The
 * GPU (or a landscape to replay) and the target completed, the space gated,
 * the simulator's defects skipped, the evaluator started, the study begun
 * (or a resumed one reopened), the static rejections recorded, then the
 * loop (tune.h) until the strategy is exhausted, the trials or the budget
 * are spent, or *interrupted is set; the study ends "done", "interrupted"
 * or "failed". The caller prints the summary.
 */
#ifndef FATTN_TUNE_SEARCH_H
#define FATTN_TUNE_SEARCH_H

#include <signal.h>
#include <stdio.h>

#include "job/job.h"
#include "tune/resume.h"
#include "tune/tune.h"

typedef struct fattn_search_opts {
    const fattn_strategy_ops *strategy;
    long trials;                            /* 0: no limit */
    int jobs;                               /* compile threads */
    double budget_ms;                       /* 0: none */
    double started_ms;                      /* fattn_now_ms() when the command began: the budget counts from there */
    const char *replay[FATTN_MAX_FAMILIES]; /* landscape files to replay, one per family; none: the GPU */
    int nreplay;
    fattn_measure measure;
    /* The GPUs (search --devices): n > 1 runs trials on each side by side
     * (tune.h), the target's device ignored; 0: the target's GPU alone. */
    const int *devices;
    int ndevices;
    const char *kernel_dir;
    const char *db_path;       /* opened for writing unless *store is open (resume) */
    const char *argv_text;     /* the command line, for the study */
    const char *args_json;     /* the search's arguments, for --resume */
    const char *campaign_uuid; /* the campaign whose row the study runs (NULL: none) */
    int campaign_row;
    const fattn_resume *resume;         /* the study to go on with, NULL: a new one */
    volatile sig_atomic_t *interrupted; /* set: stop between trials (NULL: never) */
    void (*guard)(int on);              /* called with 1 as the study begins, 0 after the loop: the caller's
                            * signal handlers set *interrupted in between (NULL: none) */
    void (*progress)(void *arg, const fattn_tune_progress *p); /* the loop's; p NULL once it has ended */
    void *progress_arg;
    FILE *log; /* notes (NULL: none) */
} fattn_search_opts;

typedef struct fattn_search_report {
    long long study;
    fattn_targets ts; /* the study's families, each its target */
    /* Each family's static gates' verdicts, the simulator's skips among them. */
    fattn_space_verdicts sv[FATTN_MAX_FAMILIES];
    size_t sim_skipped[FATTN_MAX_FAMILIES];
    fattn_notes notes;                      /* what was decided: the families a filter left out */
    fattn_hw_status hw[FATTN_MAX_FAMILIES]; /* each family's kernel source's hardware record */
    fattn_tune_progress p;
    int stop; /* enum fattn_tune_stop */
    char device[256], method[512];
    int ndev;          /* the GPUs the study ran on (1: one) */
    char devices[128]; /* their ordinals, "0,1,3" */
    double ended_ms;   /* fattn_now_ms() when the study ended (before the worker is stopped) */
    double startup_ms; /* this run, from the command's start to the loop's */
    double run_ms;     /* this run, from the command's start to the study's end */
    /* A landscape's shape and arch, where the target took them: the target
     * points into them, so the report outlives the target's use. */
    char land_shape[64], land_arch[16];
} fattn_search_report;

/* Runs the search on target t (its spaces or families, shape, arch and
 * limits given, or taken from the landscapes or the GPU): one study over
 * every family of r->ts (fattn_targets_finish; replaying, the landscapes'
 * families by default, each family replayed from its own). FATTN_OK once
 * the study has ended, interrupted or not (r->stop). */
int fattn_search_run(const fattn_search_opts *o, fattn_target *t, fattn_store **store, fattn_search_report *r);

void fattn_search_report_release(fattn_search_report *r);

#endif
