/*
 * postgates.c - the post-compile gates.
 */
#include "compile/postgates.h"

#include <stdio.h>
#include <string.h>

#include "gates/occupancy.h"

int fattn_ptxas_notice(const char *log, int first, int last, char *text, size_t n)
{
    for (const char *p = log ? strstr(log, "(C") : NULL; p; p = strstr(p + 2, "(C")) {
        int code = 0, len = 0;
        if (sscanf(p, "(C%4d)%n", &code, &len) != 1 || len != 7 || code < first || code > last)
            continue;
        const char *t = p + len;
        t += strspn(t, " ");
        snprintf(text, n, "%.*s", (int)strcspn(t, "\n"), t);
        return code;
    }
    if (n)
        *text = 0;
    return 0;
}

/* A gate failed by a ptxas notice with a code in [lo, hi]. */
static int notice_gate(const fattn_gate_input *in, const fattn_compiled *c, fattn_verdict *vs, int reason, int lo,
                       int hi)
{
    char text[240];
    fattn_verdict *v = &vs[reason];
    v->reason = reason;
    int code = fattn_ptxas_notice(c->log, lo, hi, text, sizeof text);
    if (code)
        fattn_verdict_set(v, 0, "ptxas C%d: %s", code, text);
    else
        fattn_verdict_set(v, 1, "no ptxas notice C%d-C%d", lo, hi);
    return fattn_gate_apply_skip(in->lim, reason, v);
}

int fattn_gates_compiled(const fattn_gate_input *in, const fattn_compiled *c, fattn_compiled_occ *occ,
                         fattn_verdict *first, fattn_verdict all[FATTN_R_COUNT])
{
    fattn_verdict local[FATTN_R_COUNT];
    fattn_verdict *vs = all ? all : local;
    int failed = FATTN_R_NONE;
    fattn_launch l; /* the family's model of the launch */
    in->cfg->fam->launch(in->cfg, in->shape, 0, &l);
    const unsigned warps = l.threads / 32;

    fattn_verdict *v = &vs[FATTN_R_COMPILE_ERROR];
    v->reason = FATTN_R_COMPILE_ERROR;
    if (!c->ok) {
        const char *log = c->log ? c->log : "";
        const char *err = strstr(log, "error");
        const char *line = err ? err : log;
        int len = (int)strcspn(line, "\n");
        fattn_verdict_set(v, 0, "NVRTC failed: %.*s", len > 300 ? 300 : len, line);
        if (first)
            *first = *v;
        for (int r = FATTN_R_SMEM_MISMATCH; r <= FATTN_R_LAST_COMPILE; ++r) {
            vs[r].reason = r;
            fattn_verdict_set(&vs[r], -1, "not evaluated: the configuration did not compile");
        }
        return FATTN_R_COMPILE_ERROR;
    }
    fattn_verdict_set(v, 1, "compiled: %u registers, %u B static + %u B dynamic shared memory", c->regs, c->smem_static,
                      c->smem_dynamic);

    v = &vs[FATTN_R_SMEM_MISMATCH];
    v->reason = FATTN_R_SMEM_MISMATCH;
    int same = c->smem_dynamic == l.smem && c->smem_static == 0 && c->threads == l.threads;
    fattn_verdict_set(v, same, "model %u B dynamic, %u threads; compiled %u B dynamic + %u B static, %u threads",
                      l.smem, l.threads, c->smem_dynamic, c->smem_static, c->threads);
    if (!fattn_gate_apply_skip(in->lim, FATTN_R_SMEM_MISMATCH, v))
        failed = FATTN_R_SMEM_MISMATCH;

    v = &vs[FATTN_R_SPILLS];
    v->reason = FATTN_R_SPILLS;
    unsigned spilled = c->spill_stores + c->spill_loads;
    int ok =
        fattn_verdict_set(v, spilled <= in->lim->max_spill_bytes,
                          "ptxas: %u registers, %u B spill stores + %u B spill loads, %u B stack frame; limit %u B",
                          c->regs, c->spill_stores, c->spill_loads, c->stack_frame, in->lim->max_spill_bytes);
    if (!(ok = fattn_gate_apply_skip(in->lim, FATTN_R_SPILLS, v)) && !failed)
        failed = FATTN_R_SPILLS;

    v = &vs[FATTN_R_LOW_OCCUPANCY];
    v->reason = FATTN_R_LOW_OCCUPANCY;
    fattn_occ_input oi = {l.threads, c->regs, c->smem_static, c->smem_dynamic};
    fattn_occ_result o;
    fattn_occupancy(in->arch, &oi, &o);
    /* A kernel built for one block per SM (its register split, say) runs
     * one, whatever else would fit. */
    if (l.one_block_per_sm && o.blocks > 1) {
        o.blocks = 1;
        o.warps = (int)warps;
        o.occupancy = (double)warps / in->arch->max_warps_per_sm;
    }
    /* Clusters resident whole on a GPC: the occupancy the gate judges. */
    const int split = (int)l.cluster;
    fattn_cluster_result cl;
    fattn_cluster_occupancy(in->arch, o.blocks, (int)warps, split, &cl);
    char whole[160] = "";
    if (split > 1 && cl.blocks_per_sm < o.blocks)
        snprintf(whole, sizeof whole, "; clusters of %d whole on a GPC of %d SMs: %.2f blocks/SM, %.1f%%", split,
                 in->arch->gpc_sms, cl.blocks_per_sm, 100.0 * cl.occupancy);
    if (occ) {
        occ->occupancy = cl.occupancy;
        occ->blocks_per_sm = o.blocks;
        occ->limiter = fattn_occ_limiter_name(o.limiter);
    }
    int exempt = in->lim->occupancy_cp_async_exempt && l.async_copies;
    ok = fattn_verdict_set(
        v, cl.occupancy >= in->lim->min_occupancy || exempt,
        "%d block%s/SM x %u warps = %d of %d warps (%.1f%%), limited by %s (%u regs/thread, %u B smem/block "
        "allocated)%s; limit %.1f%%%s%s",
        o.blocks, o.blocks == 1 ? "" : "s", warps, o.warps, in->arch->max_warps_per_sm, 100.0 * o.occupancy,
        fattn_occ_limiter_name(o.limiter), c->regs, o.smem_per_block, whole, 100.0 * in->lim->min_occupancy,
        exempt ? ", waived: " : "", exempt ? l.async_why : "");
    if (!(ok = fattn_gate_apply_skip(in->lim, FATTN_R_LOW_OCCUPANCY, v)) && !failed)
        failed = FATTN_R_LOW_OCCUPANCY;

    /* unlaunchable: no waiver; the launch would fail whatever the speed. */
    v = &vs[FATTN_R_UNLAUNCHABLE];
    v->reason = FATTN_R_UNLAUNCHABLE;
    if (split <= 1)
        fattn_verdict_set(v, cl.launchable, "%d block%s/SM (limited by %s)%s", o.blocks, o.blocks == 1 ? "" : "s",
                          fattn_occ_limiter_name(o.limiter), cl.launchable ? "" : ": not one block fits on an SM");
    else
        fattn_verdict_set(v, cl.launchable,
                          "cluster of %d blocks (portable maximum %d): %d block%s/SM x %d SMs of a GPC = %d "
                          "slots, %d cluster%s per GPC",
                          split, in->arch->max_cluster_size, o.blocks, o.blocks == 1 ? "" : "s", in->arch->gpc_sms,
                          cl.slots_per_gpc, cl.clusters_per_gpc, cl.clusters_per_gpc == 1 ? "" : "s");
    if (!fattn_gate_apply_skip(in->lim, FATTN_R_UNLAUNCHABLE, v) && !failed)
        failed = FATTN_R_UNLAUNCHABLE;

    /* ptxas says so offline: setmaxnreg ignored (C7507, C7508), wgmma
     * serialized or a warpgroup.wait injected (C7510-C7517). */
    if (!notice_gate(in, c, vs, FATTN_R_SETMAXNREG_IGNORED, 7507, 7508) && !failed)
        failed = FATTN_R_SETMAXNREG_IGNORED;
    if (!notice_gate(in, c, vs, FATTN_R_WGMMA_SERIALIZED, 7510, 7517) && !failed)
        failed = FATTN_R_WGMMA_SERIALIZED;

    /* setmaxnreg.inc waits until the block's pool holds the increase: the
     * launch's registers must hold every warpgroup's request at once. */
    v = &vs[FATTN_R_SETMAXNREG_POOL];
    v->reason = FATTN_R_SETMAXNREG_POOL;
    const unsigned long long pool = (unsigned long long)c->regs * c->threads;
    if (!c->nreg_pool)
        fattn_verdict_set(v, 1, "no setmaxnreg (the kernel exports no fattn_setmaxnreg_pool)");
    else
        fattn_verdict_set(v, pool >= c->nreg_pool,
                          "the launch's %u registers a thread x %u threads = %llu, %s the %u the warpgroups ask "
                          "for with setmaxnreg%s",
                          c->regs, c->threads, pool, pool >= c->nreg_pool ? "enough for" : "short of", c->nreg_pool,
                          pool >= c->nreg_pool ? "" : ": an increase would wait forever");
    if (!fattn_gate_apply_skip(in->lim, FATTN_R_SETMAXNREG_POOL, v) && !failed)
        failed = FATTN_R_SETMAXNREG_POOL;
    if (failed && first)
        *first = vs[failed];
    return failed;
}
