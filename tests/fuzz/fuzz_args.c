/*
 * fuzz_args.c - the parsers of command-line values: --shape, --arch,
 * --budget and the other durations, numbers and byte sizes, configuration
 * keys (--config, export, confirm) and --filter. The input is cut at
 * newlines; each piece goes to every parser. What parses obeys its contract:
 * a shape is in range and its numbers parse back to it, a key parses back to the
 * same configuration, a duration is finite and not negative.
 */
#include <math.h>
#include <stdio.h>

#include "fuzz.h"
#include "space/params.h"
#include "space/space.h"
#include "target/arch.h"
#include "target/shape.h"
#include "util/misc.h"

static void one(const char *s)
{
    fattn_shape sh = {0}, again = {0};
    if (fattn_shape_parse(s, &sh) == FATTN_OK) {
        FUZZ_ASSERT(sh.batch >= 1 && sh.heads >= 1 && sh.seqlen >= 1 && sh.seqlen <= FATTN_MAX_SEQLEN);
        FUZZ_ASSERT(sh.head_dim == 64 || sh.head_dim == 128);
        char text[128];
        snprintf(text, sizeof text, "%d,%d,%d,%d", sh.batch, sh.heads, sh.seqlen, sh.head_dim);
        FUZZ_ASSERT(fattn_shape_parse(text, &again) == FATTN_OK);
        FUZZ_ASSERT(sh.batch == again.batch && sh.heads == again.heads && sh.seqlen == again.seqlen
                    && sh.head_dim == again.head_dim);
    }
    const fattn_arch *a = fattn_arch_find(s);
    FUZZ_ASSERT(!a || fattn_arch_find(a->name) == a);
    double ms;
    if (fattn_parse_duration(s, &ms) == FATTN_OK)
        FUZZ_ASSERT(ms >= 0 && isfinite(ms)); /* callers refuse 0 where it means nothing */
    long l;
    if (fattn_parse_long(s, -1000, 1000, &l) == FATTN_OK)
        FUZZ_ASSERT(l >= -1000 && l <= 1000);
    double d;
    (void)fattn_parse_double(s, &d);
    uint64_t bytes;
    (void)fattn_parse_bytes(s, &bytes);
    fattn_config c, back;
    if (fattn_config_parse(s, "fuzz", &c) == FATTN_OK) {
        char key[FATTN_KEY_MAX];
        fattn_config_key(&c, key);
        FUZZ_ASSERT(fattn_config_parse(key, "fuzz", &back) == FATTN_OK);
        FUZZ_ASSERT(fattn_config_equal(&c, &back));
    }
    fattn_filter f;
    if (fattn_filter_parse(s, &fattn_family_mma, &f) == FATTN_OK) {
        fattn_config_default(&c, &fattn_family_mma);
        (void)fattn_filter_match(&f, &c);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    char *s = fuzz_string(data, size);
    for (char *p = s, *nl; p; p = nl) {
        nl = strchr(p, '\n');
        if (nl)
            *nl++ = 0;
        one(p);
    }
    free(s);
    return 0;
}
