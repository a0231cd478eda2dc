/*
 * mma.c - the mma family: the Ampere-style mma.sync FlashAttention forward
 * kernel (kernels/fattn_fwd.cu), the first family and the default.
 */
#include "gates/gates.h"
#include "gates/layout.h"
#include "space/family.h"
#include "space/params.h"

const fattn_param_info fattn_mma_params[FATTN_MMA_NPARAMS] = {
    {"BLOCK_M", "bm", 64, 16, 256, 0, 0, "query rows per thread block"},
    {"BLOCK_N", "bn", 64, 16, 256, 0, 0, "key/value rows per step"},
    {"BLOCK_K", "bk", 32, 16, 128, 0, 0, "head-dimension chunk of Q.K^T staged per pipeline step"},
    {"NUM_WARPS", "w", 4, 1, 32, 0, 0, "warps per block"},
    {"STAGES", "s", 2, 1, 8, 0, 0, "shared-memory buffers in the K/V pipeline"},
    {"UNROLL", "u", 1, 1, 8, 0, 0, "unroll of the key/value loop"},
    {"CP_ASYNC", "cp", 1, 0, 1, 0, 0, "cp.async copies (1) or loads through registers (0)"},
    {"SWIZZLE", "sw", 1, 0, 1, 0, 0, "XOR-swizzled rows (1) or rows padded by PAD_BYTES (0)"},
    {"HALF2", "h", 1, 0, 1, 0, 0, "16-byte global I/O and packed half2 conversions (1) or scalar (0)"},
    {"SPLIT_KV", "kv", 1, 1, 8, 0, 1,
     "blocks of a thread-block cluster sharing one row block's key range, combined through distributed shared "
     "memory (sm_90+)"},
    {"Q_REGS", "qr", 0, 0, 1, 0, 1, "Q fragments loaded once into registers (1) or re-read per key tile (0)"},
    {"PAD_BYTES", "pad", 16, 0, 256, 1, 1, "test only: row pad of unswizzled tiles, in bytes"},
    {"COPY_COLMAJOR", "cm", 0, 0, 1, 1, 1, "test only: copy loops walk down rows first (uncoalesced)"},
};

/* One block per BLOCK_M query rows of a head, SPLIT_KV of them (a cluster)
 * per row block sharing its key range; the shared memory of the layout
 * model (gates/layout.h). */
static void mma_launch(const fattn_config *c, const fattn_shape *s, int sm_count, fattn_launch *out)
{
    (void)sm_count;
    fattn_layout l;
    fattn_layout_init(&l, c, s->head_dim);
    const int bm = c->v[FATTN_P_BLOCK_M], split = c->v[FATTN_P_SPLIT_KV];
    *out = (fattn_launch){
        .grid = {(unsigned)((s->seqlen + bm - 1) / bm * split), (unsigned)s->heads, (unsigned)s->batch},
        .threads = l.threads,
        .cluster = (unsigned)split,
        .smem = l.total_bytes,
        .async_copies = c->v[FATTN_P_CP_ASYNC],
        .async_why = "CP_ASYNC=1 prefetches",
        .rows_per_block = (unsigned)bm,
        .causal_last_first = 1, /* the longest row block first (kernels/fattn_fwd.cu) */
    };
    fattn_launch_attention_args(out);
}

/* FlashAttention-2's forward tilings (its kBlockM x kBlockN, 4 or 8 warps),
 * then smaller ones that fit tighter gate limits. */
static const char *const *mma_reference_keys(int head_dim, int causal)
{
    static const char *const d64[] = {"bm128-bn128-bk64-w8-s2-u1-cp1-sw1-h1", "bm128-bn64-bk64-w8-s2-u1-cp1-sw1-h1",
                                      "bm64-bn64-bk64-w4-s2-u1-cp1-sw1-h1", "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", NULL};
    static const char *const d128[] = {"bm128-bn64-bk64-w8-s2-u1-cp1-sw1-h1", "bm128-bn32-bk64-w8-s2-u1-cp1-sw1-h1",
                                       "bm64-bn64-bk64-w4-s2-u1-cp1-sw1-h1", "bm64-bn32-bk32-w4-s2-u1-cp1-sw1-h1",
                                       NULL};
    (void)causal;
    return head_dim <= 64 ? d64 : d128;
}

const fattn_family fattn_family_mma = {
    .name = "mma",
    .summary = "FlashAttention-2 forward with mma.sync, ldmatrix and cp.async (sm_80 and newer)",
    .params = fattn_mma_params,
    .nparams = FATTN_MMA_NPARAMS,
    .kernel_file = "fattn_fwd.cu",
    .default_space = "space.json",
    .kernel_name = "fattn_fwd",
    .gates_static = fattn_mma_gates_static,
    .static_gates = 1u << FATTN_R_DEVICE_MEMORY | 1u << FATTN_R_TILING | 1u << FATTN_R_MISALIGNED_CP_ASYNC
                    | 1u << FATTN_R_MISALIGNED_LDMATRIX | 1u << FATTN_R_SMEM_OVERFLOW | 1u << FATTN_R_BANK_CONFLICTS
                    | 1u << FATTN_R_COALESCING,
    .launch = mma_launch,
    .grid_rule = {"ceil(seqlen / BLOCK_M) * SPLIT_KV", "heads", "batch"},
    .launch_doc = " * Launch: grid (ceil(S / FATTN_BLOCK_M) * FATTN_SPLIT_KV, H, B), FATTN_THREADS threads,\n"
                  " * FATTN_SMEM_BYTES bytes of dynamic shared memory (raise the function's limit when it exceeds\n"
                  " * 48 KiB). FATTN_SPLIT_KV > 1 builds clusters of that many blocks (compiled in: a plain launch).\n"
                  " */\n",
    .reference_keys = mma_reference_keys,
    .reference_name = "FlashAttention-2-like",
};
