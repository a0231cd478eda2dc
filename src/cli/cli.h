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
    int db_mode;            /* how the command opens it (its table entry): FATTN_DB_READ, _WRITE, _UPDATE */
    const char *kernel_dir; /* --kernel-dir, default see util/paths.h */
    int quiet;              /* -q: no progress, no notes */
    int argc;               /* the whole command line, for the study record */
    char **argv;
} cli_common;

/* Long-option ids (beyond single characters). */
enum {
    OPT_DB = 1000,
    OPT_KERNEL_DIR,
    OPT_SPACE,
    OPT_SHAPE,
    OPT_CAUSAL,
    OPT_ARCH,
    OPT_DEVICE,
    OPT_FILTER,
    OPT_SMEM_LIMIT,
    OPT_MAX_BANK_WAYS,
    OPT_MIN_COALESCING,
    OPT_MEM_BUDGET,
    OPT_MAX_SPILL_BYTES,
    OPT_MIN_OCCUPANCY,
    OPT_STRICT_OCCUPANCY,
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
    OPT_SEED,
    OPT_NO_COMPILE,
    OPT_OUTPUT,
    OPT_STRATEGY,
    OPT_TRIALS,
    OPT_BUDGET,
    OPT_EVALUATOR,
    OPT_RESUME,
    OPT_KERNEL_TIMEOUT,
    OPT_SETUP_TIMEOUT,
    OPT_REPS,
    OPT_WARMUP,
    OPT_SAMPLES,
    OPT_TIMING_SETS,
    OPT_FLUSH_L2,
    OPT_ATOL,
    OPT_MAX_REL_L2,
    OPT_RTOL,
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
};

#define CLI_TIMING_OPTIONS                                                                                             \
    {"kernel-timeout", required_argument, NULL, OPT_KERNEL_TIMEOUT},                                                   \
        {"setup-timeout", required_argument, NULL, OPT_SETUP_TIMEOUT}, {"reps", required_argument, NULL, OPT_REPS},    \
        {"warmup", required_argument, NULL, OPT_WARMUP}, {"samples", required_argument, NULL, OPT_SAMPLES},            \
        {"timing-sets", required_argument, NULL, OPT_TIMING_SETS}, {"flush-l2", no_argument, NULL, OPT_FLUSH_L2},      \
        {"atol", required_argument, NULL, OPT_ATOL}, {"rtol", required_argument, NULL, OPT_RTOL},                      \
        {"max-rel-l2", required_argument, NULL, OPT_MAX_REL_L2},                                                       \
    {                                                                                                                  \
        "seed", required_argument, NULL, OPT_SEED                                                                      \
    }

#define CLI_COMMON_OPTIONS                                                                                             \
    {"db", required_argument, NULL, OPT_DB}, {"kernel-dir", required_argument, NULL, OPT_KERNEL_DIR},                  \
        {"quiet", no_argument, NULL, 'q'},                                                                             \
    {                                                                                                                  \
        "help", no_argument, NULL, 'h'                                                                                 \
    }

/* The gate thresholds: a subset of the target options, taken alone by the
 * commands that re-gate a stored study's configurations (confirm). */
#define CLI_LIMIT_OPTIONS                                                                                              \
    {"smem-limit", required_argument, NULL, OPT_SMEM_LIMIT},                                                           \
        {"max-bank-ways", required_argument, NULL, OPT_MAX_BANK_WAYS},                                                 \
        {"min-coalescing", required_argument, NULL, OPT_MIN_COALESCING},                                               \
        {"mem-budget", required_argument, NULL, OPT_MEM_BUDGET},                                                       \
        {"max-spill-bytes", required_argument, NULL, OPT_MAX_SPILL_BYTES},                                             \
        {"min-occupancy", required_argument, NULL, OPT_MIN_OCCUPANCY},                                                 \
    {                                                                                                                  \
        "strict-occupancy", no_argument, NULL, OPT_STRICT_OCCUPANCY                                                    \
    }

#define CLI_TARGET_OPTIONS                                                                                             \
    {"space", required_argument, NULL, OPT_SPACE}, {"shape", required_argument, NULL, OPT_SHAPE},                      \
        {"causal", no_argument, NULL, OPT_CAUSAL}, {"arch", required_argument, NULL, OPT_ARCH},                        \
        {"device", required_argument, NULL, OPT_DEVICE}, {"filter", required_argument, NULL, OPT_FILTER},              \
        CLI_LIMIT_OPTIONS

/* Help text of the target options (the gate thresholds' included), and of
 * the gate thresholds alone, for the subcommands' --help. */
extern const char cli_target_help[];
extern const char cli_limits_help[];
extern const char cli_common_help[];

/* The limit given on the command line by option `opt` (a FATTN_GIVEN_* bit:
 * the limit options are declared in the order of those bits). */
#define CLI_GIVEN(opt) (1u << ((opt)-OPT_SMEM_LIMIT))

/* Handles a target option: returns 1 when `opt` is one, 0 when not, or a
 * negative error code for a bad value. */
int cli_target_option(fattn_target *t, int opt, const char *arg);

/* The one database opener: c->db_path in the mode the command's table entry
 * gives. */
int cli_open_db(const cli_common *c, fattn_store **s);

/* " --db PATH" when the database is not the default one, else "": for a
 * message that tells the user the command to run next. */
const char *cli_db_option(const cli_common *c, char *buf, size_t n);

/* Handles a common option: 1 handled, 0 not one. */
int cli_common_option(cli_common *c, int opt, const char *arg);

/* Parses one subcommand's options with getopt_long (optstring ":qh" plus
 * `extra`), calling handle() for options that are neither common nor
 * target options. Returns 0, a negative error, or 1 when --help was given
 * (help already printed). On success *first_arg is the index of the first
 * operand; a command that takes none passes NULL and gets a usage error for
 * any. */
typedef int (*cli_handler)(void *ctx, int opt, const char *arg);
int cli_parse(int argc, char **argv, const struct option *opts, const char *extra, cli_common *common,
              fattn_target *target, cli_handler handle, void *ctx, const char *help, int *first_arg);

/* Reports a usage error about an unexpected operand. */
int cli_extra_operand(const char *cmd, const char *arg);

/* Parses an integer option value in [min, max]; reports a usage error. */
int cli_long(const char *option, const char *arg, long min, long max, long *out);

/* The whole command line as one string (caller frees). */
char *cli_command_line(const cli_common *c);

/* Prints configurations indices[0..n) of `space` as rows: index, key and
 * the nine tunables. */
void cli_print_configs(const fattn_space *space, const size_t *indices, size_t n, int format);

extern const char cli_timing_help[];

/* Handles a timing option: 1 handled, 0 not one, negative on a bad value. */
int cli_timing_option(fattn_measure *tm, int opt, const char *arg);

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

#endif
