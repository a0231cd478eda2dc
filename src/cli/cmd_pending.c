/*
 * cmd_pending.c - confirm: in the command table, answered by main.c with
 * "not built yet"; its --help says what it will do.
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
