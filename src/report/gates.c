/*
 * gates.c - the gates' reports (report.h): the static gates over a space
 * (each reason's count, examples and fix, the survivors) and every gate's
 * verdict on one configuration.
 */
#include <stdio.h>

#include "export/table.h"
#include "report/report.h"

static void print_context(const fattn_target *t, const char *space_label, FILE *f)
{
    char shape[96];
    fattn_shape_format(&t->shape, shape, sizeof shape);
    if (space_label)
        fprintf(f, "space:  %s (%zu configurations%s%s)\n", space_label, t->space.count,
                t->filter_text ? ", filter " : "", t->filter_text ? t->filter_text : "");
    fprintf(f, "shape:  %s\n", shape);
    fprintf(f, "arch:   %s, shared-memory limit %u B per block%s\n", t->arch->name, t->lim.smem_limit,
            t->have_gpu ? " (from the GPU)" : "");
    if (t->hw_known) {
        char hw[FATTN_HW_LINE_MAX];
        fattn_hw_describe(&t->hw, hw, sizeof hw);
        fprintf(f, "family: %s, kernel %s (sha256 %.12s), %s\n", t->space.fam->name, t->kernel_file, t->kernel_hash,
                hw);
    }
}

void fattn_report_gates(const fattn_target *t, const fattn_space_verdicts *sv, size_t nex, int format, FILE *f)
{
    const char *names[] = {"reason", "count", "example", "detail", "fix"};
    const unsigned char numeric[] = {0, 1, 0, 0, 0};
    const int *counts = sv->counts;
    fattn_rows rows;
    fattn_rows_init(&rows, 5, names);
    for (int r = FATTN_R_FIRST_STATIC; r <= FATTN_R_LAST_STATIC; ++r) {
        if (!(t->space.fam->static_gates >> r & 1u)) /* a gate the family has not */
            continue;
        char count[32], key[FATTN_KEY_MAX];
        size_t shown = 0;
        snprintf(count, sizeof count, "%d", counts[r]);
        for (size_t i = 0; i < sv->n && shown < nex; ++i) {
            if (sv->v[i].reason != r)
                continue;
            fattn_config c;
            fattn_space_config(&t->space, i, &c);
            fattn_config_key(&c, key);
            const char *cells[] = {fattn_reason(r)->code, shown++ ? "" : count, key, sv->v[i].detail,
                                   fattn_reason_fix(r, t->space.fam)};
            fattn_rows_add(&rows, cells, numeric);
        }
        if (!shown) {
            const char *cells[] = {fattn_reason(r)->code, count, NULL, NULL, NULL};
            fattn_rows_add(&rows, cells, numeric);
        }
    }
    char surv[32];
    snprintf(surv, sizeof surv, "%d", counts[FATTN_R_NONE]);
    const char *last[] = {"survivors", surv, NULL, NULL, NULL};
    fattn_rows_add(&rows, last, numeric);
    if (format == FATTN_FMT_TABLE) {
        print_context(t, t->space.label, f);
        fprintf(f, "\n");
        /* The fix column is printed below the table, once per reason. */
        rows.ncols = 4;
        fattn_rows_print(f, &rows, format, 110);
        rows.ncols = 5;
        fprintf(f, "\n%zu configurations: %zu rejected, %zu survive.\n", sv->considered,
                sv->considered - sv->nsurvivors, sv->nsurvivors);
        int any = 0;
        for (int r = FATTN_R_FIRST_STATIC; r <= FATTN_R_LAST_STATIC; ++r)
            if (counts[r]) {
                fprintf(f, "%s  %-20s %s; fix: %s\n", any++ ? "" : "\nWhat to change:\n", fattn_reason(r)->code,
                        fattn_reason(r)->what, fattn_reason_fix(r, t->space.fam));
            }
    } else {
        fattn_rows_print(f, &rows, format, 0);
    }
    fattn_rows_release(&rows);
}

static const char *verdict_word(int pass)
{
    return pass > 0 ? "pass" : pass == 0 ? "REJECT" : "-";
}

void fattn_report_explain(const fattn_target *t, const fattn_config *cfg, const fattn_explanation *x, int format,
                          FILE *f)
{
    char key[FATTN_KEY_MAX], desc[512];
    fattn_config_key(cfg, key);
    fattn_config_describe(cfg, desc, sizeof desc);
    const char *names[] = {"gate", "verdict", "detail", "fix"};
    fattn_rows rows;
    fattn_rows_init(&rows, 4, names);
    for (int r = FATTN_R_FIRST_STATIC; r <= FATTN_R_LAST_COMPILE; ++r) {
        if (r <= FATTN_R_LAST_STATIC && !(cfg->fam->static_gates >> r & 1u))
            continue;
        const char *cells[] = {fattn_reason(r)->code, verdict_word(x->all[r].pass), x->all[r].detail,
                               x->all[r].pass == 0 ? fattn_reason_fix(r, cfg->fam) : ""};
        fattn_rows_add(&rows, cells, NULL);
    }
    if (format == FATTN_FMT_TABLE) {
        print_context(t, NULL, f);
        fprintf(f, "config: %s\n        %s\n\n", key, desc);
        rows.ncols = 3;
        fattn_rows_print(f, &rows, format, 0);
        rows.ncols = 4;
        if (x->first)
            fprintf(f, "\nRejected: %s (%s). Fix: %s\n", fattn_reason(x->first)->code, fattn_reason(x->first)->what,
                    fattn_reason_fix(x->first, cfg->fam));
        else
            fprintf(f, "\nPasses every gate%s.\n", x->compiled ? "" : " evaluated");
    } else {
        fattn_rows_print(f, &rows, format, 0);
    }
    fattn_rows_release(&rows);
}
