/*
 * explain.h - every gate's verdict on one configuration (gates --explain):
 * the static gates, then, unless told not to and when the tiling passes,
 * the post-compile gates on its NVRTC build.
 */
#ifndef FATTN_STUDY_EXPLAIN_H
#define FATTN_STUDY_EXPLAIN_H

#include "gates/gates.h"
#include "job/job.h"

typedef struct fattn_explanation {
    fattn_verdict all[FATTN_R_COUNT]; /* pass -1 and a detail saying why for a gate not evaluated */
    int first;                        /* the first rejecting gate, 0 when none */
    int compiled;                     /* the post-compile gates ran */
} fattn_explanation;

/* The verdicts of cfg for t's shape, arch and limits; compile 0 stops at
 * the static gates. kernel_dir NULL: the default. Fails only when the
 * kernel or the CUDA headers cannot be read, or NVRTC cannot run. */
int fattn_explain(const fattn_target *t, const fattn_config *cfg, int compile, const char *kernel_dir,
                  fattn_explanation *out);

#endif
