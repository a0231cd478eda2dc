/*
 * cmd_report.c - fattn-tune report: a study as a self-contained HTML page.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "export/export.h"
#include "report/report.h"
#include "util/err.h"
#include "util/fs.h"

#define MAX_STUDIES 16

static const char help[] =
    "usage: fattn-tune report [--study S]... -o report.html\n"
    "\n"
    "Writes a self-contained HTML page (inline SVG and CSS, no script, nothing fetched) about a study\n"
    "(default: the latest). A search's page: its settings; every trial it tried (compiled, ran, timed\n"
    "or failed) as a point against the order tried and against wall time (log scale; rejected and\n"
    "failed trials as crosses; the best so far as a line); the p10-p90 spread of the 20 fastest and a\n"
    "table of the ten fastest; the time against each parameter's values (a strip plot per parameter\n"
    "that varies); the latest confirmation's samples for candidate and baseline, with its\n"
    "statistics; the rejections before and after compiling, apart. The best time and, once\n"
    "confirmed, the baseline's are reference lines in every plot of times. A compile study's page:\n"
    "compile times, resources (registers, spills, shared memory, occupancy; the registers against\n"
    "each parameter), the configurations ready for a GPU, the rejections. A section without data is\n"
    "left out.\n"
    "With several --study options (the same shape searched with different strategies or seeds), each\n"
    "is a series in the plots of trials (of compile times, for compile studies); the first is the one\n"
    "reported in full. A search and a compile study are not compared (exit 2).\n"
    "\n"
    "  --study S            study id (see fattn-tune query studies); repeatable\n"
    "  -o, --output FILE    write FILE (replaced atomically; a regular file or a new path); without\n"
    "                       it, or with -, standard output\n"
    "  --db PATH            results database (default results/fattn.db)\n"
    "  -h, --help           this help\n";

typedef struct report_opts {
    long long studies[MAX_STUDIES];
    int n;
    const char *output;
} report_opts;

static int handle(void *ctx, int opt, const char *arg)
{
    report_opts *o = ctx;
    long v;
    switch (opt) {
    case OPT_STUDY:
        if (cli_long("--study", arg, 1, 2147483647L, &v))
            return FATTN_EUSAGE;
        if (o->n == MAX_STUDIES)
            return fattn_error(FATTN_EUSAGE, "--study: at most %d studies", MAX_STUDIES);
        o->studies[o->n++] = v;
        return FATTN_OK;
    case 'o':
    case OPT_OUTPUT: o->output = arg; return FATTN_OK;
    }
    return FATTN_EUSAGE;
}

int cmd_report(int argc, char **argv, cli_common *c)
{
    static const struct option opts[] = {
        {"study", required_argument, NULL, OPT_STUDY},
        {"output", required_argument, NULL, OPT_OUTPUT},
        {NULL, 0, NULL, 0},
    };
    report_opts o = {.n = 0};
    fattn_store *s = NULL;
    fattn_outfile out = {0};
    int rc = cli_parse(argc, argv, &(cli_spec){opts, "o:", 0, handle, help}, &o, c, NULL, NULL, NULL);
    if (rc)
        return rc > 0 ? FATTN_OK : rc;
    if ((rc = cli_open_db(c, &s)))
        return rc;
    if (!o.n) {
        if (!(o.studies[0] = fattn_latest_study(s))) {
            fattn_store_close(&s);
            return FATTN_EFAIL;
        }
        o.n = 1;
    }
    if (!(rc = fattn_outfile_open(&out, o.output)))
        rc = fattn_outfile_finish(&out, fattn_report_write(s, o.studies, o.n, out.f));
    fattn_store_close(&s);
    return rc;
}
