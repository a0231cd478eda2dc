/*
 * compile.h - the compile procedure: every configuration of a space through
 * the static gates, every survivor (or a seeded sample) through NVRTC
 * (compile cache first, a thread pool for the rest) and the post-compile
 * gates, each result a trial of a new study committed on its own. The same
 * command stopped before (Ctrl-C, kill -9) takes its study up and compiles
 * only the rest. No GPU needed. The caller prints the summary.
 */
#ifndef FATTN_STUDY_COMPILE_H
#define FATTN_STUDY_COMPILE_H

#include <signal.h>
#include <stdio.h>

#include "job/job.h"

typedef struct fattn_compile_study_opts {
    int jobs;
    long sample; /* 0: every survivor */
    long seed;   /* of the sample */
    const char *kernel_dir;
    const char *db_path;                /* opened for writing once the inputs are checked */
    const char *argv_text;              /* the command line, for the study (and to find it again) */
    volatile sig_atomic_t *interrupted; /* set: stop between compiles (NULL: never) */
    void (*guard)(int on);              /* 1 as the study begins, 0 after the compiles (NULL: none) */
    FILE *log;                          /* notes and progress (NULL: none) */
    int tty;                            /* log is a terminal: the progress line redrawn in place */
} fattn_compile_study_opts;

typedef struct fattn_compile_study_report {
    long long study;
    fattn_space_verdicts sv;
    fattn_batch_stats bs;
    int total, done, done0, rejected_after, env_errors, mismatches, compiled_ok;
    int by_reason[FATTN_R_COUNT];
    char first_env_error[320];
    size_t nprior; /* trials the study's earlier run recorded */
    int interrupted;
    double seconds;
} fattn_compile_study_report;

/* Runs compile on target t (completed: space, shape, arch) into the store
 * *s, or (*s NULL) the one at o->db_path, left open in *s. FATTN_OK once the study has ended,
 * interrupted or not (r->interrupted). */
int fattn_compile_study(const fattn_compile_study_opts *o, const fattn_target *t, fattn_store **s,
                        fattn_compile_study_report *r);

void fattn_compile_study_report_release(fattn_compile_study_report *r);

#endif
