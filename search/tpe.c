/*
 * tpe.c - the Tree-structured Parzen Estimator (Bergstra et al., 2011) over
 * the discrete space: univariate and multivariate estimators, a local step
 * around the good configurations, and exploration that rises while the
 * search stalls.
 *
 * Start: TPE_STARTUP proposals from a Latin hypercube design.
 *
 * The model: the measured trials are split at the gamma quantile of their
 * medians, the best min(ceil(TPE_GAMMA * n_ok), TPE_MAX_GOOD) "good", every
 * other outcome "bad" (slower trials and every failure: post-compile
 * rejections, numerics, faults, timeouts, errors; and the proposals still
 * pending, as the constant liar, TPE_LIAR each). l(x) and g(x) are Parzen
 * estimators of the good and the bad, either
 *   - univariate: a product over the parameters of per-parameter estimators
 *     (counts of each value plus a uniform prior of weight TPE_PRIOR); they
 *     generalise across parameters and win where the time is near additive;
 *   - multivariate: a mixture of one kernel per observation and a uniform
 *     prior of weight TPE_PRIOR, each kernel a product over the parameters
 *     of a categorical distribution with weight 1 + beta on the observed
 *     value and beta on every value (beta = TPE_PRIOR / (n + 1) for n
 *     observations), older bad observations weighing less (a linear ramp
 *     before the newest TPE_FLAT), as Optuna's TPESampler has them; they see
 *     interactions and narrow optima, which a product of marginals cannot.
 * Each proposal uses one of the two, at random (TPE_UNI the univariate).
 * Then either TPE_EI untried survivors are drawn with probability
 * proportional to l(x), or (TPE_LOCAL of the time) the untried survivors
 * nearest (fewest differing parameters) to a good configuration are taken;
 * the one with the largest l(x)/g(x) is proposed.
 *
 * Exploration: the model exploits the basin it knows and cannot see an
 * optimum it has never sampled near. Each proposal is therefore, with
 * probability f, an exploring one instead: of TPE_NOVEL untried survivors
 * drawn uniformly, the one farthest from everything tried (the lowest
 * density of a multivariate estimator over all observations). f rises from
 * 0 to TPE_EXPLORE_MAX as the measured trials since the best time last
 * improved by TPE_STEP grow from TPE_PATIENCE to TPE_PATIENCE + TPE_RAMP; a
 * new best resets it, and the model exploits around it.
 *
 * These settings were chosen on a suite of landscapes of five structural
 * families (lab/search-quality/bench-search-quality.sh, lab/search-quality/log.md) and
 * checked on landscapes of the suite they were not chosen on.
 *
 * Evaluated, pending and gate-rejected configurations are never proposed
 * (the last are not candidates at all). After the start, each proposal waits
 * for the outcome of the one before (TPE_PENDING): proposing four ahead of
 * their outcomes, as this strategy did, took 3-17% more median trials on
 * each family of the suite. So that the compile threads do not idle
 * meanwhile, hint() names the untried configurations with the largest l/g
 * under the univariate estimators, and the search loop compiles them ahead
 * into the compile cache. With k GPUs (batch()) up to k are outstanding,
 * each proposed with the ones before it counted bad at half an outcome's
 * weight (TPE_LIAR): at full weight (Optuna's constant liar) the liar pushed
 * a batch out of the basin it should exploit (interact: 1.41x the trials of
 * one GPU over 30 seeds), without it a batch crowded one spot (synthetic:
 * 1.6x); at half, 0.69-1.17x on the four committed landscapes and two of
 * the suite (30 seeds; docs/search-quality.md has the batch's numbers).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/book.h"
#include "search/lhs.h"
#include "search/strategy.h"
#include "util/err.h"

enum { TPE_STARTUP = 16, TPE_EI = 24, TPE_PENDING = 1, TPE_MAX_GOOD = 25, TPE_FLAT = 25, TPE_NOVEL = 8 };
/* The weight of an outstanding proposal among the bad observations. */
static const double TPE_LIAR = 0.5;
static const double TPE_GAMMA = 0.1, TPE_PRIOR = 1.0, TPE_UNI = 0.5, TPE_LOCAL = 0.5;
static const double TPE_STEP = 0.01, TPE_PATIENCE = 10, TPE_RAMP = 20, TPE_EXPLORE_MAX = 0.9;

typedef struct tpe {
    fattn_strategy base;
    size_t liars; /* outstanding proposals among the bad at TPE_LIAR (split(); with k > 1 GPUs) */
    int batch;    /* proposals outstanding at most */
    fattn_book book;
    fattn_lhs design;
    fattn_rng rng;
    size_t *ok;        /* scratch: measured candidates */
    size_t *bad;       /* scratch: bad observations, oldest first */
    double *l;         /* scratch: l(x) per candidate */
    fattn_stall stall; /* the best median, the trials since it improved by TPE_STEP */
    unsigned char *good;
} tpe;

static fattn_strategy *create(const fattn_config *candidates, size_t n, uint64_t seed)
{
    tpe *t = fattn_xcalloc(1, sizeof *t);
    t->base.ops = &fattn_strategy_tpe;
    t->batch = TPE_PENDING;
    fattn_book_init(&t->book, candidates, n);
    fattn_rng_seed(&t->rng, seed);
    fattn_lhs_design(&t->design, &t->book, TPE_STARTUP, &t->rng);
    t->ok = fattn_xcalloc(n ? n : 1, sizeof *t->ok);
    t->bad = fattn_xcalloc(n ? n : 1, sizeof *t->bad);
    t->l = fattn_xcalloc(n ? n : 1, sizeof *t->l);
    t->good = fattn_xcalloc(n ? n : 1, 1);
    fattn_stall_init(&t->stall);
    return &t->base;
}

/* The kernels of a group of n observations: per parameter, the density at the
 * observed value and at every other value. */
typedef struct kernel {
    double same[FATTN_MAX_PARAMS], other[FATTN_MAX_PARAMS], prior; /* prior: the uniform density */
} kernel;

static void kernel_init(kernel *k, const fattn_book *b, size_t n)
{
    double beta = TPE_PRIOR / ((double)n + 1);
    k->prior = 1;
    for (int p = 0; p < b->np; ++p) {
        double K = b->nvals[p];
        k->same[p] = (1 + beta) / (1 + K * beta);
        k->other[p] = beta / (1 + K * beta);
        k->prior /= K;
    }
}

/* The density of a kernel centred on candidate c at candidate i. */
static double kernel_at(const kernel *k, const fattn_book *b, size_t c, size_t i)
{
    const unsigned char *x = b->vidx + i * b->np, *y = b->vidx + c * b->np;
    double d = 1;
    for (int p = 0; p < b->np; ++p)
        d *= x[p] == y[p] ? k->same[p] : k->other[p];
    return d;
}

/* Optuna's default weights of n observations, oldest first: 1 for the newest
 * TPE_FLAT, a ramp from 1/n towards 1 before them; the last `liars` of them
 * proposals still outstanding, TPE_LIAR each (the constant liar). */
static double weight(size_t k, size_t n, size_t liars)
{
    if (k >= n - liars)
        return TPE_LIAR;
    if (n <= TPE_FLAT || k >= n - TPE_FLAT)
        return 1;
    size_t m = n - TPE_FLAT;
    return m == 1 ? 1.0 / (double)n : 1.0 / (double)n + (1 - 1.0 / (double)n) * (double)k / (double)(m - 1);
}

/* The distance from candidate i to the nearest of the good ones. */
static int near_good(const fattn_book *b, const size_t *good, size_t ngood, size_t i)
{
    int m = FATTN_MAX_PARAMS + 1;
    for (size_t k = 0; k < ngood; ++k) {
        int d = fattn_book_distance(b, i, good[k]);
        if (d < m)
            m = d;
    }
    return m;
}

/* The mixture of the kernels centred on the n observations obs (oldest
 * first, the last `liars` outstanding, weighted as weight() says) at
 * candidate i, without the prior. */
static double mixture_at(const kernel *k, const fattn_book *b, const size_t *obs, size_t n, size_t liars, size_t i)
{
    double d = 0;
    for (size_t j = 0; j < n; ++j)
        d += weight(j, n, liars) * kernel_at(k, b, obs[j], i);
    return d;
}

/* Appends the pending candidates to obs[n..]; returns the new count. */
static size_t add_pending(const fattn_book *b, size_t *obs, size_t n)
{
    for (size_t i = 0; i < b->n; ++i)
        if (b->state[i] == FATTN_CAND_PENDING)
            obs[n++] = i;
    return n;
}

/* The model's split: t->ok gets the measured candidates, fastest first
 * (their count returned), the first *ngood of them good (t->good marks
 * them); t->bad gets the *nbad bad observations, oldest first, the pending
 * proposals last (the constant liar). */
static size_t split(tpe *t, size_t *ngood, size_t *nbad)
{
    fattn_book *b = &t->book;
    size_t nok = 0;
    for (size_t k = 0; k < b->ndone; ++k)
        if (isfinite(b->y[b->done[k]]))
            t->ok[nok++] = b->done[k];
    fattn_book_sort_by_y(b, t->ok, nok);
    size_t g = (size_t)ceil(TPE_GAMMA * (double)nok);
    if (g < 1)
        g = 1;
    if (g > TPE_MAX_GOOD)
        g = TPE_MAX_GOOD;
    *ngood = g;
    memset(t->good, 0, b->n);
    for (size_t k = 0; k < *ngood; ++k)
        t->good[t->ok[k]] = 1;
    *nbad = 0;
    for (size_t k = 0; k < b->ndone; ++k)
        if (!t->good[b->done[k]])
            t->bad[(*nbad)++] = b->done[k];
    t->liars = t->batch > 1 ? b->npending : 0; /* one GPU: the pending one (hint()'s) weighs as before */
    *nbad = add_pending(b, t->bad, *nbad);
    return nok;
}

/* The total weight of n bad observations (the last `liars` outstanding),
 * the prior's included. */
static double bad_weight(size_t n, size_t liars)
{
    double w = TPE_PRIOR;
    for (size_t k = 0; k < n; ++k)
        w += weight(k, n, liars);
    return w;
}

/* The univariate estimators: ul[p][v] and ug[p][v], the prior plus the
 * (weighted) counts of value v of parameter p among the good and the bad. */
static void uni_tables(const tpe *t, size_t ngood, size_t nbad, double ul[][FATTN_SPACE_MAX_VALUES],
                       double ug[][FATTN_SPACE_MAX_VALUES])
{
    const fattn_book *b = &t->book;
    for (int p = 0; p < b->np; ++p)
        for (int v = 0; v < b->nvals[p]; ++v)
            ul[p][v] = ug[p][v] = TPE_PRIOR / b->nvals[p];
    for (size_t k = 0; k < ngood; ++k)
        for (int p = 0; p < b->np; ++p)
            ul[p][fattn_book_v(b, t->ok[k], p)] += 1;
    for (size_t k = 0; k < nbad; ++k)
        for (int p = 0; p < b->np; ++p)
            ug[p][fattn_book_v(b, t->bad[k], p)] += weight(k, nbad, t->liars);
}

/* A univariate estimator's density at candidate i: the product over the
 * parameters of u[p][value] / total. */
static double uni_at(const fattn_book *b, double u[][FATTN_SPACE_MAX_VALUES], double total, size_t i)
{
    double d = 1;
    for (int p = 0; p < b->np; ++p)
        d *= u[p][fattn_book_v(b, i, p)] / total;
    return d;
}

/* The TPE proposal; -1 when nothing is untried. uni: the univariate
 * estimators (a product over the parameters of per-parameter Parzen
 * estimators) instead of the multivariate ones; local: the best l/g among the
 * untried candidates nearest a good one, instead of TPE_EI draws from l. */
static long propose(tpe *t, int uni, int local)
{
    fattn_book *b = &t->book;
    size_t ngood, nbad;
    if (!split(t, &ngood, &nbad)) /* nothing measured yet: keep exploring */
        return fattn_lhs_next(&t->design, b, &t->rng);

    /* l over the untried candidates. */
    kernel kl, kg;
    kernel_init(&kl, b, ngood);
    kernel_init(&kg, b, nbad);
    double ul[FATTN_MAX_PARAMS][FATTN_SPACE_MAX_VALUES], ug[FATTN_MAX_PARAMS][FATTN_SPACE_MAX_VALUES];
    double wgood = TPE_PRIOR + (double)ngood, wbad = bad_weight(nbad, t->liars);
    if (uni)
        uni_tables(t, ngood, nbad, ul, ug);
    double total = 0;
    for (size_t i = 0; i < b->n; ++i)
        if (b->state[i] == FATTN_CAND_UNTRIED)
            total += t->l[i] =
                uni ? uni_at(b, ul, wgood, i) : (TPE_PRIOR * kl.prior + mixture_at(&kl, b, t->ok, ngood, 0, i)) / wgood;
    if (total <= 0)
        return -1;

    /* Draw TPE_EI untried candidates from l (local: take the untried
     * candidates nearest a good one), keep the best l/g. */
    long best = -1;
    double best_score = -HUGE_VAL;
    int mind = FATTN_MAX_PARAMS + 1;
    if (local)
        for (size_t i = 0; i < b->n; ++i)
            if (b->state[i] == FATTN_CAND_UNTRIED) {
                int d = near_good(b, t->ok, ngood, i);
                if (d < mind)
                    mind = d;
            }
    for (size_t d = 0, i = 0; local ? i < b->n : d < TPE_EI; ++d, ++i) {
        long pick = -1;
        if (local) {
            if (b->state[i] != FATTN_CAND_UNTRIED || near_good(b, t->ok, ngood, i) != mind)
                continue;
            pick = (long)i;
        } else {
            double u = fattn_rng_uniform(&t->rng) * total;
            for (size_t j = 0; j < b->n; ++j) {
                if (b->state[j] != FATTN_CAND_UNTRIED)
                    continue;
                pick = (long)j;
                if ((u -= t->l[j]) < 0)
                    break;
            }
        }
        double g = uni ? uni_at(b, ug, wbad, (size_t)pick)
                       : (TPE_PRIOR * kg.prior + mixture_at(&kg, b, t->bad, nbad, t->liars, (size_t)pick)) / wbad;
        double score = log(t->l[pick]) - log(g);
        if (score > best_score)
            best_score = score, best = pick;
    }
    return best;
}

/* An exploring proposal: of TPE_NOVEL untried candidates drawn uniformly, the
 * one farthest from everything evaluated or pending (the lowest density of a
 * Parzen estimator over all of them). */
static long explore_pick(tpe *t)
{
    fattn_book *b = &t->book;
    size_t n = 0;
    for (size_t k = 0; k < b->ndone; ++k)
        t->bad[n++] = b->done[k];
    n = add_pending(b, t->bad, n);
    kernel k;
    kernel_init(&k, b, n);
    long best = -1;
    double best_d = HUGE_VAL;
    for (int d = 0; d < TPE_NOVEL; ++d) {
        long i = fattn_book_random(b, &t->rng);
        if (i < 0)
            return -1;
        double dens = mixture_at(&k, b, t->bad, n, t->batch > 1 ? b->npending : 0, (size_t)i);
        if (dens < best_d)
            best_d = dens, best = i;
    }
    return best;
}

static long next(fattn_strategy *base)
{
    tpe *t = (tpe *)base;
    fattn_book *b = &t->book;
    long i;
    if (!b->nuntried)
        return -1;
    if (b->nproposed < TPE_STARTUP)
        i = fattn_lhs_next(&t->design, b, &t->rng);
    else if (b->npending >= (size_t)t->batch)
        return FATTN_STRATEGY_WAIT;
    else if (fattn_rng_uniform(&t->rng) < fattn_stall_explore(&t->stall, TPE_PATIENCE, TPE_RAMP, TPE_EXPLORE_MAX))
        i = explore_pick(t);
    else {
        int uni = fattn_rng_uniform(&t->rng) < TPE_UNI;
        i = propose(t, uni, fattn_rng_uniform(&t->rng) < TPE_LOCAL);
    }
    if (i >= 0)
        fattn_book_propose(b, (size_t)i);
    return i;
}

static void observe(fattn_strategy *base, size_t i, int ok, double median_us)
{
    tpe *t = (tpe *)base;
    fattn_book_observe(&t->book, i, ok, median_us);
    if (ok && median_us > 0)
        fattn_stall_observe(&t->stall, median_us, TPE_STEP);
}

/* The untried candidates with the largest l/g under the univariate
 * estimators (cheap to compute for every candidate): the model's likeliest
 * proposals, for the search loop to compile ahead. */
static size_t hint(fattn_strategy *base, size_t *out, size_t k)
{
    tpe *t = (tpe *)base;
    fattn_book *b = &t->book;
    size_t ngood, nbad, m = 0;
    if (b->nproposed < TPE_STARTUP || !split(t, &ngood, &nbad))
        return 0;
    double ul[FATTN_MAX_PARAMS][FATTN_SPACE_MAX_VALUES], ug[FATTN_MAX_PARAMS][FATTN_SPACE_MAX_VALUES];
    double wgood = TPE_PRIOR + (double)ngood, wbad = bad_weight(nbad, t->liars);
    uni_tables(t, ngood, nbad, ul, ug);
    for (size_t i = 0; i < b->n; ++i)
        if (b->state[i] == FATTN_CAND_UNTRIED) {
            t->l[i] = log(uni_at(b, ul, wgood, i)) - log(uni_at(b, ug, wbad, i));
            fattn_best_insert(out, &m, k, t->l, i);
        }
    return m;
}

static void batch(fattn_strategy *base, int k)
{
    ((tpe *)base)->batch = k > TPE_PENDING ? k : TPE_PENDING;
}

static void claim(fattn_strategy *base, size_t i)
{
    fattn_book_propose(&((tpe *)base)->book, i);
}

static void destroy(fattn_strategy *base)
{
    tpe *t = (tpe *)base;
    fattn_book_release(&t->book);
    fattn_lhs_release(&t->design);
    free(t->ok);
    free(t->bad);
    free(t->l);
    free(t->good);
    free(t);
}

const fattn_strategy_ops fattn_strategy_tpe = {
    "tpe",
    "16 Latin hypercube seeds, then a Tree-structured Parzen Estimator (univariate and multivariate, a "
    "local step, exploration while stalled)",
    create,
    next,
    observe,
    destroy,
    hint,
    batch,
    claim,
};
