/*
 * cmd_export.c - fattn-tune export: a study's best configuration as a C
 * header (default) or JSON, on stdout or into a file written atomically.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "export/export.h"
#include "util/err.h"
#include "util/fs.h"

static const char help[] =
    "usage: fattn-tune export [--study N] [--format header|json|cubin] [-o FILE]\n"
    "\n"
    "Writes the fastest timed configuration of a study (default: the latest) as a C header\n"
    "defining FATTN_BLOCK_M ... FATTN_HALF2, FATTN_HEAD_DIM, FATTN_CAUSAL, FATTN_THREADS and\n"
    "FATTN_SMEM_BYTES, with its provenance (tool version, study, shape, arch, device, metric).\n"
    "Build the tuned kernel with: nvcc -include fattn_tuned.h kernels/fattn_fwd.cu\n"
    "A study without timed trials (trials are timed on a GPU) has nothing to export.\n"
    "\n"
    "  --study N            study id (see fattn-tune query studies)\n"
    "  --format FMT         header (default), json, or cubin (the exact compiled kernel that was\n"
    "                       measured, from the compile cache; needs -o)\n"
    "  -o, --output FILE    write FILE (replaced atomically) instead of standard output\n"
    "  --db PATH            results database (default results/fattn.db)\n"
    "  -h, --help           this help\n";

typedef struct export_opts {
    long study;
    int format;
    const char *output;
} export_opts;

static int handle(void *ctx, int opt, const char *arg)
{
    export_opts *o = ctx;
    switch (opt) {
    case OPT_STUDY: return cli_long("--study", arg, 1, 2147483647L, &o->study);
    case OPT_FORMAT:
        if (strcmp(arg, "header") == 0)
            o->format = FATTN_EXPORT_HEADER;
        else if (strcmp(arg, "json") == 0)
            o->format = FATTN_EXPORT_JSON;
        else if (strcmp(arg, "cubin") == 0)
            o->format = FATTN_EXPORT_CUBIN;
        else
            return fattn_error(FATTN_EUSAGE, "--format '%s': expected header, json or cubin", arg);
        return FATTN_OK;
    case 'o':
    case OPT_OUTPUT: o->output = arg; return FATTN_OK;
    }
    return FATTN_EUSAGE;
}

int cmd_export(int argc, char **argv, cli_common *c)
{
    static const struct option opts[] = {
        CLI_COMMON_OPTIONS,
        {"study", required_argument, NULL, OPT_STUDY},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"output", required_argument, NULL, OPT_OUTPUT},
        {NULL, 0, NULL, 0},
    };
    export_opts o = {0, FATTN_EXPORT_HEADER, NULL};
    fattn_store *s = NULL;
    int rc;
    fattn_outfile out = {0};

    rc = cli_parse(argc, argv, opts, "o:", c, NULL, handle, &o, help, NULL);
    if (rc)
        return rc > 0 ? FATTN_OK : rc;
    if (o.format == FATTN_EXPORT_CUBIN && !o.output)
        return fattn_error(FATTN_EUSAGE, "export --format cubin writes binary: give -o FILE");
    if ((rc = fattn_store_open(c->db_path ? c->db_path : FATTN_DEFAULT_DB, FATTN_DB_READ, &s)))
        return rc;
    if (!(rc = fattn_outfile_open(&out, o.output)))
        rc = fattn_outfile_finish(&out, fattn_export_best(s, o.study, o.format, out.f));
    fattn_store_close(&s);
    return rc;
}
