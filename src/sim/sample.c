/*
 * sample.c - the pairwise covering sample of a space and shapes.
 */
#include "sim/sample.h"

#include <stdlib.h>
#include <string.h>

#include "gates/gates.h"
#include "space/cover.h"
#include "util/err.h"

static const int head_dims[] = {64, 128};
static const int seqlens[] = {1, 33, 130, 257};
static const int batch_heads[][2] = {{1, 2}, {2, 1}};

enum { F_D, F_CAUSAL, F_S, F_BH, F_SHAPE };

static void shape_of(const int *r, fattn_shape *s)
{
    s->head_dim = head_dims[r[F_D]];
    s->causal = r[F_CAUSAL];
    s->seqlen = seqlens[r[F_S]];
    s->batch = batch_heads[r[F_BH]][0];
    s->heads = batch_heads[r[F_BH]][1];
}

int fattn_sim_covering(const fattn_space *space, const fattn_arch *arch, fattn_sim_case **out, size_t *n,
                       size_t *npairs)
{
    const int np = space->fam->nparams, nf = F_SHAPE + np;
    int nvalues[F_SHAPE + FATTN_MAX_PARAMS] = {2, 2, 4, 2};
    size_t shapes = 2 * 2 * 4 * 2;
    for (int p = 0; p < np; ++p)
        nvalues[F_SHAPE + p] = space->nvalues[p] ? space->nvalues[p] : 1;
    for (int p = 0; p < np; ++p)
        if (nvalues[F_SHAPE + p] > FATTN_COVER_MAX_VALUES)
            return fattn_error(FATTN_EFAIL, "covering sample: %s lists %d values; at most %d are covered",
                               space->fam->params[p].name, nvalues[F_SHAPE + p], FATTN_COVER_MAX_VALUES);
    const size_t cand = space->count * shapes;
    int *rows = malloc(cand * (size_t)nf * sizeof *rows);
    size_t *chosen = malloc((cand ? cand : 1) * sizeof *chosen);
    size_t nrows = 0;
    *out = NULL;
    *n = 0;
    if (!rows || !chosen) {
        free(rows), free(chosen);
        return fattn_error(FATTN_EFAIL, "covering sample: out of memory for %zu candidates", cand);
    }
    fattn_gate_limits lim;
    fattn_gate_limits_default(&lim);
    for (size_t i = 0; i < space->count; ++i) {
        fattn_config c;
        fattn_space_config(space, i, &c);
        int idx[FATTN_MAX_PARAMS];
        for (int p = 0; p < np; ++p) {
            idx[p] = 0;
            for (int k = 0; k < space->nvalues[p]; ++k)
                if (space->values[p][k] == c.v[p])
                    idx[p] = k;
        }
        for (size_t sh = 0; sh < shapes; ++sh) {
            int *r = rows + nrows * (size_t)nf;
            r[F_D] = (int)(sh % 2), r[F_CAUSAL] = (int)(sh / 2 % 2), r[F_S] = (int)(sh / 4 % 4);
            r[F_BH] = (int)(sh / 16);
            memcpy(r + F_SHAPE, idx, (size_t)np * sizeof idx[0]);
            fattn_shape s;
            shape_of(r, &s);
            fattn_gate_input in = {&c, &s, arch, &lim};
            fattn_verdict v;
            if (fattn_gate_tiling(&in, &v) == 1)
                ++nrows;
        }
    }
    int k = fattn_cover_pairs(rows, nrows, nf, nvalues, chosen, npairs);
    if (k < 0) {
        free(rows), free(chosen);
        return fattn_error(FATTN_EFAIL, "covering sample: out of memory");
    }
    fattn_sim_case *cases = calloc((size_t)k ? (size_t)k : 1, sizeof *cases);
    if (!cases) {
        free(rows), free(chosen);
        return fattn_error(FATTN_EFAIL, "covering sample: out of memory");
    }
    for (int i = 0; i < k; ++i) {
        const int *r = rows + chosen[i] * (size_t)nf;
        fattn_config_default(&cases[i].cfg, space->fam);
        for (int p = 0; p < np; ++p)
            if (space->nvalues[p])
                cases[i].cfg.v[p] = space->values[p][r[F_SHAPE + p]];
        shape_of(r, &cases[i].shape);
    }
    free(rows), free(chosen);
    *out = cases;
    *n = (size_t)k;
    return FATTN_OK;
}
