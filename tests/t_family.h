/*
 * t_family.h - what the tests of a kernel family share (t_family.c): a copy
 * of the kernel directory with one bug planted in the family's kernel, and
 * one configuration run through the simulator from a kernel directory.
 */
#ifndef FATTN_TESTS_T_FAMILY_H
#define FATTN_TESTS_T_FAMILY_H

#include "sim/check.h"
#include "space/family.h"

/* Copies the kernel directory to root/name with one exact edit of family
 * f's kernel, `from` (which must occur exactly once) replaced by `to`.
 * Returns the folder (static storage: the next call overwrites it), or NULL
 * (said on stderr). */
const char *t_family_plant(const fattn_family *f, const char *root, const char *name, const char *from, const char *to);

/* Runs configuration `key` (of family f) at shape s through the simulator
 * from kernel directory dir, host builds cached in cache. Returns
 * fattn_sim_check_config()'s result (0: *r holds the verdict), -1 when the
 * kernel cannot be read; exits T_HARNESS on a key of another family. With
 * FATTN_TEST_VERBOSE set, prints the verdict. */
int t_family_sim(const fattn_family *f, const char *dir, const char *key, const fattn_shape *s,
                 const fattn_sim_inputs *in, const char *cache, fattn_sim_check *r);

/* The configuration `key`, which must be of family f (else exits T_HARNESS). */
void t_family_config(const fattn_family *f, const char *key, fattn_config *c);

#endif
