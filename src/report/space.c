/*
 * space.c - a space's reports (report.h): its family and each parameter's
 * values, and a list of its configurations.
 */
#include <stdio.h>
#include <string.h>

#include "export/table.h"
#include "report/report.h"
#include "util/strbuf.h"

void fattn_report_space(const fattn_target *t, size_t matching, int format, FILE *f)
{
    if (format == FATTN_FMT_JSON) {
        fprintf(f, "{\n  \"space\": ");
        fattn_json_string(f, t->space.label);
        fprintf(f, ",\n  \"sha256\": \"%s\",\n  \"count\": %zu,\n  \"matching\": %zu,\n  \"filter\": ", t->space.hash,
                t->space.count, matching);
        if (t->filter_text)
            fattn_json_string(f, t->filter_text);
        else
            fputs("null", f);
        fprintf(f, ",\n  \"family\": \"%s\",\n", t->space.fam->name);
        if (t->hw_known) {
            char hw[FATTN_HW_LINE_MAX];
            fattn_hw_describe(&t->hw, hw, sizeof hw);
            fputs("  \"kernel\": ", f);
            fattn_json_string(f, t->kernel_file);
            fprintf(f,
                    ",\n  \"kernel_sha256\": \"%s\",\n  \"proven_on_hardware\": %s,\n  \"hardware\": ", t->kernel_hash,
                    t->hw.proven ? "true" : "false");
            fattn_json_string(f, hw);
            fputs(",\n", f);
        }
        fprintf(f, "  \"parameters\": {");
        for (int p = 0, n = 0; p < t->space.fam->nparams; ++p) {
            if (!t->space.listed[p])
                continue;
            fprintf(f, "%s\n    \"%s\": [", n++ ? "," : "", t->space.fam->params[p].name);
            for (int k = 0; k < t->space.nvalues[p]; ++k)
                fprintf(f, "%s%d", k ? ", " : "", t->space.values[p][k]);
            fprintf(f, "]");
        }
        fprintf(f, "\n  }\n}\n");
        return;
    }
    const char *names[] = {"parameter", "values", "meaning"};
    fattn_rows rows;
    fattn_rows_init(&rows, 3, names);
    const fattn_param_info *params = t->space.fam->params;
    for (int p = 0; p < t->space.fam->nparams; ++p) {
        if (!t->space.listed[p] && params[p].test_only)
            continue;
        fattn_strbuf sb;
        fattn_sb_init(&sb);
        for (int k = 0; k < t->space.nvalues[p]; ++k)
            fattn_sb_addf(&sb, "%s%d", k ? " " : "", t->space.values[p][k]);
        if (!t->space.listed[p])
            fattn_sb_adds(&sb, " (default)");
        const char *cells[] = {params[p].name, sb.s, params[p].help};
        fattn_rows_add(&rows, cells, NULL);
        fattn_sb_release(&sb);
    }
    if (format == FATTN_FMT_TABLE) {
        fprintf(f, "space:          %s (sha256 %.16s)\n", t->space.label, t->space.hash);
        fprintf(f, "family:         %s%s\n", t->space.fam->name,
                t->space.family_named ? "" : " (the default: the space file names no \"family\")");
        if (t->hw_known) {
            char hw[FATTN_HW_LINE_MAX];
            fattn_hw_describe(&t->hw, hw, sizeof hw);
            fprintf(f, "kernel:         %s (sha256 %s)\nhardware:       %s\n", t->kernel_file, t->kernel_hash, hw);
        }
        fprintf(f, "configurations: %zu\n", t->space.count);
        if (t->filter_text)
            fprintf(f, "matching:       %zu (%s)\n", matching, t->filter_text);
        fputc('\n', f);
    }
    fattn_rows_print(f, &rows, format, 0);
    fattn_rows_release(&rows);
}

void fattn_report_configs(const fattn_space *space, const size_t *indices, size_t n, int format, FILE *out)
{
    /* index, key, then the family's tunables (its test-only overrides left out) */
    const fattn_family *f = space->fam;
    const char *names[2 + FATTN_MAX_PARAMS] = {"index", "key"};
    unsigned char numeric[2 + FATTN_MAX_PARAMS];
    int cols[FATTN_MAX_PARAMS], ncols = 0;
    fattn_rows rows;
    for (int p = 0; p < f->nparams; ++p)
        if (!f->params[p].test_only) {
            names[2 + ncols] = f->params[p].name;
            cols[ncols++] = p;
        }
    memset(numeric, 1, sizeof numeric);
    numeric[1] = 0;
    fattn_rows_init(&rows, 2 + ncols, names);
    for (size_t k = 0; k < n; ++k) {
        fattn_config c;
        char cells[2 + FATTN_MAX_PARAMS][FATTN_KEY_MAX];
        const char *ptrs[2 + FATTN_MAX_PARAMS];
        fattn_space_config(space, indices[k], &c);
        snprintf(cells[0], sizeof cells[0], "%zu", indices[k]);
        fattn_config_key(&c, cells[1]);
        for (int i = 0; i < ncols; ++i)
            snprintf(cells[2 + i], sizeof cells[2 + i], "%d", c.v[cols[i]]);
        for (int i = 0; i < 2 + ncols; ++i)
            ptrs[i] = cells[i];
        fattn_rows_add(&rows, ptrs, numeric);
    }
    fattn_rows_print(out, &rows, format, 0);
    fattn_rows_release(&rows);
}
