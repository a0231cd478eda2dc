/*
 * test_gates.c - every gate rejects a known-bad case, with the numbers
 * worked out here, and passes a known-good one. The seeds' 2-byte pad is
 * rejected as misaligned_cp_async.
 */
#include "t.h"

#include "compile/postgates.h"
#include "gates/gates.h"
#include "gates/layout.h"
#include "space/space.h"
#include "util/err.h"
#include "util/paths.h"

static fattn_gate_limits lim;
static const fattn_shape shape64 = {2, 8, 512, 64, 0};
static const fattn_shape shape128 = {4, 16, 2048, 128, 0};

static fattn_config cfg(const char *key)
{
    fattn_config c;
    if (fattn_config_parse(key, "test", &c))
        exit(T_HARNESS);
    return c;
}

/* Runs every static gate on a configuration; returns the first failing one. */
static int gates(const char *key, const fattn_shape *s, const char *arch, fattn_verdict all[FATTN_R_COUNT])
{
    fattn_config c = cfg(key);
    fattn_gate_input in = {&c, s, fattn_arch_find(arch), &lim};
    fattn_verdict first;
    int r = fattn_gates_static(&in, &first, all);
    if (r)
        CHECK_STR(first.detail, all[r].detail);
    return r;
}

static const char good[] = "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1";

static void known_good(void)
{
    fattn_verdict all[FATTN_R_COUNT];
    CHECK_INT(gates(good, &shape64, "sm_90", all), FATTN_R_NONE);
    for (int r = FATTN_R_FIRST_STATIC; r <= FATTN_R_LAST_STATIC; ++r)
        if (fattn_family_mma.static_gates >> r & 1u) /* the gates mma has: all but register_budget */
            CHECK_INT(all[r].pass, 1);
    CHECK(!(fattn_family_mma.static_gates >> FATTN_R_REGISTER_BUDGET & 1u));
    CHECK_CONTAINS(all[FATTN_R_SMEM_OVERFLOW].detail, "16384 B within limit 49152 B");
    CHECK_CONTAINS(all[FATTN_R_COALESCING].detail, "512 bytes used of 512 bytes");
    CHECK_CONTAINS(all[FATTN_R_BANK_CONFLICTS].detail, "worst 1-way");
    CHECK_INT(gates(good, &shape128, "sm_89", all), FATTN_R_NONE);
}

static void device_memory(void)
{
    fattn_verdict all[FATTN_R_COUNT];
    /* 64 x 64 x 32768 x 128 = 2^34 elements, 2^35 bytes per fp16 tensor;
     * Q, K, V, O and the fp32 reference O (two tensors' worth) make 6 x 2^35 =
     * 206158430208 bytes > 20000 MiB. */
    fattn_shape big = {64, 64, 32768, 128, 0};
    CHECK_INT(gates(good, &big, "sm_90", all), FATTN_R_DEVICE_MEMORY);
    CHECK_CONTAINS(all[FATTN_R_DEVICE_MEMORY].detail, "206158430208 bytes");
    CHECK_CONTAINS(all[FATTN_R_DEVICE_MEMORY].detail, "over budget 20000 MiB");
    /* 2,8,512,64: 1 MiB per fp16 tensor, 6 MiB in all. */
    gates(good, &shape64, "sm_90", all);
    CHECK_CONTAINS(all[FATTN_R_DEVICE_MEMORY].detail, "6291456 bytes (6 MiB) within");
    /* The budget is a threshold: 6 MiB fails a 5 MiB budget. */
    lim.mem_budget = 5u << 20;
    CHECK_INT(gates(good, &shape64, "sm_90", all), FATTN_R_DEVICE_MEMORY);
    fattn_gate_limits_default(&lim);
}

static void tiling(void)
{
    fattn_verdict all[FATTN_R_COUNT];
    /* 32 rows over 4 warps is 8 rows per warp: not a 16-row strip. */
    CHECK_INT(gates("bm32-bn64-bk32-w4-s2-u1-cp1-sw1-h1", &shape64, "sm_90", all), FATTN_R_TILING);
    CHECK_CONTAINS(all[FATTN_R_TILING].detail, "8 rows per warp");
    CHECK_CONTAINS(all[FATTN_R_TILING].detail, "a multiple of 64");
    /* Later gates cannot be evaluated on a broken tiling. */
    CHECK_INT(all[FATTN_R_SMEM_OVERFLOW].pass, -1);
    /* BLOCK_K must divide D and be a power of two. */
    CHECK_INT(gates("bm64-bn64-bk48-w4-s2-u1-cp1-sw1-h1", &shape64, "sm_90", all), FATTN_R_TILING);
    CHECK_CONTAINS(all[FATTN_R_TILING].detail, "BLOCK_K=48 is not a power of two");
    CHECK_INT(gates("bm64-bn64-bk128-w4-s2-u1-cp1-sw1-h1", &shape64, "sm_90", all), FATTN_R_TILING);
    CHECK_CONTAINS(all[FATTN_R_TILING].detail, "BLOCK_K=128 does not divide D=64");
    CHECK_INT(gates("bm64-bn40-bk32-w4-s2-u1-cp1-sw1-h1", &shape64, "sm_90", all), FATTN_R_TILING);
    CHECK_INT(gates("bm256-bn64-bk32-w32-s2-u1-cp1-sw1-h1", &shape64, "sm_90", all), FATTN_R_TILING);
    CHECK_CONTAINS(all[FATTN_R_TILING].detail, "BLOCK_M=256 over NUM_WARPS=32 is 8 rows per warp");
    /* Known good: 128 rows over 8 warps. */
    CHECK_INT(gates("bm128-bn64-bk32-w8-s2-u1-cp1-sw1-h1", &shape64, "sm_90", all), FATTN_R_NONE);
    CHECK_CONTAINS(all[FATTN_R_TILING].detail, "16 rows per warp");
    /* SPLIT_KV: clusters exist from sm_90 on; the split names its tiles. */
    CHECK_INT(gates("bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-kv2", &shape64, "sm_89", all), FATTN_R_TILING);
    CHECK_CONTAINS(all[FATTN_R_TILING].detail, "SPLIT_KV=2 needs thread-block clusters");
    CHECK_CONTAINS(all[FATTN_R_TILING].detail, "sm_89 lacks");
    CHECK_INT(gates("bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-kv2", &shape64, "sm_90", all), FATTN_R_NONE);
    CHECK_CONTAINS(all[FATTN_R_TILING].detail, "the 8 key tiles split over clusters of 2 blocks");
    CHECK_INT(gates("bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-kv3", &shape64, "sm_90", all), FATTN_R_TILING);
    CHECK_CONTAINS(all[FATTN_R_TILING].detail, "SPLIT_KV=3 is not 1, 2, 4 or 8");
    /* S = 512 in tiles of 128 is 4 tiles: 8 blocks would leave four idle. */
    CHECK_INT(gates("bm64-bn128-bk32-w4-s2-u1-cp1-sw1-h1-kv8", &shape64, "sm_90", all), FATTN_R_TILING);
    CHECK_CONTAINS(all[FATTN_R_TILING].detail, "SPLIT_KV=8 blocks share 4 key tiles of BLOCK_N=128 (S=512)");
    CHECK_INT(gates("bm64-bn128-bk32-w4-s2-u1-cp1-sw1-h1-kv4", &shape64, "sm_90", all), FATTN_R_NONE);
}

static void seeds_pad(void)
{
    fattn_verdict all[FATTN_R_COUNT];
    /* The seeds' layout: rows of 64 halves plus a one-half (2-byte) pad,
     * copied with 16-byte cp.async. Q row r starts at 130 r, which is 16-byte
     * aligned only when 2 r = 0 mod 16, i.e. r = 0 mod 8: 8 rows of 64. The
     * 56 others x 8 chunks = 448 of 512 Q copies are misaligned; the first
     * is Q row 1 at offset 130 = 16 x 8 + 2, the 16n+2 addresses
     * compute-sanitizer showed the seeds. */
    const char *seeds = "bm64-bn64-bk32-w4-s1-u1-cp1-sw0-h1-pad2";
    CHECK_INT(gates(seeds, &shape64, "sm_89", all), FATTN_R_MISALIGNED_CP_ASYNC);
    const char *d = all[FATTN_R_MISALIGNED_CP_ASYNC].detail;
    CHECK_CONTAINS(d, "Q copy (16-byte cp.async) of row 1 (warp 0, lane 8) at shared offset 130: 130 mod 16 = 2");
    CHECK_CONTAINS(d, "Q copy 448/512");
    /* K/V rows of 32 halves + 2 bytes = 66 B: misaligned unless r = 0 mod 8,
     * 56 rows x 4 chunks x 2 chunks of D = 448 of 512. */
    CHECK_CONTAINS(d, "K/V copy 448/512");
    /* 4-byte O staging stores at 130 r + 4k: misaligned on odd rows, 32 rows
     * x 32 stores = 1024 of 2048. */
    CHECK_CONTAINS(d, "O staging store 1024/2048");
    /* The same layout without cp.async or vector copies (2-byte copies and
     * stores are aligned) still breaks ldmatrix: Q row r at 130 r. */
    CHECK_INT(gates("bm64-bn64-bk32-w4-s1-u1-cp0-sw0-h0-pad2", &shape64, "sm_89", all), FATTN_R_MISALIGNED_LDMATRIX);
    CHECK_INT(all[FATTN_R_MISALIGNED_CP_ASYNC].pass, 1);
    /* ldmatrix Q rows: 64 rows x 4 k-steps x 2 halves of the x4 = 512, of
     * which 7/8 misaligned: 448. K: 64 rows x 2 k-steps x 2 = 256, 224 bad. */
    CHECK_CONTAINS(all[FATTN_R_MISALIGNED_LDMATRIX].detail, "ldmatrix Q 448/512");
    CHECK_CONTAINS(all[FATTN_R_MISALIGNED_LDMATRIX].detail, "ldmatrix K 224/256");
    CHECK_CONTAINS(all[FATTN_R_MISALIGNED_LDMATRIX].detail, "at shared offset 130");
    /* The test-only skip mask lets it through, saying so. */
    lim.skip = 1u << FATTN_R_MISALIGNED_CP_ASYNC | 1u << FATTN_R_MISALIGNED_LDMATRIX | 1u << FATTN_R_BANK_CONFLICTS;
    CHECK_INT(gates(seeds, &shape64, "sm_89", all), FATTN_R_NONE);
    CHECK_CONTAINS(all[FATTN_R_MISALIGNED_CP_ASYNC].detail,
                   "[rejection ignored: --unsafe-skip-gate misaligned_cp_async]");
    CHECK_CONTAINS(all[FATTN_R_MISALIGNED_CP_ASYNC].detail, "130 mod 16 = 2");
    fattn_gate_limits_default(&lim);
    /* A pad of a multiple of 16 bytes keeps every address aligned (32 B
     * here; the 2-way conflicts of its 96-byte K/V rows are another gate's). */
    CHECK_INT(gates("bm64-bn64-bk32-w4-s1-u1-cp1-sw0-h1-pad32", &shape64, "sm_89", all), FATTN_R_BANK_CONFLICTS);
    CHECK_INT(all[FATTN_R_MISALIGNED_CP_ASYNC].pass, 1);
    CHECK_INT(all[FATTN_R_MISALIGNED_LDMATRIX].pass, 1);
}

static void seeds_pad_space_file(void)
{
    /* The same case through a space file that lists the test-only PAD_BYTES. */
    static const char json[] = "{\"parameters\": {\"BLOCK_M\": [64], \"BLOCK_N\": [64], \"BLOCK_K\": [32], "
                               "\"NUM_WARPS\": [4], \"STAGES\": [1], \"CP_ASYNC\": [1], \"SWIZZLE\": [0], "
                               "\"HALF2\": [1], \"PAD_BYTES\": [2]}}";
    fattn_space sp;
    fattn_config c;
    fattn_verdict v;
    CHECK_INT(fattn_space_parse(json, strlen(json), "seeds.json", &sp), FATTN_OK);
    CHECK_INT(sp.count, 1);
    fattn_space_config(&sp, 0, &c);
    fattn_gate_input in = {&c, &shape64, fattn_arch_find("sm_89"), &lim};
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_MISALIGNED_CP_ASYNC);
    CHECK_STR(fattn_reason(v.reason)->code, "misaligned_cp_async");
    fattn_space_release(&sp);
}

static void smem_overflow(void)
{
    fattn_verdict all[FATTN_R_COUNT];
    /* D=64 padded: Q 128 x 144 = 18432 B, three K/V slots of 128 x 144 =
     * 55296 B: 73728 B over 49152. */
    const char *key = "bm128-bn128-bk64-w8-s3-u1-cp1-sw0-h1";
    CHECK_INT(gates(key, &shape64, "sm_90", all), FATTN_R_SMEM_OVERFLOW);
    CHECK_CONTAINS(all[FATTN_R_SMEM_OVERFLOW].detail, "Q tile 128 x 144 B = 18432 B + 3 stages x K/V slot 128 x 144 B "
                                                      "= 55296 B: 73728 B over limit 49152 B");
    /* With the limit raised to sm_90's opt-in (232448 B) it fits. */
    lim.smem_limit = (unsigned)fattn_arch_find("sm_90")->smem_per_block_optin;
    CHECK_INT(all[FATTN_R_SMEM_OVERFLOW].pass, 0);
    gates(key, &shape64, "sm_90", all);
    CHECK_INT(all[FATTN_R_SMEM_OVERFLOW].pass, 1);
    CHECK_CONTAINS(all[FATTN_R_SMEM_OVERFLOW].detail, "73728 B within limit 232448 B");
    fattn_gate_limits_default(&lim);
    /* SPLIT_KV: the partials reuse the loop's region; the larger counts.
     * 128 rows x (64 fp32 + 32 B) + 128 x 8 B = 37888 B against the loop's
     * 16384 + 2 x 4096 B. */
    CHECK_INT(gates("bm128-bn64-bk32-w8-s2-u1-cp1-sw1-h1-kv2", &shape64, "sm_90", all), FATTN_R_NONE);
    CHECK_CONTAINS(all[FATTN_R_SMEM_OVERFLOW].detail, "partials for the cluster 128 x 288 B + 128 x 8 B = 37888 B");
    CHECK_CONTAINS(all[FATTN_R_SMEM_OVERFLOW].detail, ": 37888 B within limit 49152 B");
    /* At D = 128 they are 128 x 544 + 128 x 8 = 70656 B: over 48 KiB, where the loop alone (36864 B) fits. */
    CHECK_INT(gates("bm128-bn32-bk32-w8-s2-u1-cp1-sw1-h1-kv2", &shape128, "sm_90", all), FATTN_R_SMEM_OVERFLOW);
    CHECK_CONTAINS(all[FATTN_R_SMEM_OVERFLOW].detail, "70656 B over limit 49152 B");
    /* Exactly at the limit passes: swizzled 128 x 128 + 2 x 128 x 64... */
    lim.smem_limit = 128 * 128 + 2 * 64 * 64;
    CHECK_INT(gates("bm128-bn64-bk32-w8-s2-u1-cp1-sw1-h1", &shape64, "sm_90", all), FATTN_R_NONE);
    lim.smem_limit -= 1;
    CHECK_INT(gates("bm128-bn64-bk32-w8-s2-u1-cp1-sw1-h1", &shape64, "sm_90", all), FATTN_R_SMEM_OVERFLOW);
    fattn_gate_limits_default(&lim);
}

static void bank_conflicts(void)
{
    fattn_verdict all[FATTN_R_COUNT];
    /* Unpadded, unswizzled 128-byte Q rows: the 8 rows of an ldmatrix phase
     * all start in banks 0-3: 8-way. */
    CHECK_INT(gates("bm64-bn64-bk32-w4-s2-u1-cp1-sw0-h1-pad0", &shape64, "sm_90", all), FATTN_R_BANK_CONFLICTS);
    CHECK_CONTAINS(all[FATTN_R_BANK_CONFLICTS].detail, "worst 8-way (ldmatrix Q");
    /* A limit of 8 ways lets it pass. */
    lim.max_bank_ways = 8;
    CHECK_INT(gates("bm64-bn64-bk32-w4-s2-u1-cp1-sw0-h1-pad0", &shape64, "sm_90", all), FATTN_R_NONE);
    fattn_gate_limits_default(&lim);
    /* Padded by 16 B, BLOCK_K=64 (144-byte K/V rows, one row per quarter-warp
     * copy): conflict-free. */
    CHECK_INT(gates("bm64-bn64-bk64-w4-s2-u1-cp1-sw0-h1", &shape64, "sm_90", all), FATTN_R_NONE);
    CHECK_CONTAINS(all[FATTN_R_BANK_CONFLICTS].detail, "worst 1-way");
    /* Padded 80-byte K/V rows (BLOCK_K=32): 16-byte copies 2-way (test_bank). */
    CHECK_INT(gates("bm64-bn64-bk32-w4-s2-u1-cp1-sw0-h1", &shape64, "sm_90", all), FATTN_R_BANK_CONFLICTS);
    CHECK_CONTAINS(all[FATTN_R_BANK_CONFLICTS].detail, "worst 2-way (K/V copy, 16-byte cp.async)");
}

static void coalescing(void)
{
    fattn_verdict all[FATTN_R_COUNT];
    /* Column-major copies: the 32 lanes of a warp load 16 bytes each from 32
     * different 128-byte rows: 32 sectors of 32 B = 1024 B touched for 512 B
     * used: 50% < 80%. */
    CHECK_INT(gates("bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-cm1", &shape64, "sm_90", all), FATTN_R_COALESCING);
    CHECK_CONTAINS(all[FATTN_R_COALESCING].detail, "512 bytes used of 1024 bytes in 32-byte sectors = 50.0%");
    /* Scalar: 2 bytes from each of 32 rows: 64 of 1024 = 6.25%. (Its 2-byte
     * column-major stores into shared memory also conflict 4-way: lanes r
     * and r+8 land in one bank; let that gate through to reach this one.) */
    lim.max_bank_ways = 4;
    CHECK_INT(gates("bm64-bn64-bk32-w4-s2-u1-cp0-sw1-h0-cm1", &shape64, "sm_90", all), FATTN_R_COALESCING);
    CHECK_CONTAINS(all[FATTN_R_BANK_CONFLICTS].detail, "worst 4-way (Q copy");
    fattn_gate_limits_default(&lim);
    CHECK_CONTAINS(all[FATTN_R_COALESCING].detail, "64 bytes used of 1024 bytes in 32-byte sectors = 6.2%");
    /* Row-major scalar loads: 64 contiguous bytes, 2 sectors: 100%. */
    CHECK_INT(gates("bm64-bn64-bk32-w4-s2-u1-cp0-sw1-h0", &shape64, "sm_90", all), FATTN_R_NONE);
    CHECK_CONTAINS(all[FATTN_R_COALESCING].detail, "64 bytes used of 64 bytes");
    /* A threshold of 50% lets the 16-byte column-major copies through. */
    lim.min_coalescing = 0.5;
    CHECK_INT(gates("bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-cm1", &shape64, "sm_90", all), FATTN_R_NONE);
    fattn_gate_limits_default(&lim);
}

static fattn_compiled compiled_ok(unsigned regs, unsigned smem)
{
    fattn_compiled c = {.ok = 1, .log = "", .regs = regs, .smem_dynamic = smem, .threads = 128};
    return c;
}

static void post_compile(void)
{
    fattn_config c = cfg(good);
    fattn_gate_input in = {&c, &shape64, fattn_arch_find("sm_90"), &lim};
    fattn_verdict all[FATTN_R_COUNT], first;
    fattn_compiled_occ occ;

    /* Good: 96 registers x 128 threads: 3072 per warp, 5 warps per register
     * partition, 20 warps, 5 blocks; 16384 + 1024 B of smem: 13 blocks. */
    fattn_compiled k = compiled_ok(96, 16384);
    CHECK_INT(fattn_gates_compiled(&in, &k, &occ, &first, all), FATTN_R_NONE);
    CHECK_INT(occ.blocks_per_sm, 5);
    CHECK_NEAR(occ.occupancy, 20.0 / 64, 1e-12);
    CHECK_STR(occ.limiter, "registers");

    /* compile_error */
    fattn_compiled bad = {.ok = 0, .log = "k.cu(3): error: expected a ';'\n"};
    CHECK_INT(fattn_gates_compiled(&in, &bad, NULL, &first, all), FATTN_R_COMPILE_ERROR);
    CHECK_CONTAINS(first.detail, "error: expected a ';'");
    CHECK_INT(all[FATTN_R_SPILLS].pass, -1);

    /* smem_mismatch: the model says 16384 B. */
    k = compiled_ok(96, 16000);
    CHECK_INT(fattn_gates_compiled(&in, &k, NULL, &first, all), FATTN_R_SMEM_MISMATCH);
    CHECK_CONTAINS(first.detail, "model 16384 B dynamic, 128 threads; compiled 16000 B dynamic");
    k = compiled_ok(96, 16384);
    k.smem_static = 16;
    CHECK_INT(fattn_gates_compiled(&in, &k, NULL, &first, all), FATTN_R_SMEM_MISMATCH);

    /* spills: 24 + 24 bytes over a limit of 0; passes with 48. */
    k = compiled_ok(255, 16384);
    k.spill_stores = 24, k.spill_loads = 24, k.stack_frame = 24;
    CHECK_INT(fattn_gates_compiled(&in, &k, NULL, &first, all), FATTN_R_SPILLS);
    CHECK_CONTAINS(first.detail, "24 B spill stores + 24 B spill loads, 24 B stack frame; limit 0 B");
    lim.max_spill_bytes = 48;
    CHECK_INT(fattn_gates_compiled(&in, &k, NULL, &first, all), FATTN_R_NONE);
    fattn_gate_limits_default(&lim);

    /* low_occupancy: without cp.async, 128 registers: 4096 per warp, 4 warps
     * per partition, 16 warps = 4 blocks of 4 warps: 25% < 50%. */
    fattn_config nc = cfg("bm64-bn64-bk32-w4-s2-u1-cp0-sw1-h1");
    fattn_gate_input in2 = {&nc, &shape64, fattn_arch_find("sm_90"), &lim};
    k = compiled_ok(128, 16384);
    CHECK_INT(fattn_gates_compiled(&in2, &k, &occ, &first, all), FATTN_R_LOW_OCCUPANCY);
    CHECK_CONTAINS(first.detail, "4 blocks/SM x 4 warps = 16 of 64 warps (25.0%), limited by registers");
    /* 64 registers: 2048 per warp, 8 per partition, 32 warps, 8 blocks: 50%. */
    k = compiled_ok(64, 16384);
    CHECK_INT(fattn_gates_compiled(&in2, &k, &occ, &first, all), FATTN_R_NONE);
    CHECK_NEAR(occ.occupancy, 0.5, 1e-12);
    /* The seeds' rule waives it for cp.async configurations... */
    k = compiled_ok(128, 16384);
    CHECK_INT(fattn_gates_compiled(&in, &k, &occ, &first, all), FATTN_R_NONE);
    CHECK_CONTAINS(all[FATTN_R_LOW_OCCUPANCY].detail, "waived: CP_ASYNC=1");
    /* ...unless --strict-occupancy. */
    lim.occupancy_cp_async_exempt = 0;
    CHECK_INT(fattn_gates_compiled(&in, &k, &occ, &first, all), FATTN_R_LOW_OCCUPANCY);
    fattn_gate_limits_default(&lim);

    /* unlaunchable: a cluster of 8 blocks (SPLIT_KV=8) of 8 warps at 255
     * registers: 8 x 8192 registers, 1 block/SM. On sm_90's GPC of 16 SMs
     * that is 16 slots, 2 clusters; on a GPC of 6 SMs, 6 slots cannot hold
     * one cluster, and the cp.async waiver of low_occupancy does not let it
     * through. */
    fattn_config kc = cfg("bm128-bn64-bk32-w8-s2-u1-cp1-sw1-h1-kv8");
    fattn_shape s1024 = {1, 4, 1024, 64, 0};
    fattn_layout l;
    fattn_layout_init(&l, &kc, 64);
    fattn_gate_input in3 = {&kc, &s1024, fattn_arch_find("sm_90"), &lim};
    k = compiled_ok(255, l.total_bytes);
    k.threads = 256;
    CHECK_INT(fattn_gates_compiled(&in3, &k, &occ, &first, all), FATTN_R_NONE);
    CHECK_INT(all[FATTN_R_UNLAUNCHABLE].pass, 1);
    CHECK_CONTAINS(all[FATTN_R_UNLAUNCHABLE].detail,
                   "cluster of 8 blocks (portable maximum 8): 1 block/SM x 16 SMs of a GPC = 16 slots, 2 clusters");
    fattn_arch small = *fattn_arch_find("sm_90");
    small.gpc_sms = 6;
    in3.arch = &small;
    CHECK_INT(fattn_gates_compiled(&in3, &k, &occ, &first, all), FATTN_R_UNLAUNCHABLE);
    CHECK_CONTAINS(first.detail, "1 block/SM x 6 SMs of a GPC = 6 slots, 0 clusters per GPC");
    CHECK_INT(all[FATTN_R_LOW_OCCUPANCY].pass, 1); /* waived: CP_ASYNC=1 */
    CHECK_NEAR(occ.occupancy, 0.0, 0);
    /* --skip unlaunchable lets it through (to see the driver refuse it). */
    lim.skip = 1u << FATTN_R_UNLAUNCHABLE;
    CHECK_INT(fattn_gates_compiled(&in3, &k, &occ, &first, all), FATTN_R_NONE);
    fattn_gate_limits_default(&lim);
    /* 2 blocks/SM (128 registers): 12 slots hold one cluster; the 4 idle
     * slots lower the occupancy the low_occupancy gate judges. */
    k.regs = 128;
    CHECK_INT(fattn_gates_compiled(&in3, &k, &occ, &first, all), FATTN_R_NONE);
    CHECK_NEAR(occ.occupancy, 8.0 / 6 * 8 / 64, 1e-12);
    CHECK_CONTAINS(all[FATTN_R_LOW_OCCUPANCY].detail, "; clusters of 8 whole on a GPC of 6 SMs: 1.33 blocks/SM, 16.7%");
}

static void reasons(void)
{
    for (int r = 1; r < FATTN_R_COUNT; ++r) {
        const fattn_reason_info *info = fattn_reason(r);
        CHECK(info && info->code && info->what && info->fix);
        CHECK_INT(fattn_reason_find(info->code), r);
    }
    CHECK(fattn_reason(0) == NULL);
    CHECK_INT(fattn_reason_find("nope"), FATTN_R_NONE);
    CHECK_STR(fattn_reason(FATTN_R_MISALIGNED_CP_ASYNC)->code, "misaligned_cp_async");
}

/* The default space: every configuration either survives or is rejected by
 * one of the static gates, and the counts add up to 3,888. */
static void default_space_partition(void)
{
    fattn_space sp;
    int counts[FATTN_R_COUNT] = {0};
    if (fattn_space_load(fattn_default_space_path(), &sp))
        exit(T_HARNESS);
    for (size_t i = 0; i < sp.count; ++i) {
        fattn_config c;
        fattn_space_config(&sp, i, &c);
        fattn_gate_input in = {&c, &shape64, fattn_arch_find("sm_90"), &lim};
        counts[fattn_gates_static(&in, NULL, NULL)]++;
    }
    int sum = 0;
    for (int r = 0; r < FATTN_R_COUNT; ++r)
        sum += counts[r];
    CHECK_INT(sum, 3888);
    /* Tiling by hand: BLOCK_M < 16 x NUM_WARPS for (32,4), (32,8), (64,8):
     * 3 of the 9 (BLOCK_M, NUM_WARPS) pairs, 3888 / 3 = 1296. */
    CHECK_INT(counts[FATTN_R_TILING], 1296);
    fattn_space_release(&sp);
}

/* The study record's limits read back: a round trip of every field, the
 * defaults for what an older record lacks, and a damaged one refused. */
static void limits_json(void)
{
    fattn_gate_limits a, b;
    char json[512], missing[256];
    fattn_gate_limits_default(&a);
    a.smem_limit = 232448, a.max_bank_ways = 4, a.min_coalescing = 0.625, a.mem_budget = 123456789012ull;
    a.input_sets = 7, a.max_spill_bytes = 96, a.min_occupancy = 0.25, a.occupancy_cp_async_exempt = 0;
    a.skip = 1u << FATTN_R_SPILLS;
    fattn_gate_limits_json(&a, json, sizeof json);
    CHECK_INT(fattn_gate_limits_parse(json, &b, missing, sizeof missing), 8);
    CHECK_STR(missing, "");
    CHECK_INT(b.smem_limit, 232448);
    CHECK_INT(b.max_bank_ways, 4);
    CHECK_NEAR(b.min_coalescing, 0.625, 0);
    CHECK_INT(b.mem_budget, 123456789012ull);
    CHECK_INT(b.input_sets, 1); /* the measuring command's own */
    CHECK_INT(b.max_spill_bytes, 96);
    CHECK_NEAR(b.min_occupancy, 0.25, 0);
    CHECK_INT(b.occupancy_cp_async_exempt, 0);
    CHECK_INT(b.skip, 1u << FATTN_R_SPILLS);
    /* An older record: what it holds, the defaults for the rest. */
    CHECK_INT(fattn_gate_limits_parse("{\"smem_limit\": 65536, \"max_spill_bytes\": 8}", &b, missing, sizeof missing),
              2);
    CHECK_INT(b.smem_limit, 65536);
    CHECK_INT(b.max_spill_bytes, 8);
    CHECK_NEAR(b.min_occupancy, 0.5, 0);
    CHECK_STR(missing, "max_bank_ways, min_coalescing, mem_budget, min_occupancy, occupancy_cp_async_exempt, "
                       "skipped_gates");
    /* Out of range counts as missing; none at all, or not an object. */
    CHECK_INT(fattn_gate_limits_parse("{\"smem_limit\": 1e30, \"min_occupancy\": -1}", &b, missing, sizeof missing), 0);
    CHECK_INT(b.smem_limit, FATTN_DEFAULT_SMEM_LIMIT);
    CHECK_INT(fattn_gate_limits_parse("{}", &b, missing, 16), 0);
    CHECK_INT(strlen(missing), 15); /* cut at the buffer, terminated */
    CHECK_INT(fattn_gate_limits_parse("", &b, missing, sizeof missing), -1);
    CHECK_INT(fattn_gate_limits_parse("[1, 2]", &b, missing, sizeof missing), -1);
    CHECK_INT(fattn_gate_limits_parse(NULL, &b, missing, sizeof missing), -1);
    CHECK_INT(b.smem_limit, FATTN_DEFAULT_SMEM_LIMIT);
}

int main(void)
{
    fattn_error_set_quiet(1);
    fattn_gate_limits_default(&lim);
    T_RUN(known_good);
    T_RUN(device_memory);
    T_RUN(tiling);
    T_RUN(seeds_pad);
    T_RUN(seeds_pad_space_file);
    T_RUN(smem_overflow);
    T_RUN(bank_conflicts);
    T_RUN(coalescing);
    T_RUN(post_compile);
    T_RUN(reasons);
    T_RUN(default_space_partition);
    T_RUN(limits_json);
    return t_exit();
}
