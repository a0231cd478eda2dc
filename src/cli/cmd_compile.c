/*
 * cmd_compile.c - fattn-tune compile: the compile procedure
 * (study/compile.h) and its summary. No GPU needed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cli.h"
#include "compile/pool.h"
#include "export/table.h"
#include "study/compile.h"
#include "util/err.h"

static const char help_head[] =
    "usage: fattn-tune compile --shape B,H,S,D [--arch ARCH] [options]\n"
    "\n"
    "Runs the static gates over the space, compiles every survivor for the arch with NVRTC\n"
    "(cubin, registers, spills, stack frame, shared memory), checks the compiled shared memory\n"
    "against the layout model, applies the post-compile gates (spills, low_occupancy,\n"
    "unlaunchable, and ptxas's setmaxnreg_ignored and wgmma_serialized notices), and\n"
    "records every configuration as a trial of a new study in the database. Compiled cubins go\n"
    "to the compile cache: a second run of the same space compiles nothing. No GPU needed.\n"
    "\n"
    "  --jobs N             compile threads (default: the number of processors)\n"
    "  --sample N           compile a fixed sample of N survivors (seeded) instead of all\n"
    "  --seed S             seed of --sample (default 1)\n";

typedef struct compile_opts {
    long jobs, sample, seed;
    int has_sample;
} compile_opts;

static int handle(void *ctx, int opt, const char *arg)
{
    compile_opts *o = ctx;
    switch (opt) {
    case OPT_JOBS: return cli_long("--jobs", arg, 1, 256, &o->jobs);
    case OPT_SAMPLE: o->has_sample = 1; return cli_long("--sample", arg, 1, 1000000, &o->sample);
    case OPT_SEED: return cli_long("--seed", arg, 0, 2147483647L, &o->seed);
    }
    return FATTN_EUSAGE;
}

static void summary(const fattn_compile_study_report *r, const fattn_target *t)
{
    const fattn_space_verdicts *sv = &r->sv;
    const fattn_batch_stats *bs = &r->bs;
    char shape[96];
    fattn_shape_format(&t->shape, shape, sizeof shape);
    printf("study %lld: compile of %s for %s on %s\n", r->study, t->space.label, shape, t->arch->name);
    printf("%zu configurations: %zu rejected by the static gates, %zu survive", sv->considered,
           sv->considered - sv->nsurvivors, sv->nsurvivors);
    if ((size_t)r->total < sv->nsurvivors)
        printf(", a sample of %d compiled", r->total);
    printf("\ncompiled %d (%d by NVRTC, %d from the cache) in %.1f s\n", bs->finished - bs->env_errors, bs->compiled,
           bs->cache_hits, r->seconds);
    if (r->nprior)
        printf("taken up: %d survivors and %zu trials in all recorded by the study's earlier run\n", r->done0,
               r->nprior);
    const char *names[] = {"status", "reason", "count"};
    const unsigned char numeric[] = {0, 0, 1};
    fattn_rows rows;
    fattn_rows_init(&rows, 3, names);
    for (int k = 1; k < FATTN_R_COUNT; ++k) {
        int n = (k <= FATTN_R_LAST_STATIC ? sv->counts[k] : 0) + r->by_reason[k];
        if (!n)
            continue;
        char count[32];
        snprintf(count, sizeof count, "%d", n);
        const char *cells[] = {"rejected", fattn_reason(k)->code, count};
        fattn_rows_add(&rows, cells, numeric);
    }
    char ok[32], err[32];
    snprintf(ok, sizeof ok, "%d", r->by_reason[FATTN_R_NONE]);
    const char *cells[] = {"compiled", "", ok};
    fattn_rows_add(&rows, cells, numeric);
    if (r->env_errors) {
        snprintf(err, sizeof err, "%d", r->env_errors);
        const char *ecells[] = {"error", "", err};
        fattn_rows_add(&rows, ecells, numeric);
    }
    printf("\n");
    fattn_rows_print(stdout, &rows, FATTN_FMT_TABLE, 0);
    fattn_rows_release(&rows);
    if (r->compiled_ok)
        printf("\nlayout check: compiled shared memory %s the layout model for %d of %d compiled configurations\n",
               r->mismatches ? "differs from" : "equals", r->mismatches ? r->mismatches : r->compiled_ok,
               r->compiled_ok);
    printf("survivors ready for the GPU: %d (fattn-tune query trials --study %lld --status compiled)\n",
           r->by_reason[FATTN_R_NONE], r->study);
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
        CLI_COMMON_OPTIONS,
        CLI_TARGET_OPTIONS,
        {"jobs", required_argument, NULL, OPT_JOBS},
        {"sample", required_argument, NULL, OPT_SAMPLE},
        {"seed", required_argument, NULL, OPT_SEED},
        {NULL, 0, NULL, 0},
    };
    compile_opts o = {.jobs = fattn_cpu_count(), .seed = 1};
    fattn_target t;
    fattn_store *store = NULL;
    fattn_compile_study_report r = {0};
    char *cmdline = NULL, help[4096];
    int rc;

    snprintf(help, sizeof help, "%s%s%s", help_head, cli_target_help, cli_common_help);
    fattn_target_init(&t);
    if ((rc = cli_parse(argc, argv, opts, "", c, &t, handle, &o, help, NULL))
        || (rc = fattn_target_finish(&t, FATTN_NEED_SHAPE | FATTN_NEED_ARCH | FATTN_NEED_SPACE, "compile")))
        goto out;
    cmdline = cli_command_line(c);
    fattn_compile_study_opts so = {.jobs = (int)o.jobs,
                                   .sample = o.has_sample ? o.sample : 0,
                                   .seed = o.seed,
                                   .kernel_dir = c->kernel_dir,
                                   .db_path = c->db_path,
                                   .argv_text = cmdline,
                                   .interrupted = cli_interrupted(),
                                   .guard = cli_signals_guard,
                                   .log = c->quiet ? NULL : stderr,
                                   .tty = isatty(2)};
    if ((rc = fattn_compile_study(&so, &t, &store, &r)))
        goto out;
    summary(&r, &t);
    rc = outcome(&r);
out:
    fattn_compile_study_report_release(&r);
    free(cmdline);
    fattn_store_close(&store);
    fattn_target_release(&t);
    return rc > 0 ? FATTN_OK : rc;
}
