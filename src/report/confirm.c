/*
 * confirm.c - confirm's report (report.h): the head lines, a table of the
 * candidates and each one's verdict, or all of it as JSON.
 */
#include <stdio.h>
#include <string.h>

#include "export/table.h"
#include "report/report.h"
#include "run/compare.h"

static void print_table(int format, const fattn_confirm_report *r, FILE *f)
{
    const char *names[] = {"config",     "median_us", "ci95_us",  "p90_us", "speedup",
                           "speedup_ci", "mwu_p",     "cliffs_d", "verdict"};
    const unsigned char numeric[] = {0, 1, 0, 1, 1, 0, 1, 1, 0};
    fattn_rows rows;
    fattn_rows_init(&rows, 9, names);
    for (int i = 0; i < r->k; ++i) {
        char c[9][64] = {{0}};
        const char *p[9];
        const fattn_comparison *m = &r->oc[i].cmp;
        snprintf(c[0], sizeof c[0], "%s", r->cands[i].key);
        if (r->oc[i].compared) {
            snprintf(c[1], 64, "%.3f", m->cand_median);
            snprintf(c[2], 64, "%.3f-%.3f", m->cand_lo, m->cand_hi);
            snprintf(c[3], 64, "%.3f", m->cand_p90);
            snprintf(c[4], 64, "%.3f", m->speedup);
            snprintf(c[5], 64, "%.3f-%.3f", m->speedup_lo, m->speedup_hi);
            snprintf(c[6], 64, "%.3g", m->mwu.p);
            snprintf(c[7], 64, "%.3f", m->delta);
        }
        snprintf(c[8], 64, "%s", r->oc[i].verdict);
        for (int j = 0; j < 9; ++j)
            p[j] = c[j][0] ? c[j] : NULL;
        fattn_rows_add(&rows, p, numeric);
    }
    fattn_rows_print(f, &rows, format, 0);
    fattn_rows_release(&rows);
}

static void print_json(const fattn_confirm_opts *o, const fattn_confirm_report *r, FILE *f)
{
    const fattn_confirm_baseline *b = &r->baseline;
    fprintf(f, "{\n  \"study\": %lld,\n  \"device\": ", r->study.id);
    fattn_json_string(f, r->device);
    fputs(",\n  \"timing\": ", f);
    fattn_json_string(f, r->method);
    fprintf(
        f,
        ",\n  \"n\": %ld,\n  \"resamples\": %ld,\n  \"level\": 0.95,\n  \"target\": %g,\n  \"baseline\": {\"given\": ",
        (long)o->n, o->resamples, o->target);
    fattn_json_string(f, b->given);
    fputs(", \"what\": ", f);
    fattn_json_string(f, r->base_desc);
    fputs(", \"chosen\": ", f);
    fattn_json_string(f, b->why);
    fputs("},\n  \"candidates\": [", f);
    for (int i = 0; i < r->k; ++i) {
        const fattn_confirm_outcome *x = &r->oc[i];
        const fattn_comparison *m = &x->cmp;
        fprintf(f, "%s\n    {\"confirmation\": %lld, \"trial\": %lld, \"config\": ", i ? "," : "", x->id,
                r->cands[i].trial);
        fattn_json_string(f, r->cands[i].key);
        fputs(", \"verdict\": ", f);
        fattn_json_string(f, x->verdict);
        if (x->compared) {
            fprintf(f,
                    ", \"median_us\": %.6g, \"ci_us\": [%.6g, %.6g], \"p10_us\": %.6g, \"p90_us\": %.6g, "
                    "\"base_median_us\": %.6g, \"base_ci_us\": [%.6g, %.6g], \"base_p90_us\": %.6g, "
                    "\"speedup\": %.6g, \"speedup_ci\": [%.6g, %.6g], \"mwu_u\": %.6g, \"mwu_p\": %.6g, "
                    "\"cliffs_delta\": %.6g, \"significant\": %s, \"p90_ok\": %s, \"success\": %s",
                    m->cand_median, m->cand_lo, m->cand_hi, m->cand_p10, m->cand_p90, m->base_median, m->base_lo,
                    m->base_hi, m->base_p90, m->speedup, m->speedup_lo, m->speedup_hi, m->mwu.u, m->mwu.p, m->delta,
                    m->significant ? "true" : "false", m->p90_ok ? "true" : "false", m->success ? "true" : "false");
        } else {
            fputs(", \"detail\": ", f);
            fattn_json_string(f, x->detail);
        }
        if (x->has_prev)
            fprintf(f,
                    ", \"previous\": {\"confirmation\": %lld, \"median_us\": %.6g, \"change_pct\": %.4g, "
                    "\"regression\": %s}",
                    x->prev.id, x->prev.median_us, x->change_pct, x->regression ? "true" : "false");
        fputc('}', f);
    }
    fputs("\n  ]\n}\n", f);
}

/* The head lines: the study, the timing, the baseline, the statistics. */
static void print_head(const fattn_confirm_opts *o, const fattn_confirm_report *r, FILE *f)
{
    const fattn_confirm_baseline *b = &r->baseline;
    char shape[96];
    fattn_shape_format(&r->study.shape, shape, sizeof shape);
    fprintf(f, "confirm: study %lld, %s on %s, %s\n", r->study.id, shape, r->arch, r->device);
    fprintf(f, "timing: %s; interleaved: one sample of each kernel per round\n", r->method);
    if (b->is_cudnn)
        fprintf(f, "baseline: cudnn, %s (%s)", r->base_desc, b->why);
    else if (!strncmp(b->given, "trial:", 6))
        fprintf(f, "baseline: %s, %s (%s)", b->given, b->cand.key, b->why);
    else
        fprintf(f, "baseline: %s (%s)", b->given, b->why);
    if (r->base_ok) {
        const fattn_comparison *bc = &r->oc[0].cmp;
        if (r->oc[0].compared)
            fprintf(f, ": median %.3f us, 95%% CI %.3f-%.3f, p90 %.3f\n", bc->base_median, bc->base_lo, bc->base_hi,
                    bc->base_p90);
        else
            fprintf(f, "\n");
    } else {
        fprintf(f, ": not measured: %s\n", r->base_detail);
    }
    fprintf(f,
            "statistics: %ld bootstrap resamples (seed %ld), 95%% percentile intervals; speedup = baseline "
            "median / candidate median; success: speedup >= %.2f, CIs apart, p90 no worse\n\n",
            o->resamples, o->measure.seed, o->target);
}

/* Each candidate's verdict line, and its comparison with the previous. */
static void print_verdicts(const fattn_confirm_opts *o, const fattn_confirm_report *r, FILE *f)
{
    for (int i = 0; i < r->k; ++i) {
        const fattn_confirm_outcome *x = &r->oc[i];
        const fattn_trial_cand *c = &r->cands[i];
        if (!x->compared) {
            fprintf(f, "%s: not compared: %s\n", c->key, x->detail);
            continue;
        }
        fprintf(f, "%s: %s; confirmation %lld (search measured %.3f us, trial %lld); Cliff's delta %.3f (%s)\n", c->key,
                x->verdict, x->id, c->median_us, c->trial, x->cmp.delta, fattn_cliffs_magnitude(x->cmp.delta));
        if (o->against && !x->has_prev)
            fprintf(f, "  against previous: no earlier confirmation of this configuration on this shape and GPU\n");
        else if (o->against)
            fprintf(f,
                    "  against previous: confirmation %lld (%s): median %.3f -> %.3f us (%+.2f%%), CI %.3f-%.3f "
                    "-> %.3f-%.3f: %s (threshold %.3g%%)\n",
                    x->prev.id, x->prev.created_at, x->prev.median_us, x->cmp.cand_median, x->change_pct,
                    x->prev.ci_lo_us, x->prev.ci_hi_us, x->cmp.cand_lo, x->cmp.cand_hi,
                    x->regression ? "REGRESSION" : "no regression", o->threshold);
    }
}

void fattn_report_confirm(const fattn_confirm_opts *o, const fattn_confirm_report *r, int format, FILE *f)
{
    if (format == FATTN_FMT_JSON) {
        print_json(o, r, f);
        return;
    }
    print_head(o, r, f);
    print_table(format, r, f);
    fputc('\n', f);
    print_verdicts(o, r, f);
}
