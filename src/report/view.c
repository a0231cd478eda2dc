/*
 * view.c - a study read for the HTML report (view.h).
 */
#include "report/view.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gates/gates.h"
#include "run/stats.h"
#include "store/read.h"
#include "util/err.h"

static double num(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* One more trial of `reason` in counts[0..*n). */
static void count(fattn_view_count **c, size_t *n, const char *reason)
{
    for (size_t i = 0; i < *n; ++i)
        if (!strcmp((*c)[i].reason, reason)) {
            ++(*c)[i].n;
            return;
        }
    *c = fattn_xrealloc(*c, (*n + 1) * sizeof **c);
    (*c)[(*n)++] = (fattn_view_count){fattn_xstrdup(reason), 1};
}

double fattn_view_count_total(const fattn_view_count *c, size_t n)
{
    double t = 0;
    for (size_t i = 0; i < n; ++i)
        t += c[i].n;
    return t;
}

static int by_count(const void *a, const void *b)
{
    const fattn_view_count *x = a, *y = b;
    return x->n != y->n ? (x->n < y->n) - (x->n > y->n) : strcmp(x->reason, y->reason);
}

/* The index of family `name` among the view's, added when new (a study
 * holds at most FATTN_MAX_FAMILIES: one past that shares the last); names
 * this build does not know share one. */
static int family_index(fattn_study_view *v, const char *name)
{
    const fattn_family *f = fattn_family_find(name);
    for (int i = 0; i < v->nfamilies; ++i)
        if (v->families[i] == f)
            return i;
    if (v->nfamilies == FATTN_MAX_FAMILIES)
        return FATTN_MAX_FAMILIES - 1;
    v->families[v->nfamilies] = f;
    return v->nfamilies++;
}

/* A parameter while the trials are read: its values as read, one per
 * tried trial (NaN: none), and the distinct ones. */
typedef struct param_acc {
    char *name;
    double *raw, *values;
    size_t nraw, capraw, nvalues;
} param_acc;

static param_acc *param_get(param_acc **p, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; ++i)
        if (!strcmp((*p)[i].name, name))
            return &(*p)[i];
    *p = fattn_xrealloc(*p, (*n + 1) * sizeof **p);
    (*p)[*n] = (param_acc){.name = fattn_xstrdup(name)};
    return &(*p)[(*n)++];
}

static void value_add(param_acc *a, double v)
{
    for (size_t i = 0; i < a->nvalues; ++i)
        if (a->values[i] == v)
            return;
    a->values = fattn_xrealloc(a->values, (a->nvalues + 1) * sizeof *a->values);
    a->values[a->nvalues++] = v;
}

/* Tried trial `tried` (its index among them) has the values of
 * params_json. */
static void params_take(param_acc **p, size_t *np, const char *json, size_t tried)
{
    cJSON *o = cJSON_Parse(json);
    const cJSON *it;
    cJSON_ArrayForEach(it, o)
    {
        if (!cJSON_IsNumber(it) || !it->string)
            continue;
        param_acc *a = param_get(p, np, it->string);
        value_add(a, it->valuedouble);
        while (a->nraw <= (size_t)tried) {
            if (a->nraw == a->capraw) {
                a->capraw = a->capraw ? 2 * a->capraw : 64;
                a->raw = fattn_xrealloc(a->raw, a->capraw * sizeof *a->raw);
            }
            a->raw[a->nraw++] = NAN;
        }
        a->raw[tried] = it->valuedouble;
    }
    cJSON_Delete(o);
}

/* The parameters as the view keeps them: values sorted, each tried
 * trial's value as an index. */
static void params_finish(fattn_study_view *v, param_acc *p, size_t np)
{
    v->params = fattn_xcalloc(np ? np : 1, sizeof *v->params);
    v->nparams = np;
    for (size_t k = 0; k < np; ++k) {
        fattn_view_param *q = &v->params[k];
        qsort(p[k].values, p[k].nvalues, sizeof *p[k].values, fattn_cmp_double);
        *q = (fattn_view_param){p[k].name, p[k].values, p[k].nvalues, fattn_xcalloc(v->n ? v->n : 1, sizeof(int))};
        for (size_t i = 0; i < v->n; ++i) {
            q->cat[i] = -1;
            double x = i < p[k].nraw ? p[k].raw[i] : NAN;
            for (size_t j = 0; j < q->nvalues && isfinite(x); ++j)
                if (q->values[j] == x)
                    q->cat[i] = (int)j;
        }
        free(p[k].raw);
    }
    free(p);
}

int fattn_study_view_load(fattn_store *s, long long id, int with_params, fattn_study_view *v)
{
    sqlite3_stmt *st;
    memset(v, 0, sizeof *v);
    v->study = id;
    v->end_secs = NAN;
    if (fattn_store_read(s, FATTN_READ_STUDY, &(fattn_read_args){.id = id}, &st))
        return FATTN_EFAIL;
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return fattn_store_fail(s, "cannot read studies");
    }
    v->compile = !strcmp(fattn_store_text(st, 3), "compile");
    snprintf(v->name, sizeof v->name, "study %lld (%.60s)", id, v->compile ? "compile" : fattn_store_text(st, 4));
    sqlite3_finalize(st);
    if (fattn_store_read(s, FATTN_READ_REPORT_TRIALS, &(fattn_read_args){.id = id}, &st))
        return FATTN_EFAIL;
    param_acc *p = NULL;
    size_t np = 0, cap = 0;
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const char *status = fattn_store_text(st, 1), *reason = fattn_store_text(st, 2);
        v->end_secs = num(st, 11);
        const int rr = fattn_reason_find(reason);
        const int before = rr && (fattn_reason(rr)->stage == FATTN_STAGE_STATIC || rr == FATTN_R_SIMULATOR);
        if (!strcmp(status, "rejected") || !strcmp(status, "error"))
            count(before ? &v->before : &v->after, before ? &v->nbefore : &v->nafter, *reason ? reason : status);
        if (before)
            continue;
        if (with_params)
            params_take(&p, &np, fattn_store_text(st, 9), v->n);
        if (v->n == cap) {
            cap = cap ? 2 * cap : 64;
            v->t = fattn_xrealloc(v->t, cap * sizeof *v->t);
        }
        v->t[v->n++] = (fattn_view_trial){
            .id = sqlite3_column_int64(st, 0),
            .secs = num(st, 6),
            .median_us = num(st, 3),
            .p10_us = num(st, 4),
            .p90_us = num(st, 5),
            .compile_ms = num(st, 7),
            .registers = num(st, 8),
            .spills = num(st, 12),
            .smem = num(st, 13),
            .occupancy = num(st, 14),
            .cache_hit = sqlite3_column_int(st, 15),
            .timed = !strcmp(status, "ok"),
            .marked = !strcmp(status, "rejected") || !strcmp(status, "error"),
            .family = family_index(v, fattn_store_text(st, 16)),
            .key = fattn_xstrdup(fattn_store_text(st, 10)),
        };
    }
    sqlite3_finalize(st);
    if (with_params)
        params_finish(v, p, np);
    if (v->nbefore) /* qsort takes no NULL */
        qsort(v->before, v->nbefore, sizeof *v->before, by_count);
    if (v->nafter)
        qsort(v->after, v->nafter, sizeof *v->after, by_count);
    if (r != SQLITE_DONE) {
        fattn_study_view_release(v);
        return fattn_store_fail(s, "cannot read trials");
    }
    return FATTN_OK;
}

void fattn_study_view_release(fattn_study_view *v)
{
    for (size_t i = 0; i < v->n; ++i)
        free(v->t[i].key);
    for (size_t i = 0; i < v->nbefore; ++i)
        free(v->before[i].reason);
    for (size_t i = 0; i < v->nafter; ++i)
        free(v->after[i].reason);
    for (size_t i = 0; i < v->nparams; ++i)
        free(v->params[i].name), free(v->params[i].values), free(v->params[i].cat);
    free(v->t), free(v->before), free(v->after), free(v->params);
    memset(v, 0, sizeof *v);
}
