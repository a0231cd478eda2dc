/*
 * read.h - the store's read side: a study as confirm, bench and export take
 * it up again, its fastest trials and one trial; the named reads of query,
 * report, export and search --resume; a user's own SELECT. Every SELECT the
 * program runs is here or in the store's own writers: no other module
 * writes SQL.
 */
#ifndef FATTN_STORE_READ_H
#define FATTN_STORE_READ_H

#include <sqlite3.h>

#include "space/params.h"
#include "store/rows.h"
#include "store/store.h"
#include "target/shape.h"

typedef struct fattn_study_info {
    long long id;
    const fattn_family *fam; /* the family searched */
    fattn_shape shape;
    char arch[16];
    char kernel_hash[65];
    char device[256];       /* the study's GPU, "" when none */
    char limits_json[1024]; /* the gate limits it was searched under (gates.h), "" when none */
    /* Its families (study_families), the first the one above: each with its
     * kernel source and gate limits. */
    int nfam;
    struct fattn_study_fam {
        const fattn_family *fam;
        char kernel_hash[65];
        char limits_json[1024];
    } fams[FATTN_MAX_FAMILIES];
} fattn_study_info;

/* Study `id` (0: the latest). Reports a missing study, and a family this
 * build does not have. */
int fattn_store_study_info(fattn_store *s, long long id, fattn_study_info *out);

/* The study as its family `f` saw it: *out is *st with the family, kernel
 * hash and limits of f. 1 when f is one of the study's families, else 0
 * (*out untouched). */
int fattn_study_info_as(const fattn_study_info *st, const fattn_family *f, fattn_study_info *out);

/* A timed trial as a candidate: its id, key, configuration and median. */
typedef struct fattn_trial_cand {
    long long trial;
    char key[FATTN_KEY_MAX];
    fattn_config cfg;
    double median_us; /* as the search measured it */
} fattn_trial_cand;

/* The k fastest timed configurations of a study (distinct keys, by stored
 * median) into out[0..*n). None is an error naming the study. */
int fattn_store_top_trials(fattn_store *s, long long study, int k, fattn_trial_cand *out, int *n);

/* Stored trial `trial` as a candidate, and its study. A missing trial is a
 * usage error naming it as `option`ID ("--trial ", "--baseline trial:"). */
int fattn_store_trial_cand(fattn_store *s, long long trial, const char *option, fattn_trial_cand *cand,
                           fattn_study_info *study);

/* Column i of the row `st` is on, as text: "" where it is NULL. */
const char *fattn_store_text(sqlite3_stmt *st, int i);

/* The named reads. Each is a statement of reads.c, which lists its columns
 * in the order its reader takes them; the reader steps it and finalizes it
 * (sqlite3_finalize). Parameters: ?1 is a->id, ?2 a->text, ?3 a->text2 (NULL
 * binds NULL), ?4 a->limit (0: no limit); a statement names those it takes. */
enum fattn_read {
    /* query's views: ?1 the study (0: every study, confirmations only), ?4 */
    FATTN_READ_STUDIES,
    FATTN_READ_TRIALS, /* ?2 a status, ?3 a reason, or NULL: any */
    FATTN_READ_TOP,
    FATTN_READ_REJECTIONS,
    FATTN_READ_CONFIRMATIONS,
    FATTN_READ_SIM, /* ?1 a simulator run */
    FATTN_READ_SIMRUNS,
    FATTN_READ_GPUS, /* the reference's timings on each GPU, by round (search --devices) */
    FATTN_READ_CACHE,
    FATTN_READ_TRIAL,          /* ?1 a trial: everything of it, its compile log too */
    FATTN_READ_SIM_RUN,        /* ?1 a simulator run or 0: its id (the latest), NULL when none */
    FATTN_READ_LANDSCAPE_HEAD, /* ?1 a study: what its landscape's header says */
    FATTN_READ_LANDSCAPE,      /* ?1 a study: every trial's verdict and times */
    /* the report, ?1 a study */
    FATTN_READ_REPORT_TRIALS, /* every trial's outcome, times, resources and seconds since the first */
    FATTN_READ_STUDY,
    FATTN_READ_LAST_CONFIRMATION,    /* the latest measured */
    FATTN_READ_CONFIRMATION_SAMPLES, /* ?1 a confirmation */
    FATTN_READ_TOP10,
    /* the export, ?1 a study */
    FATTN_READ_CONFIRMED_KEY,   /* the key its confirmations found fastest */
    FATTN_READ_CONFIRMATION_OF, /* ?2 a key: its latest measured confirmation */
    FATTN_READ_BEST,            /* ?2 a key or NULL: the fastest timed trial */
    FATTN_READ_T4,              /* every trial with an outcome */
    /* search --resume, ?1 a study */
    FATTN_READ_RESUME_STUDY,
    FATTN_READ_RESUME_TRIALS,
    FATTN_READ_STUDY_FAMILIES,
    FATTN_READ_COUNT
};

typedef struct fattn_read_args {
    long long id;
    const char *text, *text2;
    long long limit;
} fattn_read_args;

/* Prepares read `r` with its parameters bound into *st. A failure is
 * reported as the store's (what the read reads). */
int fattn_store_read(fattn_store *s, enum fattn_read r, const fattn_read_args *a, sqlite3_stmt **st);

/* query's views: a named read, what it is of, its default limit (0: all)
 * and what an empty one says (a format of its subject's id). */
enum {
    FATTN_VIEW_OF_NOTHING,
    FATTN_VIEW_OF_STUDY,        /* a study, the latest by default */
    FATTN_VIEW_OF_STUDY_OR_ALL, /* a study, every study by default */
    FATTN_VIEW_OF_RUN,          /* a simulator run, the latest by default */
    FATTN_VIEW_OF_TRIAL,        /* one trial, a record */
    FATTN_VIEW_OF_LANDSCAPE,    /* a study, written as a landscape (export.h) */
};
typedef struct fattn_view {
    const char *name;
    enum fattn_read read;
    int of;
    long limit;
    const char *empty;
} fattn_view;

/* The view called `name`, NULL when none is. */
const fattn_view *fattn_view_find(const char *name);

/* The id of what view v shows: the study (`study`, checked, or the
 * latest), the simulator run (`run`, checked, or the latest), the trial;
 * 0 for a view of everything. */
int fattn_view_subject(fattn_store *s, const fattn_view *v, long long study, long long run, long long trial,
                       long long *id);

/* View v's rows (a: its read's parameters); a trial view without its trial
 * is a usage error. out is released by the caller, even on failure. */
int fattn_view_rows(fattn_store *s, const fattn_view *v, const fattn_read_args *a, fattn_rows *out);

/* A user's statement (query --sql), its rows streamed to the sink as they
 * come (none held): one SELECT or reading PRAGMA, nothing that writes,
 * attaches or loads (a usage error saying why, before the sink begins);
 * stopped after timeout_ms (0: never) of SQLite's work (the sink's time
 * does not count), the rows before the stop handed on. */
int fattn_store_user_sql(fattn_store *s, const char *sql, double timeout_ms, const fattn_row_sink *sink);

#endif
