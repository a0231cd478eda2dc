/*
 * test_sim_cover.c - acceptance 1 of issue 13: a pairwise covering sample of
 * search/space.json and search/space-h100.json (every value of every
 * parameter with every value of every other, of D in {64, 128}, causal or
 * not, S in {1, 33, 130, 257}, (B, H) in {(1, 2), (2, 1)}) runs through the
 * simulator with no fault, no hazard and correct numerics.
 *
 * The coverage is checked here against an oracle of its own (which pairs a
 * kernel can hold), not against the sampler's candidate list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/kernel_src.h"
#include "sim/check.h"
#include "sim/kernel.h"
#include "sim/sample.h"
#include "space/cover.h"
#include "t.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/misc.h"
#include "util/paths.h"

/* Greedy covering on a small full product: every pair covered. */
static void cover_small(void)
{
    enum { F = 4 };
    int rows[81 * F], nv[F] = {3, 3, 3, 3};
    size_t chosen[81], pairs = 0;
    for (int i = 0; i < 81; ++i)
        for (int f = 0, x = i; f < F; ++f, x /= 3)
            rows[i * F + f] = x % 3;
    int n = fattn_cover_pairs(rows, 81, F, nv, chosen, &pairs);
    CHECK(n >= 9 && n <= 15); /* 9 is optimal (an orthogonal array) */
    CHECK_INT(pairs, 6 * 9);
    for (int f = 0; f < F; ++f)
        for (int g = f + 1; g < F; ++g)
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b) {
                    int hit = 0;
                    for (int k = 0; k < n; ++k)
                        hit |= rows[chosen[k] * F + f] == a && rows[chosen[k] * F + g] == b;
                    CHECK(hit);
                }
    /* A pair no row holds is not asked for. */
    int two[2 * 2] = {0, 0, 1, 1};
    int nv2[2] = {2, 2};
    CHECK_INT(fattn_cover_pairs(two, 2, 2, nv2, chosen, &pairs), 2);
    CHECK_INT(pairs, 2);
    int bad[2] = {0, 2};
    CHECK_INT(fattn_cover_pairs(bad, 1, 2, nv2, chosen, NULL), -1);
}

/* The oracle: can some kernel hold parameter p = a together with q = b? */
static int feasible(int p, int a, int q, int b)
{
    if (p > q) {
        int t = p;
        p = q, q = t;
        t = a, a = b, b = t;
    }
    if (p == FATTN_P_BLOCK_M && q == FATTN_P_NUM_WARPS)
        return a % (16 * b) == 0;
    if (p == FATTN_P_BLOCK_N && q == FATTN_P_SPLIT_KV)
        return b <= (257 + a - 1) / a; /* a cluster no larger than the key tiles at S = 257 */
    return 1;
}

static void covering(const char *space_file)
{
    fattn_space sp;
    /* beside the default space */
    const char *def = fattn_default_space_path(), *slash = strrchr(def, '/');
    char dir[1024];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - def) : 1, slash ? def : ".");
    char *file = fattn_path_join(dir, space_file);
    if (fattn_space_load(file, &sp)) {
        CHECK(!"space loads");
        free(file);
        return;
    }
    free(file);
    fattn_sim_case *cases;
    size_t n, pairs;
    CHECK_INT(fattn_sim_covering(&sp, fattn_arch_find("sm_90"), &cases, &n, &pairs), 0);

    /* Coverage, by the oracle: every feasible pair of listed values. */
    for (int p = 0; p < FATTN_NPARAMS; ++p)
        for (int q = p + 1; q < FATTN_NPARAMS; ++q)
            for (int i = 0; i < sp.nvalues[p]; ++i)
                for (int j = 0; j < sp.nvalues[q]; ++j) {
                    const int a = sp.values[p][i], b = sp.values[q][j];
                    int hit = 0;
                    for (size_t k = 0; k < n; ++k)
                        hit |= cases[k].cfg.v[p] == a && cases[k].cfg.v[q] == b;
                    if (hit != feasible(p, a, q, b))
                        fprintf(stderr, "%s: %s=%d with %s=%d: %s\n", space_file, fattn_params[p].name, a,
                                fattn_params[q].name, b, hit ? "covered, yet infeasible" : "not covered");
                    CHECK_INT(hit, feasible(p, a, q, b));
                }
    for (int p = 0; p < FATTN_NPARAMS; ++p)
        for (int i = 0; i < sp.nvalues[p]; ++i)
            for (int d = 64; d <= 128; d += 64)
                for (int c = 0; c <= 1; ++c) {
                    int hit_d = 0, hit_c = 0, hit_tail = 0;
                    for (size_t k = 0; k < n; ++k) {
                        if (cases[k].cfg.v[p] != sp.values[p][i])
                            continue;
                        hit_d |= cases[k].shape.head_dim == d;
                        hit_c |= cases[k].shape.causal == c;
                        /* several rows, the last key tile partial */
                        hit_tail |=
                            cases[k].shape.seqlen > 1 && cases[k].shape.seqlen % cases[k].cfg.v[FATTN_P_BLOCK_N] != 0;
                    }
                    CHECK(hit_d && hit_c && hit_tail);
                }

    /* Every case through the simulator: clean. */
    fattn_kernel_src ks;
    CHECK_INT(fattn_kernel_src_load(fattn_default_kernel_dir(), FATTN_KERNEL_FILE, &ks), 0);
    char *cache = fattn_sim_cache_dir();
    const double t0 = fattn_now_ms();
    int bad = 0;
    for (size_t k = 0; k < n; ++k) {
        fattn_sim_check r;
        char key[FATTN_KEY_MAX];
        fattn_config_key(&cases[k].cfg, key);
        int rc = fattn_sim_check_config(&ks, &cases[k].cfg, &cases[k].shape, 1 + k, cache, &r);
        CHECK_INT(rc, 0);
        if (rc == 0 && !fattn_sim_check_passed(&r)) {
            ++bad;
            fprintf(stderr, "%s %d,%d,%d,%d%s: %s: %s\n", key, cases[k].shape.batch, cases[k].shape.heads,
                    cases[k].shape.seqlen, cases[k].shape.head_dim, cases[k].shape.causal ? " causal" : "", r.verdict,
                    r.detail);
        }
        CHECK(rc == 0 && fattn_sim_check_passed(&r));
    }
    fprintf(stderr, "%s: %zu cases cover %zu pairs; simulated in %.1f s, %d not clean\n", space_file, n, pairs,
            (fattn_now_ms() - t0) / 1000.0, bad);
    free(cache);
    fattn_kernel_src_release(&ks);
    free(cases);
    fattn_space_release(&sp);
}

static void covering_default(void)
{
    covering("space.json");
}

static void covering_h100(void)
{
    covering("space-h100.json");
}

int main(void)
{
    fattn_error_set_quiet(1);
    T_RUN(cover_small);
    T_RUN(covering_default);
    T_RUN(covering_h100);
    return t_exit();
}
