/*
 * test_kernel.c - the nine parameters of kernels/fattn_fwd.cu are real: each
 * changes the generated code, with its own signature where it has one in
 * the PTX and its predicted effect on the exported layout size where it
 * does not. The reference kernel compiles for every arch and shape kind.
 * The cubin reader agrees with ptxas and survives corrupted input. NVRTC,
 * no GPU.
 */
#include "t.h"

#include <regex.h>

#include "compile/cubin.h"
#include "compile/nvrtc.h"
#include "compile/probe.h"
#include "gates/layout.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/paths.h"

static fattn_kernel_src src, ref;
static char *include;

typedef struct build {
    fattn_nvrtc_result r;
    fattn_compiled res;
    unsigned model;
} build;

static void compile(const char *key, const char *arch, int d, int causal, build *b)
{
    fattn_config c;
    fattn_options o;
    char why[256];
    if (fattn_config_parse(key, "test", &c))
        exit(T_HARNESS);
    fattn_options_build(&o, &c, d, causal, fattn_arch_find(arch), include);
    if (fattn_nvrtc_compile(&src, &o, 1, &b->r) || !b->r.ok) {
        fprintf(stderr, "%s: %s\n", key, b->r.log ? b->r.log : fattn_last_error());
        exit(T_HARNESS);
    }
    if (fattn_resources_read(b->r.log, b->r.cubin, b->r.cubin_size, fattn_family_mma.kernel_name, &b->res, why,
                             sizeof why)) {
        fprintf(stderr, "%s: %s\n", key, why);
        exit(T_HARNESS);
    }
    fattn_options_release(&o);
    fattn_layout l;
    fattn_layout_init(&l, &c, d);
    b->model = l.total_bytes;
}

static int count(const char *text, const char *pattern)
{
    regex_t re;
    regmatch_t m;
    int n = 0;
    if (regcomp(&re, pattern, REG_EXTENDED))
        exit(T_HARNESS);
    for (const char *p = text; regexec(&re, p, 1, &m, 0) == 0 && m.rm_eo > 0; p += m.rm_eo)
        ++n;
    regfree(&re);
    return n;
}

#define V4_GLOBAL "(ld|st)\\.global[.a-z0-9:_]*\\.v4\\."
#define BASE      "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1"

static void release(build *b)
{
    fattn_nvrtc_result_release(&b->r);
}

static void every_config_uses_ldmatrix_and_mma(build *b)
{
    CHECK(count(b->r.ptx, "ldmatrix\\.sync\\.aligned\\.m8n8\\.x4\\.shared\\.b16") > 0);
    CHECK(count(b->r.ptx, "ldmatrix\\.sync\\.aligned\\.m8n8\\.x4\\.trans\\.shared\\.b16") > 0);
    CHECK(count(b->r.ptx, "mma\\.sync\\.aligned\\.m16n8k16\\.row\\.col\\.f32\\.f16\\.f16\\.f32") > 0);
    CHECK_INT(b->res.smem_dynamic, b->model);
    CHECK_INT(b->res.smem_static, 0);
}

static void cp_async_and_half2(void)
{
    build b;
    /* CP_ASYNC=1, HALF2=1: 16-byte cp.async.cg; 16-byte stores of O. */
    compile("bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "sm_90", 64, 0, &b);
    CHECK(count(b.r.ptx, "cp\\.async\\.cg\\.shared\\.global \\[[^]]*\\], \\[[^]]*\\], 16") > 0);
    CHECK(count(b.r.ptx, V4_GLOBAL) > 0);
    CHECK(count(b.r.ptx, "cvt\\.rn\\.f16x2\\.f32") > 0);
    every_config_uses_ldmatrix_and_mma(&b);
    release(&b);
    /* CP_ASYNC=1, HALF2=0: the smallest cp.async, 4 bytes (.ca); no vector
     * global I/O, no packed conversions. */
    compile("bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h0", "sm_90", 64, 0, &b);
    CHECK(count(b.r.ptx, "cp\\.async\\.ca\\.shared\\.global \\[[^]]*\\], \\[[^]]*\\], 4") > 0);
    CHECK(count(b.r.ptx, "cp\\.async\\.cg") == 0);
    CHECK_INT(count(b.r.ptx, V4_GLOBAL), 0);
    CHECK_INT(count(b.r.ptx, "cvt\\.rn\\.f16x2\\.f32"), 0);
    every_config_uses_ldmatrix_and_mma(&b);
    release(&b);
    /* CP_ASYNC=0, HALF2=1: no cp.async at all; 16-byte loads and stores. */
    compile("bm64-bn64-bk32-w4-s2-u1-cp0-sw1-h1", "sm_90", 64, 0, &b);
    CHECK_INT(count(b.r.ptx, "cp\\.async"), 0);
    CHECK(count(b.r.ptx, "ld\\.global[.a-z0-9:_]*\\.v4\\.") > 0);
    CHECK(count(b.r.ptx, "st\\.global[.a-z0-9:_]*\\.v4\\.") > 0);
    every_config_uses_ldmatrix_and_mma(&b);
    release(&b);
    /* CP_ASYNC=0, HALF2=0: scalar 2-byte global I/O only. */
    compile("bm64-bn64-bk32-w4-s2-u1-cp0-sw1-h0", "sm_90", 64, 0, &b);
    CHECK_INT(count(b.r.ptx, "cp\\.async"), 0);
    CHECK_INT(count(b.r.ptx, V4_GLOBAL), 0);
    CHECK(count(b.r.ptx, "ld\\.global[.a-z0-9:_]*\\.u16") > 0);
    CHECK(count(b.r.ptx, "st\\.global[.a-z0-9:_]*\\.u16") > 0);
    every_config_uses_ldmatrix_and_mma(&b);
    release(&b);
}

static void stages(void)
{
    build b[3];
    /* Q tile 64 x 128 B = 8192 B, K/V slot 64 x 64 B = 4096 B: 8192 + 4096 S. */
    for (int s = 1; s <= 3; ++s) {
        char key[64];
        snprintf(key, sizeof key, "bm64-bn64-bk32-w4-s%d-u1-cp1-sw1-h1", s);
        compile(key, "sm_90", 64, 0, &b[s - 1]);
        CHECK_INT(b[s - 1].res.smem_dynamic, 8192 + 4096 * s);
        every_config_uses_ldmatrix_and_mma(&b[s - 1]);
    }
    /* The pipeline depth: only three stages leave one group in flight. */
    CHECK_INT(count(b[0].r.ptx, "cp\\.async\\.wait_group 1;"), 0);
    CHECK_INT(count(b[1].r.ptx, "cp\\.async\\.wait_group 1;"), 0);
    CHECK(count(b[2].r.ptx, "cp\\.async\\.wait_group 1;") > 0);
    CHECK(strcmp(b[0].r.ptx, b[1].r.ptx) != 0);
    for (int s = 0; s < 3; ++s)
        release(&b[s]);
}

static void unroll(void)
{
    build a, b;
    compile("bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "sm_90", 64, 0, &a);
    compile("bm64-bn64-bk32-w4-s2-u2-cp1-sw1-h1", "sm_90", 64, 0, &b);
    /* Same layout, a loop body repeated: more mma instructions in the PTX. */
    CHECK_INT(a.res.smem_dynamic, b.res.smem_dynamic);
    int ma = count(a.r.ptx, "mma\\.sync"), mb = count(b.r.ptx, "mma\\.sync");
    CHECK(mb >= 2 * ma);
    CHECK(strlen(b.r.ptx) > strlen(a.r.ptx));
    release(&a);
    release(&b);
}

static void swizzle(void)
{
    build a, b;
    compile("bm64-bn64-bk32-w4-s2-u1-cp1-sw0-h1", "sm_90", 64, 0, &a);
    compile("bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "sm_90", 64, 0, &b);
    /* Padded rows: 64 x 144 + 2 x 64 x 80; swizzled: 64 x 128 + 2 x 64 x 64. */
    CHECK_INT(a.res.smem_dynamic, 64 * 144 + 2 * 64 * 80);
    CHECK_INT(b.res.smem_dynamic, 64 * 128 + 2 * 64 * 64);
    /* The XOR of the swizzle is in the code only when asked for. */
    CHECK_INT(count(a.r.ptx, "xor\\.b32"), 0);
    CHECK(count(b.r.ptx, "xor\\.b32") > 0);
    every_config_uses_ldmatrix_and_mma(&a);
    release(&a);
    release(&b);
}

static void tiles_and_warps(void)
{
    build base, m, n, k16, k64, w;
    compile(BASE, "sm_90", 64, 0, &base);
    /* BLOCK_M=128: the Q tile doubles (+64 x 128 B); two 16-row strips per warp. */
    compile("bm128-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "sm_90", 64, 0, &m);
    CHECK_INT(m.res.smem_dynamic, base.res.smem_dynamic + 64 * 128);
    CHECK(count(m.r.ptx, "mma\\.sync") > count(base.r.ptx, "mma\\.sync"));
    /* BLOCK_N=128: each of the 2 slots doubles (+2 x 64 x 64 B). */
    compile("bm64-bn128-bk32-w4-s2-u1-cp1-sw1-h1", "sm_90", 64, 0, &n);
    CHECK_INT(n.res.smem_dynamic, base.res.smem_dynamic + 2 * 64 * 64);
    /* BLOCK_K=16 halves the slots' rows, 64 doubles them. */
    compile("bm64-bn64-bk16-w4-s2-u1-cp1-sw1-h1", "sm_90", 64, 0, &k16);
    compile("bm64-bn64-bk64-w4-s2-u1-cp1-sw1-h1", "sm_90", 64, 0, &k64);
    CHECK_INT(k16.res.smem_dynamic, 8192 + 2 * 64 * 32);
    CHECK_INT(k64.res.smem_dynamic, 8192 + 2 * 64 * 128);
    CHECK(strcmp(k16.r.ptx, k64.r.ptx) != 0);
    /* NUM_WARPS=2: 64 threads, the same layout, 32 rows per warp. */
    compile("bm64-bn64-bk32-w2-s2-u1-cp1-sw1-h1", "sm_90", 64, 0, &w);
    CHECK_INT(w.res.threads, 64);
    CHECK_INT(base.res.threads, 128);
    CHECK_INT(w.res.smem_dynamic, base.res.smem_dynamic);
    CHECK(strcmp(w.r.ptx, base.r.ptx) != 0);
    build *all[] = {&base, &m, &n, &k16, &k64, &w};
    for (size_t i = 0; i < 6; ++i) {
        every_config_uses_ldmatrix_and_mma(all[i]);
        release(all[i]);
    }
}

/* Each of the nine parameters, changed alone, changes the PTX. */
static void every_parameter_changes_the_code(void)
{
    static const char *const variants[FATTN_MMA_NSEED_TUNABLES] = {
        "bm128-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "bm64-bn32-bk32-w4-s2-u1-cp1-sw1-h1",
        "bm64-bn64-bk16-w4-s2-u1-cp1-sw1-h1",  "bm64-bn64-bk32-w2-s2-u1-cp1-sw1-h1",
        "bm64-bn64-bk32-w4-s3-u1-cp1-sw1-h1",  "bm64-bn64-bk32-w4-s2-u2-cp1-sw1-h1",
        "bm64-bn64-bk32-w4-s2-u1-cp0-sw1-h1",  "bm64-bn64-bk32-w4-s2-u1-cp1-sw0-h1",
        "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h0",
    };
    build base;
    compile(BASE, "sm_89", 128, 1, &base);
    for (int p = 0; p < FATTN_MMA_NSEED_TUNABLES; ++p) {
        build v;
        compile(variants[p], "sm_89", 128, 1, &v);
        t_case = fattn_mma_params[p].name;
        CHECK(strcmp(v.r.ptx, base.r.ptx) != 0);
        every_config_uses_ldmatrix_and_mma(&v);
        release(&v);
    }
    t_case = "every_parameter_changes_the_code";
    /* HEAD_DIM and CAUSAL reach the kernel too. */
    build d64, nc;
    compile(BASE, "sm_89", 64, 1, &d64);
    compile(BASE, "sm_89", 128, 0, &nc);
    CHECK(strcmp(d64.r.ptx, base.r.ptx) != 0);
    CHECK(strcmp(nc.r.ptx, base.r.ptx) != 0);
    release(&d64);
    release(&nc);
    release(&base);
}

static void test_only_overrides(void)
{
    build pad, cm;
    /* The seeds' layout compiles (the gates, not the compiler, reject it). */
    compile("bm64-bn64-bk32-w4-s1-u1-cp1-sw0-h1-pad2", "sm_90", 64, 0, &pad);
    CHECK_INT(pad.res.smem_dynamic, 64 * 130 + 64 * 66);
    CHECK_INT(pad.res.smem_dynamic, pad.model);
    compile("bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-cm1", "sm_90", 64, 0, &cm);
    build base;
    compile(BASE, "sm_90", 64, 0, &base);
    CHECK(strcmp(cm.r.ptx, base.r.ptx) != 0);
    release(&pad);
    release(&cm);
    release(&base);
}

/* The extension tunables (sm_90): SPLIT_KV builds a cluster and combines
 * through distributed shared memory, with the layout the model predicts;
 * Q_REGS loads Q's fragments once instead of once per copy of the loop body. */
static void extension_tunables(void)
{
    const char *ldm = "ldmatrix\\.sync\\.aligned\\.m8n8\\.x4\\.shared\\.b16";
    const char *ldm_t = "ldmatrix\\.sync\\.aligned\\.m8n8\\.x4\\.trans\\.shared\\.b16";
    build base, kv2, kv4, qr;
    compile("bm64-bn64-bk32-w4-s2-u2-cp1-sw1-h1", "sm_90", 64, 0, &base);
    compile("bm64-bn64-bk32-w4-s2-u2-cp1-sw1-h1-kv2", "sm_90", 64, 0, &kv2);
    compile("bm64-bn128-bk64-w4-s3-u1-cp1-sw1-h1-kv4", "sm_90", 64, 1, &kv4);
    compile("bm64-bn64-bk32-w4-s2-u2-cp1-sw1-h1-qr1", "sm_90", 64, 0, &qr);
    CHECK(strcmp(kv2.r.ptx, base.r.ptx) != 0);
    CHECK(strcmp(qr.r.ptx, base.r.ptx) != 0);
    CHECK_INT(count(base.r.ptx, "\\.reqnctapercluster|mapa\\.|barrier\\.cluster|shared::cluster"), 0);
    CHECK_INT(count(kv2.r.ptx, "\\.reqnctapercluster 2, 1, 1"), 1);
    CHECK_INT(count(kv4.r.ptx, "\\.reqnctapercluster 4, 1, 1"), 1);
    build *split[] = {&kv2, &kv4};
    for (int i = 0; i < 2; ++i) {
        CHECK(count(split[i]->r.ptx, "mapa\\.shared::cluster") > 0);
        CHECK(count(split[i]->r.ptx, "ld\\.shared::cluster\\.v4\\.f32") > 0);
        CHECK_INT(count(split[i]->r.ptx, "barrier\\.cluster\\.arrive\\.release"), 2);
        CHECK_INT(count(split[i]->r.ptx, "barrier\\.cluster\\.wait\\.acquire"), 2);
        every_config_uses_ldmatrix_and_mma(split[i]);
    }
    /* 64 rows of 64 fp32 + 32 B pad, then 64 maxima and 64 sums, exceed the loop's 8 + 2 x 4 KiB. */
    CHECK_INT(kv2.res.smem_dynamic, 64 * (64 * 4 + 32 + 8));
    /* With three 128-row slots the loop's region (8 + 3 x 16 KiB) is the larger. */
    CHECK_INT(kv4.res.smem_dynamic, 64 * 128 + 3 * 128 * 128);
    /* Every copy of the key loop's body has as many K as V fragment loads;
     * Q's are extra: one set per copy (UNROLL=2 makes at least two copies),
     * or with Q_REGS one set in all, D/16 loads of 16 rows (one strip per warp). */
    int q_base = count(base.r.ptx, ldm) - count(base.r.ptx, ldm_t);
    int q_regs = count(qr.r.ptx, ldm) - count(qr.r.ptx, ldm_t);
    CHECK_INT(q_regs, 64 / 16);
    CHECK(q_base >= 2 * (64 / 16));
    every_config_uses_ldmatrix_and_mma(&qr);
    /* Before sm_90 there are no clusters: the kernel says so (the tiling gate rejects it first). */
    fattn_config c;
    fattn_options o;
    fattn_nvrtc_result r;
    CHECK_INT(fattn_config_parse("bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-kv2", "test", &c), FATTN_OK);
    fattn_options_build(&o, &c, 64, 0, fattn_arch_find("sm_89"), include);
    CHECK_INT(fattn_nvrtc_compile(&src, &o, 1, &r), FATTN_OK);
    CHECK(!r.ok);
    CHECK_CONTAINS(r.log, "SPLIT_KV > 1 needs thread-block clusters");
    fattn_nvrtc_result_release(&r);
    fattn_options_release(&o);
    build *all[] = {&base, &kv2, &kv4, &qr};
    for (int i = 0; i < 4; ++i)
        release(all[i]);
}

static void reference_kernel(void)
{
    static const char *const archs[] = {"sm_80", "sm_86", "sm_89", "sm_90"};
    for (size_t a = 0; a < 4; ++a)
        for (int d = 64; d <= 128; d += 64)
            for (int causal = 0; causal <= 1; ++causal) {
                fattn_options o;
                fattn_nvrtc_result r;
                fattn_cubin_info ci;
                unsigned threads = 0;
                char why[256];
                fattn_options_build(&o, NULL, d, causal, fattn_arch_find(archs[a]), include);
                CHECK_INT(fattn_nvrtc_compile(&ref, &o, 1, &r), FATTN_OK);
                CHECK(r.ok);
                if (r.ok) {
                    CHECK_INT(count(r.ptx, "mma\\.sync|ldmatrix|cp\\.async"), 0);
                    CHECK_INT(fattn_cubin_parse(r.cubin, r.cubin_size, FATTN_REF_NAME, &ci, why, sizeof why), 0);
                    CHECK_INT(ci.sm, fattn_arch_find(archs[a])->sm);
                    CHECK_INT(
                        fattn_cubin_symbol_u32(r.cubin, r.cubin_size, "fattn_ref_threads", &threads, why, sizeof why),
                        0);
                    CHECK_INT(threads, 128);
                }
                CHECK(strstr(o.key, "BLOCK_M") == NULL);
                fattn_nvrtc_result_release(&r);
                fattn_options_release(&o);
            }
}

static void cubin_reader(void)
{
    build b;
    fattn_cubin_info ci;
    char why[256];
    compile(BASE, "sm_90", 64, 0, &b);
    CHECK_INT(fattn_cubin_parse(b.r.cubin, b.r.cubin_size, fattn_family_mma.kernel_name, &ci, why, sizeof why), 0);
    CHECK_INT(ci.sm, 90);
    /* Registers from .nv.info equal the ptxas report's "Used N registers". */
    const char *used = strstr(b.r.log, "Used ");
    CHECK(used != NULL);
    CHECK_INT(ci.regs, used ? atoi(used + 5) : -1);
    CHECK(ci.regs > 0 && ci.regs <= 255);
    /* sm_90 reserves 1024 bytes in the kernel's shared section; they are not
     * the kernel's own. */
    CHECK(ci.reserved_smem);
    CHECK_INT(ci.smem_section, 1024);
    CHECK_INT(ci.smem_static, 0);
    CHECK_INT(fattn_cubin_parse(b.r.cubin, b.r.cubin_size, "no_such_kernel", &ci, why, sizeof why), -1);
    CHECK_CONTAINS(why, "no kernel named no_such_kernel");
    unsigned v;
    CHECK_INT(fattn_cubin_symbol_u32(b.r.cubin, b.r.cubin_size, "fattn_smem_bytes", &v, why, sizeof why), 0);
    CHECK_INT(v, 16384);
    /* absent: 1, the value untouched (an optional export reads as none) */
    v = 7;
    CHECK_INT(fattn_cubin_symbol_u32(b.r.cubin, b.r.cubin_size, "fattn_setmaxnreg_pool", &v, why, sizeof why), 1);
    CHECK_CONTAINS(why, "no symbol fattn_setmaxnreg_pool");
    CHECK_INT(v, 7);

    /* Corrupted cubins are rejected, never read out of bounds (ASan watches). */
    fattn_rng rng;
    fattn_rng_seed(&rng, 7);
    unsigned char *copy = malloc(b.r.cubin_size);
    int parsed = 0, rejected = 0;
    for (int i = 0; i < 3000; ++i) {
        memcpy(copy, b.r.cubin, b.r.cubin_size);
        size_t size = b.r.cubin_size;
        int flips = 1 + (int)fattn_rng_below(&rng, 8);
        for (int f = 0; f < flips; ++f) {
            size_t at = fattn_rng_below(&rng, i % 3 == 0 ? 64 : size);
            copy[at] = (unsigned char)fattn_rng_next(&rng);
        }
        if (i % 5 == 0)
            size = fattn_rng_below(&rng, size);
        unsigned x;
        if (fattn_cubin_parse(copy, size, fattn_family_mma.kernel_name, &ci, why, sizeof why) == 0)
            ++parsed;
        else
            ++rejected;
        fattn_cubin_symbol_u32(copy, size, "fattn_smem_bytes", &x, why, sizeof why);
    }
    CHECK(parsed > 0 && rejected > 0);
    CHECK_INT(fattn_cubin_parse(copy, 10, fattn_family_mma.kernel_name, &ci, why, sizeof why), -1);
    CHECK_CONTAINS(why, "not an ELF file");
    free(copy);
    release(&b);
}

/* A kernel with 400 bytes of static shared memory: the reader reports 400 on
 * sm_89 (no reservation) and on sm_90 (1424-byte section less the 1024
 * reserved), as ptxas does. */
static void static_shared_memory(void)
{
    fattn_kernel_src k = {0};
    k.name = "static.cu";
    k.text = "extern \"C\" __global__ void kern(float *o) {\n"
             "  __shared__ float buf[100];\n"
             "  buf[threadIdx.x] = threadIdx.x; __syncthreads();\n"
             "  o[threadIdx.x] = buf[threadIdx.x ^ 1];\n}\n";
    static const char *const archs[] = {"sm_89", "sm_90"};
    for (int a = 0; a < 2; ++a) {
        fattn_options o;
        fattn_nvrtc_result r;
        fattn_cubin_info ci;
        char why[256];
        fattn_options_build(&o, NULL, 64, 0, fattn_arch_find(archs[a]), include);
        CHECK_INT(fattn_nvrtc_compile(&k, &o, 0, &r), FATTN_OK);
        CHECK_INT(fattn_cubin_parse(r.cubin, r.cubin_size, "kern", &ci, why, sizeof why), 0);
        CHECK_INT(ci.smem_static, 400);
        CHECK_INT(ci.smem_section, a ? 1424 : 400);
        CHECK_CONTAINS(r.log, "400 bytes smem");
        fattn_nvrtc_result_release(&r);
        fattn_options_release(&o);
    }
}

static void compile_errors_are_results(void)
{
    fattn_kernel_src k = {0};
    fattn_options o;
    fattn_nvrtc_result r;
    k.name = "broken.cu";
    k.text = "extern \"C\" __global__ void kern(float *o) { o[0] = undeclared; }\n";
    fattn_options_build(&o, NULL, 64, 0, fattn_arch_find("sm_90"), include);
    CHECK_INT(fattn_nvrtc_compile(&k, &o, 0, &r), FATTN_OK);
    CHECK(!r.ok);
    CHECK_CONTAINS(r.log, "undeclared");
    CHECK(r.cubin == NULL);
    fattn_nvrtc_result_release(&r);
    fattn_options_release(&o);
}

/* A broken source is told from configurations that fail: only the same
 * first error for every configuration probed, not a static assertion. */
static void probe(void)
{
    static const char *const keys[3] = {"bm32-bn32-bk16-w2-s1-u1-cp1-sw1-h1", "bm128-bn64-bk32-w8-s2-u1-cp1-sw1-h1",
                                        "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1"};
    static const struct {
        const char *text;
        int n, rc;
        const char *said;
    } cases[] = {
        {"__global__ void k() {}\nthis is not C++;\n", 3, FATTN_EFAIL,
         "kernel probe-dir/probe.cu does not compile: probe.cu(2): error: "},
        {"__global__ void k() {}\nthis is not C++;\n", 2, FATTN_EFAIL, "the same first error for bm32-"},
        {"__global__ void k() {}\nthis is not C++;\n", 1, FATTN_OK, NULL}, /* one alone cannot tell */
        {"#if BLOCK_M == 32\n#error small blocks\n#endif\n__global__ void k() {}\n", 3, FATTN_OK, NULL},
        {"#if BLOCK_M == 32\n#error one\n#elif BLOCK_M == 128\n#error two\n#endif\n__global__ void k() {}\n", 3,
         FATTN_OK, NULL},
        {"#if BLOCK_M != 64\n#error not 64\n#endif\n__global__ void k() {}\n", 3, FATTN_OK, NULL},
        {"static_assert(BLOCK_M < 0, \"never\");\n__global__ void k() {}\n", 3, FATTN_OK, NULL},
    };
    fattn_config c[3];
    for (int i = 0; i < 3; ++i)
        CHECK_INT(fattn_config_parse(keys[i], "key", &c[i]), FATTN_OK);
    const fattn_shape shape = {2, 8, 512, 64, 0};
    fattn_error_set_quiet(1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        fattn_kernel_src k = {0};
        k.dir = "probe-dir", k.name = "probe.cu", k.text = (char *)cases[i].text;
        CHECK_INT(fattn_kernel_probe(&k, include, fattn_arch_find("sm_90"), &shape, c, cases[i].n), cases[i].rc);
        if (cases[i].said)
            CHECK_CONTAINS(fattn_last_error(), cases[i].said);
    }
    /* The same configuration twice: nothing told. */
    fattn_config same[2] = {c[0], c[0]};
    fattn_kernel_src k = {.dir = "probe-dir", .name = "probe.cu", .text = "this is not C++;\n"};
    CHECK_INT(fattn_kernel_probe(&k, include, fattn_arch_find("sm_90"), &shape, same, 2), FATTN_OK);
    fattn_error_set_quiet(0);
}

static void cache_key(void)
{
    char a[65], b[65], c[65], d[65], e[65];
    fattn_cache_key("k1", "sm_90", "-DX=1", "13.0", a);
    fattn_cache_key("k2", "sm_90", "-DX=1", "13.0", b);
    fattn_cache_key("k1", "sm_89", "-DX=1", "13.0", c);
    fattn_cache_key("k1", "sm_90", "-DX=2", "13.0", d);
    fattn_cache_key("k1", "sm_90", "-DX=1", "13.1", e);
    CHECK(strcmp(a, b) && strcmp(a, c) && strcmp(a, d) && strcmp(a, e));
    char again[65];
    fattn_cache_key("k1", "sm_90", "-DX=1", "13.0", again);
    CHECK_STR(again, a);
    /* The include path is not part of the key; the options are. */
    fattn_options o1, o2;
    fattn_config cfg;
    fattn_config_default(&cfg, &fattn_family_mma);
    fattn_options_build(&o1, &cfg, 64, 0, fattn_arch_find("sm_90"), "/a/include");
    fattn_options_build(&o2, &cfg, 64, 0, fattn_arch_find("sm_90"), "/b/include");
    CHECK_STR(o1.key, o2.key);
    CHECK_CONTAINS(o1.key, "--gpu-architecture=sm_90");
    CHECK_CONTAINS(o1.key, "-DBLOCK_M=64 -DBLOCK_N=64 -DBLOCK_K=32 -DNUM_WARPS=4 -DSTAGES=2 -DUNROLL=1 -DCP_ASYNC=1 "
                           "-DSWIZZLE=1 -DHALF2=1 -DHEAD_DIM=64 -DCAUSAL=0");
    CHECK(strstr(o1.key, "PAD_BYTES") == NULL);
    fattn_options_release(&o1);
    fattn_options_release(&o2);
    /* The kernel hash covers the local headers (the simulator's, behind
     * angle brackets, are not NVRTC's). */
    CHECK_INT(src.nheaders, 2);
    CHECK_STR(src.header_names[0], "fattn_tile.h");
    CHECK_STR(src.header_names[1], "fattn_prim.h");
    CHECK_INT(strlen(src.hash), 64);
    CHECK(strcmp(src.hash, ref.hash) != 0);
}

int main(void)
{
    const char *dir = fattn_default_kernel_dir();
    if (fattn_kernel_src_load(dir, fattn_family_mma.kernel_file, &src)
        || fattn_kernel_src_load(dir, FATTN_REF_FILE, &ref) || fattn_cuda_include(&include))
        return T_HARNESS;
    T_RUN(cp_async_and_half2);
    T_RUN(stages);
    T_RUN(unroll);
    T_RUN(swizzle);
    T_RUN(tiles_and_warps);
    T_RUN(every_parameter_changes_the_code);
    T_RUN(test_only_overrides);
    T_RUN(extension_tunables);
    T_RUN(reference_kernel);
    T_RUN(cubin_reader);
    T_RUN(static_shared_memory);
    T_RUN(compile_errors_are_results);
    T_RUN(probe);
    T_RUN(cache_key);
    fattn_kernel_src_release(&src);
    fattn_kernel_src_release(&ref);
    free(include);
    return t_exit();
}
