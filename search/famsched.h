/*
 * famsched.h - the family scheduler: in a study over several kernel
 * families, which family proposes next.
 *
 * Each family has its own strategy (strategy.h) over its own candidates;
 * the scheduler only decides whose turn it is, and it shares time, not
 * trials: every proposal is charged to its family at what it cost (its
 * compile, and its evaluation when it ran), and the family picked is the
 * one furthest behind its share of the time spent. A proposal still in
 * flight is charged at its family's mean cost so far until it ends.
 *
 * The shares: a family first runs its seeds (its strategy's first
 * proposals, until `seed_ok` of them were measured or its `seeds`
 * proposals are made) at an equal share, so no family is judged before it
 * has been measured. Then each family's share follows an optimistic index,
 * an upper-confidence rule on its best time:
 *
 *     index = log(best) - bonus / (1 + measured / halving)
 *
 * (measured: its trials that were timed), a share of exp(-(index - the
 * lowest index) / temperature), at least `floor`. A family searched little
 * is given the benefit of the doubt, one searched much is taken at its
 * best: the family with the best time takes most of the time at first,
 * and as its measured trials grow a family that looked worse in its seeds
 * gets turns again, the sooner the closer its best. docs/search-quality.md
 * gives the rule's measurements on two-family landscape pairs
 * (tests/test_families.c) and how it was chosen.
 *
 * Deterministic: the same outcomes and costs in the same order give the
 * same picks (a resumed study replays its trials through it); ties go to
 * the family listed first.
 */
#ifndef FATTN_SEARCH_FAMSCHED_H
#define FATTN_SEARCH_FAMSCHED_H

#include <stddef.h>

#define FATTN_FAMSCHED_MAX 8

typedef struct fattn_famsched_settings {
    double bonus;       /* the index's optimism for a family not yet measured (log time) */
    double halving;     /* measured trials that halve it */
    double temperature; /* of the shares over the index (log time) */
    double floor;       /* the least share after the seeds */
    int seed_ok;        /* measured trials that end a family's seeds */
    int even;           /* 1: equal shares throughout (what the rule is compared with) */
} fattn_famsched_settings;

/* The settings the search uses. */
extern const fattn_famsched_settings fattn_famsched_defaults;

typedef struct fattn_famsched_family {
    size_t seeds;    /* the most proposals its seeds take */
    size_t recorded; /* proposals ended (a resumed study's among them) */
    size_t trials;   /* of them, those that ran on the evaluator */
    size_t ok;       /* of those, the measured ones */
    size_t inflight; /* proposed, not yet ended */
    double spent;    /* the ended proposals' cost */
    double best;     /* its fastest measured median (us), HUGE_VAL before one */
} fattn_famsched_family;

typedef struct fattn_famsched {
    fattn_famsched_settings set;
    int n;
    fattn_famsched_family f[FATTN_FAMSCHED_MAX];
} fattn_famsched;

/* n families (at most FATTN_FAMSCHED_MAX), family k's seeds at most
 * seeds[k] proposals (seeds NULL: 16 each); set NULL: the defaults. */
void fattn_famsched_init(fattn_famsched *s, int n, const size_t *seeds, const fattn_famsched_settings *set);

/* The family to propose next among those whose bit is set in `open` (they
 * have a proposal to make), or -1 when none is. */
int fattn_famsched_pick(const fattn_famsched *s, unsigned open);

/* Family k made a proposal (in flight until it ends). */
void fattn_famsched_proposed(fattn_famsched *s, int k);

/* Family k's proposal ended: its cost (compile and evaluation, in any unit
 * used throughout), whether it ran on the evaluator (a trial), and its
 * median when it was measured (ok). A resumed study's trials are recorded
 * without fattn_famsched_proposed. */
void fattn_famsched_record(fattn_famsched *s, int k, double cost, int trial, int ok, double median_us);

/* Family k's share of the time now among the families in `open` (for
 * reports). */
double fattn_famsched_share(const fattn_famsched *s, int k, unsigned open);

#endif
