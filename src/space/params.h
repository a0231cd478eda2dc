/*
 * params.h - the kernel's tunable parameters and one configuration of them.
 *
 * The registry names every macro the kernel takes: the nine tunables of the
 * default space, the extension tunables a tuned space may list (SPLIT_KV,
 * Q_REGS; off by default, so the default space and its keys are the seeds'),
 * and the test-only layout overrides (PAD_BYTES, COPY_COLMAJOR), which no
 * default space lists. A configuration holds a value for every one of them;
 * a parameter a space file leaves out keeps its default.
 *
 * The stable config key lists the nine tunables in registry order with short
 * tags, then any optional parameter (extension or test-only) that differs
 * from its default; NVRTC gets -D options for the same ones, so the default
 * space compiles exactly as before the extensions existed:
 *   bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1            (h = HALF2)
 *   bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-kv2-qr1    (split key range, Q in registers)
 *   bm64-bn64-bk32-w4-s1-u1-cp1-sw0-h1-pad2       (the seeds' 2-byte pad)
 */
#ifndef FATTN_SPACE_PARAMS_H
#define FATTN_SPACE_PARAMS_H

#include <stddef.h>

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
    FATTN_NPARAMS,
    FATTN_NTUNABLES = FATTN_P_PAD_BYTES,     /* the nine and the extensions */
    FATTN_NSEED_TUNABLES = FATTN_P_SPLIT_KV, /* the nine of the default space */
};

typedef struct fattn_param_info {
    const char *name; /* macro name, e.g. "BLOCK_M" */
    const char *tag;  /* key tag, e.g. "bm" */
    int def;          /* value when a space does not list it */
    int min, max;     /* accepted values */
    int test_only;    /* not a tunable: a layout override for tests */
    int optional;     /* in keys and NVRTC options only when not at its default */
    const char *help;
} fattn_param_info;

extern const fattn_param_info fattn_params[FATTN_NPARAMS];

typedef struct fattn_config {
    int v[FATTN_NPARAMS];
} fattn_config;

#define FATTN_KEY_MAX 96

/* Index of the parameter named `name`, or -1. */
int fattn_param_find(const char *name);

/* Every parameter at its default. */
void fattn_config_default(fattn_config *c);

/* The stable key; `out` holds at least FATTN_KEY_MAX bytes. */
void fattn_config_key(const fattn_config *c, char *out);

/* "BLOCK_M=64 BLOCK_N=64 ..." (the nine, then non-default optional ones). */
void fattn_config_describe(const fattn_config *c, char *out, size_t n);

/* Parses a config key or a list "BLOCK_M=64,BLOCK_N=128,..." (parameters not
 * named keep their defaults). Reports a usage error naming `what`. */
int fattn_config_parse(const char *text, const char *what, fattn_config *out);

/* 1 when parameter `p` belongs in keys, descriptions and NVRTC options. */
static inline int fattn_param_shown(const fattn_config *c, int p)
{
    return !fattn_params[p].optional || c->v[p] != fattn_params[p].def;
}

/* 1 when parameter `p` belongs in an exported build (header, JSON, nvcc
 * flags): every tunable, extensions included, and a test-only override
 * when it is set. */
static inline int fattn_param_exported(const fattn_config *c, int p)
{
    return !fattn_params[p].test_only || c->v[p] != fattn_params[p].def;
}

/* 1 if the two configurations are equal. */
int fattn_config_equal(const fattn_config *a, const fattn_config *b);

#endif
