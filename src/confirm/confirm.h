/*
 * confirm.h - what `fattn-tune confirm` compares: a study's best
 * configurations and a baseline.
 *
 * The candidates are a study's K fastest timed configurations (distinct
 * keys, by stored median). The baseline is cuDNN's fused attention, a
 * configuration of our own kernel (config:KEY), or a stored trial's
 * (trial:ID); without --baseline, cuDNN for non-causal shapes where it
 * loads, otherwise the FlashAttention-2-like configuration: FA2's forward
 * tile for the head dimension (128 query rows over 8 warps; 128 key rows
 * for D = 64, 64 for D = 128), the whole head dimension per step, two
 * cp.async stages, swizzled, 16-byte I/O; the first of a short list that
 * passes the gates for the shape and arch.
 */
#ifndef FATTN_CONFIRM_CONFIRM_H
#define FATTN_CONFIRM_CONFIRM_H

#include "space/params.h"
#include "store/store.h"
#include "target/shape.h"

typedef struct fattn_confirm_study {
    long long id;
    const fattn_family *fam; /* the family searched */
    fattn_shape shape;
    char arch[16];
    char kernel_hash[65];
    char device[256];       /* the study's GPU, "" when none */
    char limits_json[1024]; /* the gate limits it was searched under (gates.h), "" when none */
} fattn_confirm_study;

/* Study `id` (0: the latest). Reports a missing study. */
int fattn_confirm_study_load(fattn_store *s, long long id, fattn_confirm_study *out);

typedef struct fattn_confirm_cand {
    long long trial;
    char key[FATTN_KEY_MAX];
    fattn_config cfg;
    double median_us; /* as the search measured it */
} fattn_confirm_cand;

/* The k fastest timed configurations of a study into out[0..*n). None is an
 * error naming the study. */
int fattn_confirm_top(fattn_store *s, long long study, int k, fattn_confirm_cand *out, int *n);

/* Stored trial `trial` as a candidate (its key, configuration and median)
 * and its study. A missing trial is a usage error naming it as
 * `option`ID ("--trial ", "--baseline trial:"). */
int fattn_confirm_trial_study(fattn_store *s, long long trial, const char *option, fattn_confirm_cand *cand,
                              fattn_confirm_study *study);

/* A stored trial as a baseline: its key; it must belong to a study of the
 * same shape and arch. */
int fattn_confirm_trial(fattn_store *s, long long trial, const fattn_confirm_study *st, fattn_confirm_cand *out);

/* The FA2-like configurations for head dimension d, in order of
 * preference, NULL-terminated. */
const char *const *fattn_confirm_fa2_keys(int head_dim);

#endif
