/*
 * check.c - check's report (report.h): each configuration's verdict with
 * every finding, the run's summary (failures grouped by verdict and kernel
 * lines), its progress line, and the list of its cases.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/table.h"
#include "report/report.h"
#include "util/misc.h"

/* Every finding of one configuration (--config): the report, not only the
 * verdict's. */
static void print_findings(const fattn_sim_check *c, FILE *f)
{
    if (!c->ran || c->rep.nfindings < 2)
        return;
    fprintf(f, "  findings (%d%s):\n", c->rep.nfindings, c->rep.findings_dropped ? " and more" : "");
    for (int i = 0; i < c->rep.nfindings; ++i) {
        const fattn_sim_finding *x = &c->rep.findings[i];
        fprintf(f, "    %s", x->detail);
        if (x->count > 1)
            fprintf(f, " (%llu times)", (unsigned long long)x->count);
        fprintf(f, "\n");
    }
}

void fattn_report_check_one(const fattn_sim_job *job, const fattn_sim_check *c, FILE *f)
{
    char key[FATTN_KEY_MAX], shape[96];
    fattn_config_key(&job->cfg, key);
    fattn_shape_format(&job->shape, shape, sizeof shape);
    fprintf(f, "%s at %s: %s\n  %s\n", key, shape, c->verdict, c->detail);
    if (c->fix[0])
        fprintf(f, "  fix: %s\n", c->fix);
    print_findings(c, f);
    if (c->ran)
        fprintf(f, "  host build %s, simulated in %.2f s\n", c->cache_hit ? "from the cache" : "compiled",
                c->run_ms / 1000.0);
}

/* Failures grouped by verdict and kernel lines, each with an example. */
void fattn_report_check(const fattn_check_report *r, const fattn_check_plan *p, int single, FILE *f)
{
    fprintf(f, "sim run %lld: %s, kernel %.12s\n", r->run, p->what, r->kernel_hash);
    fprintf(f, "%zu configuration%s checked in %.1f s (%zu host build%s, %zu from the cache)\n", r->done,
            r->done == 1 ? "" : "s", r->seconds, r->builds, r->builds == 1 ? "" : "s", r->cache_hits);
    const char *names[] = {"verdict", "count"};
    const unsigned char numeric[] = {0, 1};
    fattn_rows rows;
    fattn_rows_init(&rows, 2, names);
    size_t n = p->njobs;
    unsigned char *seen = calloc(n ? n : 1, 1);
    for (size_t i = 0; seen && i < n; ++i) {
        if (!r->out[i].done || seen[i])
            continue;
        size_t count = 0;
        for (size_t j = i; j < n; ++j)
            if (r->out[j].done && !strcmp(r->out[j].verdict, r->out[i].verdict))
                ++count, seen[j] = 1;
        char cnt[32];
        snprintf(cnt, sizeof cnt, "%zu", count);
        const char *cells[] = {r->out[i].verdict, cnt};
        fattn_rows_add(&rows, cells, numeric);
    }
    fprintf(f, "\n");
    fattn_rows_print(f, &rows, FATTN_FMT_TABLE, 0);
    fattn_rows_release(&rows);
    if (seen)
        memset(seen, 0, n);
    for (size_t i = 0; seen && !single && i < n; ++i) {
        const fattn_check_outcome *o = &r->out[i];
        if (!o->done || seen[i] || !strcmp(o->verdict, FATTN_SIMV_OK))
            continue;
        size_t count = 0;
        for (size_t j = i; j < n; ++j) {
            const fattn_check_outcome *q = &r->out[j];
            if (q->done && !strcmp(q->verdict, o->verdict) && q->line == o->line && q->other_line == o->other_line)
                ++count, seen[j] = 1;
        }
        char key[FATTN_KEY_MAX], shape[96];
        fattn_config_key(&p->jobs[i].cfg, key);
        fattn_shape_format(&p->jobs[i].shape, shape, sizeof shape);
        fprintf(f, "\n%s", o->verdict);
        if (o->line > 0)
            fprintf(f, " at %s:%d", o->file, o->line);
        if (o->other_line > 0)
            fprintf(f, " against line %d", o->other_line);
        fprintf(f, ": %zu configuration%s, e.g. %s at %s\n  %s\n", count, count == 1 ? "" : "s", key, shape, o->detail);
        if (o->fix[0])
            fprintf(f, "  fix: %s\n", o->fix);
    }
    free(seen);
}

void fattn_report_check_progress(size_t done, size_t njobs, size_t failed, double elapsed_ms, FILE *f)
{
    double rate = done / (elapsed_ms / 1000.0 + 1e-9);
    double eta = rate > 0 ? (double)(njobs - done) / rate : 0;
    char left[24];
    fattn_format_eta(eta, left, sizeof left);
    fprintf(f, "\r  checked %zu/%zu  failed %zu  %.2f/s  ETA %s   ", done, njobs, failed, rate, left);
    fflush(f);
}

void fattn_report_check_list(const fattn_check_plan *p, FILE *f)
{
    for (size_t i = 0; i < p->njobs; ++i) {
        char key[FATTN_KEY_MAX];
        const fattn_shape *js = &p->jobs[i].shape;
        fattn_config_key(&p->jobs[i].cfg, key);
        fprintf(f, "%s %d,%d,%d,%d%s\n", key, js->batch, js->heads, js->seqlen, js->head_dim,
                js->causal ? " causal" : "");
    }
}
