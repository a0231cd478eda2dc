/*
 * cmd_campaign.c - fattn-tune campaign: a study per row of a file of shapes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign/campaign.h"
#include "cli/cli.h"
#include "gpu/device.h"
#include "run/worker.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/sha256.h"

static const char help[] =
    "usage: fattn-tune campaign FILE [--devices LIST|all] [--rows LIST] [--uuid UUID] [--new]\n"
    "                           [-- SEARCH-OPTION...]\n"
    "       fattn-tune campaign FILE --emit slurm DIR [--gpus-per-task N] [--rows-per-task K] [--rows LIST]\n"
    "                           [--uuid UUID] [-- SEARCH-OPTION...]\n"
    "\n"
    "Tunes every shape of FILE, a study per row: each row runs as fattn-tune search (every family the\n"
    "GPU runs, the row's budget and trials, the options after -- such as --strategy, --jobs, --arch).\n"
    "FILE is TSV (a header line of tab-separated column names, then a row per line; # starts a\n"
    "comment) or JSON ({\"rows\": [{...}]}); columns: shape (B,H,S,D), mask (none or causal), budget\n"
    "(20m, 1h30m), trials, evaluator (gpu or replay:FILE, relative to FILE's folder), name. A row needs a\n"
    "budget or trials; search/campaign-seeds.tsv is an example (the seed shapes).\n"
    "The campaign is recorded in the database (query --sql \"SELECT * FROM campaign_rows\"), each study\n"
    "naming its campaign and row (search --campaign-row); a row has a study per GPU model. Run again\n"
    "(the same FILE and options, or --uuid), it skips the rows done, resumes the interrupted ones\n"
    "(Ctrl-C, kill -9, a failure) and runs the others; a row another live process runs is left to it.\n"
    "The outcome of each row is a line of the table printed at the end; export --campaign writes the\n"
    "dispatch table of the bests.\n"
    "\n"
    "  --devices LIST       the GPUs to use, e.g. 0,1,3, or all: one study per GPU at a time, the next\n"
    "                       row starting on a GPU as its study ends (default: the default GPU); the\n"
    "                       GPUs must be of one model\n"
    "  --rows LIST          only these rows, e.g. 1,3-5 (numbered from 1 in the file's order)\n"
    "  --uuid UUID          the campaign's identity: the campaign of that UUID in the database, or a\n"
    "                       new one with it (tasks of one campaign on several machines share it)\n"
    "  --new                a campaign of its own, though one of the same file and options exists\n"
    "  --emit slurm DIR     run nothing: write DIR/array.sbatch (an sbatch array, a task per\n"
    "                       --rows-per-task rows, each asking --gres=gpu:N, running its rows on\n"
    "                       node-local disk and copying its database to DIR/task-K.db when done,\n"
    "                       DIR/task-K.partial.db otherwise, from which a requeued task goes on),\n"
    "                       DIR/merge.sbatch (after the array, whatever became of its tasks: merges\n"
    "                       what finished into DIR/merged.db, exports DIR/dispatch.h, lists what did\n"
    "                       not) and DIR/submit.sh (submits both); docs/scale-out.md\n"
    "  --gpus-per-task N    with --emit: the GPUs each task asks for (default 1; 0 asks none)\n"
    "  --rows-per-task K    with --emit: the rows each task runs, in turn on its GPUs (default 1)\n"
    "  --db PATH            results database (default results/fattn.db)\n"
    "  -q                   no lines as rows start and end\n"
    "  -h, --help           this help\n"
    "\n"
    "Exit status: 0 when every row asked for is done, 1 when one is not (run again to go on), 2 for a\n"
    "mistake in FILE or the campaign's options (nothing written; a mistake among the search options\n"
    "after -- is each row's search's to report: the campaign is recorded, its rows not run, exit 1).\n";

typedef struct campaign_cli {
    fattn_campaign_opts run;
    const char *emit_dir; /* --emit slurm DIR */
    int gpus_per_task, rows_per_task;
} campaign_cli;

static int handle(void *ctx, int opt, const char *arg)
{
    campaign_cli *o = ctx;
    switch (opt) {
    case OPT_DEVICES: return cli_devices(arg, o->run.devices, FATTN_CAMPAIGN_MAX_DEVICES, &o->run.ndevices);
    case OPT_ROWS: o->run.rows = arg; return FATTN_OK;
    case OPT_NEW: o->run.fresh = 1; return FATTN_OK;
    case OPT_EMIT:
        if (strcmp(arg, "slurm"))
            return fattn_error(FATTN_EUSAGE, "--emit '%s': expected slurm (then the folder: --emit slurm DIR)", arg);
        o->emit_dir = ""; /* the operand after it */
        return FATTN_OK;
    case OPT_GPUS_PER_TASK: return cli_int("--gpus-per-task", arg, 0, 64, &o->gpus_per_task);
    case OPT_ROWS_PER_TASK: return cli_int("--rows-per-task", arg, 1, 10000, &o->rows_per_task);
    case OPT_UUID:
        if (!fattn_uuid_valid(arg))
            return fattn_error(FATTN_EUSAGE,
                               "--uuid '%s': expected a UUID in lower case, such as "
                               "0b7c5e1a-3f2d-4c8e-9a41-6d2f0e7b9c13",
                               arg);
        o->run.uuid = arg;
        return FATTN_OK;
    }
    return FATTN_EUSAGE;
}

static void print_table(const fattn_campaign_report *r, FILE *f)
{
    fprintf(f, "campaign %lld (%s)%s\n\n", r->campaign, r->uuid, r->created ? ", new" : "");
    fprintf(f, "%-4s  %-22s  %-6s  %-11s  %-10s  %s\n", "row", "shape", "study", "status", "best_us", "best");
    fprintf(f, "%-4s  %-22s  %-6s  %-11s  %-10s  %s\n", "---", "-----", "-----", "------", "-------", "----");
    for (int k = 0; k < r->n; ++k) {
        const fattn_campaign_result *x = &r->rows[k];
        char study[24] = "-", best[24] = "-";
        if (x->study)
            snprintf(study, sizeof study, "%lld", x->study);
        if (x->best_us > 0)
            snprintf(best, sizeof best, "%.3f", x->best_us);
        char status[48];
        snprintf(status, sizeof status, "%s%s", x->status, x->skipped ? " (before)" : "");
        fprintf(f, "%-4d  %-22s  %-6s  %-11s  %-10s  %s\n", x->row, x->label, study, status, best,
                *x->best_key ? x->best_key : "-");
    }
    fprintf(f, "\n%d of %d rows done\n", r->done, r->n);
}

int cmd_campaign(int argc, char **argv, cli_common *c)
{
    static const struct option opts[] = {
        {"devices", required_argument, NULL, OPT_DEVICES},
        {"rows", required_argument, NULL, OPT_ROWS},
        {"uuid", required_argument, NULL, OPT_UUID},
        {"new", no_argument, NULL, OPT_NEW},
        {"emit", required_argument, NULL, OPT_EMIT},
        {"gpus-per-task", required_argument, NULL, OPT_GPUS_PER_TASK},
        {"rows-per-task", required_argument, NULL, OPT_ROWS_PER_TASK},
        {NULL, 0, NULL, 0},
    };
    campaign_cli o = {.run = {.ndevices = 0}, .gpus_per_task = 1, .rows_per_task = 1};
    fattn_campaign_report r = {0};
    int first;
    /* The campaign's arguments before --, every row's search options after. */
    int dashdash = 1;
    while (dashdash < argc && strcmp(argv[dashdash], "--"))
        ++dashdash;
    int rc = cli_parse(dashdash, argv, &(cli_spec){opts, "", 0, handle, help}, &o, c, NULL, NULL, &first);
    if (rc)
        return rc > 0 ? FATTN_OK : rc;
    if (o.emit_dir && dashdash - first == 2) /* campaign FILE --emit slurm DIR: two operands */
        o.emit_dir = argv[first + 1];
    else if (o.emit_dir)
        return fattn_error(FATTN_EUSAGE, "--emit slurm: expected the campaign FILE and a DIR to write the scripts "
                                         "to (campaign FILE --emit slurm DIR)");
    else if ((o.gpus_per_task != 1 || o.rows_per_task != 1) && !o.emit_dir)
        return fattn_error(FATTN_EUSAGE, "--gpus-per-task and --rows-per-task go with --emit slurm DIR");
    if (o.run.fresh && o.run.uuid)
        return fattn_error(FATTN_EUSAGE, "--new makes a campaign of a new UUID; leave --uuid out (or --new)");
    if (o.emit_dir && (o.run.ndevices || o.run.fresh))
        return fattn_error(FATTN_EUSAGE, "--emit slurm: each task's GPUs are --gpus-per-task (no --devices, --new)");
    if (!o.emit_dir && dashdash - first != 1)
        return dashdash == first ? fattn_error(FATTN_EUSAGE, "campaign: expected a campaign FILE (such as "
                                                             "search/campaign-seeds.tsv)")
                                 : cli_extra_operand("campaign", argv[first + 1]);
    if (o.run.ndevices < 0 && (rc = cli_devices_all(o.run.devices, FATTN_CAMPAIGN_MAX_DEVICES, &o.run.ndevices)))
        return rc;
    if (o.emit_dir) {
        if (c->db_given)
            return fattn_error(FATTN_EUSAGE, "--emit slurm: each task writes its own database (no --db)");
        o.run.file = argv[first];
        o.run.kernel_dir = c->kernel_dir;
        o.run.search_args = dashdash < argc ? argv + dashdash + 1 : NULL;
        o.run.nsearch_args = dashdash < argc ? argc - dashdash - 1 : 0;
        o.run.exe = fattn_self_exe();
        return fattn_campaign_emit_slurm(&o.run, o.emit_dir, o.gpus_per_task, o.rows_per_task,
                                         c->quiet ? NULL : stdout);
    }
    char *cmdline = cli_command_line(c);
    o.run.file = argv[first];
    o.run.db_path = c->db_path;
    o.run.kernel_dir = c->kernel_dir;
    o.run.search_args = dashdash < argc ? argv + dashdash + 1 : NULL;
    o.run.nsearch_args = dashdash < argc ? argc - dashdash - 1 : 0;
    o.run.argv_text = cmdline;
    o.run.exe = fattn_self_exe();
    o.run.interrupted = cli_interrupted();
    o.run.guard = cli_signals_guard;
    o.run.log = c->quiet ? NULL : stderr;
    rc = fattn_campaign_run(&o.run, &r);
    if (r.campaign && r.n)
        print_table(&r, stdout);
    fattn_campaign_report_release(&r);
    free(cmdline);
    return rc;
}
