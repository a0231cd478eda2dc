/*
 * access.c - enumerating the kernel's warp-wide memory requests.
 *
 * Mirrors, line for line, the index arithmetic of kernels/fattn_fwd.cu:
 * Tile<>::unit() for copies, qk_chunk() and pv_chunk() for ldmatrix, and the
 * O staging loop of the epilogue.
 */
#include "gates/access.h"

#include <string.h>

#include "gates/bank.h"

static void req_init(fattn_warp_req *r, int kind, unsigned warp, unsigned width, unsigned phase_lanes)
{
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->warp = warp;
    r->width = width;
    r->phase_lanes = phase_lanes;
}

/* Copies of a whole tile: instruction i of warp w moves units w*32+lane+i*T. */
static int each_copy(const fattn_layout *l, int kind, const fattn_tile_desc *t, unsigned base, unsigned vec,
                     unsigned long long gbase, fattn_req_fn fn, void *ctx)
{
    unsigned units = t->rows * (t->chunks * 16u / vec);
    unsigned per_thread = (units + l->threads - 1) / l->threads;
    for (unsigned w = 0; w < l->warps; ++w) {
        for (unsigned i = 0; i < per_thread; ++i) {
            fattn_warp_req r;
            req_init(&r, kind, w, vec, fattn_bank_phase_lanes(vec));
            r.has_global = 1;
            int any = 0;
            for (unsigned lane = 0; lane < 32; ++lane) {
                unsigned u = w * 32u + lane + i * l->threads, row, byte;
                if (u >= units)
                    continue;
                fattn_layout_unit(l, t, vec, u, &row, &byte);
                r.active[lane] = 1;
                r.row[lane] = row;
                r.smem[lane] = base + fattn_layout_offset(l, t, row, byte);
                r.global[lane] = gbase + (unsigned long long)row * l->head_dim * 2u + byte;
                any = 1;
            }
            if (any) {
                int rc = fn(&r, ctx);
                if (rc)
                    return rc;
            }
        }
    }
    return 0;
}

/* One ldmatrix.x4: lane supplies row `rows[lane]`, byte `bytes[lane]`. */
static int ldmatrix(const fattn_layout *l, int kind, unsigned warp, const fattn_tile_desc *t, unsigned base,
                    const unsigned rows[32], const unsigned bytes[32], fattn_req_fn fn, void *ctx)
{
    fattn_warp_req r;
    req_init(&r, kind, warp, 16, 8);
    for (unsigned lane = 0; lane < 32; ++lane) {
        r.active[lane] = 1;
        r.row[lane] = rows[lane];
        r.smem[lane] = base + fattn_layout_offset(l, t, rows[lane], bytes[lane]);
    }
    return fn(&r, ctx);
}

int fattn_access_each(const fattn_layout *l, fattn_req_fn fn, void *ctx)
{
    const unsigned bk = l->kv.chunks * 8u; /* BLOCK_K in halves */
    unsigned rows[32], bytes[32];
    int rc;

    if ((rc = each_copy(l, FATTN_ACC_Q_COPY, &l->q, 0, l->load_bytes, 0, fn, ctx)))
        return rc;
    for (unsigned s = 0; s < l->stages; ++s)
        for (unsigned c = 0; c < l->chunks_per_tile; ++c)
            if ((rc = each_copy(l, FATTN_ACC_KV_COPY, &l->kv, l->kv_base + s * l->kv.bytes, l->load_bytes,
                                (unsigned long long)c * bk * 2u, fn, ctx)))
                return rc;

    /* qk_chunk(): Q rows of this warp, every 16-column step of D. */
    for (unsigned w = 0; w < l->warps; ++w)
        for (unsigned mt = 0; mt < l->m_tiles; ++mt)
            for (unsigned col0 = 0; col0 < l->head_dim; col0 += 16) {
                for (unsigned lane = 0; lane < 32; ++lane) {
                    rows[lane] = w * l->rows_per_warp + mt * 16u + lane % 8u + ((lane / 8u) % 2u) * 8u;
                    bytes[lane] = (col0 + (lane / 16u) * 8u) * 2u;
                }
                if ((rc = ldmatrix(l, FATTN_ACC_LDM_Q, w, &l->q, 0, rows, bytes, fn, ctx)))
                    return rc;
            }
    for (unsigned s = 0; s < l->stages; ++s) {
        unsigned base = l->kv_base + s * l->kv.bytes;
        for (unsigned n16 = 0; n16 < l->kv.rows / 16u; ++n16)
            for (unsigned kk = 0; kk < bk / 16u; ++kk) {
                /* qk_chunk(): K rows np*16 + (lane/16)*8 + lane%8. */
                for (unsigned lane = 0; lane < 32; ++lane) {
                    rows[lane] = n16 * 16u + (lane / 16u) * 8u + lane % 8u;
                    bytes[lane] = (kk * 16u + ((lane / 8u) % 2u) * 8u) * 2u;
                }
                if ((rc = ldmatrix(l, FATTN_ACC_LDM_K, 0, &l->kv, base, rows, bytes, fn, ctx)))
                    return rc;
                /* pv_chunk(): V rows kk*16 + ((lane/8)%2)*8 + lane%8 (here n16 walks the keys). */
                for (unsigned lane = 0; lane < 32; ++lane) {
                    rows[lane] = n16 * 16u + ((lane / 8u) % 2u) * 8u + lane % 8u;
                    bytes[lane] = (kk * 16u + (lane / 16u) * 8u) * 2u;
                }
                if ((rc = ldmatrix(l, FATTN_ACC_LDM_V, 0, &l->kv, base, rows, bytes, fn, ctx)))
                    return rc;
            }
    }

    /* Epilogue: each lane writes columns d*8 + (lane%4)*2 (+1) of rows lane/4 (+8). */
    const unsigned stage_width = l->store_bytes == 16 ? 4u : 2u;
    for (unsigned w = 0; w < l->warps; ++w)
        for (unsigned mt = 0; mt < l->m_tiles; ++mt)
            for (unsigned h = 0; h < 2; ++h)
                for (unsigned d = 0; d < l->head_dim / 8u; ++d)
                    for (unsigned part = 0; part < 4u / stage_width; ++part) {
                        fattn_warp_req r;
                        req_init(&r, FATTN_ACC_O_STAGE, w, stage_width, 32);
                        for (unsigned lane = 0; lane < 32; ++lane) {
                            unsigned row = w * l->rows_per_warp + mt * 16u + lane / 4u + h * 8u;
                            unsigned byte = (d * 8u + (lane % 4u) * 2u) * 2u + part * 2u;
                            r.active[lane] = 1;
                            r.row[lane] = row;
                            r.smem[lane] = fattn_layout_offset(l, &l->q, row, byte);
                        }
                        if ((rc = fn(&r, ctx)))
                            return rc;
                    }
    return each_copy(l, FATTN_ACC_O_OUT, &l->q, 0, l->store_bytes, 0, fn, ctx);
}

const char *fattn_access_name(int kind)
{
    static const char *const names[FATTN_ACC_KINDS] = {
        "Q copy", "K/V copy", "ldmatrix Q", "ldmatrix K", "ldmatrix.trans V", "O staging store", "O copy-out",
    };
    return kind >= 0 && kind < FATTN_ACC_KINDS ? names[kind] : "?";
}

const char *fattn_access_op(const fattn_layout *l, int kind)
{
    switch (kind) {
    case FATTN_ACC_Q_COPY:
    case FATTN_ACC_KV_COPY:
        if (l->cp_async)
            return l->load_bytes == 16 ? "16-byte cp.async" : "4-byte cp.async";
        return l->load_bytes == 16 ? "16-byte vector copy" : "2-byte copy";
    case FATTN_ACC_O_STAGE: return l->store_bytes == 16 ? "4-byte store" : "2-byte store";
    case FATTN_ACC_O_OUT: return l->store_bytes == 16 ? "16-byte copy" : "2-byte copy";
    default: return "ldmatrix row";
    }
}
