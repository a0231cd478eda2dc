/*
 * cmd_space.c - fattn-tune space: count, list and filter a configuration space.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "export/table.h"
#include "report/report.h"
#include "util/err.h"

static const char help_fmt[] =
    "usage: fattn-tune space [--space FILE]... [--family NAME[,NAME]] [--filter EXPR] [--count | --list]\n"
    "                        [--format table|csv|json]\n"
    "\n"
    "Counts the configurations of a space and shows its kernel family and each parameter's\n"
    "values; --list lists them (index, stable key, parameters) in the space's stable order.\n"
    "Without --space or --family, every attention family's default space in turn (one after\n"
    "the other in a table; a JSON array of them; CSV takes one family); --count then prints\n"
    "one line per family: COUNT FAMILY SPACE.\n"
    "A space file is JSON: {\"family\": \"mma\", \"parameters\": {\"BLOCK_M\": [64, 128], ...}};\n"
    "\"family\" names the kernel family whose parameters it lists (known: %s), and a\n"
    "file without it is the mma family's (the mma.sync kernel, kernels/fattn_fwd.cu). A key\n"
    "of a family other than mma starts with the family's name. The attention families: mma\n"
    "(any arch) and wgmma (Hopper, search/space-wgmma.json, --smem-limit max); tmacopy is a\n"
    "test family (a TMA copy, not attention: the Hopper paths checked in CI). The kernel's\n"
    "SHA-256 and its hardware record (kernels/hardware-records.tsv) are shown. No GPU needed.\n"
    "\n"
    "  --count              print only the number of (matching) configurations\n"
    "  --list               list the (matching) configurations\n"
    "  --format FMT         table (default), csv or json\n"
    "  --space FILE         configuration space, repeatable (one per family; default: every attention\n"
    "                       family's own)\n"
    "  --family NAME[,NAME] only these families, each its default space or the --space given\n"
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

int cmd_space(int argc, char **argv, cli_common *c)
{
    static const struct option opts[] = {
        {"space", required_argument, NULL, OPT_SETTING},
        {"filter", required_argument, NULL, OPT_SETTING + 5}, /* set on the target */
        {"family", required_argument, NULL, OPT_SETTING + 6},
        {"count", no_argument, NULL, OPT_COUNT},
        {"list", no_argument, NULL, OPT_LIST},
        {"format", required_argument, NULL, OPT_FORMAT},
        {NULL, 0, NULL, 0},
    };
    space_opts o = {0, 0, FATTN_FMT_TABLE};
    fattn_target t;
    fattn_targets ts = {0};
    fattn_notes notes = {0};
    int rc;
    char help[sizeof help_fmt + 256];
    snprintf(help, sizeof help, help_fmt, fattn_family_names());
    fattn_target_init(&t);
    rc = cli_parse(argc, argv, &(cli_spec){opts, "", 0, handle, help}, &o, c, &t, NULL, NULL);
    if (rc)
        goto out;
    if (o.count && o.list) {
        rc = fattn_error(FATTN_EUSAGE, "space: --count and --list exclude each other");
        goto out;
    }
    if ((rc = fattn_targets_finish(&t, 0, NULL, NULL, "space", &ts, &notes))
        || (rc = cli_families_format(&ts, o.format, o.count ? "space --count" : "space")))
        goto out;
    fattn_notes_print(&notes, stderr);
    if (!o.count)
        cli_families_begin(&ts, o.format, stdout);
    for (int k = 0; k < ts.n; ++k) {
        fattn_target *f = &ts.t[k];
        size_t *indices, matching = fattn_space_select(&f->space, f->filter_text ? &f->filter : NULL, &indices);
        if (!o.count)
            cli_families_next(&ts, k, o.format, stdout);
        if (o.count && ts.n > 1)
            printf("%zu %s %s\n", matching, f->space.fam->name, f->space.label);
        else if (o.count)
            printf("%zu\n", matching);
        else if (o.list)
            fattn_report_configs(&f->space, indices, matching, o.format, stdout);
        else {
            fattn_target_hardware(f, c->kernel_dir);
            fattn_report_space(f, matching, o.format, stdout);
        }
        free(indices);
    }
    if (!o.count)
        cli_families_end(&ts, o.format, stdout);
out:
    fattn_targets_release(&ts);
    fattn_target_release(&t);
    return rc > 0 ? FATTN_OK : rc;
}
