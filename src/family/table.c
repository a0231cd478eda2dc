/*
 * table.c - the kernel families, one entry each (src/meson.build's
 * `families`, written into families.h); the first is the default (a space
 * file without "family").
 */
#include <stdio.h>
#include <string.h>

#include "families.h"
#include "space/family.h"

extern const fattn_family FATTN_FAMILY_DECLS;

const fattn_family *const fattn_families[] = {FATTN_FAMILY_ENTRIES NULL};

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

static const char *const arg_names[FATTN_ARG_KINDS] = {
    "q", "k", "v", "o", "batch", "heads", "seqlen", "scale", "tmap", "workspace",
};

const char *fattn_arg_kind_name(int kind)
{
    return kind >= 0 && kind < FATTN_ARG_KINDS ? arg_names[kind] : NULL;
}

int fattn_arg_kind_find(const char *name)
{
    for (int k = 0; k < FATTN_ARG_KINDS; ++k)
        if (!strcmp(arg_names[k], name))
            return k;
    return -1;
}

void fattn_launch_attention_args(fattn_launch *out)
{
    static const int kinds[] = {FATTN_ARG_Q,     FATTN_ARG_K,     FATTN_ARG_V,      FATTN_ARG_O,
                                FATTN_ARG_BATCH, FATTN_ARG_HEADS, FATTN_ARG_SEQLEN, FATTN_ARG_SCALE};
    out->nargs = (int)(sizeof kinds / sizeof *kinds);
    for (int i = 0; i < out->nargs; ++i)
        out->args[i] = (fattn_arg){.kind = kinds[i]};
}
