/*
 * params.h - a configuration of a kernel family's parameters, its key, and
 * the mma family's parameter ids.
 *
 * A family's parameter table (family.h) names every macro its kernel
 * takes; a configuration holds a value for each, and a parameter a space
 * file leaves out keeps its default. The mma family's table: the nine
 * tunables of the default space, the extension tunables a tuned space may
 * list (SPLIT_KV, Q_REGS; off by default, so the default space and its keys
 * are the seeds'), and the test-only layout overrides (PAD_BYTES,
 * COPY_COLMAJOR), which no default space lists.
 *
 * The stable config key lists the parameters in table order with short
 * tags, an optional one (extension or test-only) only where it differs
 * from its default; NVRTC gets -D options for the same ones, so the default
 * space compiles exactly as before the extensions existed:
 *   bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1            (h = HALF2)
 *   bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-kv2-qr1    (split key range, Q in registers)
 *   bm64-bn64-bk32-w4-s1-u1-cp1-sw0-h1-pad2       (the seeds' 2-byte pad)
 * Another family's keys start with its name (family.h).
 */
#ifndef FATTN_SPACE_PARAMS_H
#define FATTN_SPACE_PARAMS_H

#include <stddef.h>

#include "space/family.h"

enum fattn_param_id {
    FATTN_P_BLOCK_M,
    FATTN_P_BLOCK_N,
    FATTN_P_BLOCK_K,
    FATTN_P_NUM_WARPS,
    FATTN_P_STAGES,
    FATTN_P_UNROLL,
    FATTN_P_CP_ASYNC,
    FATTN_P_SWIZZLE,
    FATTN_P_HALF2,
    FATTN_P_SPLIT_KV,
    FATTN_P_Q_REGS,
    FATTN_P_PAD_BYTES,
    FATTN_P_COPY_COLMAJOR,
    FATTN_MMA_NPARAMS,
    FATTN_MMA_NTUNABLES = FATTN_P_PAD_BYTES,     /* the nine and the extensions */
    FATTN_MMA_NSEED_TUNABLES = FATTN_P_SPLIT_KV, /* the nine of the default space */
};

/* The mma family's parameter table (family/mma.c), indexed by the enum. */
extern const fattn_param_info fattn_mma_params[FATTN_MMA_NPARAMS];

/* A configuration: its family and a value for each of the family's
 * parameters (v[p] for p < fam->nparams; the rest 0). */
typedef struct fattn_config {
    const fattn_family *fam;
    int v[FATTN_MAX_PARAMS];
} fattn_config;

#define FATTN_KEY_MAX 96

/* Index of family f's parameter named `name`, or -1. */
int fattn_param_find(const fattn_family *f, const char *name);

/* "BLOCK_M, BLOCK_N, ..." then " (test only: PAD_BYTES, ...)" when the
 * family has test-only parameters: family f's parameter names, for
 * messages. */
const char *fattn_param_names(const fattn_family *f, char *out, size_t n);

/* Family f's configuration with every parameter at its default. */
void fattn_config_default(fattn_config *c, const fattn_family *f);

/* The stable key; `out` holds at least FATTN_KEY_MAX bytes. */
void fattn_config_key(const fattn_config *c, char *out);

/* "BLOCK_M=64 BLOCK_N=64 ..." (the nine, then non-default optional ones). */
void fattn_config_describe(const fattn_config *c, char *out, size_t n);

/* Parses a config key or a list "BLOCK_M=64,BLOCK_N=128,..." (parameters not
 * named keep their defaults). A key of a family other than mma starts with
 * the family's name ("tmacopy-br64"), a list with family=NAME
 * ("family=tmacopy,BOX_ROWS=64"); otherwise the family is mma. Reports a
 * usage error naming `what`. */
int fattn_config_parse(const char *text, const char *what, fattn_config *out);

/* 1 when parameter `p` belongs in keys, descriptions and NVRTC options. */
static inline int fattn_param_shown(const fattn_config *c, int p)
{
    return !c->fam->params[p].optional || c->v[p] != c->fam->params[p].def;
}

/* 1 when parameter `p` belongs in an exported build (header, JSON, nvcc
 * flags): every tunable, extensions included, and a test-only override
 * when it is set. */
static inline int fattn_param_exported(const fattn_config *c, int p)
{
    return !c->fam->params[p].test_only || c->v[p] != c->fam->params[p].def;
}

#define FATTN_PARAMS_JSON_MAX 512

/* {"BLOCK_M":64,"BLOCK_N":64,...}: every parameter of the configuration's
 * family, in table order (the trials' params_json). */
void fattn_config_json(const fattn_config *c, char *out, size_t n);

/* 1 if the two configurations are equal. */
int fattn_config_equal(const fattn_config *a, const fattn_config *b);

#endif
