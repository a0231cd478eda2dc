/*
 * main.c - fattn-tune's entry point: global options, then one subcommand
 * from the command table.
 *
 * Exit status: 0 success, 1 failure (environment: missing kernels, database,
 * no GPU), 2 usage error (what the user typed or wrote).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define FATTN_LSAN 1
#include <sanitizer/lsan_interface.h>
#else
#define FATTN_LSAN 0
#endif

#include "cli/cli.h"
#include "compile/batch.h"
#include "run/engine.h"
#include "util/err.h"
#include "util/misc.h"

/* What a command's shared setup is: the database mode of cli_open_db()
 * (and whether it opens one at all), and whether it needs a GPU (said in
 * the usage; the command probes it, fattn_gpu_arch, once its arguments are
 * checked). */
enum {
    CMD_NEEDS_GPU = 1,  /* runs kernels: a GPU must be present */
    CMD_READS_DB = 2,   /* opens the database read-only */
    CMD_WRITES_DB = 4,  /* creates or migrates it, and writes */
    CMD_UPDATES_DB = 8, /* writes an existing one */
};

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv, cli_common *c);
    unsigned flags;
    const char *summary;
} command;

static const command commands[] = {
    {"space", cmd_space, 0, "count, list and filter the configuration space"},
    {"gates", cmd_gates, 0, "run the hard gates for a shape and arch; --explain one configuration"},
    {"compile", cmd_compile, CMD_WRITES_DB, "compile every gate survivor with NVRTC and store its resources"},
    {"check", cmd_check, CMD_WRITES_DB,
     "run configurations through the kernel simulator on the CPU: faults, races, numerics"},
    {"query", cmd_query, CMD_READS_DB, "read studies, trials, rejections, confirmations and the compile cache"},
    {"export", cmd_export, CMD_READS_DB, "write the best configuration: C header, kernel, dispatch table, JSON, T4"},
    {"search", cmd_search, CMD_NEEDS_GPU | CMD_WRITES_DB,
     "search the space on a GPU: compile, verify, time, store every trial"},
    {"confirm", cmd_confirm, CMD_NEEDS_GPU | CMD_UPDATES_DB,
     "re-measure the best configurations against a baseline, with CIs"},
    {"bench", cmd_bench, CMD_NEEDS_GPU | CMD_READS_DB, "measure one configuration, optionally beside cuDNN"},
    {"report", cmd_report, CMD_READS_DB, "write a study as a self-contained HTML page with plots"},
    {"campaign", cmd_campaign, CMD_NEEDS_GPU | CMD_WRITES_DB,
     "tune every shape of a file, a study per row, over the GPUs; resumable as a whole"},
    {"merge", cmd_merge, 0, "merge results databases into a new one (studies, confirmations, checks, cache)"},
    {NULL, NULL, 0, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: fattn-tune [--db PATH] [--kernel-dir DIR] [-q] <command> [options]\n"
               "\n"
               "An autotuner for the fattn FlashAttention forward kernel.\n"
               "\n"
               "Commands:\n");
    for (const command *c = commands; c->name; ++c)
        fprintf(f, "  %-9s %s%s\n", c->name, c->summary, c->flags & CMD_NEEDS_GPU ? " [GPU]" : "");
    fprintf(
        f,
        "  help      this text, or a command's: fattn-tune help gates\n"
        "\n"
        "space, gates, compile, check, query, export, report and merge need no GPU. Run 'fattn-tune <command> --help' "
        "for options.\n"
        "Exit status: 0 success, 1 failure, 2 usage error, 3 a regression (confirm --against previous).\n");
}

static const command *find_command(const char *name)
{
    for (const command *c = commands; c->name; ++c)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

static int run(int argc, char **argv)
{
    cli_common common = {.db_path = FATTN_DEFAULT_DB, .argc = argc, .argv = argv};
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return FATTN_OK;
        } else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            printf("fattn-tune %s\n", FATTN_VERSION);
            return FATTN_OK;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            common.quiet = 1;
        } else if ((strcmp(a, "--db") == 0 || strcmp(a, "--kernel-dir") == 0) && i + 1 < argc) {
            common.db_given |= a[2] == 'd';
            *(a[2] == 'd' ? &common.db_path : &common.kernel_dir) = argv[++i];
        } else if (strncmp(a, "--db=", 5) == 0) {
            common.db_path = a + 5, common.db_given = 1;
        } else if (strncmp(a, "--kernel-dir=", 13) == 0) {
            common.kernel_dir = a + 13;
        } else {
            return fattn_error(FATTN_EUSAGE, "unknown option '%s'; see fattn-tune --help", a);
        }
    }
    if (i == argc) {
        usage(stderr);
        return FATTN_EUSAGE;
    }
    const char *name = argv[i];
    if (strcmp(name, "__worker") == 0) {
        /* The GPU worker process (run/worker.h), started by fattn-tune itself. */
        long fd;
        if (i + 1 >= argc || fattn_parse_long(argv[i + 1], 3, 1024, &fd))
            return fattn_error(FATTN_EUSAGE, "__worker is started by fattn-tune itself, with a socket");
        return fattn_worker_main((int)fd) ? FATTN_EFAIL : FATTN_OK;
    }
    if (strcmp(name, "help") == 0) {
        if (i + 1 == argc) {
            usage(stdout);
            return FATTN_OK;
        }
        const command *c = find_command(argv[i + 1]);
        if (!c)
            return fattn_error(FATTN_EUSAGE, "help: unknown command '%s'; see fattn-tune --help", argv[i + 1]);
        char *help_argv[] = {(char *)c->name, "--help", NULL};
        return c->fn(2, help_argv, &common);
    }
    const command *c = find_command(name);
    if (!c)
        return fattn_error(FATTN_EUSAGE, "unknown command '%s'; see fattn-tune --help", name);
    common.db_mode = c->flags & CMD_WRITES_DB    ? FATTN_DB_WRITE
                     : c->flags & CMD_UPDATES_DB ? FATTN_DB_UPDATE
                                                 : FATTN_DB_READ;
    /* The default database is relative to the working folder: say where
     * one was created, once. */
    struct stat st;
    int had_default = stat(FATTN_DEFAULT_DB, &st) == 0;
    int rc = c->fn(argc - i, argv + i, &common);
    if (!had_default && !common.quiet && c->flags & (CMD_WRITES_DB | CMD_UPDATES_DB)
        && !strcmp(common.db_path, FATTN_DEFAULT_DB) && stat(FATTN_DEFAULT_DB, &st) == 0) {
        char *abs = realpath(FATTN_DEFAULT_DB, NULL);
        fprintf(stderr,
                "fattn-tune: note: created the database %s (the default, in the working folder; --db PATH "
                "names another)\n",
                abs ? abs : FATTN_DEFAULT_DB);
        free(abs);
    }
    return rc;
}

int main(int argc, char **argv)
{
    int rc = run(argc, argv), status = fattn_exit_status(rc);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "fattn-tune: cannot write the output: %s\n", strerror(errno));
        status = 1;
    }
    /* Compiles a search gave up at its end may still run: exit now, without
     * the libraries' destructors (NVRTC's, in use on their threads). Every
     * file is closed, the database too. */
    if (fattn_compiles_abandoned()) {
        fflush(stderr);
#if FATTN_LSAN
        __lsan_do_leak_check(); /* what exit would have checked: the abandoned jobs' memory is on their stacks */
#endif
        _exit(status);
    }
    return status;
}
