/*
 * test_gpu_engine.c - on a GPU, the whole engine through the worker: a few
 * configurations of different tilings pass the numerics gate for S in
 * {500, 512, 1000, 2048}, D in {64, 128}, causal and not, and are timed;
 * the seeds' 2-byte pad, forced past the gates, faults as
 * CUDA_ERROR_MISALIGNED_ADDRESS and the next configuration runs in a new
 * worker; cuDNN's baseline runs on the non-causal shapes, and confirm's
 * interleaved measurement of two kernels and cuDNN verifies all three before
 * and after and samples each in every round. Skips (77) without a GPU.
 *
 * usage: test_gpu_engine PATH-TO-fattn-tune
 */
#include "t.h"

#include <signal.h>

#include "compile/batch.h"
#include "compile/kernel_src.h"
#include "compile/nvrtc.h"
#include "gpu/device.h"
#include "run/evaluator.h"
#include "util/err.h"
#include "util/paths.h"

static const char *tool;
static char *include;
static fattn_kernel_src src, ref;

static fattn_evaluator *open_engine(const fattn_shape *s, const fattn_arch *arch)
{
    fattn_options o;
    fattn_nvrtc_result r;
    fattn_evaluator *e = NULL;
    fattn_options_build(&o, NULL, s->head_dim, s->causal, arch, include);
    if (fattn_nvrtc_compile(&ref, &o, 0, &r) || !r.ok)
        exit(T_HARNESS);
    fattn_gpu_eval_config c = {
        .worker_exe = tool,
        .shape = *s,
        .ref_cubin = r.cubin,
        .ref_size = r.cubin_size,
        .timing_sets = 2,
        .timing_seed = 3,
        .warmup = 2,
        .reps = 10,
        .samples = 8,
        .tol = {1e-2, 1e-2, FATTN_DEFAULT_MAX_REL_L2},
        .kernel_timeout_ms = 20000,
    };
    if (fattn_evaluator_open_gpu(&c, &e))
        exit(T_HARNESS);
    fattn_nvrtc_result_release(&r);
    fattn_options_release(&o);
    return e;
}

/* Compiles one configuration (gates ignored where `skip`). */
static void compile_key(const fattn_shape *s, const fattn_arch *arch, const char *key, unsigned skip,
                        fattn_compile_item *it)
{
    fattn_gate_limits lim;
    fattn_gate_limits_default(&lim);
    lim.smem_limit = (unsigned)arch->smem_per_block_optin;
    lim.skip = skip | 1u << FATTN_R_SPILLS | 1u << FATTN_R_LOW_OCCUPANCY;
    fattn_compile_ctx cc = {.src = &src, .cuda_include = include, .arch = arch, .shape = s, .lim = &lim, .jobs = 1};
    memset(it, 0, sizeof *it);
    if (fattn_config_parse(key, "test", &it->cfg))
        exit(T_HARNESS);
    fattn_compile_one(&cc, it);
    if (it->env_error || !it->entry.ok) {
        fprintf(stderr, "%s: not compiled: %s\n", key, it->env_msg);
        exit(T_HARNESS);
    }
}

/* Compiles and evaluates one configuration. */
static int run(fattn_evaluator *e, const fattn_shape *s, const fattn_arch *arch, const char *key, unsigned skip,
               fattn_eval_result *res)
{
    fattn_compile_item it;
    compile_key(s, arch, key, skip, &it);
    fattn_eval_request req = {
        &it.cfg, key, it.entry.cubin, it.entry.cubin_size, it.entry.res.smem_dynamic, it.entry.res.threads, 77, NULL};
    fattn_evaluate(e, &req, res);
    fattn_compile_item_release(&it);
    return res->status;
}

int main(int argc, char **argv)
{
    fattn_gpu_info info;
    char why[320];
    if (argc != 2)
        return T_HARNESS;
    tool = argv[1];
    if (fattn_gpu_probe(0, &info, why, sizeof why)) {
        printf("SKIP: %s\n", why);
        return T_SKIP;
    }
    signal(SIGPIPE, SIG_IGN);
    const fattn_arch *arch = fattn_arch_from_cc(info.cc_major, info.cc_minor);
    const char *dir = fattn_default_kernel_dir();
    if (!arch || fattn_cuda_include(&include) || fattn_kernel_src_load(dir, fattn_family_mma.kernel_file, &src)
        || fattn_kernel_src_load(dir, FATTN_REF_FILE, &ref))
        return T_HARNESS;

    static const char *const keys[] = {
        "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1",  /* the defaults */
        "bm128-bn64-bk64-w8-s3-u2-cp1-sw1-h1", /* larger tiles, deeper pipeline, unrolled */
        "bm32-bn32-bk16-w2-s1-u1-cp0-sw1-h0",  /* scalar, no cp.async, one stage */
        "bm64-bn32-bk64-w4-s2-u1-cp0-sw0-h0",  /* padded rows, loads through registers */
        /* The extension tunables, on sm_90 and newer (clusters): */
        "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-kv2-qr1", /* two blocks per row block, Q in registers */
        "bm128-bn32-bk64-w8-s2-u2-cp1-sw1-h1-kv4",    /* four, unrolled, partials larger than the loop */
        "bm32-bn64-bk16-w2-s1-u1-cp0-sw0-h0-kv8",     /* eight (causal: some idle), scalar, padded */
    };
    const size_t nkeys = arch->sm >= 90 ? sizeof keys / sizeof keys[0] : 4;
    static const int seqlens[] = {500, 512, 1000, 2048};
    for (int d = 64; d <= 128; d += 64)
        for (int causal = 0; causal <= 1; ++causal)
            for (size_t k = 0; k < 4; ++k) {
                fattn_shape s = {2, 2, seqlens[k], d, causal};
                fattn_evaluator *e = open_engine(&s, arch);
                for (size_t c = 0; c < nkeys; ++c) {
                    fattn_eval_result r;
                    char name[160];
                    snprintf(name, sizeof name, "%s S=%d D=%d causal=%d", keys[c], s.seqlen, d, causal);
                    t_case = name;
                    int st = run(e, &s, arch, keys[c], 0, &r);
                    fprintf(stderr, "%s: %s: %s\n", name, fattn_eval_status_name(st), r.detail);
                    CHECK_INT(st, FATTN_EVAL_OK);
                    CHECK(r.has_numerics && fattn_numerics_ok(&r.num) && r.num.rel_l2 > 0);
                    CHECK(r.has_timing && r.timing.median_us > 0 && r.nsamples == 8);
                    fattn_eval_result_release(&r);
                }
                if (!causal && k == 1) {
                    /* The seeds' pad faults; the search's next candidate runs. */
                    fattn_eval_result r;
                    t_case = "seeds pad";
                    unsigned skip = 1u << FATTN_R_MISALIGNED_CP_ASYNC | 1u << FATTN_R_MISALIGNED_LDMATRIX
                                    | 1u << FATTN_R_BANK_CONFLICTS;
                    int st = run(e, &s, arch, "bm64-bn64-bk32-w4-s1-u1-cp1-sw0-h1-pad2", skip, &r);
                    fprintf(stderr, "seeds pad: %s: %s\n", fattn_eval_status_name(st), r.detail);
                    CHECK_INT(st, FATTN_EVAL_FAULT);
                    CHECK_CONTAINS(r.detail, "MISALIGNED");
                    fattn_eval_result_release(&r);
                    int before = e->workers_started;
                    st = run(e, &s, arch, keys[0], 0, &r);
                    CHECK_INT(st, FATTN_EVAL_OK);
                    CHECK_INT(e->workers_started, before + 1);
                    fattn_eval_result_release(&r);
                    /* cuDNN on the same inputs. */
                    t_case = "cudnn";
                    fattn_eval_request breq = {NULL, "baseline-cudnn", NULL, 0, 0, 0, 77, "cudnn"};
                    fattn_evaluate(e, &breq, &r);
                    fprintf(stderr, "cudnn: %s: %s (%s, %s)\n", fattn_eval_status_name(r.status), r.detail, r.baseline,
                            r.timing_kind);
                    CHECK_INT(r.status, FATTN_EVAL_OK);
                    fattn_eval_result_release(&r);
                    /* confirm's interleaved measurement: two kernels and cuDNN, A B C A B C ... */
                    t_case = "interleaved";
                    fattn_compile_item a, b;
                    compile_key(&s, arch, keys[0], 0, &a);
                    compile_key(&s, arch, keys[1], 0, &b);
                    fattn_eval_request reqs[3] = {
                        {&a.cfg, keys[0], a.entry.cubin, a.entry.cubin_size, a.entry.res.smem_dynamic,
                         a.entry.res.threads, 91, NULL},
                        {&b.cfg, keys[1], b.entry.cubin, b.entry.cubin_size, b.entry.res.smem_dynamic,
                         b.entry.res.threads, 91, NULL},
                        {NULL, "baseline-cudnn", NULL, 0, 0, 0, 91, "cudnn"},
                    };
                    fattn_eval_result rr[3];
                    CHECK_INT(fattn_evaluate_interleaved(e, reqs, 3, 12, rr), FATTN_OK);
                    for (int i = 0; i < 3; ++i) {
                        fprintf(stderr, "interleaved %s: %s: %s\n", reqs[i].key, fattn_eval_status_name(rr[i].status),
                                rr[i].detail);
                        CHECK_INT(rr[i].status, FATTN_EVAL_OK);
                        CHECK_INT((int)rr[i].nsamples, 12);
                        CHECK(rr[i].has_numerics && rr[i].has_numerics_after);
                        CHECK(fattn_numerics_ok(&rr[i].num) && fattn_numerics_ok(&rr[i].num_after)
                              && rr[i].num_after.n > 0);
                        fattn_eval_result_release(&rr[i]);
                    }
                    fattn_compile_item_release(&a);
                    fattn_compile_item_release(&b);
                }
                fattn_evaluator_close(&e);
            }
    fattn_kernel_src_release(&src);
    fattn_kernel_src_release(&ref);
    free(include);
    return t_exit();
}
