/*
 * confirm.c - the baselines of confirm: a stored trial of the same shape and
 * arch, or the FlashAttention-2-like configuration.
 */
#include "confirm/confirm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

int fattn_confirm_trial(fattn_store *s, long long trial, const fattn_study_info *study, fattn_trial_cand *out)
{
    fattn_study_info of;
    int rc = fattn_store_trial_cand(s, trial, "--baseline trial:", out, &of);
    if (rc)
        return rc;
    const fattn_shape *a = &of.shape, *w = &study->shape;
    if (a->batch != w->batch || a->heads != w->heads || a->seqlen != w->seqlen || a->head_dim != w->head_dim
        || a->causal != w->causal || strcmp(of.arch, study->arch) != 0) {
        char x[96], y[96];
        fattn_shape_format(a, x, sizeof x);
        fattn_shape_format(w, y, sizeof y);
        return fattn_error(FATTN_EUSAGE, "--baseline trial:%lld: the trial is for %s on %s, the study for %s on %s",
                           trial, x, of.arch, y, study->arch);
    }
    return FATTN_OK;
}
