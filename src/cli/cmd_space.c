/*
 * cmd_space.c - fattn-tune space: count, list and filter a configuration space.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "export/table.h"
#include "util/err.h"
#include "util/strbuf.h"

static const char help_fmt[] =
    "usage: fattn-tune space [--space FILE] [--filter EXPR] [--count | --list] [--format table|csv|json]\n"
    "\n"
    "Counts the configurations of a space and shows its kernel family and each parameter's\n"
    "values; --list lists them (index, stable key, parameters) in the space's stable order.\n"
    "A space file is JSON: {\"family\": \"mma\", \"parameters\": {\"BLOCK_M\": [64, 128], ...}};\n"
    "\"family\" names the kernel family whose parameters it lists (known: %s), and a\n"
    "file without it is the mma family's (the mma.sync kernel, kernels/fattn_fwd.cu). A key\n"
    "of a family other than mma starts with the family's name. No GPU needed.\n"
    "\n"
    "  --count              print only the number of (matching) configurations\n"
    "  --list               list the (matching) configurations\n"
    "  --format FMT         table (default), csv or json\n"
    "  --space FILE         configuration space (default search/space.json)\n"
    "  --filter EXPR        only configurations matching, e.g. BLOCK_M>=64,CP_ASYNC=1\n"
    "  -h, --help           this help\n";

typedef struct space_opts {
    int count, list, format;
} space_opts;

static int handle(void *ctx, int opt, const char *arg)
{
    space_opts *o = ctx;
    switch (opt) {
    case OPT_COUNT: o->count = 1; return FATTN_OK;
    case OPT_LIST: o->list = 1; return FATTN_OK;
    case OPT_FORMAT: return fattn_format_parse(arg, "--format", &o->format);
    }
    return FATTN_EUSAGE;
}

static void describe(const fattn_target *t, size_t matching, int format)
{
    if (format == FATTN_FMT_JSON) {
        printf("{\n  \"space\": ");
        fattn_json_string(stdout, t->space.label);
        printf(",\n  \"sha256\": \"%s\",\n  \"count\": %zu,\n  \"matching\": %zu,\n  \"filter\": ", t->space.hash,
               t->space.count, matching);
        if (t->filter_text)
            fattn_json_string(stdout, t->filter_text);
        else
            fputs("null", stdout);
        printf(",\n  \"family\": \"%s\",\n  \"parameters\": {", t->space.fam->name);
        for (int p = 0, n = 0; p < t->space.fam->nparams; ++p) {
            if (!t->space.listed[p])
                continue;
            printf("%s\n    \"%s\": [", n++ ? "," : "", t->space.fam->params[p].name);
            for (int k = 0; k < t->space.nvalues[p]; ++k)
                printf("%s%d", k ? ", " : "", t->space.values[p][k]);
            printf("]");
        }
        printf("\n  }\n}\n");
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
        printf("space:          %s (sha256 %.16s)\n", t->space.label, t->space.hash);
        printf("family:         %s%s\n", t->space.fam->name,
               t->space.family_named ? "" : " (the default: the space file names no \"family\")");
        printf("configurations: %zu\n", t->space.count);
        if (t->filter_text)
            printf("matching:       %zu (%s)\n", matching, t->filter_text);
        putchar('\n');
    }
    fattn_rows_print(stdout, &rows, format, 0);
    fattn_rows_release(&rows);
}

int cmd_space(int argc, char **argv, cli_common *c)
{
    static const struct option opts[] = {
        CLI_COMMON_OPTIONS,
        {"space", required_argument, NULL, OPT_SPACE},
        {"filter", required_argument, NULL, OPT_FILTER},
        {"count", no_argument, NULL, OPT_COUNT},
        {"list", no_argument, NULL, OPT_LIST},
        {"format", required_argument, NULL, OPT_FORMAT},
        {NULL, 0, NULL, 0},
    };
    space_opts o = {0, 0, FATTN_FMT_TABLE};
    fattn_target t;
    int rc;
    char help[sizeof help_fmt + 256];
    snprintf(help, sizeof help, help_fmt, fattn_family_names());
    fattn_target_init(&t);
    rc = cli_parse(argc, argv, opts, "", c, &t, handle, &o, help, NULL);
    if (rc)
        goto out;
    if (o.count && o.list) {
        rc = fattn_error(FATTN_EUSAGE, "space: --count and --list exclude each other");
        goto out;
    }
    if ((rc = fattn_target_finish(&t, FATTN_NEED_SPACE, "space")))
        goto out;
    size_t matching = 0, *indices = fattn_xcalloc(t.space.count ? t.space.count : 1, sizeof *indices);
    for (size_t i = 0; i < t.space.count; ++i) {
        fattn_config cfg;
        fattn_space_config(&t.space, i, &cfg);
        if (!t.filter_text || fattn_filter_match(&t.filter, &cfg))
            indices[matching++] = i;
    }
    if (o.count)
        printf("%zu\n", matching);
    else if (o.list)
        cli_print_configs(&t.space, indices, matching, o.format);
    else
        describe(&t, matching, o.format);
    free(indices);
out:
    fattn_target_release(&t);
    return rc > 0 ? FATTN_OK : rc;
}
