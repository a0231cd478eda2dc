/*
 * params.c - the parameter registry and config keys.
 */
#include "space/params.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/misc.h"

const fattn_param_info fattn_params[FATTN_NPARAMS] = {
    {"BLOCK_M", "bm", 64, 16, 256, 0, 0, "query rows per thread block"},
    {"BLOCK_N", "bn", 64, 16, 256, 0, 0, "key/value rows per step"},
    {"BLOCK_K", "bk", 32, 16, 128, 0, 0, "head-dimension chunk of Q.K^T staged per pipeline step"},
    {"NUM_WARPS", "w", 4, 1, 32, 0, 0, "warps per block"},
    {"STAGES", "s", 2, 1, 8, 0, 0, "shared-memory buffers in the K/V pipeline"},
    {"UNROLL", "u", 1, 1, 8, 0, 0, "unroll of the key/value loop"},
    {"CP_ASYNC", "cp", 1, 0, 1, 0, 0, "cp.async copies (1) or loads through registers (0)"},
    {"SWIZZLE", "sw", 1, 0, 1, 0, 0, "XOR-swizzled rows (1) or rows padded by PAD_BYTES (0)"},
    {"HALF2", "h", 1, 0, 1, 0, 0, "16-byte global I/O and packed half2 conversions (1) or scalar (0)"},
    {"SPLIT_KV", "kv", 1, 1, 8, 0, 1,
     "blocks of a thread-block cluster sharing one row block's key range, combined through distributed shared "
     "memory (sm_90+)"},
    {"Q_REGS", "qr", 0, 0, 1, 0, 1, "Q fragments loaded once into registers (1) or re-read per key tile (0)"},
    {"PAD_BYTES", "pad", 16, 0, 256, 1, 1, "test only: row pad of unswizzled tiles, in bytes"},
    {"COPY_COLMAJOR", "cm", 0, 0, 1, 1, 1, "test only: copy loops walk down rows first (uncoalesced)"},
};

int fattn_param_find(const char *name)
{
    for (int i = 0; i < FATTN_NPARAMS; ++i)
        if (strcmp(fattn_params[i].name, name) == 0)
            return i;
    return -1;
}

void fattn_config_default(fattn_config *c)
{
    for (int i = 0; i < FATTN_NPARAMS; ++i)
        c->v[i] = fattn_params[i].def;
}

void fattn_config_key(const fattn_config *c, char *out)
{
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; i < FATTN_NPARAMS; ++i) {
        if (!fattn_param_shown(c, i))
            continue;
        n += (size_t)snprintf(out + n, FATTN_KEY_MAX - n, "%s%s%d", n ? "-" : "", fattn_params[i].tag, c->v[i]);
    }
}

void fattn_config_describe(const fattn_config *c, char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; i < FATTN_NPARAMS && n < size; ++i) {
        if (!fattn_param_shown(c, i))
            continue;
        n += (size_t)snprintf(out + n, size - n, "%s%s=%d", n ? " " : "", fattn_params[i].name, c->v[i]);
    }
}

int fattn_config_equal(const fattn_config *a, const fattn_config *b)
{
    return memcmp(a->v, b->v, sizeof a->v) == 0;
}

static int set_value(fattn_config *c, int id, const char *value, const char *text, const char *what, unsigned *seen)
{
    long v;
    const fattn_param_info *p = &fattn_params[id];
    if (*seen & (1u << id))
        return fattn_error(FATTN_EUSAGE, "%s '%s': %s given twice", what, text, p->name);
    *seen |= 1u << id;
    if (fattn_parse_long(value, p->min, p->max, &v))
        return fattn_error(FATTN_EUSAGE, "%s '%s': %s is '%s'; expected an integer from %d to %d", what, text, p->name,
                           value, p->min, p->max);
    c->v[id] = (int)v;
    return FATTN_OK;
}

/* One token of a key ("bm64") or of a list ("BLOCK_M=64"). */
static int parse_token(const char *tok, fattn_config *c, const char *text, const char *what, unsigned *seen)
{
    const char *eq = strchr(tok, '=');
    if (eq) {
        char *name = fattn_xstrndup(tok, (size_t)(eq - tok));
        int id = fattn_param_find(name);
        int rc;
        if (id < 0)
            rc = fattn_error(FATTN_EUSAGE,
                             "%s '%s': unknown parameter '%s'; expected one of BLOCK_M, BLOCK_N, "
                             "BLOCK_K, NUM_WARPS, STAGES, UNROLL, CP_ASYNC, SWIZZLE, HALF2, SPLIT_KV, Q_REGS",
                             what, text, name);
        else
            rc = set_value(c, id, eq + 1, text, what, seen);
        free(name);
        return rc;
    }
    size_t t = 0;
    while (isalpha((unsigned char)tok[t]))
        ++t;
    for (int i = 0; i < FATTN_NPARAMS; ++i)
        if (t && strlen(fattn_params[i].tag) == t && strncmp(fattn_params[i].tag, tok, t) == 0)
            return set_value(c, i, tok + t, text, what, seen);
    return fattn_error(FATTN_EUSAGE,
                       "%s '%s': cannot read '%s'; expected a config key such as bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1 "
                       "or NAME=VALUE pairs such as BLOCK_M=64,BLOCK_N=64",
                       what, text, tok);
}

int fattn_config_parse(const char *text, const char *what, fattn_config *out)
{
    fattn_config c;
    unsigned seen = 0;
    int rc = FATTN_OK;
    if (!text || !*text)
        return fattn_error(FATTN_EUSAGE, "%s: empty; expected a config key such as bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1",
                           what);
    fattn_config_default(&c);
    char *copy = fattn_xstrdup(text);
    const char *seps = strchr(copy, '=') ? ", " : "-";
    char *save = NULL;
    for (char *tok = strtok_r(copy, seps, &save); tok && rc == FATTN_OK; tok = strtok_r(NULL, seps, &save))
        rc = parse_token(tok, &c, text, what, &seen);
    free(copy);
    if (rc == FATTN_OK)
        *out = c;
    return rc;
}
