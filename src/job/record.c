/*
 * record.c - trials written as the procedures write them: each in its own
 * transaction, and a study's static rejections (job.h).
 */
#include "job/job.h"
#include "util/err.h"

int fattn_record_trial(fattn_store *s, const fattn_trial_rec *r)
{
    int rc = fattn_store_begin(s);
    if (rc)
        return rc;
    if ((rc = fattn_store_trial_add(s, r, NULL))) {
        fattn_store_rollback(s);
        return rc;
    }
    return fattn_store_commit(s);
}

int fattn_record_rejections(fattn_store *s, const fattn_target *t, const fattn_space_verdicts *sv, long long study,
                            long long *seq, int (*recorded)(void *arg, const char *key), void *arg,
                            volatile sig_atomic_t *interrupted)
{
    int rc = FATTN_OK;
    for (size_t i = 0; i < sv->n && !rc && !*interrupted; ++i) {
        if (sv->v[i].reason <= 0)
            continue;
        fattn_config cfg;
        char key[FATTN_KEY_MAX];
        fattn_space_config(&t->space, i, &cfg);
        fattn_config_key(&cfg, key);
        if (recorded && recorded(arg, key))
            continue; /* recorded before */
        fattn_trial_rec tr = {.study_id = study,
                              .seq = (*seq)++,
                              .cfg = &cfg,
                              .status = "rejected",
                              .reason = fattn_reason(sv->v[i].reason)->code,
                              .detail = sv->v[i].detail,
                              .compile_ms = -1};
        rc = fattn_record_trial(s, &tr);
    }
    return rc;
}
