/*
 * tune.h - the search loop: strategy -> compile (cache, pool, working ahead)
 * -> post-compile gates -> evaluate (numerics, timing) -> store.
 *
 * A study may search several kernel families at once: each family has its
 * space's survivors, its compile settings (its kernel), its evaluator and
 * its own strategy over its own candidates, and the family scheduler
 * (search/famsched.h) decides whose proposal comes next, sharing the time
 * (each outcome charged its compile and its evaluation). One family is the
 * loop as it always was.
 *
 * The strategy proposes gate survivors; the compile stream keeps a window of
 * them compiling while the evaluator runs the current one. Every outcome is
 * a trial committed in its own transaction (with its raw samples): a
 * post-compile rejection, a GPU verdict (numerics, runtime_fault, timeout),
 * an error, or a measured time. Rejections cost no GPU time and do not count
 * toward the trial limit; the budget is wall time, compiles included, and a
 * bound: no candidate is proposed that would likely be recorded past it (by
 * the recent time from proposal to record); a compile still running at the
 * deadline is given up, not waited for, so a run ends within it plus the
 * evaluation in flight. Both limits are the study's: a resumed study counts
 * its earlier trials and time. When the loop ends, compiles still running
 * are given up (fattn_compiles_abandoned: the program exits after they end,
 * or with _exit).
 */
#ifndef FATTN_TUNE_TUNE_H
#define FATTN_TUNE_TUNE_H

#include <signal.h>

#include "compile/batch.h"
#include "gates/gates.h"
#include "run/evaluator.h"
#include "search/strategy.h"
#include "store/store.h"

typedef struct fattn_tune_progress {
    size_t candidates; /* gate survivors */
    size_t tried;      /* taken from the strategy and finished */
    size_t evaluated;  /* run on the evaluator (the trials that count) */
    size_t ok;         /* measured */
    int by_reason[FATTN_R_COUNT];
    size_t errors;
    double best_us; /* 0 until something is measured */
    char best_key[FATTN_KEY_MAX];
    long long best_trial;
    fattn_timing best;
    double elapsed_ms; /* the study's search time, earlier runs included */
    size_t resumed;    /* trials taken from the database, not run again */
    /* Where this run's loop spent its time (ms): waiting for a proposal's
     * compile, on the evaluator, in the strategy, storing trials; and the
     * compiles given up when it ended (queued or running: their results are
     * not waited for). */
    double wait_ms, eval_ms, strategy_ms, store_ms;
    int abandoned;
    /* Several GPUs: the reference rounds completed, and the largest
     * spread of one round, (slowest - fastest) / fastest, in percent. */
    int ref_rounds;
    double spread_pct;
} fattn_tune_progress;

enum fattn_tune_stop {
    FATTN_TUNE_EXHAUSTED,   /* every candidate tried */
    FATTN_TUNE_TRIALS,      /* the trial limit */
    FATTN_TUNE_BUDGET,      /* the time budget */
    FATTN_TUNE_INTERRUPTED, /* a signal */
};

/* A trial a resumed study already holds: the strategy is told it, the
 * progress counts it, and it is not run again. */
typedef struct fattn_tune_prior {
    char key[FATTN_KEY_MAX];
    double cost_ms; /* what the family scheduler was charged: its compile and evaluation times */
    int reason;     /* FATTN_R_* of a rejection, 0 otherwise */
    int error;      /* an error trial */
    int evaluated;  /* it ran on the evaluator */
    int ok;         /* measured: timing holds the times */
    fattn_timing timing;
    long long trial;
} fattn_tune_prior;

/* One family of the study. */
typedef struct fattn_tune_family {
    const fattn_space *space;
    const fattn_space_verdicts *sv; /* static gates: candidates are sv->survivors */
    const fattn_compile_ctx *cc;    /* compile settings (the family's kernel); cc->cache is the compile cache */
    fattn_evaluator *ev;            /* with one GPU (ndev 1) */
} fattn_tune_family;

/* The most families one study searches, and the most GPUs. */
#define FATTN_TUNE_MAX_FAMILIES FATTN_MAX_FAMILIES
#define FATTN_TUNE_MAX_DEVICES  FATTN_STRATEGY_BATCH_MAX

/* With several GPUs, the reference configuration (the first measured) is
 * timed on each of them every FATTN_TUNE_REF_EVERY trials by default; GPUs
 * further apart than FATTN_TUNE_SPREAD_PCT are flagged. */
#define FATTN_TUNE_REF_EVERY  50
#define FATTN_TUNE_SPREAD_PCT 2.0

typedef struct fattn_tune_ctx {
    const fattn_tune_family *fams; /* the first family's strategy is seeded with `seed` itself */
    int nfam;                      /* 1 .. FATTN_TUNE_MAX_FAMILIES */
    fattn_store *store;
    long long study;
    long long *seq; /* next trial number of the study */
    const fattn_strategy_ops *strategy;
    uint64_t seed;      /* strategy and numerics inputs */
    long max_trials;    /* 0: no limit */
    double deadline_ms; /* on fattn_now_ms(), counting from the command's start; 0: none */
    double t0_ms;
    double spent_ms;               /* search time of the study's earlier runs (resume) */
    const fattn_tune_prior *prior; /* trials the study holds already (resume) */
    size_t nprior;
    int ahead; /* compiles kept in flight */
    /* Several GPUs (search --devices): ndev > 1 evaluators, dev_ev[d] the
     * GPU evaluator of GPU d, which runs every family's kernels; each
     * trial runs on one of them alone, side by side with the others, and
     * is recorded as it ends. The strategies propose up to ndev ahead of
     * their outcomes (fattn_strategy_ops.batch), and the reference
     * configuration is timed on every GPU after the first measured trial
     * and every ref_every trials (0: FATTN_TUNE_REF_EVERY; the study's
     * gpu_checks). ndev 0 or 1: each family's own evaluator (fams[k].ev),
     * one trial at a time. */
    int ndev;
    fattn_evaluator *const *dev_ev;
    int ref_every;
    /* Trials a resumed study had running when it stopped (their keys):
     * proposed again first, before the strategy proposes. */
    const char *const *rerun;
    size_t nrerun;
    /* The scheduler charges each outcome FATTN_TUNE_MODEL_* rather than its
     * compile and evaluation times (a replayed study: its schedule then
     * depends on the seed alone, not on the compile cache or the clock). */
    int modelled_costs;
    volatile sig_atomic_t *interrupted;
    void (*progress)(void *arg, const fattn_tune_progress *p);
    void *progress_arg;
} fattn_tune_ctx;

/* Runs the loop. Returns 0 (*stop says why it ended), or FATTN_EFAIL when
 * the database or the evaluator fails (the message is reported). */
int fattn_tune_run(const fattn_tune_ctx *ctx, fattn_tune_progress *p, int *stop);

/* The seed of the numerics inputs of trial `seq`. */
uint64_t fattn_numerics_seed(uint64_t study_seed, long long seq);

/* The seed of family k's strategy in a study seeded with `seed` (k 0: seed). */
uint64_t fattn_family_seed(uint64_t seed, int k);

/* What an outcome is charged in the family scheduler (ms): its compile and
 * its evaluation, at least FATTN_TUNE_MIN_COST_MS (a proposal served from
 * the cache and the landscape still costs the loop's own time). */
#define FATTN_TUNE_MIN_COST_MS 1.0
double fattn_tune_cost_ms(double compile_ms, double eval_ms);

/* The modelled costs (fattn_tune_ctx.modelled_costs): a compile, and an
 * evaluation ten times as long, as the offline benchmark of the family
 * scheduler charges them (tests/test_families.c's default --cost). */
#define FATTN_TUNE_MODEL_COMPILE_MS 100.0
#define FATTN_TUNE_MODEL_EVAL_MS    1000.0

#endif
