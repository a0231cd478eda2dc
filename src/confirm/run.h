/*
 * run.h - the confirm procedure: a study's fastest configurations and a
 * baseline re-measured interleaved in one worker, compared (bootstrap CIs,
 * Mann-Whitney U, Cliff's delta, the verdict), checked against their last
 * confirmation (--against previous) and stored, every sample, in one
 * transaction. The caller prints the report.
 */
#ifndef FATTN_CONFIRM_RUN_H
#define FATTN_CONFIRM_RUN_H

#include <stdio.h>

#include "confirm/confirm.h"
#include "job/job.h"
#include "run/compare.h"

#define FATTN_CONFIRM_MAX_TOP 16

/* What the baseline is. */
typedef struct fattn_confirm_baseline {
    int is_cudnn;
    fattn_trial_cand cand; /* for a configuration */
    long long trial;       /* trial:ID as given, 0 otherwise */
    char given[128];       /* as stored: cudnn, config:KEY, trial:ID */
    char why[160];         /* how it was chosen */
} fattn_confirm_baseline;

/* Checks a --baseline's form (NULL: the default, chosen later), before
 * anything is opened. */
int fattn_confirm_baseline_parse(const char *arg, fattn_confirm_baseline *b);

typedef struct fattn_confirm_opts {
    long long study; /* 0: the latest */
    int n, top;      /* samples of each kernel; candidates (at most FATTN_CONFIRM_MAX_TOP) */
    long resamples;
    int against; /* also compare each candidate with its last confirmation */
    double threshold, target;
    int allow_kernel, allow_arch;
    const char *kernel_dir;
    fattn_confirm_baseline baseline; /* fattn_confirm_baseline_parse()'s */
    const char *baseline_arg;        /* as given, NULL: the default */
    fattn_measure measure;           /* its samples and salt are confirm's own */
} fattn_confirm_opts;

/* One candidate's outcome. */
typedef struct fattn_confirm_outcome {
    fattn_comparison cmp;
    int compared;
    const char *verdict;
    char detail[600];
    int has_prev;
    fattn_confirm_prev prev;
    double change_pct;
    int regression;
    long long id; /* its confirmation */
} fattn_confirm_outcome;

typedef struct fattn_confirm_report {
    fattn_study_info study;
    fattn_trial_cand cands[FATTN_CONFIRM_MAX_TOP];
    fattn_confirm_outcome oc[FATTN_CONFIRM_MAX_TOP];
    int k;
    fattn_confirm_baseline baseline;
    char base_desc[1600]; /* what the baseline was, as measured */
    int base_ok;          /* the baseline was measured */
    char base_detail[512];
    char arch[16], device[256], method[512];
    int regressions, failed;
} fattn_confirm_report;

/* Runs confirm on the study of o->study in store `s` (opened for update)
 * on the GPU `gpu` (the target t, its arch probed from it, the limits and
 * device given): re-gates and re-compiles each kernel as the study searched
 * it (fattn_study_target, fattn_study_kernel), measures, compares and
 * stores. The notes and a progress line go to `log` (NULL: none) before
 * the measurement. FATTN_OK once the record is stored, whether or not each
 * kernel was measured (rep->failed) or regressed (rep->regressions). */
int fattn_confirm_run(const fattn_confirm_opts *o, fattn_target *t, const fattn_gpu *gpu, fattn_store *s, FILE *log,
                      fattn_confirm_report *rep);

#endif
