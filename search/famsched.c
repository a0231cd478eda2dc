/*
 * famsched.c - the family scheduler (famsched.h).
 */
#include "search/famsched.h"

#include <math.h>
#include <string.h>

/* Chosen on the development pairs, seeds 1-32 of tests/tools/family_pairs.py
 * (lab/search-quality/log.md, stop 60). */
const fattn_famsched_settings fattn_famsched_defaults = {
    .bonus = 3.0,
    .halving = 16,
    .temperature = 0.1,
    .floor = 0.02,
    .seed_ok = 2,
};

enum { DEFAULT_SEEDS = 16 };

void fattn_famsched_init(fattn_famsched *s, int n, const size_t *seeds, const fattn_famsched_settings *set)
{
    memset(s, 0, sizeof *s);
    s->set = set ? *set : fattn_famsched_defaults;
    s->n = n < 0 ? 0 : n < FATTN_FAMSCHED_MAX ? n : FATTN_FAMSCHED_MAX;
    for (int k = 0; k < s->n; ++k) {
        s->f[k].seeds = seeds ? seeds[k] : DEFAULT_SEEDS;
        s->f[k].best = HUGE_VAL;
    }
}

static int seeding(const fattn_famsched *s, const fattn_famsched_family *f)
{
    return f->ok < (size_t)s->set.seed_ok && f->recorded + f->inflight < f->seeds;
}

static double index_of(const fattn_famsched *s, const fattn_famsched_family *f)
{
    if (f->best == HUGE_VAL)
        return HUGE_VAL;
    return log(f->best) - s->set.bonus / (1 + (double)f->ok / s->set.halving);
}

/* Each open family's weight into w[] (0 for the others). */
static void weights(const fattn_famsched *s, unsigned open, double *w)
{
    double lo = HUGE_VAL, idx[FATTN_FAMSCHED_MAX];
    for (int k = 0; k < s->n; ++k) {
        idx[k] = index_of(s, &s->f[k]);
        if ((open >> k & 1) && idx[k] < lo)
            lo = idx[k];
    }
    for (int k = 0; k < s->n; ++k) {
        if (!(open >> k & 1))
            w[k] = 0;
        else if (s->set.even || seeding(s, &s->f[k]) || lo == HUGE_VAL)
            w[k] = 1;
        else {
            double x = idx[k] == HUGE_VAL ? 0 : exp(-(idx[k] - lo) / s->set.temperature);
            w[k] = x > s->set.floor ? x : s->set.floor;
        }
    }
}

/* What family f's proposals in flight will likely cost: its mean so far,
 * else the mean of all, else 1 each. */
static double inflight_cost(const fattn_famsched *s, const fattn_famsched_family *f)
{
    if (!f->inflight)
        return 0;
    double spent = f->spent;
    size_t n = f->recorded;
    if (!n) /* none of its own ended yet: every family's */
        for (int k = 0; k < s->n; ++k)
            spent += s->f[k].spent, n += s->f[k].recorded;
    return (double)f->inflight * (n && spent > 0 ? spent / (double)n : 1.0);
}

int fattn_famsched_pick(const fattn_famsched *s, unsigned open)
{
    double w[FATTN_FAMSCHED_MAX], behind = HUGE_VAL;
    int pick = -1;
    weights(s, open, w);
    for (int k = 0; k < s->n; ++k) {
        if (!(open >> k & 1))
            continue;
        double b = (s->f[k].spent + inflight_cost(s, &s->f[k])) / w[k];
        if (pick < 0 || b < behind)
            behind = b, pick = k;
    }
    return pick;
}

void fattn_famsched_proposed(fattn_famsched *s, int k)
{
    if (k >= 0 && k < s->n)
        ++s->f[k].inflight;
}

void fattn_famsched_record(fattn_famsched *s, int k, double cost, int trial, int ok, double median_us)
{
    if (k < 0 || k >= s->n)
        return;
    fattn_famsched_family *f = &s->f[k];
    if (f->inflight)
        --f->inflight;
    ++f->recorded;
    f->trials += trial != 0;
    f->spent += cost > 0 ? cost : 0;
    if (ok && median_us > 0) {
        ++f->ok;
        if (median_us < f->best)
            f->best = median_us;
    }
}

double fattn_famsched_share(const fattn_famsched *s, int k, unsigned open)
{
    double w[FATTN_FAMSCHED_MAX], sum = 0;
    weights(s, open, w);
    for (int j = 0; j < s->n; ++j)
        sum += w[j];
    return k >= 0 && k < s->n && sum > 0 ? w[k] / sum : 0;
}
