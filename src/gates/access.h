/*
 * access.h - the kernel's shared- and global-memory accesses, warp by warp.
 *
 * One enumeration of every warp-wide request kernels/fattn_fwd.cu issues
 * against shared memory for one block's worth of tiles, with the lane
 * addresses the kernel computes (through the layout model): the Q tile copy,
 * the K/V chunk copies into every ring slot, the ldmatrix reads of Q, K and
 * V, the O staging stores and the O copy-out. The alignment, bank-conflict
 * and coalescing gates all read this one model.
 */
#ifndef FATTN_GATES_ACCESS_H
#define FATTN_GATES_ACCESS_H

#include "gates/layout.h"

enum fattn_access_kind {
    FATTN_ACC_Q_COPY,  /* global -> Q tile */
    FATTN_ACC_KV_COPY, /* global -> K/V slot */
    FATTN_ACC_LDM_Q,   /* ldmatrix.x4, A operand of Q.K^T */
    FATTN_ACC_LDM_K,   /* ldmatrix.x4, B operand of Q.K^T */
    FATTN_ACC_LDM_V,   /* ldmatrix.x4.trans, B operand of P.V */
    FATTN_ACC_O_STAGE, /* registers -> Q tile, O staging */
    FATTN_ACC_O_OUT,   /* Q tile -> global, O copy-out */
    FATTN_ACC_KINDS,
};

typedef struct fattn_warp_req {
    int kind;
    unsigned warp;
    unsigned width;       /* bytes per lane */
    unsigned phase_lanes; /* lanes per shared-memory phase */
    unsigned char active[32];
    unsigned smem[32]; /* shared byte offset from the dynamic base */
    unsigned row[32];  /* tile row of each lane */
    int has_global;
    unsigned long long global[32]; /* global byte offset from a 128-byte aligned tile origin */
} fattn_warp_req;

/* Calls fn for every request, stopping early when fn returns non-zero (that
 * value is returned). */
typedef int (*fattn_req_fn)(const fattn_warp_req *req, void *ctx);
int fattn_access_each(const fattn_layout *l, fattn_req_fn fn, void *ctx);

/* "K/V copy", "ldmatrix Q", ... */
const char *fattn_access_name(int kind);

/* What moves the bytes of a copy request: "cp.async", "vector load/store",
 * "store", ... for messages. */
const char *fattn_access_op(const fattn_layout *l, int kind);

#endif
