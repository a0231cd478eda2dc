/*
 * export.h - a study's best configuration as a C header or JSON.
 *
 * The best configuration is the timed trial (status 'ok') with the lowest
 * median per-launch time. The header defines FATTN_<PARAM> for the nine
 * tunables, the shape's FATTN_HEAD_DIM and FATTN_CAUSAL, the block size and
 * shared-memory bytes, and carries its provenance in a comment and in
 * macros: tool version, study, shape, arch, device, metric. kernels/fattn_fwd.cu
 * reads the FATTN_ names, so `nvcc -include header kernels/fattn_fwd.cu`
 * builds the tuned kernel.
 */
#ifndef FATTN_EXPORT_EXPORT_H
#define FATTN_EXPORT_EXPORT_H

#include <stdio.h>

#include "store/store.h"

/* header: the C header; json: the same as JSON (with cache_key, threads,
 * shared memory, grid rule); cubin: the compiled kernel the trial was
 * measured with, from the compile cache (binary). */
enum fattn_export_format { FATTN_EXPORT_HEADER, FATTN_EXPORT_JSON, FATTN_EXPORT_CUBIN };

/* Writes study `study`'s best configuration (study 0: the latest study).
 * A study with no timed trial is an error (FATTN_EFAIL) naming it. */
int fattn_export_best(fattn_store *s, long long study, int format, FILE *out);

/* The id of the latest study, or 0 with an error reported when there is none. */
long long fattn_latest_study(fattn_store *s);

/* Checks that study `id` exists; reports an error otherwise. */
int fattn_study_exists(fattn_store *s, long long id);

#endif
