/*
 * family.h - a kernel family: one kernel source with its own parameters,
 * plugged into the pipeline as one table entry (src/family/).
 *
 * A family is data and function pointers: its name, kernel source, and
 * parameter table here; the stages that differ between families (gates,
 * NVRTC options, launch, reference check, simulator, export) read theirs
 * from the entry as they are routed through it. Every configuration
 * carries its family (fattn_config.fam).
 *
 * Config keys of the first family, mma (the Ampere-style mma.sync kernel,
 * kernels/fattn_fwd.cu), are its parameters' tags alone, as before families
 * existed; every other family's keys start with its name:
 *   bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1     (mma)
 *   tmacopy-br64                           (family tmacopy, BOX_ROWS=64)
 * A space file names its family ("family": "tmacopy"); one without
 * "family" is the mma family.
 */
#ifndef FATTN_SPACE_FAMILY_H
#define FATTN_SPACE_FAMILY_H

#define FATTN_MAX_PARAMS 16

typedef struct fattn_param_info {
    const char *name; /* macro name, e.g. "BLOCK_M" */
    const char *tag;  /* key tag, e.g. "bm" */
    int def;          /* value when a space does not list it */
    int min, max;     /* accepted values */
    int test_only;    /* not a tunable: a layout override for tests */
    int optional;     /* in keys and NVRTC options only when not at its default */
    const char *help;
} fattn_param_info;

typedef struct fattn_family {
    const char *name;    /* "mma"; every other family's keys start with it */
    const char *summary; /* one line */
    const fattn_param_info *params;
    int nparams;             /* at most FATTN_MAX_PARAMS */
    const char *kernel_file; /* in the kernel directory */
    const char *kernel_name; /* its __global__ entry (extern "C") */
} fattn_family;

/* The families, first the default (mma); NULL-terminated (family/table.c). */
extern const fattn_family *const fattn_families[];

/* The mma family (family/mma.c). */
extern const fattn_family fattn_family_mma;

/* The family named `name`, or NULL. */
const fattn_family *fattn_family_find(const char *name);

/* "mma, tmacopy": the known families' names, for messages. */
const char *fattn_family_names(void);

/* 1 when keys of family `f` start with its name (every family but mma). */
static inline int fattn_family_named_keys(const fattn_family *f)
{
    return f != fattn_families[0];
}

#endif
