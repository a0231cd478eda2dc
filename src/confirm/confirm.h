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

#include "store/read.h"

/* A stored trial as a baseline: its key; it must belong to a study of the
 * same shape and arch. */
int fattn_confirm_trial(fattn_store *s, long long trial, const fattn_study_info *st, fattn_trial_cand *out);

#endif
