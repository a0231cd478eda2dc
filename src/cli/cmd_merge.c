/*
 * cmd_merge.c - fattn-tune merge: several results databases into a new one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "store/merge.h"
#include "store/store.h"
#include "util/err.h"

static const char help[] =
    "usage: fattn-tune merge DB... -o OUT.db\n"
    "\n"
    "Copies every study of the databases named (its families, trials and rejections, timing samples,\n"
    "confirmations and their samples), every simulator run with its checks, and the compile cache into\n"
    "OUT.db, a new database, with new ids, in the order named. A study keeps its GPU, arch and kernel\n"
    "source hash, and where it came from (the first database it was merged from and its id there:\n"
    "query --sql \"SELECT id, uuid, origin_db, origin_id FROM studies\"). A study found in several\n"
    "databases (by its UUID: a database merged twice, two copies of one, a task's database copied before\n"
    "and after a requeue) is copied once, from the copy that got furthest (the most trials, then the\n"
    "most confirmations); copies that differ are named in a note. The inputs are never written: each is\n"
    "read through a snapshot, upgraded there when its schema is older. OUT.db appears whole or not at\n"
    "all: a failure or Ctrl-C leaves nothing behind.\n"
    "Refused, with nothing written: an OUT.db that exists and a database named twice (exit 2); an input\n"
    "that is missing, damaged, of a newer schema or of another program (exit 1).\n"
    "\n"
    "  -o, --output OUT.db  the new database (required)\n"
    "  -q                   no summary\n"
    "  -h, --help           this help\n";

static int handle(void *ctx, int opt, const char *arg)
{
    const char **out = ctx;
    if (opt == 'o' || opt == OPT_OUTPUT) {
        *out = arg;
        return FATTN_OK;
    }
    return FATTN_EUSAGE;
}

static void summary(const fattn_merge_input *in, int n, const char *out)
{
    long long studies = 0, trials = 0, confirmations = 0, runs = 0, cache = 0;
    for (int i = 0; i < n; ++i) {
        const fattn_merge_input *r = &in[i];
        printf("%s (schema %d): %lld stud%s copied", r->path, r->version, r->studies, r->studies == 1 ? "y" : "ies");
        if (r->studies_elsewhere)
            printf(" (%lld already from another copy)", r->studies_elsewhere);
        printf(", %lld trials, %lld samples, %lld confirmations, %lld simulator runs", r->trials, r->samples,
               r->confirmations, r->sim_runs);
        if (r->sim_runs_elsewhere)
            printf(" (%lld already from another copy)", r->sim_runs_elsewhere);
        printf(", %lld new compile-cache entries", r->cache_entries);
        if (r->campaigns)
            printf(", %lld campaign%s", r->campaigns, r->campaigns == 1 ? "" : "s");
        printf("\n");
        studies += r->studies, trials += r->trials, confirmations += r->confirmations, runs += r->sim_runs;
        cache += r->cache_entries;
    }
    printf("wrote %s: %lld studies, %lld trials, %lld confirmations, %lld simulator runs, %lld compile-cache "
           "entries\n",
           out, studies, trials, confirmations, runs, cache);
}

int cmd_merge(int argc, char **argv, cli_common *c)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, OPT_OUTPUT},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL;
    int first;
    int rc = cli_parse(argc, argv, &(cli_spec){opts, "o:", 0, handle, help}, &out, c, NULL, NULL, &first);
    if (rc)
        return rc > 0 ? FATTN_OK : rc;
    if (c->db_given)
        return fattn_error(FATTN_EUSAGE, "merge: --db does not apply; name the databases to merge and -o OUT.db");
    if (first == argc)
        return fattn_error(FATTN_EUSAGE, "merge: expected the databases to merge (fattn-tune merge A.db B.db -o "
                                         "OUT.db)");
    if (!out)
        return fattn_error(FATTN_EUSAGE, "merge: expected -o OUT.db, the new database to write");
    int n = argc - first;
    fattn_merge_input *in = fattn_xcalloc((size_t)n, sizeof *in);
    for (int i = 0; i < n; ++i)
        in[i].path = argv[first + i];
    cli_signals_guard(1);
    rc = fattn_merge(in, n, out, c->quiet ? NULL : stderr, cli_interrupted());
    cli_signals_guard(0);
    if (!rc && !c->quiet)
        summary(in, n, out);
    free(in);
    return rc;
}
