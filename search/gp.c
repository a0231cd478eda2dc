/*
 * gp.c - Bayesian optimisation over the discrete space: a Gaussian process
 * model of log time, proposals by expected improvement, and exploration
 * that rises while the search stalls.
 *
 * Start: GP_STARTUP proposals from a Latin hypercube design.
 *
 * The model: log median time is a Gaussian process over the configurations
 * with a constant mean, the kernel s2 * exp(-GP_THETA * (the number of
 * parameters in which two configurations differ)) and a noise of
 * GP_NOISE * s2. The kernel sees every parameter and every interaction of
 * parameters at once (it is a product of per-parameter kernels), with no
 * order among a parameter's values. The mean and s2 are refitted (their
 * maximum-likelihood values) as the observations grow (every 4 up to 32,
 * then every 25%); the length scale and the noise are fixed: fitted by
 * marginal likelihood they went to long length scales and large noise on
 * the suite's smooth basins, which then hid every narrow optimum, and one
 * fast outlier came out as noise. Only measured trials enter it (at most
 * GP_MAX_ROWS, and at most GP_MAX_CELLS / n doubles of model for n
 * candidates: then the fastest); every proposal updates it by one row.
 *
 * A proposal is the untried candidate with the largest expected
 * improvement over the best log time measured, times its chance of being
 * measurable: a kernel-weighted share of measured outcomes among all the
 * outcomes so far (the post-compile gates reject most of a space's
 * survivors; those cost a compile and no trial).
 *
 * Exploration: no model predicts an optimum it has never sampled near. Each
 * proposal is therefore, with probability f, an exploring one instead.
 * GP_LOCAL of them are local steps, at most GP_LOCAL_MAX while the fastest
 * measured candidate stays the same: of the untried candidates nearest
 * (fewest differing parameters) to it, the one with the best score. Where
 * every single-parameter change from the best is slower, a faster
 * configuration may still lie two or three parameters away (an interaction
 * of parameters, or a small fast region beside the basin's best), and
 * expected improvement, drawn to the far and unknown parts of the space,
 * leaves those untried. The other exploring proposals are,
 * mostly, of GP_NOVEL untried candidates drawn uniformly, the one farthest
 * from everything tried for its chance of being measurable (the lowest
 * kernel density of the outcomes over that chance: an infeasible pick costs
 * a compile and explores nothing); GP_EXPLORE_TS of them by Thompson
 * sampling, the untried candidate fastest in one joint sample of the
 * posterior (a prior sample over the whole grid of values, drawn through
 * the Kronecker structure of the kernel, conditioned on the observations
 * pathwise), which takes the model's long shots several parameters away
 * from the best, where expected improvement, greedy around the best, does
 * not look. f rises from 0 to GP_EXPLORE_MAX as the measured trials since
 * the best time last improved by GP_STEP grow from GP_PATIENCE to
 * GP_PATIENCE + GP_RAMP; a better time resets it.
 *
 * After the start each proposal waits for the outcome of the one before;
 * hint() names the untried candidates with the largest expected
 * improvement for the search loop to compile ahead meanwhile. With k GPUs
 * (batch()), up to k proposals are outstanding: each is scored as if the
 * outstanding ones had been measured at the model's mean for them (the
 * kriging believer: the mean stays, the variance near them shrinks, the
 * best time becomes the lower of the best measured and their means), so
 * that one batch spreads over the promising candidates instead of k
 * neighbours of one.
 *
 * Cost: with m rows in the model, a new outcome costs O(m * n) and a refit
 * O(m^2 * n) for n candidates; a proposal O(n) (with k outstanding in a
 * batch, O(k * m * n) for the believer), a Thompson sample O(m * n + m^2)
 * and O(K) per cell of the grid (K values per parameter).
 *
 * The settings were chosen on the landscape suite
 * (lab/search-quality/bench-search-quality.sh; lab/search-quality/log.md:
 * what each one did); the default strategy since stop 24, when it beat tpe
 * on every family of the suite (docs/search-quality.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/book.h"
#include "search/lhs.h"
#include "search/strategy.h"
#include "util/err.h"

enum { GP_STARTUP = 16, GP_NOVEL = 8, GP_LOCAL_MAX = 4, GP_MAX_ROWS = 512, GP_MIN_ROWS = 64, GP_MAX_GRID = 1 << 21 };
static const double GP_THETA = 0.5, GP_NOISE = 0.01, GP_FEAS_THETA = 1.0;
static const double GP_STEP = 0.01, GP_PATIENCE = 5, GP_RAMP = 10, GP_EXPLORE_MAX = 0.9, GP_EXPLORE_TS = 0.25;
static const double GP_LOCAL = 0.5;
static const double GP_MAX_CELLS = 8388608; /* 64 MiB of doubles */

typedef struct gp {
    fattn_strategy base;
    fattn_book book;
    fattn_lhs design;
    fattn_rng rng;
    double m, s2; /* the mean and scale of log time */
    size_t rows, maxrows;
    size_t *obs;           /* the candidates in the model, in the order added */
    double **V;            /* V[k][j]: row k of L^-1 K(X, candidate j), K + noise = L L^T */
    double *z;             /* L^-1 (log time - m) of the rows */
    double *diag;          /* L's diagonal */
    double *mu, *var;      /* per candidate: posterior mean - m, variance / s2 */
    double *fok, *fall;    /* per candidate: kernel-weighted measured and all outcomes */
    size_t nmeasured, due; /* measured outcomes; a refit when they reach due */
    fattn_stall stall;     /* the best median, the trials since it improved by GP_STEP */
    long inc;              /* the candidate measured fastest, or -1 */
    size_t nlocal;         /* local steps since inc last changed */
    size_t *meas;          /* scratch: measured candidates */
    double *score;         /* scratch: per untried candidate */
    /* Thompson sampling: the grid of every combination of the candidates'
     * values (0 when larger than GP_MAX_GRID: no sampling), each
     * candidate's place in it, a sample over it, scratch per row. */
    size_t grid, stride[FATTN_MAX_PARAMS], *cell;
    double *f, *w;
    int batch;    /* proposals outstanding at most (the GPUs) */
    double *kb;   /* scratch: the kriging believer's covariances, batch x n */
    size_t *pend; /* scratch: the outstanding candidates */
} gp;

static double kern(const fattn_book *b, double theta, size_t i, size_t j)
{
    return exp(-theta * fattn_book_distance(b, i, j));
}

/* Adds measured candidate c to the model: one more row of V. */
static void add_row(gp *g, size_t c)
{
    const fattn_book *b = &g->book;
    size_t k = g->rows;
    double dd = 1 + GP_NOISE, zc = log(b->y[c]) - g->m;
    for (size_t q = 0; q < k; ++q) {
        dd -= g->V[q][c] * g->V[q][c];
        zc -= g->V[q][c] * g->z[q];
    }
    double d = sqrt(dd > 1e-9 ? dd : 1e-9);
    double *row = fattn_xcalloc(b->n, sizeof *row);
    zc /= d;
    for (size_t j = 0; j < b->n; ++j) {
        double kv = kern(b, GP_THETA, c, j);
        for (size_t q = 0; q < k; ++q)
            kv -= g->V[q][c] * g->V[q][j];
        row[j] = kv / d;
        g->mu[j] += row[j] * zc;
        g->var[j] -= row[j] * row[j];
    }
    g->V[k] = row;
    g->z[k] = zc;
    g->diag[k] = d;
    g->obs[k] = c;
    g->rows = k + 1;
}

/* Rebuilds the model from the measured outcomes (the fastest maxrows when
 * there are more), with the mean and scale refitted. */
static void refit(gp *g)
{
    fattn_book *b = &g->book;
    size_t n = 0;
    for (size_t k = 0; k < b->ndone; ++k)
        if (isfinite(b->y[b->done[k]]))
            g->meas[n++] = b->done[k];
    if (n > g->maxrows) {
        fattn_book_sort_by_y(b, g->meas, n);
        n = g->maxrows;
    }
    for (size_t k = 0; k < g->rows; ++k)
        free(g->V[k]);
    g->rows = 0;
    g->m = 0;
    for (size_t k = 0; k < n; ++k)
        g->m += log(b->y[g->meas[k]]) / (double)n;
    for (size_t j = 0; j < b->n; ++j)
        g->mu[j] = 0, g->var[j] = 1;
    double q = 0;
    for (size_t k = 0; k < n; ++k) {
        add_row(g, g->meas[k]);
        q += g->z[k] * g->z[k];
    }
    g->s2 = n ? q / (double)n : 1;
    if (g->s2 < 1e-8)
        g->s2 = 1e-8;
    g->due = g->nmeasured < 32 ? g->nmeasured + 4 : g->nmeasured + g->nmeasured / 4;
}

/* Refits the model when enough outcomes have come since the last fit. */
static void refit_if_due(gp *g)
{
    if (g->nmeasured >= g->due)
        refit(g);
}

static fattn_strategy *create(const fattn_config *candidates, size_t n, uint64_t seed)
{
    gp *g = fattn_xcalloc(1, sizeof *g);
    size_t m = n ? n : 1;
    g->base.ops = &fattn_strategy_gp;
    fattn_book_init(&g->book, candidates, n);
    fattn_rng_seed(&g->rng, seed);
    fattn_lhs_design(&g->design, &g->book, GP_STARTUP, &g->rng);
    double cells = GP_MAX_CELLS / (double)m;
    g->maxrows = cells >= GP_MAX_ROWS ? GP_MAX_ROWS : cells <= GP_MIN_ROWS ? GP_MIN_ROWS : (size_t)cells;
    g->obs = fattn_xcalloc(g->maxrows, sizeof *g->obs);
    g->V = fattn_xcalloc(g->maxrows, sizeof *g->V);
    g->z = fattn_xcalloc(g->maxrows, sizeof *g->z);
    g->diag = fattn_xcalloc(g->maxrows, sizeof *g->diag);
    g->w = fattn_xcalloc(g->maxrows, sizeof *g->w);
    g->grid = 1;
    for (int p = g->book.np - 1; p >= 0 && g->grid; --p) {
        g->stride[p] = g->grid;
        g->grid = g->grid * (size_t)g->book.nvals[p] <= GP_MAX_GRID ? g->grid * (size_t)g->book.nvals[p] : 0;
    }
    if (g->grid) {
        g->cell = fattn_xcalloc(m, sizeof *g->cell);
        g->f = fattn_xcalloc(g->grid, sizeof *g->f);
        for (size_t j = 0; j < n; ++j)
            for (int p = 0; p < g->book.np; ++p)
                g->cell[j] += (size_t)fattn_book_v(&g->book, j, p) * g->stride[p];
    }
    g->mu = fattn_xcalloc(m, sizeof *g->mu);
    g->var = fattn_xcalloc(m, sizeof *g->var);
    g->fok = fattn_xcalloc(m, sizeof *g->fok);
    g->fall = fattn_xcalloc(m, sizeof *g->fall);
    g->meas = fattn_xcalloc(m, sizeof *g->meas);
    g->score = fattn_xcalloc(m, sizeof *g->score);
    for (size_t j = 0; j < n; ++j)
        g->var[j] = 1;
    g->s2 = 1;
    g->batch = 1;
    fattn_stall_init(&g->stall);
    g->inc = -1;
    return &g->base;
}

/* Candidate j's chance of being measurable: the kernel-weighted share of
 * measured outcomes among all outcomes, one half with nothing near. */
static double measurable(const gp *g, size_t j)
{
    return (0.5 + g->fok[j]) / (1 + g->fall[j]);
}

/* log of the expected improvement (minimising) of a normal with standard
 * deviation sd whose mean lies u standard deviations above the best. */
static double log_ei(double u, double sd)
{
    if (u > -6) {
        double e = u * 0.5 * erfc(-u / sqrt(2)) + exp(-0.5 * u * u) / sqrt(2 * M_PI);
        return log(e > 1e-300 ? e : 1e-300) + log(sd);
    }
    return log(sd) - 0.5 * u * u - 0.5 * log(2 * M_PI) - 2 * log(-u); /* sd phi(u) / u^2 */
}

/* The posterior covariance / s2 of candidates i and j. */
static double post_cov(const gp *g, size_t i, size_t j)
{
    double c = kern(&g->book, GP_THETA, i, j);
    for (size_t k = 0; k < g->rows; ++k)
        c -= g->V[k][i] * g->V[k][j];
    return c;
}

/* The kriging believer over the outstanding candidates: how much each
 * candidate's variance (/ s2) shrinks once they are believed measured
 * (into g->score, for score_all to subtract), and the lower of *ybest and
 * their believed log times. Returns 0 when none is outstanding. */
static int believe(gp *g, double *ybest)
{
    const fattn_book *b = &g->book;
    size_t m = 0;
    for (size_t j = 0; j < b->n && m < (size_t)g->batch; ++j)
        if (b->state[j] == FATTN_CAND_PENDING)
            g->pend[m++] = j;
    if (!m)
        return 0;
    /* L L^T = C(P, P) + noise; row q of kb: L^-1 C(P, j), column by column. */
    double L[FATTN_STRATEGY_BATCH_MAX][FATTN_STRATEGY_BATCH_MAX] = {{0}};
    for (size_t q = 0; q < m; ++q) {
        for (size_t r = 0; r <= q; ++r) {
            double v = post_cov(g, g->pend[q], g->pend[r]) + (q == r ? GP_NOISE : 0);
            for (size_t k = 0; k < r; ++k)
                v -= L[q][k] * L[r][k];
            L[q][r] = q == r ? sqrt(v > 1e-9 ? v : 1e-9) : v / L[r][r];
        }
        if (g->m + g->mu[g->pend[q]] < *ybest)
            *ybest = g->m + g->mu[g->pend[q]];
    }
    for (size_t j = 0; j < b->n; ++j) {
        if (b->state[j] != FATTN_CAND_UNTRIED)
            continue;
        double shrink = 0;
        for (size_t q = 0; q < m; ++q) {
            double v = post_cov(g, g->pend[q], j);
            for (size_t k = 0; k < q; ++k)
                v -= L[q][k] * g->kb[k * b->n + j];
            v /= L[q][q];
            g->kb[q * b->n + j] = v;
            shrink += v * v;
        }
        g->score[j] = shrink;
    }
    return 1;
}

/* The score of every untried candidate (g->score): log expected
 * improvement plus log chance of being measurable. */
static void score_all(gp *g)
{
    const fattn_book *b = &g->book;
    double sd0 = sqrt(g->s2), ybest = log(g->stall.best);
    int kb = g->batch > 1 && b->npending && believe(g, &ybest);
    for (size_t j = 0; j < b->n; ++j) {
        if (b->state[j] != FATTN_CAND_UNTRIED)
            continue;
        double v = g->var[j] - (kb ? g->score[j] : 0);
        double sd = sd0 * sqrt(v > 1e-12 ? v : 1e-12);
        double u = (ybest - g->m - g->mu[j]) / sd;
        g->score[j] = log_ei(u, sd) + log(measurable(g, j));
    }
}

/* The untried candidate with the best score. */
static long best_scored(const gp *g)
{
    const fattn_book *b = &g->book;
    long best = -1;
    double bs = -HUGE_VAL;
    for (size_t j = 0; j < b->n; ++j)
        if (b->state[j] == FATTN_CAND_UNTRIED && (best < 0 || g->score[j] > bs))
            bs = g->score[j], best = (long)j;
    return best;
}

static double normal(fattn_rng *r)
{
    double u = fattn_rng_uniform(r), v = fattn_rng_uniform(r);
    return sqrt(-2 * log(1 - u)) * cos(2 * M_PI * v);
}

/* Thompson sampling: the untried candidate fastest in a joint sample of the
 * posterior; -1 when the grid is too large to sample. The prior sample over
 * the grid is (L_1 x ... x L_P) e for standard normal e, L_p the Cholesky
 * factor of parameter p's kernel matrix (exp(-theta) off the diagonal); it
 * is conditioned on the observations (plus sampled noise) pathwise:
 * f + K(., X) (K + noise)^-1 (y - m - f(X) - noise), in V's terms
 * f - sum_k V[k] w_k with w = L^-1 (f(X) + noise), added to the mean. */
static long thompson(gp *g)
{
    const fattn_book *b = &g->book;
    if (!g->grid)
        return -1;
    for (size_t x = 0; x < g->grid; ++x)
        g->f[x] = normal(&g->rng);
    for (int p = 0; p < b->np; ++p) {
        int K = b->nvals[p];
        if (K < 2)
            continue;
        /* The Cholesky factor of (1 - c) I + c 1 1^T, c = exp(-theta). */
        double c = exp(-GP_THETA), L[FATTN_SPACE_MAX_VALUES][FATTN_SPACE_MAX_VALUES] = {{0}};
        for (int i = 0; i < K; ++i)
            for (int j = 0; j <= i; ++j) {
                double s = i == j ? 1 : c;
                for (int k = 0; k < j; ++k)
                    s -= L[i][k] * L[j][k];
                L[i][j] = i == j ? sqrt(s) : s / L[j][j];
            }
        size_t st = g->stride[p];
        double t[FATTN_SPACE_MAX_VALUES];
        for (size_t x = 0; x < g->grid; ++x) {
            if ((x / st) % (size_t)K)
                continue; /* not the start of a fibre along p */
            for (int i = 0; i < K; ++i) {
                t[i] = 0;
                for (int k = 0; k <= i; ++k)
                    t[i] += L[i][k] * g->f[x + (size_t)k * st];
            }
            for (int i = 0; i < K; ++i)
                g->f[x + (size_t)i * st] = t[i];
        }
    }
    for (size_t k = 0; k < g->rows; ++k) {
        double u = g->f[g->cell[g->obs[k]]] + sqrt(GP_NOISE) * normal(&g->rng);
        for (size_t q = 0; q < k; ++q)
            u -= g->V[q][g->obs[k]] * g->w[q];
        g->w[k] = u / g->diag[k];
    }
    double sd0 = sqrt(g->s2);
    for (size_t j = 0; j < b->n; ++j) {
        if (b->state[j] != FATTN_CAND_UNTRIED)
            continue;
        double dev = g->f[g->cell[j]];
        for (size_t k = 0; k < g->rows; ++k)
            dev -= g->V[k][j] * g->w[k];
        g->score[j] = -(g->mu[j] + sd0 * dev) + sd0 * log(measurable(g, j));
    }
    return best_scored(g);
}

/* Of GP_NOVEL untried candidates drawn uniformly, the one farthest from
 * everything tried for its chance of being measurable (the lowest kernel
 * density of the outcomes over that chance). */
static long explore_pick(gp *g)
{
    long best = -1;
    double bd = HUGE_VAL;
    for (int d = 0; d < GP_NOVEL; ++d) {
        long i = fattn_book_random(&g->book, &g->rng);
        if (i < 0)
            return -1;
        double v = log(g->fall[i]) - log(measurable(g, (size_t)i));
        if (v < bd)
            bd = v, best = i;
    }
    return best;
}

/* A local step: of the untried candidates nearest the fastest measured one,
 * the one with the best score; -1 when GP_LOCAL_MAX steps were taken since
 * it last changed. */
static long local_pick(gp *g)
{
    const fattn_book *b = &g->book;
    if (g->inc < 0 || g->nlocal >= GP_LOCAL_MAX)
        return -1;
    refit_if_due(g);
    score_all(g);
    long best = -1;
    int bd = FATTN_MAX_PARAMS + 1;
    for (size_t j = 0; j < b->n; ++j) {
        if (b->state[j] != FATTN_CAND_UNTRIED)
            continue;
        int d = fattn_book_distance(b, j, (size_t)g->inc);
        if (d < bd || (d == bd && g->score[j] > g->score[best]))
            bd = d, best = (long)j;
    }
    g->nlocal += best >= 0;
    return best;
}

static long next(fattn_strategy *base)
{
    gp *g = (gp *)base;
    fattn_book *b = &g->book;
    long i;
    if (!b->nuntried)
        return -1;
    if (b->nproposed < GP_STARTUP || (!g->nmeasured && !b->npending))
        i = fattn_lhs_next(&g->design, b, &g->rng); /* nothing to model yet: keep exploring */
    else if (b->npending >= (size_t)g->batch)
        return FATTN_STRATEGY_WAIT;
    else if (fattn_rng_uniform(&g->rng) < fattn_stall_explore(&g->stall, GP_PATIENCE, GP_RAMP, GP_EXPLORE_MAX)) {
        i = -1;
        if (fattn_rng_uniform(&g->rng) < GP_LOCAL)
            i = local_pick(g);
        if (i < 0 && fattn_rng_uniform(&g->rng) < GP_EXPLORE_TS) {
            refit_if_due(g);
            i = thompson(g);
        }
        if (i < 0)
            i = explore_pick(g);
    } else {
        refit_if_due(g);
        score_all(g);
        i = best_scored(g);
    }
    if (i >= 0)
        fattn_book_propose(b, (size_t)i);
    return i;
}

static void observe(fattn_strategy *base, size_t i, int ok, double median_us)
{
    gp *g = (gp *)base;
    fattn_book *b = &g->book;
    if (b->state[i] == FATTN_CAND_DONE)
        return;
    fattn_book_observe(b, i, ok, median_us);
    int measured = isfinite(b->y[i]);
    for (size_t j = 0; j < b->n; ++j) {
        double w = kern(b, GP_FEAS_THETA, i, j);
        g->fall[j] += w;
        g->fok[j] += measured * w;
    }
    if (!measured)
        return;
    if (b->y[i] < g->stall.best)
        g->inc = (long)i, g->nlocal = 0;
    fattn_stall_observe(&g->stall, b->y[i], GP_STEP);
    ++g->nmeasured;
    if (g->rows < g->maxrows && g->due)
        add_row(g, i);
}

/* The untried candidates with the best scores, for the search loop to
 * compile ahead. */
static size_t hint(fattn_strategy *base, size_t *out, size_t k)
{
    gp *g = (gp *)base;
    fattn_book *b = &g->book;
    size_t m = 0;
    if (b->nproposed < GP_STARTUP || !g->due)
        return 0;
    score_all(g);
    for (size_t i = 0; i < b->n; ++i)
        if (b->state[i] == FATTN_CAND_UNTRIED)
            fattn_best_insert(out, &m, k, g->score, i);
    return m;
}

static void batch(fattn_strategy *base, int k)
{
    gp *g = (gp *)base;
    g->batch = k < 1 ? 1 : k > FATTN_STRATEGY_BATCH_MAX ? FATTN_STRATEGY_BATCH_MAX : k;
    free(g->kb);
    free(g->pend);
    g->kb = fattn_xcalloc((size_t)g->batch * (g->book.n ? g->book.n : 1), sizeof *g->kb);
    g->pend = fattn_xcalloc((size_t)g->batch, sizeof *g->pend);
}

static void claim(fattn_strategy *base, size_t i)
{
    fattn_book_propose(&((gp *)base)->book, i);
}

static void destroy(fattn_strategy *base)
{
    gp *g = (gp *)base;
    free(g->kb);
    free(g->pend);
    for (size_t k = 0; k < g->rows; ++k)
        free(g->V[k]);
    free(g->V);
    fattn_book_release(&g->book);
    fattn_lhs_release(&g->design);
    free(g->obs);
    free(g->z);
    free(g->diag);
    free(g->w);
    free(g->cell);
    free(g->f);
    free(g->mu);
    free(g->var);
    free(g->fok);
    free(g->fall);
    free(g->meas);
    free(g->score);
    free(g);
}

const fattn_strategy_ops fattn_strategy_gp = {
    "gp",
    "16 Latin hypercube seeds, then Bayesian optimisation: a Gaussian process over the configurations, "
    "expected improvement, exploration while stalled: local steps, far picks, Thompson sampling (the default)",
    create,
    next,
    observe,
    destroy,
    hint,
    batch,
    claim,
};
