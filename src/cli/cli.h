/*
 * cli.h - what the subcommands share: the command context, and the options
 * that fill the library's target and measurement (job/job.h).
 *
 * Every subcommand parses and validates all its arguments before it opens
 * the database, so a mistake never leaves anything half-written.
 */
#ifndef FATTN_CLI_CLI_H
#define FATTN_CLI_CLI_H

#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "confirm/confirm.h"
#include "job/job.h"

/* Progress on stderr: a line redrawn in place on a terminal; otherwise (a
 * file, a pipe, CI) a whole line at least this often, in ms. -q: none. */
#define CLI_PROGRESS_LOG_MS 10000

typedef struct cli_common {
    const char *db_path;    /* --db, default FATTN_DEFAULT_DB (results/fattn.db): never NULL */
    int db_given;           /* --db was given */
    int db_mode;            /* how the command opens it (its table entry): FATTN_DB_READ, _WRITE, _UPDATE */
    const char *kernel_dir; /* --kernel-dir, default see util/paths.h */
    int quiet;              /* -q: no progress, no notes */
    int argc;               /* the whole command line, for the study record */
    char **argv;
} cli_common;

/* Long-option ids (beyond single characters). The target's options are
 * OPT_SETTING + k and the measurement's OPT_MEASURE + k (distinct, so that
 * getopt finds an abbreviation of two ambiguous): set by name
 * (fattn_target_set, fattn_measure_set). */
enum {
    OPT_SETTING = 2000, /* .. 2099: the target's options, the limits from +10 (options.c) */
    OPT_MEASURE = 2100, /* .. 2199: --reps, --samples, --atol, ... */
    OPT_DB = 1000,
    OPT_KERNEL_DIR,
    OPT_FORMAT,
    OPT_STUDY,
    OPT_LIMIT,
    OPT_STATUS,
    OPT_REASON,
    OPT_SQL,
    OPT_SQL_TIMEOUT,
    OPT_EXPLAIN,
    OPT_EXAMPLES,
    OPT_LIST,
    OPT_COUNT,
    OPT_JOBS,
    OPT_SAMPLE,
    OPT_SAMPLES,
    OPT_SEED,
    OPT_NO_COMPILE,
    OPT_OUTPUT,
    OPT_STRATEGY,
    OPT_TRIALS,
    OPT_BUDGET,
    OPT_EVALUATOR,
    OPT_RESUME,
    OPT_SKIP_GATE,
    OPT_TRIAL,
    OPT_BASELINE,
    OPT_N,
    OPT_TOP,
    OPT_AGAINST,
    OPT_THRESHOLD,
    OPT_TARGET,
    OPT_RESAMPLES,
    OPT_KERNEL,
    OPT_CONFIG,
    OPT_COVERING,
    OPT_TIMEOUT,
    OPT_RUN,
    OPT_ALLOW_KERNEL_CHANGE,
    OPT_ALLOW_ARCH_CHANGE,
    OPT_FAMILY,
    OPT_UUID,
    OPT_CAMPAIGN_ROW,
    OPT_DEVICES,
    OPT_ROWS,
    OPT_NEW,
    OPT_CAMPAIGN,
    OPT_EMIT,
    OPT_GPUS_PER_TASK,
    OPT_ROWS_PER_TASK,
};

/* The shared options a command takes beside its own and the common ones
 * (--db, --kernel-dir, -q, -h): the target's (--space, --shape, --causal,
 * --arch, --device, --filter and the gate limits), the gate limits alone,
 * the measurement's. A command's own option of the same name replaces a
 * shared one. */
enum { CLI_TARGET = 1, CLI_LIMITS = 2, CLI_MEASURE = 4 };

/* The one database opener: c->db_path in the mode the command's table entry
 * gives. */
int cli_open_db(const cli_common *c, fattn_store **s);

/* " --db PATH" when the database is not the default one, else "": for a
 * message that tells the user the command to run next. */
const char *cli_db_option(const cli_common *c, char *buf, size_t n);

/* Parses one subcommand's options with getopt_long: the common ones, the
 * shared groups (filling *target and *measure, which may be NULL when the
 * group is not taken), and its own spec->opts (NULL-terminated; optstring
 * ":qh" plus spec->extra), for which it calls spec->handle. Returns 0, a
 * negative error, or 1 when --help was given: spec->help printed, then, for
 * a command taking groups, their help (the measurement's spec->measure_help,
 * NULL: cli_timing_help) and the common options'. On success *first_arg is
 * the index of the first operand; a command that takes none passes NULL and
 * gets a usage error for any. */
typedef int (*cli_handler)(void *ctx, int opt, const char *arg);
typedef struct cli_spec {
    const struct option *opts;
    const char *extra;
    unsigned groups; /* CLI_TARGET, CLI_LIMITS, CLI_MEASURE */
    cli_handler handle;
    const char *help;
    const char *measure_help;
} cli_spec;
int cli_parse(int argc, char **argv, const cli_spec *spec, void *ctx, cli_common *common, fattn_target *target,
              fattn_measure *measure, int *first_arg);

/* A command over several families (space, gates) prints each family's
 * output in turn: in a table one after the other (a blank line between),
 * in JSON an array of them; CSV takes one family (its columns are the
 * family's): cli_families_format refuses it for several, naming `cmd`.
 * begin before the first, next before family k, end after the last. */
int cli_families_format(const fattn_targets *ts, int format, const char *cmd);
void cli_families_begin(const fattn_targets *ts, int format, FILE *f);
void cli_families_next(const fattn_targets *ts, int k, int format, FILE *f);
void cli_families_end(const fattn_targets *ts, int format, FILE *f);

/* Reports a usage error about an unexpected operand. */
int cli_extra_operand(const char *cmd, const char *arg);

/* Parses an integer option value in [min, max] into a long or an int, or
 * an id (1 .. 2^31-1); reports a usage error. */
int cli_long(const char *option, const char *arg, long min, long max, long *out);
int cli_int(const char *option, const char *arg, long min, long max, int *out);
int cli_id(const char *option, const char *arg, long long *out);

/* --devices LIST: GPU ordinals, each once (at most max), into devices[],
 * *n of them; "all" sets *n to -1, for cli_devices_all() once the options
 * are checked. A usage error naming the list otherwise. */
int cli_devices(const char *arg, int *devices, int max, int *n);

/* --devices all: every GPU the driver lists (at most max); the fake
 * engine's (FATTN_WORKER_HOOK) are its gpus=N, 1 by default. */
int cli_devices_all(int *devices, int max, int *n);

/* The whole command line as one string (caller frees). */
char *cli_command_line(const cli_common *c);

/* The measurement options' help, and confirm's (no --samples, no --seed). */
extern const char cli_timing_help[];
extern const char cli_confirm_timing_help[];

/* The one signal helper: between cli_signals_guard(1) and (0), SIGINT,
 * SIGTERM and SIGHUP set the flag of cli_interrupted() (cleared by the
 * guard) instead of ending the process, so that a procedure given both
 * (search) stops cleanly between trials. */
volatile sig_atomic_t *cli_interrupted(void);
void cli_signals_guard(int on);

/* --unsafe-skip-gate CODE (test only): adds a gate to the skip mask. */
int cli_skip_gate_option(unsigned *mask, const char *arg);

/* Subcommands. */
int cmd_space(int argc, char **argv, cli_common *c);
int cmd_gates(int argc, char **argv, cli_common *c);
int cmd_compile(int argc, char **argv, cli_common *c);
int cmd_query(int argc, char **argv, cli_common *c);
int cmd_export(int argc, char **argv, cli_common *c);
int cmd_search(int argc, char **argv, cli_common *c);
int cmd_confirm(int argc, char **argv, cli_common *c);
int cmd_bench(int argc, char **argv, cli_common *c);
int cmd_report(int argc, char **argv, cli_common *c);
int cmd_check(int argc, char **argv, cli_common *c);
int cmd_merge(int argc, char **argv, cli_common *c);
int cmd_campaign(int argc, char **argv, cli_common *c);

#endif
