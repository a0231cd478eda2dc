/*
 * strategies.c - the table of search strategies.
 */
#include <string.h>

#include "search/strategy.h"

const fattn_strategy_ops *const fattn_strategies[] = {
    &fattn_strategy_gp,
    &fattn_strategy_tpe,
    &fattn_strategy_exhaustive,
    &fattn_strategy_random,
    &fattn_strategy_lhs,
    &fattn_strategy_anneal,
    NULL,
};

const fattn_strategy_ops *fattn_strategy_find(const char *name)
{
    for (int i = 0; fattn_strategies[i]; ++i)
        if (strcmp(fattn_strategies[i]->name, name) == 0)
            return fattn_strategies[i];
    return NULL;
}

const char *fattn_strategy_names(void)
{
    return "gp, tpe, exhaustive, random, lhs, anneal";
}
