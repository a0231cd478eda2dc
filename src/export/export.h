/*
 * export.h - a study's best configuration as a C header or JSON.
 *
 * The best configuration is the one the study's confirmations found fastest
 * (fattn-tune confirm), or, before any, the timed trial (status 'ok') with
 * the lowest median per-launch time. The header defines FATTN_<PARAM> for the nine
 * tunables, the shape's FATTN_HEAD_DIM and FATTN_CAUSAL, the block size and
 * shared-memory bytes, and carries its provenance in a comment and in
 * macros: tool version, study, shape, arch, device, metric, and the NVRTC
 * options of the measured build with the nvcc flags that build the same
 * (FATTN_TUNED_NVCC_FLAGS). kernels/fattn_fwd.cu reads the FATTN_ names, so
 * `nvcc FLAGS -c -include header kernels/fattn_fwd.cu` builds the tuned
 * kernel.
 */
#ifndef FATTN_EXPORT_EXPORT_H
#define FATTN_EXPORT_EXPORT_H

#include <stdio.h>

#include "compile/kernel_src.h"
#include "store/store.h"

/* header: the C header; json: the same as JSON (with cache_key, threads,
 * shared memory, grid rule); cubin: the compiled kernel the trial was
 * measured with, from the compile cache (binary); t4: every trial in the T4
 * results format (fattn_export_t4). */
enum fattn_export_format { FATTN_EXPORT_HEADER, FATTN_EXPORT_JSON, FATTN_EXPORT_CUBIN, FATTN_EXPORT_T4 };

/* Writes studies[0..n) in `format` (n 0: the latest study): one study's
 * export, or, for several, one header with a dispatch table
 * (fattn_export_dispatch; the header format alone). */
int fattn_export_write(fattn_store *s, const long long *studies, int n, int format, FILE *out);

/* Writes study `study`'s best configuration (study 0: the latest study),
 * or with `key` (a canonical configuration key) that configuration's
 * fastest timed trial in the study instead (header, json or cubin). A study
 * with no timed trial (of key) is an error (FATTN_EFAIL) naming it. */
int fattn_export_best(fattn_store *s, long long study, const char *key, int format, FILE *out);

/* The best configuration's header followed by the kernel source, its local
 * headers inlined: one .cu file that `nvcc FLAGS -c FILE` builds. Whether a
 * source other than the one the study measured may be written is the
 * caller's decision (export --kernel --allow-kernel-change); the file then
 * names both hashes. */
int fattn_export_kernel(fattn_store *s, long long study, const fattn_kernel_src *src, FILE *out);

/* The kernel family of study `study`'s best configuration (study 0: the
 * latest), whose kernel fattn_export_kernel() is to be given. */
int fattn_export_best_family(fattn_store *s, long long study, const fattn_family **fam);

/* The key of study `study`'s best configuration (as above) into
 * key[FATTN_KEY_MAX]. */
int fattn_export_best_key(fattn_store *s, long long study, char *key);

/* One header for several studies (shapes): a table of the best configuration
 * of each, with the nvcc flags of each build, and fattn_tuned_lookup(). */
int fattn_export_dispatch(fattn_store *s, const long long *studies, int n, FILE *out);

/* Every trial of a study in the T4 results format of Kernel Tuner and KTT
 * (schema_version 1.0.0). */
int fattn_export_t4(fattn_store *s, long long study, FILE *out);

/* export --kernel: src must be the kernel source study (0: the latest)
 * measured; with allow_change another passes when the study's best
 * configuration passes the gates and compiles under it, as the study
 * searched it (what changed said on log, NULL: nothing said). */
int fattn_export_kernel_check(fattn_store *s, long long study, const fattn_kernel_src *src, int allow_change,
                              FILE *log);

/* A search study as the landscape the replay evaluator reads
 * (run/landscape.h): each configuration's last verdict and times, of
 * `family` (NULL: the study's one family; a study of several needs it).
 * Another study (compile: nothing measured), a family the study did not
 * search, or a study of several without one: a usage error. */
int fattn_export_landscape(fattn_store *s, long long study, const char *family, FILE *out);

#endif
