/*
 * cmd_pending.c - confirm and bench: in the command table, answered by
 * main.c with "not built yet"; their --help says what they will do.
 */
#include <stdio.h>

#include "cli/cli.h"
#include "util/err.h"

static int pending_help(const char *text)
{
    fputs(text, stdout);
    return FATTN_OK;
}

int cmd_confirm(int argc, char **argv, cli_common *c)
{
    (void)argc, (void)argv, (void)c;
    return pending_help("usage: fattn-tune confirm [--study S] [--n 100] [--baseline cudnn|config:KEY|trial:ID]\n"
                        "\n"
                        "Not built yet. Will re-measure the best configurations against a baseline, interleaved,\n"
                        "and report bootstrap confidence intervals. Needs a GPU.\n");
}

int cmd_bench(int argc, char **argv, cli_common *c)
{
    (void)argc, (void)argv, (void)c;
    return pending_help("usage: fattn-tune bench CONFIG|--trial ID --shape B,H,S,D [--baseline cudnn]\n"
                        "\n"
                        "Not built yet. Will measure one configuration the way search does. Needs a GPU.\n");
}
