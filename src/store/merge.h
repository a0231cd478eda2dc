/*
 * merge.h - merging results databases (fattn-tune merge).
 *
 * Every study of the inputs, with its families, trials (rejections
 * included), timing samples, confirmations and their samples; every
 * simulator run with its checks; every campaign with its rows (one found
 * in several inputs, by its UUID, once); and the compile cache: copied into
 * a new database, with new ids, in the order the inputs are named. A study keeps
 * its GPU, arch and kernel source hash, and says where it came from
 * (studies.origin_db, origin_id: the first database it was merged from, as
 * an absolute path, and its id there).
 *
 * Identity: every study and simulator run has a UUID (schema version 13).
 * One found in several inputs (a database merged twice, two copies of
 * one, a task's database copied before and after a requeue) is copied
 * once, from the copy with the most trials (a run: the most checks), then
 * the most confirmations, then the first named; copies that differ are
 * named in a note. A compile-cache entry is keyed by its content and
 * copied once.
 *
 * The inputs are never written: each is read through a snapshot (SQLite's
 * backup) that is migrated when its schema is older. The output appears
 * whole or not at all: built in a folder beside it and linked into place
 * at the end; an output that exists is refused, as are an input named
 * twice, a damaged input, and one of a newer schema or another program.
 */
#ifndef FATTN_STORE_MERGE_H
#define FATTN_STORE_MERGE_H

#include <signal.h>
#include <stdio.h>

/* One input, and what merging it did. */
typedef struct fattn_merge_input {
    const char *path;
    /* Filled by fattn_merge: */
    int version;                 /* its schema version */
    long long studies;           /* copied from it */
    long long studies_elsewhere; /* in it, but copied from another input's copy */
    long long trials, samples, confirmations;
    long long sim_runs, sim_runs_elsewhere, sim_checks;
    long long cache_entries; /* compile-cache entries new to the output */
    long long campaigns;     /* campaigns new to the output */
} fattn_merge_input;

/* Merges inputs[0..n) into `out`, a path that must not exist. Notes (the
 * copies of a study that differ) go to `notes` (NULL: none). `stop`, when
 * not NULL, is polled between steps: once set, the merge stops and removes
 * what it built. Returns FATTN_OK, FATTN_EUSAGE (the output exists, an
 * input named twice) or FATTN_EFAIL (an input missing, damaged, newer,
 * foreign; a write failed), with nothing written (the output's folder,
 * when it had to be made, is removed again). */
int fattn_merge(fattn_merge_input *inputs, int n, const char *out, FILE *notes, volatile sig_atomic_t *stop);

#endif
