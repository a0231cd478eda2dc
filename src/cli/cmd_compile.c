/*
 * cmd_compile.c - fattn-tune compile: the compile procedure
 * (study/compile.h) and its summary. No GPU needed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cli.h"
#include "compile/pool.h"
#include "report/report.h"
#include "study/compile.h"
#include "util/err.h"

static const char help_head[] =
    "usage: fattn-tune compile --shape B,H,S,D [--arch ARCH] [options]\n"
    "\n"
    "Runs the static gates over the space, compiles every survivor for the arch with NVRTC\n"
    "(cubin, registers, spills, stack frame, shared memory), checks the compiled shared memory\n"
    "against the layout model, applies the post-compile gates (spills, low_occupancy,\n"
    "unlaunchable, ptxas's setmaxnreg_ignored and wgmma_serialized notices, and\n"
    "setmaxnreg_pool: the launch's registers against the warpgroups' setmaxnreg), and\n"
    "records every configuration as a trial of a new study in the database. Compiled cubins go\n"
    "to the compile cache: a second run of the same space compiles nothing. No GPU needed.\n"
    "Without --space or --family, every attention family the arch runs, a study each.\n"
    "\n"
    "  --jobs N             compile threads (default: the number of processors)\n"
    "  --sample N           compile a fixed sample of N survivors (seeded) instead of all\n"
    "  --seed S             seed of --sample (default 1)\n";

static int handle(void *ctx, int opt, const char *arg)
{
    fattn_compile_study_opts *o = ctx;
    switch (opt) {
    case OPT_JOBS: return cli_int("--jobs", arg, 1, 256, &o->jobs);
    case OPT_SAMPLE: return cli_long("--sample", arg, 1, 1000000, &o->sample);
    case OPT_SEED: return cli_long("--seed", arg, 0, 2147483647L, &o->seed);
    }
    return FATTN_EUSAGE;
}

/* Exit status beyond the summary: interrupted, environment errors, a layout
 * model the compiler disagrees with. */
static int outcome(const fattn_compile_study_report *r)
{
    if (r->interrupted)
        return fattn_error(FATTN_EFAIL,
                           "interrupted after %d of %d compiles; study %lld keeps every trial recorded, "
                           "the compile cache every cubin: run the same command again to take it up where it "
                           "stopped",
                           r->done, r->total, r->study);
    if (r->env_errors)
        return fattn_error(FATTN_EFAIL, "%d configuration%s could not be compiled or read (first: %s)", r->env_errors,
                           r->env_errors == 1 ? "" : "s", r->first_env_error);
    if (r->mismatches)
        return fattn_error(FATTN_EFAIL,
                           "%d compiled configuration%s differ from the layout model (a fattn-tune bug): "
                           "fattn-tune query trials --study %lld --reason smem_mismatch",
                           r->mismatches, r->mismatches == 1 ? "" : "s", r->study);
    return FATTN_OK;
}

int cmd_compile(int argc, char **argv, cli_common *c)
{
    static const struct option opts[] = {
        {"jobs", required_argument, NULL, OPT_JOBS},
        {"sample", required_argument, NULL, OPT_SAMPLE},
        {"seed", required_argument, NULL, OPT_SEED},
        {NULL, 0, NULL, 0},
    };
    fattn_compile_study_opts o = {.jobs = (int)fattn_cpu_count(), .seed = 1};
    fattn_target t;
    fattn_targets ts = {0};
    fattn_notes notes = {0};
    fattn_store *store = NULL;
    char *cmdline = NULL;
    int rc;

    fattn_target_init(&t);
    if ((rc = cli_parse(argc, argv, &(cli_spec){opts, "", CLI_TARGET, handle, help_head}, &o, c, &t, NULL, NULL))
        || (rc = fattn_targets_finish(&t, FATTN_NEED_SHAPE | FATTN_NEED_ARCH, NULL, NULL, "compile", &ts, &notes))
        || (notes.n && (rc = cli_open_db(c, &store)))) /* the notes once the database cannot refuse */
        goto out;
    fattn_notes_print(&notes, stderr);
    o.argv_text = cmdline = cli_command_line(c);
    o.kernel_dir = c->kernel_dir, o.db_path = c->db_path, o.log = c->quiet ? NULL : stderr, o.tty = isatty(2);
    o.interrupted = cli_interrupted(), o.guard = cli_signals_guard;
    /* A study per family, each summarized; the first failure ends the command. */
    for (int k = 0; k < ts.n && !rc; ++k) {
        fattn_compile_study_report r = {0};
        if (k)
            printf("\n");
        if (!(rc = fattn_compile_study(&o, &ts.t[k], &store, &r))) {
            fattn_report_compile(&r, &ts.t[k], stdout);
            rc = outcome(&r);
        }
        fattn_compile_study_report_release(&r);
    }
out:
    free(cmdline);
    fattn_store_close(&store);
    fattn_targets_release(&ts);
    fattn_target_release(&t);
    return rc > 0 ? FATTN_OK : rc;
}
