/*
 * cmd_query.c - fattn-tune query: read the database, never write it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "export/export.h"
#include "export/table.h"
#include "store/read.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/misc.h"

static const char help[] =
    "usage: fattn-tune query [studies]                   every study\n"
    "       fattn-tune query trials [--study N] [--status S] [--reason R] [--limit N]\n"
    "       fattn-tune query top [--study N] [--limit N]   fastest timed trials\n"
    "       fattn-tune query rejections [--study N]        counts by reason, with the fix\n"
    "       fattn-tune query trial ID                      one trial in full, compile log included\n"
    "       fattn-tune query cache [--limit N]             the compile cache\n"
    "       fattn-tune query confirmations [--study N]     confirm runs, newest first (all studies\n"
    "                                                      without --study)\n"
    "       fattn-tune query landscape [--study N] [--family F]  every trial's verdict and time, as\n"
    "                                                      the replay evaluator reads it (one family's:\n"
    "                                                      --family for a study of several)\n"
    "       fattn-tune query sim [--run N] [--limit N]     a simulator run's verdicts (fattn-tune check),\n"
    "                                                      failures first\n"
    "       fattn-tune query simruns                       every simulator run\n"
    "       fattn-tune query gpus [--study N]              a search over several GPUs: the reference\n"
    "                                                      configuration's time on each, by round\n"
    "       fattn-tune query --sql 'SELECT ...'            one SELECT or reading PRAGMA (docs/schema.md)\n"
    "\n"
    "Opens the database read-only. --study defaults to the latest study.\n"
    "\n"
    "  --study N            study id (see 'query studies')\n"
    "  --run N              simulator run id (see 'query simruns'; default the latest)\n"
    "  --status S           trials with this status: rejected, compiled, error, ok\n"
    "  --reason R           trials rejected for this reason (a gate code such as spills)\n"
    "  --limit N            at most N rows (default 50 for trials, 10 for top, 0 = all)\n"
    "  --sql-timeout D      stop a --sql statement still running after D (default 60s; 0: never)\n"
    "  --format FMT         table (default), csv or json\n"
    "  -o, --output FILE    write FILE (replaced whole, only on success; a regular file or a new\n"
    "                       path; - for standard output) instead of standard output\n"
    "  --db PATH            results database (default results/fattn.db)\n"
    "  -h, --help           this help\n";

typedef struct query_opts {
    long long study, run;
    const char *status, *reason, *sql, *output, *family;
    long limit;
    int has_limit, format;
    double sql_timeout_ms;
    int sql_timeout_given;
} query_opts;

static int handle(void *ctx, int opt, const char *arg)
{
    query_opts *o = ctx;
    switch (opt) {
    case OPT_STUDY: return cli_id("--study", arg, &o->study);
    case OPT_FAMILY: o->family = arg; return FATTN_OK;
    case OPT_STATUS:
        if (strcmp(arg, "rejected") && strcmp(arg, "compiled") && strcmp(arg, "error") && strcmp(arg, "ok")
            && strcmp(arg, "runtime_fault") && strcmp(arg, "timeout"))
            return fattn_error(FATTN_EUSAGE, "--status '%s': expected rejected, compiled, error or ok", arg);
        o->status = arg;
        return FATTN_OK;
    case OPT_REASON:
        if (!fattn_reason_find(arg))
            return fattn_error(FATTN_EUSAGE,
                               "--reason '%s': unknown gate; expected a code such as tiling, "
                               "smem_overflow, bank_conflicts, spills or low_occupancy",
                               arg);
        o->reason = arg;
        return FATTN_OK;
    case OPT_RUN: return cli_id("--run", arg, &o->run);
    case OPT_LIMIT: o->has_limit = 1; return cli_long("--limit", arg, 0, 100000000, &o->limit);
    case OPT_SQL: o->sql = arg; return FATTN_OK;
    case OPT_SQL_TIMEOUT:
        o->sql_timeout_given = 1;
        if (strcmp(arg, "0") && (fattn_parse_duration(arg, &o->sql_timeout_ms) || o->sql_timeout_ms <= 0))
            return fattn_error(FATTN_EUSAGE, "--sql-timeout '%s': expected a duration such as 60s or 5m, or 0", arg);
        if (!strcmp(arg, "0"))
            o->sql_timeout_ms = 0;
        return FATTN_OK;
    case OPT_FORMAT: return fattn_format_parse(arg, "--format", &o->format);
    case 'o':
    case OPT_OUTPUT: o->output = arg; return FATTN_OK;
    }
    return FATTN_EUSAGE;
}

/* The view named argv[*first] (default studies), its trial id taken. */
static int pick_view(int argc, char **argv, int *first, const query_opts *o, const fattn_view **v, long *trial)
{
    const char *name = *first < argc ? argv[(*first)++] : "studies";
    if (!(*v = fattn_view_find(name)))
        return fattn_error(FATTN_EUSAGE,
                           "query: unknown subcommand '%s'; expected studies, trials, top, rejections, "
                           "trial ID, cache, landscape, confirmations, sim, simruns or gpus",
                           name);
    if ((*v)->of == FATTN_VIEW_OF_TRIAL) {
        if (*first >= argc)
            return fattn_error(FATTN_EUSAGE, "query trial: expected a trial id, e.g. fattn-tune query trial 12");
        if (cli_long("query trial", argv[(*first)++], 1, 2147483647L, trial))
            return FATTN_EUSAGE;
    }
    if (o->run && (*v)->of != FATTN_VIEW_OF_RUN)
        return fattn_error(FATTN_EUSAGE, "query: --run picks a simulator run, for 'query sim' only");
    return *first < argc ? cli_extra_operand("query", argv[*first]) : FATTN_OK;
}

/* Prints view v of `id`: a table, or a trial as a record. */
static int print_view(fattn_store *s, const fattn_view *v, const query_opts *o, long long id, FILE *out, int quiet)
{
    fattn_read_args a = {.id = id, .text = o->status, .text2 = o->reason, .limit = o->has_limit ? o->limit : v->limit};
    fattn_rows rows;
    int rc = fattn_view_rows(s, v, &a, &rows);
    if (!rc && v->of == FATTN_VIEW_OF_TRIAL)
        fattn_rows_print_record(out, &rows, 0, o->format);
    else if (!rc && !rows.nrows && !quiet && o->format == FATTN_FMT_TABLE)
        fprintf(stderr, v->empty, id), fputc('\n', stderr);
    if (!rc && v->of != FATTN_VIEW_OF_TRIAL)
        fattn_rows_print(out, &rows, o->format, o->format == FATTN_FMT_TABLE ? 100 : 0);
    fattn_rows_release(&rows);
    return rc;
}

/* query --sql's rows, printed as they come: a table sized by its first
 * SQL_TABLE_HOLD rows, so that memory stays bounded whatever the count. */
#define SQL_TABLE_HOLD 1000

typedef struct sql_out {
    FILE *f;
    int format;
    fattn_printer *p;
} sql_out;

static void sql_begin(void *arg, int ncols, const char *const *names)
{
    sql_out *so = arg;
    so->p =
        fattn_printer_open(so->f, so->format, so->format == FATTN_FMT_TABLE ? 100 : 0, SQL_TABLE_HOLD, ncols, names);
}

static void sql_row(void *arg, const char *const *cells, const unsigned char *numeric)
{
    fattn_printer_row(((sql_out *)arg)->p, cells, numeric);
}

int cmd_query(int argc, char **argv, cli_common *c)
{
    static const struct option opts[] = {
        {"study", required_argument, NULL, OPT_STUDY},
        {"status", required_argument, NULL, OPT_STATUS},
        {"reason", required_argument, NULL, OPT_REASON},
        {"limit", required_argument, NULL, OPT_LIMIT},
        {"run", required_argument, NULL, OPT_RUN},
        {"sql", required_argument, NULL, OPT_SQL},
        {"sql-timeout", required_argument, NULL, OPT_SQL_TIMEOUT},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"output", required_argument, NULL, OPT_OUTPUT},
        {"family", required_argument, NULL, OPT_FAMILY},
        {NULL, 0, NULL, 0},
    };
    query_opts o = {.format = FATTN_FMT_TABLE, .sql_timeout_ms = 60000};
    const fattn_view *v = NULL;
    fattn_outfile out = {0};
    fattn_store *s = NULL;
    int first, rc;
    long trial = 0;
    long long id;

    rc = cli_parse(argc, argv, &(cli_spec){opts, "o:", 0, handle, help}, &o, c, NULL, NULL, &first);
    if (rc)
        return rc > 0 ? FATTN_OK : rc;
    if (o.sql_timeout_given && !o.sql)
        return fattn_error(FATTN_EUSAGE, "query: --sql-timeout goes with --sql");
    if (o.sql && first < argc)
        return fattn_error(FATTN_EUSAGE, "query: --sql takes no subcommand ('%s' given)", argv[first]);
    if ((rc = pick_view(argc, argv, &first, &o, &v, &trial))) /* with --sql: none named, --run refused */
        return rc;
    if (o.family && (!v || v->of != FATTN_VIEW_OF_LANDSCAPE))
        return fattn_error(FATTN_EUSAGE, "query: --family goes with query landscape (one family's landscape)");
    if ((rc = cli_open_db(c, &s)) || (rc = fattn_outfile_open(&out, o.output)))
        goto out;
    if (o.sql) {
        sql_out so = {.f = out.f, .format = o.format};
        rc = fattn_store_user_sql(s, o.sql, o.sql_timeout_ms, &(fattn_row_sink){sql_begin, sql_row, &so});
        fattn_printer_close(&so.p); /* a JSON result stopped by --sql-timeout still closed */
    } else if (!(rc = fattn_view_subject(s, v, o.study, o.run, trial, &id))) {
        rc = v->of == FATTN_VIEW_OF_LANDSCAPE ? fattn_export_landscape(s, id, o.family, out.f)
                                              : print_view(s, v, &o, id, out.f, c->quiet);
    }
out:
    rc = fattn_outfile_finish(&out, rc);
    fattn_store_close(&s);
    return rc;
}
