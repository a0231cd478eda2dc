/*
 * cmd_export.c - fattn-tune export: a study's best configuration as a C
 * header (default), JSON, the measured cubin, or the specialized kernel
 * source; every trial as T4 JSON; or several studies (shapes) as one header
 * with a dispatch table. Output on stdout or into files written atomically.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "export/export.h"
#include "space/params.h"
#include "util/err.h"
#include "util/fs.h"

#define MAX_STUDIES 64

static const char help[] =
    "usage: fattn-tune export [--study N] [--format header|json|cubin|t4] [-o FILE] [--kernel FILE.cu]\n"
    "       fattn-tune export --study N --config KEY [--format header|json|cubin] [-o FILE]\n"
    "       fattn-tune export --study N --study M ... [-o FILE]\n"
    "       fattn-tune export --campaign[=ID] [-o FILE]\n"
    "\n"
    "Writes a study's best configuration (default: the latest study): the configuration its\n"
    "confirmations found fastest (fattn-tune confirm), or before any confirmation its fastest timed\n"
    "trial. The C header defines FATTN_BLOCK_M ... FATTN_HALF2, FATTN_HEAD_DIM, FATTN_CAUSAL,\n"
    "FATTN_THREADS and FATTN_SMEM_BYTES, with its provenance (tool version, study, shape, arch, device,\n"
    "search metric, and the confirmed median, CI, baseline and speedup when confirmed).\n"
    "Build the tuned kernel as the header's recipe says, with the nvcc flags of the measured NVRTC build\n"
    "(FATTN_TUNED_NVCC_FLAGS: -gencode for the arch, -std=c++17, --use_fast_math):\n"
    "  nvcc FLAGS -c -include fattn_tuned.h kernels/fattn_fwd.cu\n"
    "A study without timed trials has nothing to export: trials are timed on a GPU, or without one\n"
    "by search --evaluator replay:FILE from a measured landscape (tests/data/landscape-*.csv).\n"
    "-o FILE is replaced whole or not at all (a symlink's target); a device, FIFO or folder is\n"
    "refused; -o - is standard output.\n"
    "\n"
    "  --study N            study id (see fattn-tune query studies); repeat it to export several\n"
    "                       studies (shapes) into one header with a table and fattn_tuned_lookup()\n"
    "  --campaign[=ID]      the dispatch table of a campaign's bests (default: the latest campaign):\n"
    "                       every row with a timed trial, keyed by shape, arch and GPU model\n"
    "                       (fattn_tuned_lookup_gpu: an H100's and an H200's bests are both sm_90),\n"
    "                       the rows left out or not done named on stderr\n"
    "  --config KEY         not the best: configuration KEY (a key or NAME=VALUE,...) as the study\n"
    "                       measured it, its fastest timed trial there (a tunable's effect beside the\n"
    "                       best, e.g. for scripts/compare_sdpa.py --variant)\n"
    "  --format FMT         header (default), json, cubin (the exact compiled kernel that was measured,\n"
    "                       from the compile cache; needs -o), or t4 (every trial in the T4 results\n"
    "                       format of Kernel Tuner and KTT)\n"
    "  -o, --output FILE    write FILE (replaced atomically; a regular file or a new path; - for\n"
    "                       standard output) instead of standard output\n"
    "  --kernel FILE        also write the kernel source specialized for the configuration (the header,\n"
    "                       then kernels/fattn_fwd.cu with its headers inlined): nvcc FLAGS -c FILE builds it.\n"
    "                       The source must be the one the study measured (the same sha256)\n"
    "  --allow-kernel-change  with --kernel: write the source now in --kernel-dir though it is not the\n"
    "                       one the study measured, after re-gating and re-compiling the configuration\n"
    "                       under it on the study's arch and gate limits (said in one line; the file\n"
    "                       names both hashes)\n"
    "  --db PATH            results database (default results/fattn.db)\n"
    "  --kernel-dir DIR     where the kernel source is (for --kernel)\n"
    "  -h, --help           this help\n";

typedef struct export_opts {
    long long studies[MAX_STUDIES];
    int nstudies;
    int format;
    const char *output, *kernel;
    int allow_kernel;
    char config[FATTN_KEY_MAX]; /* --config, canonical; "" for the best */
    int campaign_given;
    long long campaign; /* --campaign=ID; 0: the latest */
} export_opts;

static int handle(void *ctx, int opt, const char *arg)
{
    export_opts *o = ctx;
    long v;
    switch (opt) {
    case OPT_STUDY:
        if (cli_long("--study", arg, 1, 2147483647L, &v))
            return FATTN_EUSAGE;
        if (o->nstudies == MAX_STUDIES)
            return fattn_error(FATTN_EUSAGE, "--study: at most %d studies", MAX_STUDIES);
        o->studies[o->nstudies++] = v;
        return FATTN_OK;
    case OPT_FORMAT: {
        static const char *const names[] = {"header", "json", "cubin", "t4"};
        for (int i = 0; i < 4; ++i)
            if (!strcmp(arg, names[i])) {
                o->format = i;
                return FATTN_OK;
            }
        return fattn_error(FATTN_EUSAGE, "--format '%s': expected header, json, cubin or t4", arg);
    }
    case 'o':
    case OPT_OUTPUT: o->output = arg; return FATTN_OK;
    case OPT_KERNEL: o->kernel = arg; return FATTN_OK;
    case OPT_CONFIG: {
        fattn_config cfg;
        if (fattn_config_parse(arg, "--config", &cfg))
            return FATTN_EUSAGE;
        fattn_config_key(&cfg, o->config);
        return FATTN_OK;
    }
    case OPT_ALLOW_KERNEL_CHANGE: o->allow_kernel = 1; return FATTN_OK;
    case OPT_CAMPAIGN: o->campaign_given = 1; return arg ? cli_id("--campaign", arg, &o->campaign) : FATTN_OK;
    }
    return FATTN_EUSAGE;
}

int cmd_export(int argc, char **argv, cli_common *c)
{
    static const struct option opts[] = {
        {"study", required_argument, NULL, OPT_STUDY},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"output", required_argument, NULL, OPT_OUTPUT},
        {"kernel", required_argument, NULL, OPT_KERNEL},
        {"allow-kernel-change", no_argument, NULL, OPT_ALLOW_KERNEL_CHANGE},
        {"config", required_argument, NULL, OPT_CONFIG},
        {"campaign", optional_argument, NULL, OPT_CAMPAIGN},
        {NULL, 0, NULL, 0},
    };
    export_opts o = {.format = FATTN_EXPORT_HEADER};
    fattn_store *s = NULL;
    fattn_kernel_src src = {0};
    int rc;
    fattn_outfile out = {0}, kout = {0};

    rc = cli_parse(argc, argv, &(cli_spec){opts, "o:", 0, handle, help}, &o, c, NULL, NULL, NULL);
    if (rc)
        return rc > 0 ? FATTN_OK : rc;
    if (o.campaign_given && (o.nstudies || o.format != FATTN_EXPORT_HEADER || o.config[0] || o.kernel))
        return fattn_error(FATTN_EUSAGE, "--campaign writes the dispatch table of the campaign's studies as a header "
                                         "(no --study, --format, --config or --kernel)");
    if (o.format == FATTN_EXPORT_CUBIN && fattn_outfile_is_stdout(o.output))
        return fattn_error(FATTN_EUSAGE, "export --format cubin writes binary: give -o FILE");
    if (o.nstudies > 1 && o.format != FATTN_EXPORT_HEADER)
        return fattn_error(FATTN_EUSAGE,
                           "several --study options make one header with a dispatch table; "
                           "--format %s takes one study",
                           o.format == FATTN_EXPORT_JSON    ? "json"
                           : o.format == FATTN_EXPORT_CUBIN ? "cubin"
                                                            : "t4");
    if (o.config[0] && (o.nstudies > 1 || o.format == FATTN_EXPORT_T4 || o.kernel))
        return fattn_error(FATTN_EUSAGE, "--config exports one configuration of one study as a header, json or "
                                         "cubin (no --kernel, t4 or several --study)");
    if (o.kernel && o.nstudies > 1)
        return fattn_error(FATTN_EUSAGE, "--kernel writes one configuration's kernel; give one --study");
    if (o.allow_kernel && !o.kernel)
        return fattn_error(FATTN_EUSAGE, "--allow-kernel-change goes with --kernel FILE");
    if (o.kernel && fattn_outfile_is_stdout(o.kernel) && fattn_outfile_is_stdout(o.output))
        return fattn_error(FATTN_EUSAGE,
                           "--kernel %s and the header would both go to standard output; "
                           "give -o FILE or --kernel FILE",
                           o.kernel);
    if (o.kernel && o.output && !strcmp(o.kernel, o.output))
        return fattn_error(FATTN_EUSAGE, "--kernel and -o name the same file '%s'", o.kernel);
    if ((rc = cli_open_db(c, &s)))
        goto out;
    if (o.campaign_given) {
        long long *ids = NULL;
        int n = 0;
        if (!(rc = fattn_store_campaign_studies(s, &o.campaign, &ids, &n, c->quiet ? NULL : stderr))
            && !(rc = fattn_outfile_open(&out, o.output)))
            rc = fattn_outfile_finish(&out, fattn_outfile_close(&out, fattn_export_dispatch(s, ids, n, out.f)));
        free(ids);
        goto out;
    }
    if (o.kernel) {
        /* The kernel of the study's family. */
        const fattn_family *fam;
        if ((rc = fattn_export_best_family(s, o.nstudies ? o.studies[0] : 0, &fam))
            || (rc = fattn_kernel_src_load(c->kernel_dir, fam->kernel_file, &src)))
            goto out;
    }
    /* Both targets open before either is written, and both replaced or
     * neither. */
    if ((o.kernel && (rc = fattn_outfile_open(&kout, o.kernel))) || (rc = fattn_outfile_open(&out, o.output))) {
        fattn_outfile_finish(&kout, rc);
        goto out;
    }
    if (o.kernel
        && !(rc = fattn_export_kernel_check(s, o.nstudies ? o.studies[0] : 0, &src, o.allow_kernel,
                                            c->quiet ? NULL : stderr)))
        rc = fattn_export_kernel(s, o.nstudies ? o.studies[0] : 0, &src, kout.f);
    if (!rc)
        rc = o.config[0] ? fattn_export_best(s, o.nstudies ? o.studies[0] : 0, o.config, o.format, out.f)
                         : fattn_export_write(s, o.studies, o.nstudies, o.format, out.f);
    /* Both written whole before either replaces its file; with an error,
     * both temporaries go. */
    rc = fattn_outfile_close(&kout, rc);
    rc = fattn_outfile_close(&out, rc);
    rc = fattn_outfile_finish(&kout, rc);
    rc = fattn_outfile_finish(&out, rc);
out:
    fattn_store_close(&s);
    fattn_kernel_src_release(&src);
    return rc;
}
