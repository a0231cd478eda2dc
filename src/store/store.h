/*
 * store.h - the results database: the user's lab notebook.
 *
 * One SQLite file (default results/fattn.db) holds studies, trials, timing
 * samples, confirmation runs and the compile cache; docs/schema.md describes
 * every table. The file is marked with PRAGMA application_id 'FATT' and
 * versioned by PRAGMA user_version; opening for writing applies the missing
 * migrations, each in its own transaction. WAL mode; each trial commits in
 * its own transaction, so a crash or kill -9 loses at most the trial in
 * flight.
 *
 * Opening checks everything before writing anything: a file that is not a
 * database, another program's database, a newer schema or a read-only file
 * is reported in one line (FATTN_EFAIL) and left byte-for-byte as it was.
 * All SQLite errors are turned into messages in one place (store.c).
 */
#ifndef FATTN_STORE_STORE_H
#define FATTN_STORE_STORE_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>

#include "compile/cache.h"
#include "compile/postgates.h"
#include "run/compare.h"
#include "run/evaluator.h"
#include "space/params.h"
#include "target/shape.h"

#define FATTN_DEFAULT_DB     "results/fattn.db"
#define FATTN_APPLICATION_ID 0x46415454 /* 'FATT' */

/* The trials table's parameter columns, in registry order (space/params.h);
 * a statement binds or reads them as FATTN_MMA_NPARAMS consecutive values. */
#define FATTN_TRIAL_PARAM_COLUMNS                                                                                      \
    "block_m, block_n, block_k, num_warps, stages, unroll, cp_async, swizzle, half2, split_kv, q_regs, pad_bytes, "    \
    "copy_colmajor"

typedef struct fattn_store fattn_store;

/* UPDATE: WRITE, but the file must exist already. SOURCE: READ, of an
 * older schema too (not migrated), and a damaged file refused rather than
 * read with a warning: a database to copy from (fattn-tune merge). */
enum fattn_store_mode { FATTN_DB_READ, FATTN_DB_WRITE, FATTN_DB_UPDATE, FATTN_DB_SOURCE };

/* The schema version this build writes. */
int fattn_store_schema_version(void);

/* Opens `path`. FATTN_DB_WRITE creates the file (and its folder) when
 * missing and migrates it; FATTN_DB_READ opens an existing database
 * read-only. */
int fattn_store_open(const char *path, int mode, fattn_store **out);

/* Closes and sets *s to NULL. */
void fattn_store_close(fattn_store **s);

sqlite3 *fattn_store_db(fattn_store *s);
const char *fattn_store_path(const fattn_store *s);

/* Reports the connection's last error as "database PATH: WHAT: message";
 * returns FATTN_EFAIL. */
int fattn_store_fail(fattn_store *s, const char *what);

/* Runs SQL without results. */
int fattn_store_exec(fattn_store *s, const char *sql);

/* Transactions (BEGIN IMMEDIATE / COMMIT / ROLLBACK). */
int fattn_store_begin(fattn_store *s);
int fattn_store_commit(fattn_store *s);
void fattn_store_rollback(fattn_store *s);

/* One family of a study (study_families): its space, kernel source and
 * gate limits. */
typedef struct fattn_study_family {
    const char *family;
    const char *space_path;
    const char *space_hash;
    const char *space_json;
    const char *kernel_hash;
    const char *limits_json;
} fattn_study_family;

typedef struct fattn_study_rec {
    const char *command; /* "compile", "search", ... */
    const char *strategy;
    long long seed;
    int has_seed;
    fattn_shape shape;
    const char *arch;
    const char *device; /* NULL without a GPU */
    const char *device_json;
    const char *driver_version;
    const char *nvrtc_version;
    const char *space_path;
    const char *space_hash;
    const char *space_json;
    const char *kernel_hash;
    const char *limits_json;
    const char *argv;          /* the command line */
    const char *evaluator;     /* "gpu", "replay"; NULL offline */
    const char *timing_method; /* NULL offline */
    const char *args_json;     /* search: its arguments, for --resume */
    const char *campaign_uuid; /* the campaign whose row it runs (NULL: none) */
    int campaign_row;
    const char *family; /* the kernel family's name; NULL: the default (mma) */
    /* A study over several families: each (the first the one above); 0:
     * the one family above alone. */
    const fattn_study_family *families;
    int nfamilies;
} fattn_study_rec;

/* The id of the latest study, or 0 with an error reported when there is none. */
long long fattn_latest_study(fattn_store *s);

/* Checks that study `id` exists; reports an error otherwise. */
int fattn_study_exists(fattn_store *s, long long id);

/* Creates a study with status 'running', with its families, in one
 * transaction (a savepoint). */
int fattn_store_study_begin(fattn_store *s, const fattn_study_rec *r, long long *id);

/* A study's search time so far (call inside the transaction of a trial). */
int fattn_store_study_time(fattn_store *s, long long id, double search_ms);

/* Where the study's last search run spent its time, a JSON object
 * (docs/schema.md, version 11). */
int fattn_store_study_last_run(fattn_store *s, long long id, const char *json);

/* FATTN_OK when no other process holds study `id` (its runner: none, or
 * one that no longer runs, killed -9 say); else FATTN_EFAIL with one line
 * naming the process (a runner on another host counts as holding it, since
 * whether it runs cannot be told). */
int fattn_store_study_free(fattn_store *s, long long id);

/* Claims a study for another run (--resume), in one transaction: refused
 * (FATTN_EFAIL, one line) while another live process holds it; else status
 * 'running', this process its runner, one more run, and its arguments
 * replaced by `args_json`. */
int fattn_store_study_reopen(fattn_store *s, long long id, const char *args_json);

/* The newest study with the same command line, space, kernel, gate limits
 * and NVRTC as `r` that did not finish: interrupted, or 'running' with its
 * process gone (kill -9). *id is 0 when there is none. */
int fattn_store_study_unfinished(fattn_store *s, const fattn_study_rec *r, long long *id);

/* Calls `fn` for each trial of study `id` in seq order, and sets *next_seq
 * to the number after the last. */
int fattn_store_each_trial(fattn_store *s, long long id,
                           void (*fn)(void *arg, const char *key, const char *status, const char *reason,
                                      int has_registers),
                           void *arg, long long *next_seq);

/* The newest study of campaign `campaign_uuid`'s row `row` measured on GPU
 * model `gpu` (the device less a " (replayed)" mark; NULL: any): *id 0
 * when none; its status and runner ("" when none). */
int fattn_store_campaign_row_study(fattn_store *s, const char *campaign_uuid, int row, const char *gpu, long long *id,
                                   char *status, size_t nstatus, char *runner, size_t nrunner);

/* Campaigns (schema version 14, campaigns.c): a file of shapes, a study
 * per row and GPU model, each study naming its campaign and row. */
typedef struct fattn_campaign_row_rec {
    int row, line; /* 1-based; the row's line in the file (JSON: its index + 1) */
    const char *name;
    fattn_shape shape;
    const char *budget;    /* as written; NULL: none */
    long trials;           /* 0: none */
    const char *evaluator; /* NULL: the GPU */
} fattn_campaign_row_rec;

typedef struct fattn_campaign_rec {
    const char *uuid; /* NULL: a random one */
    const char *path, *file_sha256, *file_text, *search_args, *argv;
    fattn_campaign_row_rec *rows;
    int nrows;
} fattn_campaign_rec;

/* The campaign to go on with: the one of `uuid` when given (refused when
 * it was made from another file or other search arguments), else the
 * newest of the same file and search arguments; *id 0 when none. */
int fattn_store_campaign_find(fattn_store *s, const char *uuid, const char *file_sha256, const char *search_args,
                              long long *id, char uuid_out[37]);

/* Records a campaign and its rows in one transaction. */
int fattn_store_campaign_begin(fattn_store *s, fattn_campaign_rec *r, long long *id, char uuid_out[37]);

/* The studies of campaign *id (0: the latest; set) that hold a timed
 * trial, one of each row and GPU model (a done one first, then one with a
 * timed trial, then the newest), in row order, in an array
 * the caller frees; the rows left out (no study or none timed) and those
 * not done are named in `notes`. */
int fattn_store_campaign_studies(fattn_store *s, long long *id, long long **studies, int *n, FILE *notes);

/* Sets a study's status ('done', 'interrupted', 'failed') and end time; it
 * has no runner any more. */
int fattn_store_study_end(fattn_store *s, long long id, const char *status);

typedef struct fattn_trial_rec {
    long long study_id;
    long long seq; /* order within the study */
    const fattn_config *cfg;
    const char *status; /* 'rejected', 'compiled', ... */
    const char *reason; /* gate code, NULL when none */
    const char *detail;
    const char *cache_key; /* NULL when not compiled */
    int cache_hit;
    double compile_ms;         /* < 0 when not compiled */
    const fattn_compiled *res; /* NULL when not compiled */
    unsigned smem_model;       /* layout model's bytes; 0 when unknown */
    int has_occupancy;
    double occupancy;
    int blocks_per_sm;
    const char *occupancy_limiter;
    const fattn_eval_result *eval; /* NULL when not evaluated */
    uint64_t numerics_seed;
    int has_strategy_ms;
    double strategy_ms;   /* the strategy's time since the trial before (search) */
    const char *gpu_uuid; /* the GPU it ran on (search --devices); NULL when not run or unknown */
} fattn_trial_rec;

/* Inserts a trial, and the raw timing samples of its evaluation (call
 * inside a transaction: the trial and its samples commit together). */
int fattn_store_trial_add(fattn_store *s, const fattn_trial_rec *r, long long *id);

/* A search over several GPUs (schema v15, gpus.c). A trial handed to a
 * GPU is running until its trial is stored (fattn_store_running_del in
 * that trial's transaction); a study's running trials, oldest first, are
 * what --resume proposes again (*keys: n strings, the caller frees each
 * and the array). */
int fattn_store_running_add(fattn_store *s, long long study, const char *key, long long seq, const char *gpu_uuid);
int fattn_store_running_del(fattn_store *s, long long study, const fattn_config *cfg);
int fattn_store_running_keys(fattn_store *s, long long study, char ***keys, size_t *n);

/* The reference configuration timed on one GPU, round `round` of a study. */
typedef struct fattn_gpu_check_rec {
    long long study_id;
    int round;
    long long after_trials; /* trials evaluated when it came back */
    int device;
    const char *gpu_uuid;
    const char *config_key;
    const char *status; /* fattn_eval_status_name() */
    double median_us;   /* 0: not measured */
} fattn_gpu_check_rec;

int fattn_store_gpu_check_add(fattn_store *s, const fattn_gpu_check_rec *c);

/* The largest spread of a round so far, in percent (store.c, beside the
 * study's other updates). */
int fattn_store_study_gpu_spread(fattn_store *s, long long study, double pct);

/* Looks a key up: returns 1 and fills *e (release it) when found, 0 when
 * not, FATTN_EFAIL on error. */
int fattn_store_cache_get(fattn_store *s, const char *key, fattn_cache_entry *e);

/* Stores an entry (insert or replace). */
int fattn_store_cache_put(fattn_store *s, const fattn_cache_entry *e);

/* The compile stage's view of the cache above (compile/cache.h). */
fattn_compile_cache fattn_store_compile_cache(fattn_store *s);

/* One candidate of a confirm run against its baseline (confirmations.c). */
typedef struct fattn_confirm_rec {
    long long study_id;
    long long trial_id; /* the candidate's trial; 0 when none */
    const char *config_key;
    const char *arch, *device;
    const char *kernel_hash; /* of the source measured (the study's, unless --allow-kernel-change) */
    int as_searched;         /* 1: the study's kernel source on the study's arch */
    const char *baseline;    /* as given: "cudnn", "config:KEY", "trial:ID" */
    const char *base_kind;   /* "cudnn" or "config" */
    const char *base_desc;   /* what it was: "cuDNN 9.14.0, engine 7" or a key */
    int n;
    long long seed;
    size_t resamples;
    double level, target;
    const char *timing_method;
    const fattn_eval_result *cand, *base; /* samples, numerics */
    const fattn_comparison *cmp;          /* NULL when either was not measured */
    const char *verdict;
    const char *detail;
    long long previous_id; /* 0: none compared */
    double change_pct;
    int regression;
} fattn_confirm_rec;

/* Inserts a confirmation and the raw samples of both sides (call inside a
 * transaction). */
int fattn_store_confirmation_add(fattn_store *s, const fattn_confirm_rec *r, long long *id);

/* The last measured confirmation of a configuration on the same shape and
 * device. */
typedef struct fattn_confirm_prev {
    long long id;
    double median_us, ci_lo_us, ci_hi_us;
    char created_at[32];
} fattn_confirm_prev;

/* Returns 1 with *p when found, 0 when none, FATTN_EFAIL on error. */
int fattn_store_confirmation_previous(fattn_store *s, const char *config_key, const char *device,
                                      const fattn_shape *shape, fattn_confirm_prev *p);

/* A simulator run (fattn-tune check; sim_checks.c). */
typedef struct fattn_sim_run_rec {
    const char *mode; /* "config", "sample", "all", "covering" */
    const char *command;
    const char *kernel_hash;
    const char *space_path, *space_hash; /* NULL for --config alone */
    const char *arch;
    long long seed;
    const char *compiler; /* the host C++ compiler's first line of --version */
} fattn_sim_run_rec;

/* Inserts a run with status 'running' (its own transaction). */
int fattn_store_sim_run_begin(fattn_store *s, const fattn_sim_run_rec *r, long long *id);

/* Sets the run's status ('done', 'interrupted', 'failed') and end time. */
int fattn_store_sim_run_end(fattn_store *s, long long id, const char *status);

/* One configuration's verdict at one shape. */
typedef struct fattn_sim_check_rec {
    long long run_id;
    long long seq;
    const char *kernel_hash;
    const char *config_key;
    fattn_shape shape;
    const struct fattn_sim_check *check;
} fattn_sim_check_rec;

/* Inserts a verdict in its own transaction. */
int fattn_store_sim_check_add(fattn_store *s, const fattn_sim_check_rec *r);

/* Calls fn for each configuration the simulator found a defect in (a fault,
 * a hazard, wrong numerics) with this kernel source at this head dimension
 * and mask, the latest such check of each; a non-zero return of fn stops
 * and is returned. Returns 0 or FATTN_EFAIL. */
int fattn_store_sim_defects(fattn_store *s, const char *kernel_hash, int head_dim, int causal,
                            int (*fn)(void *arg, const char *config_key, const char *verdict, const char *detail,
                                      long long check_id),
                            void *arg);

#endif
