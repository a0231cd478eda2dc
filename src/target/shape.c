/*
 * shape.c - parsing and counting attention shapes.
 */
#include "target/shape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/misc.h"

int fattn_shape_parse(const char *text, fattn_shape *out)
{
    static const char *names[4] = {"B (batch)", "H (heads)", "S (sequence length)", "D (head dimension)"};
    static const long max[4] = {FATTN_MAX_BATCH, FATTN_MAX_HEADS, FATTN_MAX_SEQLEN, 128};
    long v[4];
    int n = 0;
    const char *p = text;

    if (!text || !*text)
        return fattn_error(FATTN_EUSAGE, "--shape: empty; expected B,H,S,D such as 2,8,512,64");
    while (n < 4) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char *field = fattn_xstrndup(p, len);
        int bad = fattn_parse_long(field, 1, max[n], &v[n]);
        if (bad) {
            int rc = fattn_error(
                FATTN_EUSAGE, "--shape %s: %s is '%s'; expected an integer from 1 to %ld (B,H,S,D such as 2,8,512,64)",
                text, names[n], field, max[n]);
            free(field);
            return rc;
        }
        free(field);
        ++n;
        if (!comma)
            break;
        p = comma + 1;
        if (n == 4)
            return fattn_error(FATTN_EUSAGE, "--shape %s: more than 4 fields; expected B,H,S,D such as 2,8,512,64",
                               text);
    }
    if (n != 4)
        return fattn_error(FATTN_EUSAGE, "--shape %s: %d field%s; expected 4, B,H,S,D such as 2,8,512,64", text, n,
                           n == 1 ? "" : "s");
    if (v[3] != 64 && v[3] != 128)
        return fattn_error(FATTN_EUSAGE, "--shape %s: D (head dimension) is %ld; expected 64 or 128", text, v[3]);
    out->batch = (int)v[0];
    out->heads = (int)v[1];
    out->seqlen = (int)v[2];
    out->head_dim = (int)v[3];
    return FATTN_OK;
}

int fattn_shape_valid(const fattn_shape *s)
{
    return s->batch >= 1 && s->batch <= FATTN_MAX_BATCH && s->heads >= 1 && s->heads <= FATTN_MAX_HEADS
           && s->seqlen >= 1 && s->seqlen <= FATTN_MAX_SEQLEN && (s->head_dim == 64 || s->head_dim == 128)
           && (s->causal == 0 || s->causal == 1);
}

void fattn_shape_format(const fattn_shape *s, char *out, int n)
{
    snprintf(out, (size_t)n, "B=%d H=%d S=%d D=%d %s", s->batch, s->heads, s->seqlen, s->head_dim,
             s->causal ? "causal" : "non-causal");
}

uint64_t fattn_shape_elems(const fattn_shape *s)
{
    return (uint64_t)s->batch * (uint64_t)s->heads * (uint64_t)s->seqlen * (uint64_t)s->head_dim;
}

double fattn_shape_flops(const fattn_shape *s)
{
    double f = 4.0 * s->batch * s->heads * (double)s->seqlen * (double)s->seqlen * s->head_dim;
    return s->causal ? f / 2 : f;
}

double fattn_shape_min_bytes(const fattn_shape *s)
{
    return 4.0 * 2.0 * (double)fattn_shape_elems(s);
}

int fattn_shape_device_bytes(const fattn_shape *s, int input_sets, uint64_t *bytes)
{
    /* (3 sets + 1 + 2) fp16 tensors; every step checked: B*H*S*D alone reaches 2^63. */
    uint64_t t, tensors, need;
    if (input_sets < 1 || __builtin_mul_overflow(fattn_shape_elems(s), 2, &t)
        || __builtin_mul_overflow((uint64_t)input_sets, 3, &tensors) || __builtin_add_overflow(tensors, 3, &tensors)
        || __builtin_mul_overflow(t, tensors, &need)) {
        *bytes = UINT64_MAX;
        return -1;
    }
    *bytes = need;
    return 0;
}

double fattn_shape_device_bytes_approx(const fattn_shape *s, int input_sets)
{
    return 2.0 * (double)fattn_shape_elems(s) * (3.0 * (input_sets < 1 ? 1 : input_sets) + 3.0);
}
