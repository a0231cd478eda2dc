/*
 * read.h - the store's read side for the procedures: a study as confirm,
 * bench and export take it up again, its fastest trials, and one trial.
 */
#ifndef FATTN_STORE_READ_H
#define FATTN_STORE_READ_H

#include "space/params.h"
#include "store/store.h"
#include "target/shape.h"

typedef struct fattn_study_info {
    long long id;
    const fattn_family *fam; /* the family searched */
    fattn_shape shape;
    char arch[16];
    char kernel_hash[65];
    char device[256];       /* the study's GPU, "" when none */
    char limits_json[1024]; /* the gate limits it was searched under (gates.h), "" when none */
} fattn_study_info;

/* Study `id` (0: the latest). Reports a missing study, and a family this
 * build does not have. */
int fattn_store_study_info(fattn_store *s, long long id, fattn_study_info *out);

/* A timed trial as a candidate: its id, key, configuration and median. */
typedef struct fattn_trial_cand {
    long long trial;
    char key[FATTN_KEY_MAX];
    fattn_config cfg;
    double median_us; /* as the search measured it */
} fattn_trial_cand;

/* The k fastest timed configurations of a study (distinct keys, by stored
 * median) into out[0..*n). None is an error naming the study. */
int fattn_store_top_trials(fattn_store *s, long long study, int k, fattn_trial_cand *out, int *n);

/* Stored trial `trial` as a candidate, and its study. A missing trial is a
 * usage error naming it as `option`ID ("--trial ", "--baseline trial:"). */
int fattn_store_trial_cand(fattn_store *s, long long trial, const char *option, fattn_trial_cand *cand,
                           fattn_study_info *study);

#endif
