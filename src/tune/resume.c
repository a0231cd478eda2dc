/*
 * resume.c - a search's arguments as its study stores them, and the study
 * read back for `search --resume`.
 */
#include "tune/resume.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gates/gates.h"
#include "store/read.h"
#include "util/err.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int fail(fattn_store *s, sqlite3_stmt *st, const char *what)
{
    int rc = fattn_store_fail(s, what);
    sqlite3_finalize(st);
    return rc;
}

static void text(sqlite3_stmt *st, int col, char *out, size_t n)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    snprintf(out, n, "%s", t ? (const char *)t : "");
}

static int load_study(fattn_store *s, long long id, fattn_resume *r)
{
    sqlite3_stmt *st;
    if (fattn_store_read(s, FATTN_READ_RESUME_STUDY, &(fattn_read_args){.id = id}, &st))
        return FATTN_EFAIL;
    int step = sqlite3_step(st);
    if (step == SQLITE_DONE) {
        sqlite3_finalize(st);
        return fattn_error(FATTN_EUSAGE, "--resume %lld: %s has no study %lld (see fattn-tune query studies)", id,
                           fattn_store_path(s), id);
    }
    if (step != SQLITE_ROW)
        return fail(s, st, "cannot read the study");
    char command[32], *args = NULL;
    text(st, 0, command, sizeof command);
    text(st, 1, r->status, sizeof r->status);
    if (sqlite3_column_text(st, 2))
        args = fattn_xstrdup((const char *)sqlite3_column_text(st, 2));
    text(st, 3, r->space_hash, sizeof r->space_hash);
    text(st, 4, r->kernel_hash, sizeof r->kernel_hash);
    r->search_ms = sqlite3_column_double(st, 5);
    r->next_seq = sqlite3_column_int64(st, 6);
    text(st, 7, r->device, sizeof r->device);
    text(st, 8, r->evaluator, sizeof r->evaluator);
    sqlite3_finalize(st);
    if (strcmp(command, "search") != 0) {
        free(args);
        return fattn_error(FATTN_EUSAGE, "--resume %lld: study %lld is a %s study, not a search", id, id, command);
    }
    cJSON *a = args ? cJSON_Parse(args) : NULL;
    free(args);
    if (!cJSON_IsArray(a)) {
        cJSON_Delete(a);
        return fattn_error(FATTN_EUSAGE,
                           "--resume %lld: study %lld does not record its search arguments (made by an older "
                           "fattn-tune); start a new search",
                           id, id);
    }
    r->nargs = cJSON_GetArraySize(a);
    r->args = fattn_xcalloc((size_t)r->nargs + 1, sizeof *r->args);
    for (int i = 0; i < r->nargs; ++i) {
        const cJSON *e = cJSON_GetArrayItem(a, i);
        r->args[i] = fattn_xstrdup(cJSON_IsString(e) ? e->valuestring : "");
    }
    cJSON_Delete(a);
    return FATTN_OK;
}

static int load_trials(fattn_store *s, long long id, fattn_resume *r)
{
    sqlite3_stmt *st;
    size_t cap = 256;
    if (fattn_store_read(s, FATTN_READ_RESUME_TRIALS, &(fattn_read_args){.id = id}, &st))
        return FATTN_EFAIL;
    r->prior = fattn_xcalloc(cap, sizeof *r->prior);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (r->nprior == cap) {
            cap *= 2;
            r->prior = fattn_xrealloc(r->prior, cap * sizeof *r->prior);
        }
        fattn_tune_prior *p = &r->prior[r->nprior++];
        char status[16], reason[32];
        memset(p, 0, sizeof *p);
        p->trial = sqlite3_column_int64(st, 0);
        text(st, 1, p->key, sizeof p->key);
        text(st, 2, status, sizeof status);
        text(st, 3, reason, sizeof reason);
        p->evaluated = sqlite3_column_int(st, 4);
        p->ok = !strcmp(status, "ok");
        p->error = !strcmp(status, "error");
        p->reason = reason[0] ? fattn_reason_find(reason) : 0;
        if (p->reason < 0)
            p->reason = 0;
        p->timing.median_us = sqlite3_column_double(st, 5);
        p->timing.p10_us = sqlite3_column_double(st, 6);
        p->timing.p90_us = sqlite3_column_double(st, 7);
        p->timing.tflops = sqlite3_column_double(st, 8);
        p->timing.gbps = sqlite3_column_double(st, 9);
        p->cost_ms = sqlite3_column_double(st, 10);
    }
    if (step != SQLITE_DONE)
        return fail(s, st, "cannot read the study's trials");
    sqlite3_finalize(st);
    r->keys = fattn_xcalloc(r->nprior ? r->nprior : 1, sizeof *r->keys);
    for (size_t i = 0; i < r->nprior; ++i)
        r->keys[i] = r->prior[i].key;
    qsort(r->keys, r->nprior, sizeof *r->keys, cmp_str);
    return FATTN_OK;
}

static int load_families(fattn_store *s, long long id, fattn_resume *r)
{
    sqlite3_stmt *st;
    int step;
    if (fattn_store_read(s, FATTN_READ_STUDY_FAMILIES, &(fattn_read_args){.id = id}, &st))
        return FATTN_EFAIL;
    while ((step = sqlite3_step(st)) == SQLITE_ROW && r->nfam < FATTN_MAX_FAMILIES) {
        text(st, 0, r->fam[r->nfam].family, sizeof r->fam[0].family);
        text(st, 1, r->fam[r->nfam].space_hash, sizeof r->fam[0].space_hash);
        text(st, 2, r->fam[r->nfam].kernel_hash, sizeof r->fam[0].kernel_hash);
        text(st, 3, r->fam[r->nfam].limits_json, sizeof r->fam[0].limits_json);
        ++r->nfam;
    }
    if (step != SQLITE_DONE && step != SQLITE_ROW)
        return fail(s, st, "cannot read the study's families");
    sqlite3_finalize(st);
    return FATTN_OK;
}

int fattn_resume_load(fattn_store *s, long long id, fattn_resume *r)
{
    int rc;
    memset(r, 0, sizeof *r);
    r->study = id;
    if ((rc = load_study(s, id, r)) || (rc = load_families(s, id, r)) || (rc = load_trials(s, id, r))
        || (rc = fattn_store_running_keys(s, id, &r->running, &r->nrunning)))
        fattn_resume_release(r);
    return rc;
}

/* With --resume, the study's arguments apply; these alone may be given. */
static const char *const resume_options[] = {"--resume",  "--budget", "--trials", "--jobs", "--db", "--device",
                                             "--devices", "--quiet",  "-q",       "--help", "-h",   NULL};

static int takes_value(const char *name, size_t len)
{
    static const char *const valued[] = {"--resume", "--budget", "--trials",  "--jobs",
                                         "--db",     "--device", "--devices", NULL};
    for (int k = 0; valued[k]; ++k)
        if (strlen(valued[k]) == len && !strncmp(name, valued[k], len))
            return 1;
    return 0;
}

int fattn_resume_args_check(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        size_t len = strcspn(a, "=");
        int ok = 0;
        for (int k = 0; resume_options[k] && !ok; ++k)
            ok = strlen(resume_options[k]) == len && !strncmp(a, resume_options[k], len);
        if (!ok)
            return fattn_error(FATTN_EUSAGE,
                               "search --resume: '%s' comes from the study; with --resume only --budget, --trials, "
                               "--jobs, --device, --devices, --db and -q may be given",
                               a);
        if (takes_value(a, len) && !a[len])
            ++i;
    }
    return FATTN_OK;
}

/* The search's arguments as a JSON array, without --db and --resume (where
 * the study lives and which it is are not part of it). */
char *fattn_search_args_json(int argc, char **argv)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 1; i < argc; ++i) {
        size_t len = strcspn(argv[i], "=");
        if ((len == 4 && !strncmp(argv[i], "--db", 4)) || (len == 8 && !strncmp(argv[i], "--resume", 8))) {
            i += !argv[i][len];
            continue;
        }
        cJSON_AddItemToArray(a, cJSON_CreateString(argv[i]));
    }
    char *out = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    return out;
}

char **fattn_resume_argv(const fattn_resume *r, int argc, char **argv, int *n)
{
    char **merged = fattn_xcalloc((size_t)(r->nargs + argc + 1), sizeof *merged);
    *n = 0;
    merged[(*n)++] = argv[0];
    for (int i = 0; i < r->nargs; ++i)
        merged[(*n)++] = r->args[i];
    for (int i = 1; i < argc; ++i)
        merged[(*n)++] = argv[i];
    return merged;
}

int fattn_resume_has(const fattn_resume *r, const char *key)
{
    return r->nprior && bsearch(&key, r->keys, r->nprior, sizeof *r->keys, cmp_str) != NULL;
}

void fattn_resume_release(fattn_resume *r)
{
    for (int i = 0; i < r->nargs; ++i)
        free(r->args[i]);
    free(r->args);
    free(r->prior);
    free(r->keys);
    for (size_t i = 0; i < r->nrunning; ++i)
        free(r->running[i]);
    free(r->running);
    memset(r, 0, sizeof *r);
}
