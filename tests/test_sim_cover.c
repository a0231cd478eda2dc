/*
 * test_sim_cover.c - acceptance 1 of issue 13: a pairwise covering sample of
 * search/space.json and search/space-h100.json (every value of every
 * parameter with every value of every other, of D in {64, 128}, causal or
 * not, S in {1, 33, 130, 257}, (B, H) in {(1, 2), (2, 1)}) runs through the
 * simulator with no fault, no hazard and correct numerics;
 * and acceptance 6: in every case, the bank-conflict gate's model (the worst
 * ways of each access kind, gates/access.h) equals the worst wavefronts per
 * phase the simulator measured at the kernel line of that access, and so
 * it does for an even spread of the configurations the gate rejects for
 * bank conflicts, each of which the simulator measures conflicting.
 *
 * The coverage is checked here against an oracle of its own (which pairs a
 * kernel can hold), not against the sampler's candidate list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/kernel_src.h"
#include "gates/gates.h"
#include "gates/layout.h"
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

/* The access kinds of the bank model, by the kernel call at a line: the
 * copy line serves the Q tile and the K/V slots alike (one template), so it
 * is held to the worse of the two. Lines of other accesses (the split-KV
 * partials, DSMEM) are not modelled: -1. */
enum { SITE_COPY = FATTN_ACC_KINDS, SITE_NONE = -1 };

static int site_kind(const char *line)
{
    static const struct {
        const char *call;
        int kind;
    } calls[] = {
        {"cp_async<kLoadBytes>(base + tile_off", SITE_COPY}, {"st_shared(tile + tile_off", SITE_COPY},
        {"ldmatrix_x4(a[mt], q_tile", FATTN_ACC_LDM_Q},      {"ldmatrix_x4(b, slot", FATTN_ACC_LDM_K},
        {"ldmatrix_x4_trans(b, slot", FATTN_ACC_LDM_V},      {"st_shared(q_tile + tile_off", FATTN_ACC_O_STAGE},
        {"ld_shared<VecT>(q_tile", FATTN_ACC_O_OUT},
    };
    for (size_t i = 0; i < sizeof calls / sizeof *calls; ++i)
        if (strstr(line, calls[i].call))
            return calls[i].kind;
    return SITE_NONE;
}

/* Line `n` (1-based) of text, into out. */
static void line_of(const char *text, int n, char *out, size_t size)
{
    for (int i = 1; i < n && text; ++i) {
        text = strchr(text, '\n');
        text = text ? text + 1 : NULL;
    }
    snprintf(out, size, "%.*s", text ? (int)strcspn(text, "\n") : 0, text ? text : "");
}

/* Holds the model to the measurement of one case; counts the kinds seen. */
static int bank_agrees(const fattn_kernel_src *ks, const fattn_sim_case *c, const fattn_sim_report *rep,
                       const char *key, int seen[FATTN_ACC_KINDS + 1])
{
    fattn_layout l;
    unsigned model[FATTN_ACC_KINDS];
    fattn_layout_init(&l, &c->cfg, c->shape.head_dim);
    fattn_bank_model_ways(&l, model);
    int ok = 1;
    for (int i = 0; i < rep->nsites; ++i) {
        const fattn_sim_site_stats *st = &rep->sites[i];
        char text[512];
        line_of(ks->text, st->line, text, sizeof text);
        const int kind = site_kind(text);
        if (kind == SITE_NONE)
            continue;
        unsigned want = kind == SITE_COPY
                            ? (model[FATTN_ACC_Q_COPY] > model[FATTN_ACC_KV_COPY] ? model[FATTN_ACC_Q_COPY]
                                                                                  : model[FATTN_ACC_KV_COPY])
                            : model[kind];
        seen[kind] = 1;
        if (st->worst_ways != want) {
            fprintf(stderr,
                    "%s D=%d: line %d (%s, %u bytes a lane): the gate models %u-way, the simulator measured %u "
                    "(%llu wavefronts over %llu phases)\n",
                    key, c->shape.head_dim, st->line, st->insn, st->width, want, st->worst_ways,
                    (unsigned long long)st->wavefronts, (unsigned long long)st->phases);
            ok = 0;
        }
    }
    return ok;
}

static void covering(const char *space_file)
{
    fattn_space sp;
    char *file = fattn_search_file(space_file);
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
    for (int p = 0; p < FATTN_MMA_NPARAMS; ++p)
        for (int q = p + 1; q < FATTN_MMA_NPARAMS; ++q)
            for (int i = 0; i < sp.nvalues[p]; ++i)
                for (int j = 0; j < sp.nvalues[q]; ++j) {
                    const int a = sp.values[p][i], b = sp.values[q][j];
                    int hit = 0;
                    for (size_t k = 0; k < n; ++k)
                        hit |= cases[k].cfg.v[p] == a && cases[k].cfg.v[q] == b;
                    if (hit != feasible(p, a, q, b))
                        fprintf(stderr, "%s: %s=%d with %s=%d: %s\n", space_file, fattn_mma_params[p].name, a,
                                fattn_mma_params[q].name, b, hit ? "covered, yet infeasible" : "not covered");
                    CHECK_INT(hit, feasible(p, a, q, b));
                }
    for (int p = 0; p < FATTN_MMA_NPARAMS; ++p)
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
    CHECK_INT(fattn_kernel_src_load(fattn_default_kernel_dir(), fattn_family_mma.kernel_file, &ks), 0);
    char *cache = fattn_sim_cache_dir();
    const double t0 = fattn_now_ms();
    int bad = 0, disagree = 0, conflicted = 0, seen[FATTN_ACC_KINDS + 1] = {0}, peaky = 0;
    double worst_l2[FATTN_INPUT_SETS] = {0};
    for (size_t k = 0; k < n; ++k) {
        fattn_sim_check r;
        char key[FATTN_KEY_MAX];
        fattn_config_key(&cases[k].cfg, key);
        /* Every case on uniform inputs, every eighth on peaky ones too (a
         * launch each: all of them would double the time; the whole sample
         * on both is docs/numerics.md's measurement). */
        const fattn_sim_inputs in = {.seed = 1 + k, .sets = k % 8 ? 1u << FATTN_INPUTS_UNIFORM : 0};
        peaky += k % 8 == 0;
        int rc = fattn_sim_check_config(&ks, &cases[k].cfg, &cases[k].shape, &in, cache, &r);
        CHECK_INT(rc, 0);
        if (rc == 0 && !fattn_sim_check_passed(&r)) {
            ++bad;
            fprintf(stderr, "%s %d,%d,%d,%d%s: %s: %s\n", key, cases[k].shape.batch, cases[k].shape.heads,
                    cases[k].shape.seqlen, cases[k].shape.head_dim, cases[k].shape.causal ? " causal" : "", r.verdict,
                    r.detail);
        }
        CHECK(rc == 0 && fattn_sim_check_passed(&r));
        for (int set = 0; rc == 0 && fattn_sim_check_passed(&r) && set < FATTN_INPUT_SETS; ++set)
            worst_l2[set] = r.rel_l2[set] > worst_l2[set] ? r.rel_l2[set] : worst_l2[set];
        if (rc == 0 && r.ran) {
            disagree += !bank_agrees(&ks, &cases[k], &r.rep, key, seen);
            for (int i = 0; i < r.rep.nsites; ++i)
                conflicted += r.rep.sites[i].worst_ways > 1;
        }
    }
    CHECK_INT(disagree, 0);
    /* The norm-wise bound's margin (docs/numerics.md): at least 5x above the
     * worst relative L2 error of a correct kernel on the sample. */
    CHECK(worst_l2[FATTN_INPUTS_UNIFORM] > 0);
    CHECK(worst_l2[FATTN_INPUTS_UNIFORM] * 5 <= FATTN_DEFAULT_MAX_REL_L2);
    CHECK(worst_l2[FATTN_INPUTS_PEAKY] > 0);
    CHECK(worst_l2[FATTN_INPUTS_PEAKY] * 5 <= FATTN_DEFAULT_MAX_REL_L2);
    /* Every modelled kind was measured somewhere, and some conflict among
     * them (the sample holds unswizzled layouts the gate rejects). */
    for (int kind = FATTN_ACC_LDM_Q; kind <= SITE_COPY; ++kind)
        CHECK(seen[kind]);
    int unswizzled = 0;
    for (int i = 0; i < sp.nvalues[FATTN_P_SWIZZLE]; ++i)
        unswizzled |= sp.values[FATTN_P_SWIZZLE][i] == 0;
    if (unswizzled)
        CHECK(conflicted > 0);
    fprintf(stderr,
            "%s: %zu cases cover %zu pairs (%d on peaky inputs too); simulated in %.1f s, %d not clean; worst rel L2 "
            "%.3g uniform, %.3g peaky; bank model vs measured: %d cases disagree, %d conflicted sites\n",
            space_file, n, pairs, peaky, (fattn_now_ms() - t0) / 1000.0, bad, worst_l2[FATTN_INPUTS_UNIFORM],
            worst_l2[FATTN_INPUTS_PEAKY], disagree, conflicted);
    free(cache);
    fattn_kernel_src_release(&ks);
    free(cases);
    fattn_space_release(&sp);
}

/* Configurations the bank gate rejects: the measurement agrees, conflicts. */
static void bank_rejected(void)
{
    enum { PICK = 12 };
    fattn_space sp;
    CHECK_INT(fattn_space_load(fattn_default_space_path(), &sp), 0);
    fattn_kernel_src ks;
    CHECK_INT(fattn_kernel_src_load(fattn_default_kernel_dir(), fattn_family_mma.kernel_file, &ks), 0);
    char *cache = fattn_sim_cache_dir();
    fattn_gate_limits lim;
    fattn_gate_limits_default(&lim);
    int checked = 0, seen[FATTN_ACC_KINDS + 1] = {0};
    for (int d = 64; d <= 128; d += 64) {
        fattn_sim_case c = {.shape = {1, 2, 130, d, d == 128}};
        fattn_space_verdicts sv;
        fattn_gates_space(&sp, NULL, &c.shape, fattn_arch_find("sm_90"), &lim, &sv);
        size_t rejected = (size_t)sv.counts[FATTN_R_BANK_CONFLICTS], nth = 0;
        CHECK(rejected >= PICK / 2);
        for (size_t i = 0; i < sv.n && rejected; ++i) {
            if (sv.v[i].reason != FATTN_R_BANK_CONFLICTS || nth++ % (rejected / (PICK / 2)) != 0)
                continue;
            fattn_space_config(&sp, i, &c.cfg);
            char key[FATTN_KEY_MAX];
            fattn_config_key(&c.cfg, key);
            fattn_sim_check r;
            const fattn_sim_inputs in = {.seed = 7, .sets = 1u << FATTN_INPUTS_UNIFORM};
            CHECK_INT(fattn_sim_check_config(&ks, &c.cfg, &c.shape, &in, cache, &r), 0);
            CHECK(r.ran);
            if (!r.ran)
                continue;
            unsigned worst = 0;
            for (int k = 0; k < r.rep.nsites; ++k)
                worst = r.rep.sites[k].worst_ways > worst ? r.rep.sites[k].worst_ways : worst;
            if (worst <= 1)
                fprintf(stderr, "%s D=%d: rejected for %s, yet measured conflict-free\n", key, d, sv.v[i].detail);
            CHECK(worst > 1);
            CHECK(bank_agrees(&ks, &c, &r.rep, key, seen));
            ++checked;
        }
        fattn_space_verdicts_release(&sv);
    }
    CHECK(checked >= PICK);
    fprintf(stderr, "bank_conflicts rejections: %d simulated, each measured conflicting as modelled\n", checked);
    free(cache);
    fattn_kernel_src_release(&ks);
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
    T_RUN(bank_rejected);
    return t_exit();
}
