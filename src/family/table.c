/*
 * table.c - the kernel families, one entry each; the first is the default
 * (a space file without "family").
 */
#include <stdio.h>
#include <string.h>

#include "space/family.h"

const fattn_family *const fattn_families[] = {
    &fattn_family_mma,
    NULL,
};

const fattn_family *fattn_family_find(const char *name)
{
    for (int i = 0; fattn_families[i]; ++i)
        if (strcmp(fattn_families[i]->name, name) == 0)
            return fattn_families[i];
    return NULL;
}

const char *fattn_family_names(void)
{
    /* Joined afresh on each call (error paths only), in a buffer per thread. */
    static _Thread_local char names[256];
    size_t n = 0;
    names[0] = '\0';
    for (int i = 0; fattn_families[i] && n < sizeof names; ++i)
        n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", fattn_families[i]->name);
    return names;
}
