/*
 * check.h - the check procedure: configurations of a kernel through the
 * simulator (src/sim/) on this machine's CPU, before any GPU time: given
 * configurations, a seeded sample of the gate survivors, every survivor,
 * or the pairwise covering sample CI runs. Each verdict is stored
 * (sim_runs, sim_checks) under the kernel source hash; search skips what
 * failed for the same kernel source. The caller prints.
 */
#ifndef FATTN_STUDY_CHECK_H
#define FATTN_STUDY_CHECK_H

#include <signal.h>
#include <stdio.h>

#include "job/job.h"
#include "sim/pool.h"

#define FATTN_CHECK_MAX_CONFIGS 64

typedef struct fattn_check_opts {
    const char *configs[FATTN_CHECK_MAX_CONFIGS]; /* given configurations, checked whatever the gates say */
    int nconfigs;
    int covering;   /* the covering sample of the space for the arch */
    long sample;    /* a seeded sample of the survivors, 0: every one */
    long seed;      /* of the inputs and the sample */
    int jobs;       /* simulator processes at a time */
    long timeout_s; /* per configuration */
    const char *kernel_dir;
    const char *db_path;
    const char *argv_text;
    volatile sig_atomic_t *interrupted; /* set: stop between checks (NULL: never) */
    void (*guard)(int on);              /* 1 as the run begins, 0 after (NULL: none) */
    /* Each result as it comes (NULL: none): the CLI's progress and per-configuration lines. */
    void (*each)(void *arg, size_t i, const fattn_sim_job *job, const fattn_sim_check *c);
    void *each_arg;
    FILE *log; /* notes (NULL: none) */
} fattn_check_opts;

/* The cases to check, decided before anything is written. */
typedef struct fattn_check_plan {
    fattn_sim_job *jobs;
    size_t njobs;
    const char *mode; /* covering, config, sample, all */
    char what[512];   /* what is checked, for the summary */
} fattn_check_plan;

/* What the summary keeps of each result. */
typedef struct fattn_check_outcome {
    int done;
    char verdict[32];
    char file[160]; /* basename */
    int line, other_line;
    char detail[512];
    char fix[200];
} fattn_check_outcome;

typedef struct fattn_check_report {
    long long run;
    char kernel_hash[65];
    fattn_check_outcome *out; /* one per job */
    size_t done, failed, defects, builds, cache_hits;
    int interrupted;
    double seconds;
} fattn_check_report;

/* The plan of o on target t (completed as the mode needs: the shape, and
 * the arch and space where gates or the covering sample need them). */
int fattn_check_plan_make(const fattn_check_opts *o, const fattn_target *t, fattn_check_plan *p);
void fattn_check_plan_release(fattn_check_plan *p);

/* Runs the plan in the simulator, each verdict stored in the store at
 * o->db_path (left open in *s). FATTN_OK once the run has ended,
 * interrupted or not. */
int fattn_check_run(const fattn_check_opts *o, const fattn_target *t, const fattn_check_plan *p, fattn_store **s,
                    fattn_check_report *r);
void fattn_check_report_release(fattn_check_report *r);

#endif
