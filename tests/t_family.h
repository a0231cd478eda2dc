/*
 * t_family.h - what the tests of a kernel family share (t_family.c): one
 * configuration run through the simulator from a kernel directory, and a
 * bug planted in a copy of the family's kernel, caught or not.
 */
#ifndef FATTN_TESTS_T_FAMILY_H
#define FATTN_TESTS_T_FAMILY_H

#include "sim/check.h"
#include "space/family.h"

/* Runs configuration `key` (of family f) at shape s through the simulator
 * from kernel directory dir, host builds cached in cache. Returns
 * fattn_sim_check_config()'s result (0: *r holds the verdict), -1 when the
 * kernel cannot be read; exits T_HARNESS on a key of another family. With
 * FATTN_TEST_VERBOSE set, prints the verdict. */
int t_family_sim(const fattn_family *f, const char *dir, const char *key, const fattn_shape *s,
                 const fattn_sim_inputs *in, const char *cache, fattn_sim_check *r);

/* A planted bug: `from` in family f's kernel (exactly once) replaced by
 * `to`, run as configuration `key` at shape s. Returns "caught" when the
 * unplanted kernel passes the case and the planted copy gets `verdict`,
 * its worst finding (unless the verdict is numerics) at a line of f's
 * kernel; else what happened instead (static text, for a CHECK_STR). */
const char *t_family_plant_caught(const fattn_family *f, const char *root, const char *cache, const char *name,
                                  const char *from, const char *to, const char *key, const fattn_shape *s,
                                  const fattn_sim_inputs *in, const char *verdict);

/* Copies the kernel directory to root/name with one exact edit of family
 * f's kernel, `from` (which must occur exactly once) replaced by `to`.
 * Returns the folder (static storage, until the next call), or NULL (said
 * on stderr). */
const char *t_family_plant(const fattn_family *f, const char *root, const char *name, const char *from, const char *to);

/* The configuration `key`, which must be of family f (else exits T_HARNESS). */
void t_family_config(const fattn_family *f, const char *key, fattn_config *c);

#endif
