/*
 * fattn_sim_api.h - the calls between a kernel compiled for the host and the
 * simulator that runs it (src/sim/).
 *
 * The host build of the kernel (a shared object the simulator loads) defines
 * two variables the simulator fills before it runs anything: fattn_sim_api,
 * the table below, and fattn_sim_self, the calling CUDA thread's built-in
 * variables (switched with the fiber). Every primitive of
 * kernels/fattn_prim.h becomes one call through the table, with the kernel
 * source file and line it was called from. The simulator does not return
 * from a call that faults: the launch ends there and the fault is its
 * verdict.
 *
 * Plain C as well as C++.
 */
#ifndef FATTN_KERNELS_SIM_FATTN_SIM_API_H
#define FATTN_KERNELS_SIM_FATTN_SIM_API_H

#define FATTN_SIM_API_VERSION 3

/* The calling site of a primitive. */
typedef struct fattn_sim_site {
    const char *file;
    int line;
} fattn_sim_site;

typedef struct fattn_sim_dim3 {
    unsigned x, y, z;
} fattn_sim_dim3;

/* The built-in variables of the running CUDA thread. */
typedef struct fattn_sim_self {
    fattn_sim_dim3 thread_idx, block_idx, block_dim, grid_dim;
    unsigned char *smem; /* the block's dynamic shared memory (host address) */
} fattn_sim_self;

/* Memory spaces of ld/st through a generic pointer. */
enum fattn_sim_space {
    FATTN_SIM_GLOBAL = 0,
    FATTN_SIM_SHARED = 1,
};

typedef struct fattn_sim_api {
    unsigned version; /* FATTN_SIM_API_VERSION */
    /* ld.<space> / st.<space> of `size` bytes through a generic pointer. */
    void (*load)(fattn_sim_site s, int space, const void *p, void *out, unsigned size);
    void (*store)(fattn_sim_site s, int space, void *p, const void *in, unsigned size);
    /* cvta.to.shared: the shared::cta address of a generic pointer. */
    unsigned (*smem_addr)(fattn_sim_site s, const void *p);
    /* bar.sync 0 (__syncthreads). */
    void (*syncthreads)(fattn_sim_site s);
    /* ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16 */
    void (*ldmatrix_x4)(fattn_sim_site s, unsigned r[4], unsigned addr, int trans);
    /* mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32, d = a b + d */
    void (*mma_16816)(fattn_sim_site s, float d[4], const unsigned a[4], unsigned b0, unsigned b1);
    /* shfl.sync.bfly.b32 with membermask `mask`, lane ^ lanemask (segment clamp 0x1f) */
    unsigned (*shfl_xor)(fattn_sim_site s, unsigned mask, unsigned v, int lanemask);
    /* cp.async.{ca,cg}.shared.global [dst], [src], size, src_size */
    void (*cp_async)(fattn_sim_site s, unsigned dst, const void *src, unsigned size, unsigned src_size);
    void (*cp_async_commit)(fattn_sim_site s);
    void (*cp_async_wait)(fattn_sim_site s, int n);
    /* %cluster_ctarank; barrier.cluster.arrive.release + wait.acquire;
     * mapa.shared::cluster; ld.shared::cluster of `size` bytes. */
    unsigned (*cluster_rank)(fattn_sim_site s);
    void (*cluster_sync)(fattn_sim_site s);
    unsigned (*cluster_map)(fattn_sim_site s, unsigned addr, unsigned rank);
    void (*ld_cluster)(fattn_sim_site s, unsigned addr, void *out, unsigned size);

    /* Version 2: Hopper (kernels/fattn_prim_sm90.h). */
    /* wgmma.fence / wgmma.commit_group / wgmma.wait_group n; the wait names
     * the nacc accumulator arrays acc[i] of size[i] floats it fences. */
    void (*wgmma_fence)(fattn_sim_site s);
    void (*wgmma_commit)(fattn_sim_site s);
    void (*wgmma_wait)(fattn_sim_site s, int n, float *const *acc, const unsigned *size, int nacc);
    /* wgmma.mma_async.sync.aligned.m64n<n>k16.f32.f16.f16: d (n / 2 floats)
     * = A B (+ d when scale_d); A from a[4] (RS) or, a NULL, from a_desc (SS). */
    void (*wgmma)(fattn_sim_site s, float *d, unsigned n, const unsigned *a, unsigned long long a_desc,
                  unsigned long long b_desc, int trans_a, int trans_b, int scale_d);
    /* mbarrier.init / arrive (with expect_tx of tx bytes when tx > 0) /
     * try_wait.parity on the shared::cta address of an mbarrier. */
    void (*mbar_init)(fattn_sim_site s, unsigned addr, unsigned count);
    void (*mbar_arrive)(fattn_sim_site s, unsigned addr, unsigned tx);
    int (*mbar_try_wait)(fattn_sim_site s, unsigned addr, unsigned parity);
    /* fence.proxy.async.shared::cta; fence.mbarrier_init.release.cluster */
    void (*fence_proxy_async)(fattn_sim_site s);
    void (*fence_mbarrier_init)(fattn_sim_site s);
    /* cp.async.bulk.tensor.<rank>d: load of the box at coord into shared dst
     * completing on mbarrier mbar; store of the box at shared src. `map`
     * points at the kernel's tensor-map slot, which the simulator filled. */
    void (*tma_load)(fattn_sim_site s, unsigned dst, const void *map, const int *coord, int rank, unsigned mbar);
    void (*tma_store)(fattn_sim_site s, const void *map, const int *coord, int rank, unsigned src);
    /* cp.async.bulk.commit_group; cp.async.bulk.wait_group.read n */
    void (*bulk_commit)(fattn_sim_site s);
    void (*bulk_wait_read)(fattn_sim_site s, int n);
    /* bar.sync id, count / bar.arrive id, count */
    void (*bar_named)(fattn_sim_site s, unsigned id, unsigned count, int wait);
    /* setmaxnreg.inc / .dec .sync.aligned.u32 count */
    void (*setmaxnreg)(fattn_sim_site s, unsigned count, int inc);

    /* Version 3: thread-block clusters on Hopper. A TMA load with an L2
     * cache policy (0: none) and, when multicast, landing in the blocks of
     * the cluster whose rank's bit is set in mask; mbarrier.arrive.release
     * .cluster on the shared::cluster address of an mbarrier (mapa). */
    void (*tma_load_ex)(fattn_sim_site s, unsigned dst, const void *map, const int *coord, int rank, unsigned mbar,
                        int multicast, unsigned mask, unsigned long long policy);
    void (*mbar_arrive_cluster)(fattn_sim_site s, unsigned addr);
} fattn_sim_api;

#endif
