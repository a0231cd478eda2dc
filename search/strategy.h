/*
 * strategy.h - search strategies: which gate survivor to try next.
 *
 * A strategy sees the survivors of a space as candidates 0..n-1 (their
 * configurations given), proposes the next one to evaluate, and is told the
 * outcome of each: a time for the measured ones, a failure for the others
 * (rejected after compiling, faulted, wrong). It never proposes a candidate
 * twice. A resumed search first tells it the outcomes the database holds:
 * observe() of a candidate never proposed marks it done, never to be
 * proposed. Strategies are plug-ins: a file and an entry in fattn_strategies[].
 */
#ifndef FATTN_SEARCH_STRATEGY_H
#define FATTN_SEARCH_STRATEGY_H

#include <stddef.h>
#include <stdint.h>

#include "space/params.h"

typedef struct fattn_strategy fattn_strategy;

#define FATTN_STRATEGY_WAIT (-2L)

/* The most proposals a strategy keeps outstanding (batch()). */
#define FATTN_STRATEGY_BATCH_MAX 16

typedef struct fattn_strategy_ops {
    const char *name;
    const char *summary;
    /* A strategy over n candidates, seeded. */
    fattn_strategy *(*create)(const fattn_config *candidates, size_t n, uint64_t seed);
    /* The next candidate, -1 when there is none left, or FATTN_STRATEGY_WAIT
     * when it needs outcomes of candidates it proposed before going on (never
     * while none is outstanding). */
    long (*next)(fattn_strategy *s);
    /* The outcome of candidate i: ok with its median time, or a failure. */
    void (*observe)(fattn_strategy *s, size_t i, int ok, double median_us);
    void (*destroy)(fattn_strategy *s);
    /* Optional (NULL: none): up to k untried candidates the strategy expects
     * to propose soon, the likeliest first, into out; returns how many.
     * Nothing is marked proposed. While the strategy waits for outcomes, the
     * search loop compiles these ahead into the compile cache, so that a
     * strategy that waits for every outcome keeps the compile threads busy. */
    size_t (*hint)(fattn_strategy *s, size_t *out, size_t k);
    /* Optional (NULL: it hands out its order whatever is outstanding): the
     * search has k GPUs (k >= 1, 1 by default); after its start the
     * strategy then proposes until k of its proposals are outstanding, each
     * chosen as if the outstanding ones had an outcome already (a fantasy:
     * the constant liar, the kriging believer), before it waits. */
    void (*batch)(fattn_strategy *s, int k);
    /* Candidate i, untried, is proposed by the search loop itself (a trial
     * a resumed study had running when it stopped): the strategy counts it
     * outstanding, never proposes it, and is told its outcome by observe(). */
    void (*claim)(fattn_strategy *s, size_t i);
} fattn_strategy_ops;

struct fattn_strategy {
    const fattn_strategy_ops *ops;
};

/* Each strategy (one file each). */
extern const fattn_strategy_ops fattn_strategy_exhaustive;
extern const fattn_strategy_ops fattn_strategy_random;
extern const fattn_strategy_ops fattn_strategy_lhs;
extern const fattn_strategy_ops fattn_strategy_tpe;
extern const fattn_strategy_ops fattn_strategy_anneal;
extern const fattn_strategy_ops fattn_strategy_gp;

/* The strategies, NULL-terminated; the first is the default. */
extern const fattn_strategy_ops *const fattn_strategies[];

/* The strategy named `name`, or NULL. */
const fattn_strategy_ops *fattn_strategy_find(const char *name);

/* "tpe, exhaustive, random, ..." */
const char *fattn_strategy_names(void);

#endif
