/*
 * options.c - option parsing shared by the subcommands.
 */
#include "cli/cli.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/device.h"
#include "run/engine.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/paths.h"
#include "util/strbuf.h"

static const char common_help[] =
    "  --db PATH            results database (default results/fattn.db)\n"
    "  --kernel-dir DIR     kernel sources (default $FATTN_KERNEL_DIR, else the built-in kernels/)\n"
    "  -q, --quiet          no progress line, no notes\n"
    "  -h, --help           this help\n";

#define LIMITS_HELP                                                                                                    \
    "Gate thresholds:\n"                                                                                               \
    "  --smem-limit BYTES   shared memory per block: bytes, 100K, or 'max' for the arch's opt-in (default 48K)\n"      \
    "  --max-bank-ways N    worst shared-memory bank conflict tolerated, in ways (default 1: none)\n"                  \
    "  --min-coalescing F   least fraction of touched 32-byte sectors a warp load must use (default 0.8)\n"            \
    "  --mem-budget BYTES   device memory for the shape's buffers (default 20000M)\n"                                  \
    "  --max-spill-bytes N  register spill bytes tolerated (default 0)\n"                                              \
    "  --min-occupancy F    least resident warps / max warps per SM (default 0.5)\n"                                   \
    "  --strict-occupancy   apply --min-occupancy to cp.async configurations too (the seeds waive it)\n"

static const char limits_help[] = LIMITS_HELP;

static const char target_help[] =
    "  --space FILE         configuration space of one family, repeatable (one per family; default:\n"
    "                       every attention family the arch runs, each its own space: mma\n"
    "                       search/space.json, wgmma search/space-wgmma.json with --smem-limit max)\n"
    "  --family NAME[,NAME] only these families (%s), each its default space or the --space given\n"
    "  --shape B,H,S,D      attention shape: batch, heads, sequence length, head dimension (64 or 128)\n"
    "  --causal             causal mask\n"
    "  --arch ARCH          sm_80, sm_86, sm_89, sm_90 or sm_90a (default: the GPU's); the wgmma\n"
    "                       family builds for sm_90a whichever of the two is named\n"
    "  --device N           GPU to take the arch from (default 0)\n"
    "  --filter EXPR        only configurations matching, e.g. BLOCK_M>=64,CP_ASYNC=1: = and != name\n"
    "                       values of the space, a parameter comes once (or twice as a range), and\n"
    "                       a filter matching nothing is refused; of several families, those it\n"
    "                       does not fit are left out (a note says so)\n" LIMITS_HELP;

int cli_long(const char *option, const char *arg, long min, long max, long *out)
{
    if (fattn_parse_long(arg, min, max, out))
        return fattn_error(FATTN_EUSAGE, "%s '%s': expected an integer from %ld to %ld", option, arg, min, max);
    return FATTN_OK;
}

int cli_int(const char *option, const char *arg, long min, long max, int *out)
{
    long v;
    int rc = cli_long(option, arg, min, max, &v);
    *out = rc ? *out : (int)v;
    return rc;
}

int cli_id(const char *option, const char *arg, long long *out)
{
    long v;
    int rc = cli_long(option, arg, 1, 2147483647L, &v);
    *out = rc ? *out : v;
    return rc;
}

int cli_devices(const char *arg, int *devices, int max, int *n)
{
    if (!strcmp(arg, "all")) {
        *n = -1;
        return FATTN_OK;
    }
    char *copy = fattn_xstrdup(arg), *save = NULL;
    int rc = strspn(arg, ",") == strlen(arg) ? FATTN_EUSAGE : FATTN_OK;
    *n = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
        long d;
        if (*n == max || fattn_parse_long(tok, 0, 1023, &d)) {
            rc = FATTN_EUSAGE;
            break;
        }
        for (int k = 0; k < *n; ++k)
            if (devices[k] == d)
                rc = FATTN_EUSAGE;
        devices[(*n)++] = (int)d;
    }
    free(copy);
    if (rc)
        return fattn_error(FATTN_EUSAGE,
                           "--devices '%s': expected GPU ordinals, each once, such as 0,1,3 (at most %d), or all", arg,
                           max);
    return FATTN_OK;
}

int cli_devices_all(int *devices, int max, int *n)
{
    char why[256] = "", gpus[16];
    fattn_gpu_info g;
    int fake = getenv("FATTN_WORKER_HOOK") != NULL;
    long nfake = 1;
    if (fake && fattn_fake_hook("gpus", gpus, sizeof gpus) && fattn_parse_long(gpus, 1, 1023, &nfake))
        return fattn_error(FATTN_EUSAGE, "FATTN_WORKER_HOOK gpus=%s: expected a count of fake GPUs, 1 or more", gpus);
    *n = 0;
    while (*n < max && (fake ? *n < nfake : !fattn_gpu_probe(*n, &g, why, sizeof why)))
        devices[*n] = *n, ++*n;
    if (!*n)
        return fattn_error(FATTN_EFAIL, "--devices all: %s", *why ? why : "no GPU");
    return FATTN_OK;
}

int cli_open_db(const cli_common *c, fattn_store **s)
{
    return fattn_store_open(c->db_path, c->db_mode, s);
}

const char *cli_db_option(const cli_common *c, char *buf, size_t n)
{
    if (!strcmp(c->db_path, FATTN_DEFAULT_DB))
        return "";
    snprintf(buf, n, " --db %s", c->db_path);
    return buf;
}

/* 1 when opt is a shared option (taken), 0 when not, or an error (< 0): an
 * empty --db is refused here, before a command spends time on its gates. */
static int common_option(cli_common *c, int opt, const char *arg)
{
    switch (opt) {
    case OPT_DB:
        if (!*arg)
            return fattn_error(FATTN_EUSAGE, "--db '': expected a database file's path, such as results/fattn.db");
        c->db_path = arg, c->db_given = 1;
        return 1;
    case OPT_KERNEL_DIR: c->kernel_dir = arg; return 1;
    case 'q': c->quiet = 1; return 1;
    default: return 0;
    }
}

/* The shared options (cli.h), as the groups take them. */
static const struct option common_opts[] = {{"db", required_argument, NULL, OPT_DB},
                                            {"kernel-dir", required_argument, NULL, OPT_KERNEL_DIR},
                                            {"quiet", no_argument, NULL, 'q'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
static const struct option target_opts[] = {
    {"space", required_argument, NULL, OPT_SETTING + 0},  {"shape", required_argument, NULL, OPT_SETTING + 1},
    {"causal", no_argument, NULL, OPT_SETTING + 2},       {"arch", required_argument, NULL, OPT_SETTING + 3},
    {"device", required_argument, NULL, OPT_SETTING + 4}, {"filter", required_argument, NULL, OPT_SETTING + 5},
    {"family", required_argument, NULL, OPT_SETTING + 6}, {NULL, 0, NULL, 0}};
static const struct option limit_opts[] = {{"smem-limit", required_argument, NULL, OPT_SETTING + 10},
                                           {"max-bank-ways", required_argument, NULL, OPT_SETTING + 11},
                                           {"min-coalescing", required_argument, NULL, OPT_SETTING + 12},
                                           {"mem-budget", required_argument, NULL, OPT_SETTING + 13},
                                           {"max-spill-bytes", required_argument, NULL, OPT_SETTING + 14},
                                           {"min-occupancy", required_argument, NULL, OPT_SETTING + 15},
                                           {"strict-occupancy", no_argument, NULL, OPT_SETTING + 16},
                                           {NULL, 0, NULL, 0}};
static const struct option measure_opts[] = {{"kernel-timeout", required_argument, NULL, OPT_MEASURE + 0},
                                             {"setup-timeout", required_argument, NULL, OPT_MEASURE + 1},
                                             {"reps", required_argument, NULL, OPT_MEASURE + 2},
                                             {"warmup", required_argument, NULL, OPT_MEASURE + 3},
                                             {"samples", required_argument, NULL, OPT_MEASURE + 4},
                                             {"timing-sets", required_argument, NULL, OPT_MEASURE + 5},
                                             {"flush-l2", no_argument, NULL, OPT_MEASURE + 6},
                                             {"atol", required_argument, NULL, OPT_MEASURE + 7},
                                             {"rtol", required_argument, NULL, OPT_MEASURE + 8},
                                             {"max-rel-l2", required_argument, NULL, OPT_MEASURE + 9},
                                             {"seed", required_argument, NULL, OPT_MEASURE + 10},
                                             {NULL, 0, NULL, 0}};

#define MAX_OPTIONS 96

/* Appends the options of `from` that `own` does not name to all[*n]. */
static void add_options(struct option *all, int *n, const struct option *from, const struct option *own)
{
    for (; from->name; ++from) {
        int mine = 0;
        for (const struct option *o = own; o && o->name && !mine; ++o)
            mine = !strcmp(from->name, o->name);
        if (!mine && *n < MAX_OPTIONS - 1)
            all[(*n)++] = *from;
    }
}

/* A getopt error as a usage error naming the option. */
static int bad_option(int argc, char **argv, int opt)
{
    if (opt == ':')
        return fattn_error(FATTN_EUSAGE, "%s: option '%s' needs a value; see fattn-tune %s --help", argv[0],
                           argv[optind - 1], argv[0]);
    const char *bad = argv[optind - 1];
    long negative;
    /* A negative number read as options: getopt stays on "-12" while
     * inside it and moves past "-1". */
    for (int k = optind < argc ? optind : optind - 1; k >= optind - 1; --k)
        if (!fattn_parse_long(argv[k], -2147483647L, -1, &negative))
            return fattn_error(FATTN_EUSAGE,
                               "%s: '%s': expected a positive number (ids and counts are); see fattn-tune %s --help",
                               argv[0], argv[k], argv[0]);
    if (optopt && bad[0] == '-' && bad[1] != '-')
        return fattn_error(FATTN_EUSAGE, "%s: unknown option '-%c'; see fattn-tune %s --help", argv[0], optopt,
                           argv[0]);
    return fattn_error(FATTN_EUSAGE, "%s: unknown option '%s'; see fattn-tune %s --help", argv[0], bad, argv[0]);
}

static void print_help(const cli_spec *spec)
{
    fputs(spec->help, stdout);
    if (spec->groups & CLI_MEASURE)
        fputs(spec->measure_help ? spec->measure_help : cli_timing_help, stdout);
    if (spec->groups & CLI_TARGET)
        printf(target_help, fattn_family_names()); /* the one %s: the families */
    else if (spec->groups)
        fputs(limits_help, stdout);
    if (spec->groups)
        fputs(common_help, stdout);
}

int cli_parse(int argc, char **argv, const cli_spec *spec, void *ctx, cli_common *common, fattn_target *target,
              fattn_measure *measure, int *first_arg)
{
    struct option all[MAX_OPTIONS];
    char optstring[64];
    int opt, idx, rc, n = 0;
    add_options(all, &n, common_opts, NULL);
    add_options(all, &n, spec->opts, NULL);
    if (spec->groups & CLI_TARGET)
        add_options(all, &n, target_opts, spec->opts);
    if (spec->groups & (CLI_TARGET | CLI_LIMITS))
        add_options(all, &n, limit_opts, spec->opts);
    if (spec->groups & CLI_MEASURE)
        add_options(all, &n, measure_opts, spec->opts);
    all[n] = (struct option){NULL, 0, NULL, 0};
    snprintf(optstring, sizeof optstring, ":qh%s", spec->extra ? spec->extra : "");
    optind = 0;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, optstring, all, &idx)) != -1) {
        if (opt == 'h') {
            print_help(spec);
            return 1;
        }
        if (opt == '?' || opt == ':')
            return bad_option(argc, argv, opt);
        if ((rc = common_option(common, opt, optarg)) < 0)
            return rc;
        if (rc)
            continue;
        /* The target's and the measurement's options by name (getopt sets
         * idx for a long option). */
        if (opt >= OPT_SETTING && opt < OPT_MEASURE + 100) {
            rc = opt < OPT_MEASURE ? fattn_target_set(target, all[idx].name, optarg)
                                   : fattn_measure_set(measure, all[idx].name, optarg);
            if (rc < 0)
                return rc;
            continue;
        }
        if (!spec->handle)
            return fattn_error(FATTN_EUSAGE, "%s: unexpected option", argv[0]);
        if ((rc = spec->handle(ctx, opt, optarg)) != FATTN_OK)
            return rc;
    }
    if (first_arg)
        *first_arg = optind;
    else if (optind < argc)
        return cli_extra_operand(argv[0], argv[optind]);
    return FATTN_OK;
}

int cli_extra_operand(const char *cmd, const char *arg)
{
    return fattn_error(FATTN_EUSAGE, "%s: unexpected argument '%s'; see fattn-tune %s --help", cmd, arg, cmd);
}

char *cli_command_line(const cli_common *c)
{
    return fattn_join(c->argc, c->argv, " ");
}

static volatile sig_atomic_t interrupted_flag;
static struct sigaction cli_old_int, cli_old_term, cli_old_hup;

static void on_signal(int sig)
{
    (void)sig;
    interrupted_flag = 1;
}

volatile sig_atomic_t *cli_interrupted(void)
{
    return &interrupted_flag;
}

void cli_signals_guard(int on)
{
    if (on) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        interrupted_flag = 0;
        sigaction(SIGINT, &sa, &cli_old_int);
        sigaction(SIGTERM, &sa, &cli_old_term);
        sigaction(SIGHUP, &sa, &cli_old_hup);
    } else {
        sigaction(SIGINT, &cli_old_int, NULL);
        sigaction(SIGTERM, &cli_old_term, NULL);
        sigaction(SIGHUP, &cli_old_hup, NULL);
    }
}
