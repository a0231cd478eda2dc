/*
 * t_landscape.h - a space's candidates with their outcomes from a
 * landscape, for the tests that drive strategies without a GPU
 * (test_strategies.c, test_families.c).
 */
#ifndef FATTN_TESTS_T_LANDSCAPE_H
#define FATTN_TESTS_T_LANDSCAPE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gates/gates.h"
#include "run/landscape.h"
#include "space/hardware.h"
#include "space/space.h"
#include "t.h"
#include "util/err.h"

/* The static-gate survivors of a space at a landscape's arch and shape, and
 * what the landscape says of each. */
typedef struct t_cands {
    size_t n;
    fattn_config *cfg;
    int *kind; /* 0 measured, 1 post-compile rejection (no GPU time), 2 GPU failure */
    double *y; /* the measured median (kind 0) */
    double best;
    size_t counts[3]; /* candidates of each kind */
    size_t configs;   /* the space's configurations */
    char device[256];
} t_cands;

/* Loads SPACE's candidates at the default limits (optin: the shared memory
 * raised to the arch's opt-in maximum, as the wgmma family needs) with
 * their outcomes from LAND; 0, or T_HARNESS on a bad file or a
 * survivor the landscape lacks. */
static int t_cands_load(const char *space_path, const char *land_path, int optin, t_cands *c)
{
    fattn_space sp;
    fattn_landscape land;
    fattn_gate_limits lim;
    fattn_space_verdicts sv;
    int rc = 0;
    memset(c, 0, sizeof *c);
    if (fattn_space_load(space_path, &sp))
        return T_HARNESS;
    if (fattn_landscape_load(land_path, &land)) {
        fattn_space_release(&sp);
        return T_HARNESS;
    }
    const fattn_arch *arch = fattn_arch_find(land.arch);
    if (!arch || land.fam != sp.fam) {
        fprintf(stderr, "%s: no known arch, or not the family of %s\n", land_path, space_path);
        fattn_landscape_release(&land);
        fattn_space_release(&sp);
        return T_HARNESS;
    }
    fattn_gate_limits_default(&lim);
    if (optin)
        lim.smem_limit = (unsigned)arch->smem_per_block_optin;
    fattn_gates_space(&sp, NULL, &land.shape, arch, &lim, &sv);
    c->n = sv.nsurvivors;
    c->configs = sv.n;
    c->cfg = fattn_xcalloc(c->n ? c->n : 1, sizeof *c->cfg);
    c->kind = fattn_xcalloc(c->n ? c->n : 1, sizeof *c->kind);
    c->y = fattn_xcalloc(c->n ? c->n : 1, sizeof *c->y);
    c->best = HUGE_VAL;
    snprintf(c->device, sizeof c->device, "%s", land.device);
    for (size_t i = 0; i < c->n && !rc; ++i) {
        char key[FATTN_KEY_MAX];
        fattn_space_config(&sp, sv.survivors[i], &c->cfg[i]);
        fattn_config_key(&c->cfg[i], key);
        const fattn_landscape_entry *e = fattn_landscape_find(&land, key);
        if (!e) {
            fprintf(stderr, "%s: no entry for survivor %s\n", land_path, key);
            rc = T_HARNESS;
        } else if (!strcmp(e->status, "ok")) {
            c->y[i] = e->median_us;
            c->best = fmin(c->best, e->median_us);
        } else {
            int r = fattn_reason_find(e->reason);
            c->kind[i] = r && fattn_reason(r)->stage == FATTN_STAGE_RUN ? 2 : 1;
        }
        ++c->counts[c->kind[i]];
    }
    fattn_space_verdicts_release(&sv);
    fattn_landscape_release(&land);
    fattn_space_release(&sp);
    return rc;
}

static void t_cands_release(t_cands *c)
{
    free(c->cfg);
    free(c->kind);
    free(c->y);
    memset(c, 0, sizeof *c);
}

#endif
