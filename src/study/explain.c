/*
 * explain.c - every gate's verdict on one configuration (explain.h).
 */
#include "study/explain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/batch.h"
#include "compile/kernel_src.h"
#include "util/err.h"
#include "util/paths.h"

/* The post-compile gates' verdicts, compiling cfg (its tiling passed). */
static int explain_compiled(const fattn_target *t, const fattn_config *cfg, const char *kernel_dir,
                            const fattn_gate_input *in, fattn_explanation *out)
{
    fattn_kernel_src src;
    char *include = NULL;
    fattn_compile_item item;
    int rc;
    memset(&item, 0, sizeof item);
    if ((rc = fattn_kernel_src_load(kernel_dir, cfg->fam->kernel_file, &src)))
        return rc;
    if ((rc = fattn_cuda_include(&include))) {
        fattn_kernel_src_release(&src);
        return rc;
    }
    fattn_compile_ctx ctx = {
        .src = &src, .cuda_include = include, .arch = t->arch, .shape = &t->shape, .lim = &t->lim, .jobs = 1};
    item.cfg = *cfg;
    fattn_compile_one(&ctx, &item);
    if (item.env_error) {
        rc = fattn_error(FATTN_EFAIL, "--explain: compiling failed: %s", item.env_msg);
    } else {
        fattn_gates_compiled(in, &item.entry.res, NULL, NULL, out->all);
        out->compiled = 1;
        if (!out->first)
            out->first = item.reason;
    }
    fattn_compile_item_release(&item);
    fattn_kernel_src_release(&src);
    free(include);
    return rc;
}

int fattn_explain(const fattn_target *t, const fattn_config *cfg, int compile, const char *kernel_dir,
                  fattn_explanation *out)
{
    memset(out, 0, sizeof *out);
    for (int r = 0; r < FATTN_R_COUNT; ++r) {
        out->all[r].reason = r;
        out->all[r].pass = -1;
        snprintf(out->all[r].detail, sizeof out->all[r].detail, "not evaluated");
    }
    fattn_gate_input in = {cfg, &t->shape, t->arch, &t->lim};
    out->first = fattn_gates_static(&in, NULL, out->all);
    if (compile && out->all[FATTN_R_TILING].pass == 1)
        return explain_compiled(t, cfg, kernel_dir, &in, out);
    for (int r = FATTN_R_COMPILE_ERROR; r <= FATTN_R_LAST_COMPILE; ++r)
        snprintf(out->all[r].detail, sizeof out->all[r].detail, "not evaluated: %s",
                 compile ? "the tiling gate failed" : "--no-compile");
    return FATTN_OK;
}
