/*
 * space.h - a configuration space: a set of values for each parameter, read
 * from a JSON file, enumerated in a stable order.
 *
 * File format (search/space.json is the default space):
 *   {
 *     "description": "free text",
 *     "family": "mma",
 *     "parameters": { "BLOCK_M": [32, 64, 128], "BLOCK_N": [32, 64, 128], ... }
 *   }
 * "family" names the kernel family (family.h); a file without it is the mma
 * family's. Every listed parameter must be one of the family's and listed
 * once, with a non-empty array of distinct integers in its range.
 * Parameters not listed keep their default. Errors name the JSON path, e.g.
 *   space.json: $.parameters.BLOCK_K[2]: expected an integer, got 1.5
 *
 * Enumeration order: parameters in the family's table order, the first varying slowest,
 * values in the order the file lists them. Index i of a space is therefore
 * stable for a given file.
 */
#ifndef FATTN_SPACE_SPACE_H
#define FATTN_SPACE_SPACE_H

#include <stddef.h>

#include "space/params.h"

#define FATTN_SPACE_MAX_VALUES 64

/* The most configurations a space may hold: its verdicts alone take 400
 * bytes each. */
#define FATTN_SPACE_MAX (1 << 20)

typedef struct fattn_space {
    char *label;                   /* file path, for messages */
    const fattn_family *fam;       /* "family" of the file; mma when it names none */
    int family_named;              /* the file names its family */
    int nvalues[FATTN_MAX_PARAMS]; /* 1 for parameters past fam->nparams */
    int values[FATTN_MAX_PARAMS][FATTN_SPACE_MAX_VALUES];
    int listed[FATTN_MAX_PARAMS]; /* named by the file */
    char hash[65];                /* sha256 of the file's bytes */
    char *json;                   /* the file's text */
    size_t count;
} fattn_space;

/* Loads a space file. Unreadable files and invalid contents are usage errors
 * (the user named or wrote the file). */
int fattn_space_load(const char *path, fattn_space *sp);

/* Parses a space from text; `label` names it in messages. */
int fattn_space_parse(const char *text, size_t len, const char *label, fattn_space *sp);

void fattn_space_release(fattn_space *sp);

/* Configuration number `index` (< sp->count). */
void fattn_space_config(const fattn_space *sp, size_t index, fattn_config *out);

/* A filter: comma-separated comparisons "NAME op VALUE", op one of
 * = == != < <= > >=, all of which must hold. */
typedef struct fattn_filter {
    int n;
    struct {
        int param;
        int op;
        int value;
    } terms[32];
} fattn_filter;

/* Parses a filter on family `fam`'s parameters. */
int fattn_filter_parse(const char *text, const fattn_family *fam, fattn_filter *f);
int fattn_filter_match(const fattn_filter *f, const fattn_config *c);

/* The configurations of sp that f matches (f NULL: every one), in the
 * space's order: their indices into a new array *indices (the caller frees
 * it) and how many. */
size_t fattn_space_select(const fattn_space *sp, const fattn_filter *f, size_t **indices);

/* A usage error unless every = and != term names a value of the space and
 * some configuration of the space matches. `text` is the filter as given. */
int fattn_filter_check(const fattn_filter *f, const char *text, const fattn_space *sp);

#endif
