/*
 * test_families.c - the family scheduler (search/famsched.h) over two-family
 * landscape pairs, no GPU.
 *
 *   test_families --unit
 *   test_families PAIRS.TSV MMA_SPACE WGMMA_SPACE [--seeds N] [--max-median-ratio R]
 *                 [--max-pair-ratio R] [--set NAME=VALUE]... [--cost FAMILY=COMPILE,EVAL]
 *
 * --unit: the scheduler's rules on made-up outcomes (seeds shared evenly,
 * the floor, the bonus going with the measured trials, time rather than
 * trials, proposals in flight, the same records giving the same state).
 *
 * PAIRS.TSV is what tests/tools/family_pairs.py writes: per pair an mma
 * landscape and a wgmma one (synthetic). Each family's candidates are its
 * space's static-gate survivors at the landscape's shape (the mma family at
 * the default limits, the wgmma family at the opt-in shared memory, as a
 * study over both takes them); each family's strategy is the default (gp)
 * driven the way the search loop drives it (a window of proposals in
 * flight, outcomes in proposal order), and the scheduler picks whose turn
 * it is. A proposal costs its family's compile time, and its evaluation
 * time when it runs (a trial); --cost sets them (default 0.1,1 both: the
 * compiles run ahead on the compile threads, the evaluator is the serial
 * part).
 *
 * For each pair and seed 1..N (default 8) it counts the trials (runs on the
 * evaluator, both families) and the time (the cost model's) until one
 * within 2% of the joint best is measured: searching both under the
 * scheduler, both under an even split of the time, and the family holding
 * the joint best alone. It prints a line per pair and the pooled medians,
 * and checks: the scheduler never proposes a candidate twice, every run
 * reaches the target, the pooled median of the scheduler's trials is at
 * most R times the alone one's (--max-median-ratio, default 1.3) and below
 * the even split's, and no pair's median over R' times its alone median
 * (--max-pair-ratio, default 2). --set overrides a scheduler setting
 * (bonus, halving, temperature, floor, seed_ok, seeds) and --joint-only
 * runs the scheduler alone, for the rule's development
 * (lab/search-quality/families-log.md).
 */
#include <math.h>

#include "search/famsched.h"
#include "search/strategy.h"
#include "t.h"
#include "t_landscape.h"

enum { AHEAD = 8, MAX_SEEDS = 64, MAX_PAIRS = 256, NFAM = 2 };
static const double TARGET = 1.02;

/* A family's candidates, and what its proposals cost. */
typedef struct fam {
    t_cands c;
    double compile, eval;
} fam;

typedef struct pair {
    int seed;
    char cas[32], holder[16];
    fam f[NFAM]; /* mma, wgmma */
    double best;
} pair;

static fattn_famsched_settings settings;
static size_t seeds_per_family = 16;
static double costs[NFAM][2] = {{0.1, 1}, {0.1, 1}};

static void free_pair(pair *p)
{
    for (int k = 0; k < NFAM; ++k)
        t_cands_release(&p->f[k].c);
}

enum mode { JOINT, EVEN, ALONE };

/* The cost (time) the last drive() spent until its target. */
static double hit_cost;

/* Drives one search over the pair's families (ALONE: the holder's only)
 * with `seed`: the trials until the target; 0 if never. */
static size_t drive(const pair *p, enum mode mode, uint64_t seed)
{
    const fattn_strategy_ops *ops = fattn_strategies[0];
    fattn_strategy *st[NFAM] = {NULL};
    unsigned char *seen[NFAM];
    int exhausted[NFAM] = {0};
    const int only = !strcmp(p->holder, "mma") ? 0 : 1;
    fattn_famsched fs;
    fattn_famsched_settings set = settings;
    set.even = mode == EVEN;
    size_t nseeds[NFAM] = {seeds_per_family, seeds_per_family};
    fattn_famsched_init(&fs, NFAM, nseeds, &set);
    for (int k = 0; k < NFAM; ++k) {
        seen[k] = fattn_xcalloc(p->f[k].c.n, 1);
        if (mode != ALONE || k == only)
            st[k] = ops->create(p->f[k].c.cfg, p->f[k].c.n, seed * 0x9e3779b97f4a7c15ull + (uint64_t)k);
        else
            exhausted[k] = 1;
    }
    struct {
        int k;
        long i;
    } fifo[AHEAD];
    size_t head = 0, pending = 0, trials = 0, hit = 0;
    double spent = 0;
    int dup = 0;
    for (;;) {
        while (pending < AHEAD) {
            unsigned open = 0;
            for (int k = 0; k < NFAM; ++k)
                open |= (unsigned)!exhausted[k] << k;
            int k = fattn_famsched_pick(&fs, open);
            if (k < 0)
                break;
            long i = st[k]->ops->next(st[k]);
            if (i == FATTN_STRATEGY_WAIT && pending)
                break; /* the family picked needs outcomes first */
            if (i < 0) {
                exhausted[k] = 1;
                continue;
            }
            dup += seen[k][i];
            seen[k][i] = 1;
            fattn_famsched_proposed(&fs, k);
            fifo[(head + pending) % AHEAD].k = k;
            fifo[(head + pending++) % AHEAD].i = i;
        }
        if (!pending)
            break;
        const int k = fifo[head].k;
        const size_t i = (size_t)fifo[head].i;
        head = (head + 1) % AHEAD;
        --pending;
        const fam *f = &p->f[k];
        const t_cands *c = &f->c;
        const int trial = c->kind[i] != 1, ok = c->kind[i] == 0;
        trials += trial;
        spent += f->compile + (trial ? f->eval : 0);
        fattn_famsched_record(&fs, k, f->compile + (trial ? f->eval : 0), trial, ok, c->y[i]);
        st[k]->ops->observe(st[k], i, ok, c->y[i]);
        if (ok && c->y[i] <= p->best * TARGET) {
            hit = trials;
            hit_cost = spent;
            break;
        }
    }
    CHECK_INT(dup, 0);
    if (getenv("FATTN_TRACE"))
        fprintf(stderr, "pair %d mode %d seed %llu: %zu trials (mma %zu of %zu proposals, wgmma %zu of %zu)\n", p->seed,
                (int)mode, (unsigned long long)seed, hit, fs.f[0].trials, fs.f[0].recorded, fs.f[1].trials,
                fs.f[1].recorded);
    for (int k = 0; k < NFAM; ++k) {
        if (st[k])
            st[k]->ops->destroy(st[k]);
        free(seen[k]);
    }
    return hit;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static double median(size_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_size);
    return n % 2 ? (double)v[n / 2] : 0.5 * (double)(v[n / 2 - 1] + v[n / 2]);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_d(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int set_option(const char *arg)
{
    static const struct {
        const char *name;
        double *to;
    } knobs[] = {
        {"bonus", &settings.bonus},
        {"halving", &settings.halving},
        {"temperature", &settings.temperature},
        {"floor", &settings.floor},
    };
    const char *eq = strchr(arg, '=');
    if (!eq)
        return T_HARNESS;
    const size_t n = (size_t)(eq - arg);
    const double v = atof(eq + 1);
    for (size_t k = 0; k < sizeof knobs / sizeof *knobs; ++k)
        if (strlen(knobs[k].name) == n && !strncmp(arg, knobs[k].name, n)) {
            *knobs[k].to = v;
            return 0;
        }
    if (n == 7 && !strncmp(arg, "seed_ok", n))
        settings.seed_ok = (int)v;
    else if (n == 5 && !strncmp(arg, "seeds", n))
        seeds_per_family = (size_t)v;
    else
        return T_HARNESS;
    return 0;
}

static int cost_option(const char *arg)
{
    int k = !strncmp(arg, "mma=", 4) ? 0 : !strncmp(arg, "wgmma=", 6) ? 1 : -1;
    if (k < 0 || sscanf(strchr(arg, '=') + 1, "%lf,%lf", &costs[k][0], &costs[k][1]) != 2)
        return T_HARNESS;
    return 0;
}

/* The scheduler alone, on made-up outcomes. */
static void unit_rule(void)
{
    fattn_famsched s;
    const size_t seeds[2] = {16, 16};
    fattn_famsched_init(&s, 2, seeds, NULL);
    CHECK_INT(fattn_famsched_pick(&s, 0), -1); /* nothing open */
    CHECK_INT(fattn_famsched_pick(&s, 2), 1);  /* only family 1 open */
    /* Seeds: the time is shared evenly whatever the outcomes. */
    for (int r = 0; r < 2; ++r) {
        int k = fattn_famsched_pick(&s, 3);
        CHECK_INT(k, r == 0 ? 0 : 1); /* ties to the first, then the one behind */
        fattn_famsched_proposed(&s, k);
        fattn_famsched_record(&s, k, 1.0, 1, 1, k ? 300.0 : 100.0);
    }
    CHECK_INT(fattn_famsched_pick(&s, 3), 0);
    CHECK_NEAR(fattn_famsched_share(&s, 0, 3), 0.5, 1e-12); /* both still seeding (seed_ok 2) */
    /* Each measured twice: family 1, three times slower, gets the floor. */
    fattn_famsched_record(&s, 0, 1.0, 1, 1, 100.0);
    fattn_famsched_record(&s, 1, 1.0, 1, 1, 300.0);
    const double floor = fattn_famsched_defaults.floor;
    CHECK_NEAR(fattn_famsched_share(&s, 1, 3), floor / (1 + floor), 1e-12);
    int picks[2] = {0, 0};
    for (int r = 0; r < 8; ++r) {
        int k = fattn_famsched_pick(&s, 3);
        ++picks[k];
        fattn_famsched_record(&s, k, 1.0, 1, 1, k ? 300.0 : 100.0);
    }
    CHECK_INT(picks[1], 0);
    /* ... until family 0's bonus has gone: after 100 more of its trials
     * family 1 gets turns again. */
    for (int r = 0; r < 100; ++r)
        fattn_famsched_record(&s, 0, 1.0, 1, 1, 100.0);
    CHECK(fattn_famsched_share(&s, 1, 3) > 2 * floor);
    /* As family 0's measured trials grow its bonus goes, and a family a
     * little slower gets turns back: 5% slower, searched twice. */
    fattn_famsched t;
    fattn_famsched_init(&t, 2, seeds, NULL);
    for (int r = 0; r < 2; ++r)
        fattn_famsched_record(&t, 0, 1.0, 1, 1, 100.0), fattn_famsched_record(&t, 1, 1.0, 1, 1, 105.0);
    double before = fattn_famsched_share(&t, 1, 3);
    for (int r = 0; r < 40; ++r)
        fattn_famsched_record(&t, 0, 1.0, 1, 1, 100.0);
    CHECK(fattn_famsched_share(&t, 1, 3) > before);
    CHECK(fattn_famsched_share(&t, 1, 3) > 0.4);
    /* Time, not trials: a family whose proposals cost 4 times as much gets
     * a quarter of the proposals under an even split. */
    fattn_famsched_settings even = fattn_famsched_defaults;
    even.even = 1;
    fattn_famsched_init(&t, 2, seeds, &even);
    int n[2] = {0, 0};
    for (int r = 0; r < 100; ++r) {
        int k = fattn_famsched_pick(&t, 3);
        ++n[k];
        fattn_famsched_record(&t, k, k ? 4.0 : 1.0, 1, 1, 100.0);
    }
    CHECK(n[0] >= 78 && n[0] <= 82);
    /* In flight: charged at the family's mean cost until they end. */
    fattn_famsched_init(&t, 2, seeds, &even);
    fattn_famsched_record(&t, 0, 2.0, 1, 1, 100.0);
    fattn_famsched_record(&t, 1, 2.0, 1, 1, 100.0);
    fattn_famsched_proposed(&t, 0);
    CHECK_INT(fattn_famsched_pick(&t, 3), 1);
    /* The same records in the same order, the same state (a resumed study). */
    fattn_famsched a, b;
    fattn_famsched_init(&a, 2, seeds, NULL);
    fattn_famsched_init(&b, 2, seeds, NULL);
    for (int r = 0; r < 30; ++r) {
        int k = fattn_famsched_pick(&a, 3);
        fattn_famsched_proposed(&a, k);
        double y = 100.0 + (double)((r * 37) % 11) + 20.0 * k;
        fattn_famsched_record(&a, k, 1.0 + 0.1 * k, r % 3 != 0, r % 3 == 1, y);
        fattn_famsched_record(&b, k, 1.0 + 0.1 * k, r % 3 != 0, r % 3 == 1, y);
    }
    CHECK(!memcmp(&a, &b, sizeof a));
    CHECK_INT(fattn_famsched_pick(&a, 3), fattn_famsched_pick(&b, 3));
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--unit")) {
        T_RUN(unit_rule);
        return t_exit();
    }
    if (argc < 4) {
        fprintf(stderr, "usage: test_families PAIRS.TSV MMA_SPACE WGMMA_SPACE [--seeds N] [--max-median-ratio R] "
                        "[--max-pair-ratio R] [--set NAME=VALUE]... [--cost FAMILY=COMPILE,EVAL]\n");
        return T_HARNESS;
    }
    int nseeds = 8, joint_only = 0;
    double max_median = 1.3, max_pair = 2.0;
    settings = fattn_famsched_defaults;
    for (int a = 4; a < argc; a += 2) {
        if (!strcmp(argv[a], "--joint-only")) { /* the rule's development: the scheduler's runs alone */
            joint_only = 1, --a;
            continue;
        }
        if (a + 1 >= argc)
            return T_HARNESS;
        if (!strcmp(argv[a], "--seeds"))
            nseeds = atoi(argv[a + 1]);
        else if (!strcmp(argv[a], "--max-median-ratio"))
            max_median = atof(argv[a + 1]);
        else if (!strcmp(argv[a], "--max-pair-ratio"))
            max_pair = atof(argv[a + 1]);
        else if (!strcmp(argv[a], "--set") ? set_option(argv[a + 1]) : 1)
            if (strcmp(argv[a], "--cost") || cost_option(argv[a + 1]))
                return T_HARNESS;
    }
    if (nseeds < 1 || nseeds > MAX_SEEDS)
        return T_HARNESS;
    FILE *tsv = fopen(argv[1], "r");
    if (!tsv)
        return T_HARNESS;
    char line[4096];
    static size_t all[3][MAX_PAIRS * MAX_SEEDS];
    static double all_t[3][MAX_PAIRS * MAX_SEEDS]; /* the same in time (the cost model) */
    size_t nall = 0, npairs = 0, misses = 0;
    double worst = 0, worst_t = 0;
    t_case = "pairs";
    printf("| seed | case | holder | alone | scheduler | even | ratio |\n|---|---|---|---|---|---|---|\n");
    while (fgets(line, sizeof line, tsv) && npairs < MAX_PAIRS) {
        pair p = {0};
        char mma[1024], wg[1024];
        if (!strncmp(line, "seed\t", 5))
            continue;
        if (sscanf(line, "%d\t%31s\t%1023s\t%1023s\t%15s", &p.seed, p.cas, mma, wg, p.holder) != 5)
            return T_HARNESS;
        int rc = t_cands_load(argv[2], mma, 0, &p.f[0].c);
        rc = rc ? rc : t_cands_load(argv[3], wg, 1, &p.f[1].c);
        if (rc)
            return rc;
        for (int k = 0; k < NFAM; ++k)
            p.f[k].compile = costs[k][0], p.f[k].eval = costs[k][1];
        p.best = fmin(p.f[0].c.best, p.f[1].c.best);
        CHECK_STR(p.holder, p.f[0].c.best <= p.f[1].c.best ? "mma" : "wgmma");
        size_t runs[3][MAX_SEEDS];
        double times[3][MAX_SEEDS];
        for (int m = 0; m < 3; ++m)
            for (int s = 0; s < nseeds; ++s) {
                if (joint_only && m != JOINT) {
                    runs[m][s] = 1, times[m][s] = 1;
                    continue;
                }
                runs[m][s] = drive(&p, (enum mode)m, (uint64_t)s + 1);
                times[m][s] = hit_cost;
                misses += runs[m][s] == 0;
                all[m][nall + (size_t)s] = runs[m][s];
                all_t[m][nall + (size_t)s] = hit_cost;
            }
        nall += (size_t)nseeds;
        double med[3];
        for (int m = 0; m < 3; ++m)
            med[m] = median(runs[m], (size_t)nseeds);
        double ratio = med[JOINT] / med[ALONE];
        worst = fmax(worst, ratio);
        worst_t = fmax(worst_t, median_d(times[JOINT], (size_t)nseeds) / median_d(times[ALONE], (size_t)nseeds));
        printf("| %d | %s | %s | %.1f | %.1f | %.1f | %.2f |\n", p.seed, p.cas, p.holder, med[ALONE], med[JOINT],
               med[EVEN], ratio);
        ++npairs;
        free_pair(&p);
    }
    fclose(tsv);
    if (!npairs)
        return T_HARNESS;
    double pooled[3], pooled_t[3];
    for (int m = 0; m < 3; ++m)
        pooled[m] = median(all[m], nall), pooled_t[m] = median_d(all_t[m], nall);
    printf("\n%zu pairs, %d seeds each: median trials to the target, alone %.1f, scheduler %.1f (%.2fx), even split "
           "%.1f (%.2fx); worst pair %.2fx\n",
           npairs, nseeds, pooled[ALONE], pooled[JOINT], pooled[JOINT] / pooled[ALONE], pooled[EVEN],
           pooled[EVEN] / pooled[ALONE], worst);
    printf("in time (the cost model: compile %.2f + evaluation %.2f mma, %.2f + %.2f wgmma): alone %.1f, scheduler "
           "%.1f (%.2fx), even split %.1f (%.2fx); worst pair %.2fx\n",
           costs[0][0], costs[0][1], costs[1][0], costs[1][1], pooled_t[ALONE], pooled_t[JOINT],
           pooled_t[JOINT] / pooled_t[ALONE], pooled_t[EVEN], pooled_t[EVEN] / pooled_t[ALONE], worst_t);
    CHECK_INT(misses, 0);
    CHECK(pooled[JOINT] <= max_median * pooled[ALONE]);
    CHECK(pooled[JOINT] < pooled[EVEN]);
    CHECK(worst <= max_pair);
    return t_exit();
}
