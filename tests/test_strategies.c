/*
 * test_strategies.c - the search strategies against a landscape, no GPU.
 *
 *   test_strategies SPACE LANDSCAPE [SEEDS [--median-at-most STRATEGY=N]... | --candidates]
 *
 * The candidates are the static-gate survivors of SPACE for the landscape's
 * arch and shape (default limits, as `fattn-tune search` runs); each
 * strategy is driven the way the search loop drives it (a window of
 * proposals compiling ahead, outcomes in proposal order) and its outcomes
 * come from the landscape: a measured median, a post-compile rejection (no
 * GPU time, not a trial), or a GPU failure (a trial). For each strategy and
 * seed 1..SEEDS (default 10, at most 256) it counts the trials until one within 2% of the
 * landscape's optimum is measured, prints the table (lab/search-quality/bench-strategies.sh),
 * and checks: no strategy proposes a candidate twice or waits with nothing
 * outstanding; a resumed strategy never proposes what it was told; every
 * strategy reaches the target; the default strategy's median (and tpe's) is
 * at most half of random's and its p90 at most random's; each
 * --median-at-most bound holds (the CI cases of the landscape suite,
 * docs/search-quality.md). It also prints each strategy's median proposals
 * (compiles) until the target. --candidates prints the candidates with
 * their outcomes instead, for peers (lab/search-quality/optuna_peer.py).
 *
 * --batch K drives each strategy as a search over K GPUs does (search
 * --devices): told batch(K), the window K - 1 proposals wider, the
 * outcomes in proposal order (each trial taking the same time, they end in
 * the order they start); the trials until the target are counted as
 * before, so the table compares a batch's search quality with one GPU's.
 *
 * With FATTN_TRACE set in the environment it also writes each run's trials to
 * stderr, for studying a strategy's path: `run STRATEGY SEED` at the start
 * of a run, then `trace TRIAL CANDIDATE KEY KIND TIME/OPTIMUM` per trial
 * (KIND 0 measured, 2 a GPU failure with TIME 0).
 */
#include <math.h>

#include "gates/gates.h"
#include "run/landscape.h"
#include "search/strategy.h"
#include "space/space.h"
#include "t.h"
#include "t_landscape.h"
#include "util/err.h"

enum { AHEAD = 8, MAX_SEEDS = 256, HINT_K = 8, MAX_BATCH = FATTN_STRATEGY_BATCH_MAX };
/* --batch K: the GPUs (1: one). */
static int batch_k = 1;
/* Proposals made once the strategy had waited, and those of them a hint()
 * named before (what compiling ahead would have served from the cache). */
static size_t hint_props, hint_hits;
/* The proposals (compiles) of the last drive() until its target was measured. */
static size_t compiles;
static const double TARGET = 1.02;

static t_cands S;

static int load(const char *space_path, const char *land_path)
{
    int rc = t_cands_load(space_path, land_path, 0, &S);
    if (rc)
        return rc;
    printf("landscape: %s (%s)\n%zu survivors of %zu configurations: %zu measured, %zu rejected after compiling, "
           "%zu failed on the GPU; optimum %.4f us, target %.4f us (within 2%%)\n",
           land_path, S.device, S.n, S.configs, S.counts[0], S.counts[1], S.counts[2], S.best, S.best * TARGET);
    return 0;
}

enum { AT1 = 30, AT2 = 60 };

/* Drives strategy `ops` with `seed` like the search loop: returns the trials
 * (GPU runs) until the target is measured; 0 if never. Stops after
 * `stop_after` outcomes when > 0, handing back the strategy's done set.
 * at[0], at[1] (when not NULL) get the best time measured within the first
 * AT1 and AT2 trials over the optimum (HUGE_VAL when none). */
static size_t drive(const fattn_strategy_ops *ops, uint64_t seed, const unsigned char *told, size_t stop_after,
                    unsigned char *done_out, double *at)
{
    int trace = getenv("FATTN_TRACE") != NULL;
    if (trace)
        fprintf(stderr, "run %s %llu\n", ops->name, (unsigned long long)seed);
    fattn_strategy *s = ops->create(S.cfg, S.n, seed);
    if (batch_k > 1 && ops->batch)
        ops->batch(s, batch_k);
    const size_t window = AHEAD + (size_t)batch_k - 1;
    unsigned char *seen = fattn_xcalloc(S.n, 1), *hinted = fattn_xcalloc(S.n, 1);
    int waited = 0;
    long fifo[AHEAD + MAX_BATCH];
    size_t head = 0, pending = 0, trials = 0, outcomes = 0, hit = 0;
    int exhausted = 0, dup = 0, bad_wait = 0, proposed_told = 0;
    double best = HUGE_VAL;
    if (at)
        at[0] = at[1] = HUGE_VAL;
    compiles = 0;
    if (told)
        for (size_t i = 0; i < S.n; ++i)
            if (told[i]) {
                seen[i] = 1;
                ops->observe(s, i, S.kind[i] == 0, S.y[i]);
            }
    for (;;) {
        while (!exhausted && pending < window) {
            long i = ops->next(s);
            if (i == FATTN_STRATEGY_WAIT) {
                bad_wait += pending == 0;
                waited = 1;
                if (ops->hint) {
                    /* What the search loop would compile ahead: untried,
                     * distinct, at most k, nothing marked proposed. */
                    size_t h[HINT_K], nh = ops->hint(s, h, HINT_K);
                    CHECK(nh <= HINT_K);
                    for (size_t k = 0; k < nh; ++k) {
                        CHECK(h[k] < S.n && !seen[h[k]] && !(told && told[h[k]]));
                        for (size_t j = 0; j < k; ++j)
                            CHECK(h[j] != h[k]);
                        hinted[h[k]] = 1;
                    }
                }
                if (pending)
                    break;
            }
            if (i < 0) {
                exhausted = 1;
                break;
            }
            proposed_told += told && told[i];
            if (waited) { /* a model proposal: had the loop compiled it ahead? */
                ++hint_props;
                hint_hits += hinted[i];
            }
            dup += seen[i];
            seen[i] = 1;
            fifo[(head + pending++) % window] = i;
        }
        if (!pending)
            break;
        size_t i = (size_t)fifo[head];
        head = (head + 1) % window;
        --pending;
        trials += S.kind[i] != 1;
        if (!hit)
            ++compiles;
        if (S.kind[i] == 0 && S.y[i] < best)
            best = S.y[i];
        if (at && trials <= AT1)
            at[0] = best / S.best;
        if (at && trials <= AT2)
            at[1] = best / S.best;
        if (trace && S.kind[i] != 1) {
            char key[FATTN_KEY_MAX];
            fattn_config_key(&S.cfg[i], key);
            fprintf(stderr, "trace %zu %zu %s %d %.4f\n", trials, i, key, S.kind[i], S.kind[i] ? 0 : S.y[i] / S.best);
        }
        ops->observe(s, i, S.kind[i] == 0, S.y[i]);
        if (done_out)
            done_out[i] = 1;
        if (!hit && S.kind[i] == 0 && S.y[i] <= S.best * TARGET)
            hit = trials;
        if (stop_after && ++outcomes >= stop_after)
            break;
        if (hit && !stop_after && (!at || trials >= AT2))
            break;
    }
    CHECK_INT(dup, 0);
    CHECK_INT(bad_wait, 0);
    CHECK_INT(proposed_told, 0);
    ops->destroy(s);
    free(seen);
    free(hinted);
    return hit;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static size_t medians[16], p90s[16];
static int nseeds = 10;
/* --median-at-most STRATEGY=N: regression bounds (the CI cases of the suite). */
static const char *bound_name[8];
static size_t bound_max[8];
static int nbounds;

/* Whether strategy `name` is benchmarked: all, or those the environment's
 * FATTN_STRATEGIES lists (comma-separated; for lab/search-quality/bench-search-quality.sh). */
static int wanted(const char *name)
{
    const char *list = getenv("FATTN_STRATEGIES");
    if (!list || !*list)
        return 1;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
            return 1;
    return 0;
}

static void quality(void)
{
    printf("\ntrials (GPU runs) until a configuration within 2%% of the optimum is measured, seeds 1..%d, %d GPU%s; "
           "the best measured within %d and %d trials over the optimum:\n\n",
           nseeds, batch_k, batch_k == 1 ? "" : "s", AT1, AT2);
    printf("| strategy | median | mean | min | max | per seed | best@%d per seed | best@%d per seed |\n"
           "|---|---|---|---|---|---|---|---|\n",
           AT1, AT2);
    for (int k = 0; fattn_strategies[k]; ++k) {
        const fattn_strategy_ops *ops = fattn_strategies[k];
        if (!wanted(ops->name))
            continue;
        hint_props = hint_hits = 0;
        size_t t[MAX_SEEDS], sorted[MAX_SEEDS], c[MAX_SEEDS];
        double mean = 0, at[MAX_SEEDS][2];
        char list[MAX_SEEDS * 8] = "", l30[MAX_SEEDS * 8] = "", l60[MAX_SEEDS * 8] = "";
        for (int s = 0; s < nseeds; ++s) {
            t[s] = drive(ops, (uint64_t)s + 1, NULL, 0, NULL, at[s]);
            c[s] = compiles;
            CHECK(t[s] > 0); /* every strategy gets there */
            mean += (double)t[s] / nseeds;
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%zu", s ? " " : "", t[s]);
            snprintf(l30 + strlen(l30), sizeof l30 - strlen(l30), "%s%.4f", s ? " " : "", at[s][0]);
            snprintf(l60 + strlen(l60), sizeof l60 - strlen(l60), "%s%.4f", s ? " " : "", at[s][1]);
        }
        memcpy(sorted, t, sizeof t);
        qsort(sorted, (size_t)nseeds, sizeof *sorted, cmp_size);
        medians[k] = nseeds % 2 ? sorted[nseeds / 2] : (sorted[nseeds / 2 - 1] + sorted[nseeds / 2]) / 2;
        p90s[k] = sorted[(size_t)(0.9 * nseeds) < (size_t)nseeds ? (size_t)(0.9 * nseeds) : (size_t)nseeds - 1];
        for (int j = 0; j < nbounds; ++j)
            if (!strcmp(bound_name[j], ops->name)) {
                printf("%s: median %zu, bound %zu\n", ops->name, medians[k], bound_max[j]);
                CHECK(medians[k] <= bound_max[j]);
            }
        printf("| %s | %zu | %.1f | %zu | %zu | %s | %s | %s |\n", ops->name, medians[k], mean, sorted[0],
               sorted[nseeds - 1], list, l30, l60);
        qsort(c, (size_t)nseeds, sizeof *c, cmp_size);
        printf("%s: %zu proposals (compiles) until the target, median\n", ops->name,
               nseeds % 2 ? c[nseeds / 2] : (c[nseeds / 2 - 1] + c[nseeds / 2]) / 2);
        if (ops->hint && hint_props)
            printf("%s: %zu of %zu proposals made after a wait were among the %d hinted before\n", ops->name, hint_hits,
                   hint_props, HINT_K);
    }
    /* The model-based strategies, the default (the first) and tpe, against
     * random search. */
    size_t rnd = 0, rnd90 = 0;
    for (int k = 0; fattn_strategies[k]; ++k)
        if (!strcmp(fattn_strategies[k]->name, "random"))
            rnd = medians[k], rnd90 = p90s[k];
    printf("\n");
    for (int k = 0; fattn_strategies[k]; ++k) {
        const char *name = fattn_strategies[k]->name;
        if ((k && strcmp(name, "tpe")) || !wanted(name) || !wanted("random"))
            continue;
        printf("%s: median %zu, p90 %zu; random: median %zu, p90 %zu\n", name, medians[k], p90s[k], rnd, rnd90);
        CHECK(medians[k] > 0 && rnd > 0);
        CHECK(2 * medians[k] <= rnd); /* clearly better than random */
        CHECK(p90s[k] <= rnd90);      /* and its bad seeds no worse than random's */
    }
}

/* A strategy told what a study holds (resume) never proposes it again, and
 * still reaches every other candidate. */
static void resume_never_repeats(void)
{
    for (int k = 0; fattn_strategies[k]; ++k) {
        unsigned char *done = fattn_xcalloc(S.n, 1);
        drive(fattn_strategies[k], 7, NULL, 60, done, NULL);
        size_t ndone = 0;
        for (size_t i = 0; i < S.n; ++i)
            ndone += done[i];
        CHECK_INT(ndone, 60);
        /* The rest of the way: proposes none of the 60 (drive checks) and
         * reaches the target unless the 60 held it. */
        drive(fattn_strategies[k], 7, done, 0, NULL, NULL);
        free(done);
    }
}

/* Every strategy proposes every candidate once when nothing stops it. */
static void exhausts(void)
{
    for (int k = 0; fattn_strategies[k]; ++k) {
        unsigned char *done = fattn_xcalloc(S.n, 1);
        drive(fattn_strategies[k], 3, NULL, S.n + 1, done, NULL);
        size_t ndone = 0;
        for (size_t i = 0; i < S.n; ++i)
            ndone += done[i];
        CHECK_INT(ndone, S.n);
        free(done);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_strategies SPACE LANDSCAPE [SEEDS [--batch K] [--median-at-most STRATEGY=N]... "
                        "| --candidates]\n");
        return T_HARNESS;
    }
    int dump = argc > 3 && !strcmp(argv[3], "--candidates");
    if (argc > 3 && !dump)
        nseeds = atoi(argv[3]);
    int a = 4;
    if (a + 1 < argc && !strcmp(argv[a], "--batch")) {
        batch_k = atoi(argv[a + 1]);
        if (batch_k < 1 || batch_k > MAX_BATCH)
            return T_HARNESS;
        a += 2;
    }
    for (; a + 1 < argc && !strcmp(argv[a], "--median-at-most") && nbounds < 8; a += 2) {
        const char *eq = strchr(argv[a + 1], '=');
        if (!eq)
            return T_HARNESS;
        bound_name[nbounds] = strndup(argv[a + 1], (size_t)(eq - argv[a + 1]));
        bound_max[nbounds++] = (size_t)atol(eq + 1);
    }
    if (nseeds < 1 || nseeds > MAX_SEEDS)
        return T_HARNESS;
    int rc = load(argv[1], argv[2]);
    if (rc)
        return rc;
    if (dump) { /* the candidates as the strategies see them, for peers (lab/search-quality/optuna_peer.py) */
        for (size_t i = 0; i < S.n; ++i) {
            char key[FATTN_KEY_MAX];
            fattn_config_key(&S.cfg[i], key);
            printf("candidate %s %d %.6f\n", key, S.kind[i], S.kind[i] == 0 ? S.y[i] : 0.0);
        }
        return 0;
    }
    T_RUN(quality);
    T_RUN(resume_never_repeats);
    T_RUN(exhausts);
    t_cands_release(&S);
    return t_exit();
}
