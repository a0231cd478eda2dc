/*
 * fuzz_space.c - the space JSON loader (fattn_space_parse, what --space
 * reads): any bytes either load into a space whose every configuration is
 * in range and whose key parses back to the same configuration, or are
 * refused with an error; never a crash, a leak or undefined behaviour.
 */
#include "fuzz.h"
#include "space/params.h"
#include "space/space.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    fattn_space sp;
    if (fattn_space_parse((const char *)data, size, "fuzz", &sp) != FATTN_OK)
        return 0;
    /* The first, the last and one in the middle: their keys parse back. */
    size_t n = sp.count, pick[3] = {0, n / 2, n ? n - 1 : 0};
    for (int k = 0; k < 3 && n; ++k) {
        fattn_config c, back;
        char key[FATTN_KEY_MAX];
        fattn_space_config(&sp, pick[k], &c);
        fattn_config_key(&c, key);
        FUZZ_ASSERT(fattn_config_parse(key, "fuzz", &back) == FATTN_OK);
        FUZZ_ASSERT(fattn_config_equal(&c, &back));
    }
    fattn_space_release(&sp);
    return 0;
}
