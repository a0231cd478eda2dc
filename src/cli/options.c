/*
 * options.c - option parsing shared by the subcommands.
 */
#include "cli/cli.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "export/table.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/paths.h"
#include "util/strbuf.h"

const char cli_common_help[] =
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

const char cli_limits_help[] = LIMITS_HELP;

const char cli_target_help[] =
    "  --space FILE         configuration space (default search/space.json, 3,888 configurations)\n"
    "  --shape B,H,S,D      attention shape: batch, heads, sequence length, head dimension (64 or 128)\n"
    "  --causal             causal mask\n"
    "  --arch ARCH          sm_80, sm_86, sm_89 or sm_90 (default: the GPU's)\n"
    "  --device N           GPU to take the arch from (default 0)\n"
    "  --filter EXPR        only configurations matching, e.g. BLOCK_M>=64,CP_ASYNC=1: = and != name\n"
    "                       values of the space, a parameter comes once (or twice as a range), and\n"
    "                       a filter matching nothing is refused\n" LIMITS_HELP;

/* The limit options' CLI_GIVEN bits are the library's FATTN_GIVEN_* bits. */
_Static_assert(CLI_GIVEN(OPT_SMEM_LIMIT) == FATTN_GIVEN_SMEM_LIMIT
                   && CLI_GIVEN(OPT_MAX_BANK_WAYS) == FATTN_GIVEN_MAX_BANK_WAYS
                   && CLI_GIVEN(OPT_MIN_COALESCING) == FATTN_GIVEN_MIN_COALESCING
                   && CLI_GIVEN(OPT_MEM_BUDGET) == FATTN_GIVEN_MEM_BUDGET
                   && CLI_GIVEN(OPT_MAX_SPILL_BYTES) == FATTN_GIVEN_MAX_SPILL_BYTES
                   && CLI_GIVEN(OPT_MIN_OCCUPANCY) == FATTN_GIVEN_MIN_OCCUPANCY
                   && CLI_GIVEN(OPT_STRICT_OCCUPANCY) == FATTN_GIVEN_STRICT_OCCUPANCY,
               "the limit options in the order of the FATTN_GIVEN_* bits");

int cli_long(const char *option, const char *arg, long min, long max, long *out)
{
    if (fattn_parse_long(arg, min, max, out))
        return fattn_error(FATTN_EUSAGE, "%s '%s': expected an integer from %ld to %ld", option, arg, min, max);
    return FATTN_OK;
}

static int fraction(const char *option, const char *arg, double *out)
{
    if (fattn_parse_double(arg, out) || *out < 0 || *out > 1)
        return fattn_error(FATTN_EUSAGE, "%s '%s': expected a fraction from 0 to 1", option, arg);
    return FATTN_OK;
}

int cli_target_option(fattn_target *t, int opt, const char *arg)
{
    long v;
    uint64_t bytes;
    if (opt >= OPT_SMEM_LIMIT && opt <= OPT_STRICT_OCCUPANCY)
        t->given |= CLI_GIVEN(opt);
    switch (opt) {
    case OPT_SPACE: t->space_path = arg; return 1;
    case OPT_SHAPE: t->shape_text = arg; return 1;
    case OPT_CAUSAL: t->causal = 1; return 1;
    case OPT_ARCH: t->arch_name = arg; return 1;
    case OPT_DEVICE:
        if (cli_long("--device", arg, 0, 63, &v))
            return FATTN_EUSAGE;
        t->device = (int)v;
        return 1;
    case OPT_FILTER: t->filter_text = arg; return 1; /* read once the space (its family) is known */
    case OPT_SMEM_LIMIT: t->smem_limit_text = arg; return 1;
    case OPT_MAX_BANK_WAYS:
        if (cli_long("--max-bank-ways", arg, 1, 32, &v))
            return FATTN_EUSAGE;
        t->lim.max_bank_ways = (unsigned)v;
        return 1;
    case OPT_MIN_COALESCING: return fraction("--min-coalescing", arg, &t->lim.min_coalescing) ? FATTN_EUSAGE : 1;
    case OPT_MEM_BUDGET:
        if (fattn_parse_bytes(arg, &bytes) || bytes == 0)
            return fattn_error(FATTN_EUSAGE, "--mem-budget '%s': expected a byte count such as 20000M or 64G", arg);
        t->lim.mem_budget = bytes;
        return 1;
    case OPT_MAX_SPILL_BYTES:
        if (cli_long("--max-spill-bytes", arg, 0, 1000000000, &v))
            return FATTN_EUSAGE;
        t->lim.max_spill_bytes = (unsigned)v;
        return 1;
    case OPT_MIN_OCCUPANCY: return fraction("--min-occupancy", arg, &t->lim.min_occupancy) ? FATTN_EUSAGE : 1;
    case OPT_STRICT_OCCUPANCY: t->lim.occupancy_cp_async_exempt = 0; return 1;
    default: return 0;
    }
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

int cli_common_option(cli_common *c, int opt, const char *arg)
{
    switch (opt) {
    case OPT_DB: c->db_path = arg; return 1;
    case OPT_KERNEL_DIR: c->kernel_dir = arg; return 1;
    case 'q': c->quiet = 1; return 1;
    default: return 0;
    }
}

int cli_parse(int argc, char **argv, const struct option *opts, const char *extra, cli_common *common,
              fattn_target *target, cli_handler handle, void *ctx, const char *help, int *first_arg)
{
    char optstring[64];
    int opt, idx, rc;
    snprintf(optstring, sizeof optstring, ":qh%s", extra ? extra : "");
    optind = 0;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, optstring, opts, &idx)) != -1) {
        if (opt == 'h') {
            fputs(help, stdout);
            return 1;
        }
        if (opt == '?') {
            const char *bad = argv[optind - 1];
            long negative;
            /* A negative number read as options: getopt stays on "-12"
             * while inside it and moves past "-1". */
            for (int k = optind < argc ? optind : optind - 1; k >= optind - 1; --k)
                if (!fattn_parse_long(argv[k], -2147483647L, -1, &negative))
                    return fattn_error(FATTN_EUSAGE,
                                       "%s: '%s': expected a positive number (ids and counts are); see "
                                       "fattn-tune %s --help",
                                       argv[0], argv[k], argv[0]);
            if (optopt && bad[0] == '-' && bad[1] != '-')
                return fattn_error(FATTN_EUSAGE, "%s: unknown option '-%c'; see fattn-tune %s --help", argv[0], optopt,
                                   argv[0]);
            return fattn_error(FATTN_EUSAGE, "%s: unknown option '%s'; see fattn-tune %s --help", argv[0], bad,
                               argv[0]);
        }
        if (opt == ':')
            return fattn_error(FATTN_EUSAGE, "%s: option '%s' needs a value; see fattn-tune %s --help", argv[0],
                               argv[optind - 1], argv[0]);
        if (cli_common_option(common, opt, optarg))
            continue;
        if (target && (rc = cli_target_option(target, opt, optarg)) != 0) {
            if (rc < 0)
                return rc;
            continue;
        }
        if (!handle || (rc = handle(ctx, opt, optarg)) != FATTN_OK)
            return handle ? rc : fattn_error(FATTN_EUSAGE, "%s: unexpected option", argv[0]);
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
    fattn_strbuf sb;
    fattn_sb_init(&sb);
    for (int i = 0; i < c->argc; ++i) {
        if (i)
            fattn_sb_adds(&sb, " ");
        fattn_sb_adds(&sb, c->argv[i]);
    }
    return fattn_sb_detach(&sb);
}

void cli_print_configs(const fattn_space *space, const size_t *indices, size_t n, int format)
{
    /* index, key, then the family's tunables (its test-only overrides left out) */
    const fattn_family *f = space->fam;
    const char *names[2 + FATTN_MAX_PARAMS] = {"index", "key"};
    unsigned char numeric[2 + FATTN_MAX_PARAMS];
    int cols[FATTN_MAX_PARAMS], ncols = 0;
    fattn_rows rows;
    for (int p = 0; p < f->nparams; ++p)
        if (!f->params[p].test_only) {
            names[2 + ncols] = f->params[p].name;
            cols[ncols++] = p;
        }
    memset(numeric, 1, sizeof numeric);
    numeric[1] = 0;
    fattn_rows_init(&rows, 2 + ncols, names);
    for (size_t k = 0; k < n; ++k) {
        fattn_config c;
        char cells[2 + FATTN_MAX_PARAMS][FATTN_KEY_MAX];
        const char *ptrs[2 + FATTN_MAX_PARAMS];
        fattn_space_config(space, indices[k], &c);
        snprintf(cells[0], sizeof cells[0], "%zu", indices[k]);
        fattn_config_key(&c, cells[1]);
        for (int i = 0; i < ncols; ++i)
            snprintf(cells[2 + i], sizeof cells[2 + i], "%d", c.v[cols[i]]);
        for (int i = 0; i < 2 + ncols; ++i)
            ptrs[i] = cells[i];
        fattn_rows_add(&rows, ptrs, numeric);
    }
    fattn_rows_print(stdout, &rows, format, 0);
    fattn_rows_release(&rows);
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
