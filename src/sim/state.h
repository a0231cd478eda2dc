/*
 * state.h - the simulator's launch state, shared by the files that implement
 * the fattn_sim_api calls (launch.c: memory, barriers, warp collectives,
 * cp.async; hopper.c: wgmma, TMA, mbarriers, named barriers, setmaxnreg).
 * Internal to src/sim/.
 */
#ifndef FATTN_SIM_STATE_H
#define FATTN_SIM_STATE_H

#include <stdint.h>

#include "gpu/tmap.h"
#include "kernels/sim/fattn_sim_api.h"
#include "sim/fiber.h"
#include "sim/launch.h"

#define SIM_BUFS 5

#define GUARD         (64u << 10) /* bytes around every buffer, to name an overrun's buffer */
#define STACK_BYTES   (256u << 10)
#define CLUSTER_SHIFT 24 /* shared::cluster address: (rank + 1) << 24 | offset */

enum { SH_WRITTEN = 1, SH_PENDING = 2, SH_READ = 4, SH_RMULTI = 8 };

/* The last write and read of one shared byte: who (a column of the vector
 * clocks: a thread, or an asynchronous agent), and its clock then. */
typedef struct shadow {
    uint32_t w_clk, r_clk;
    uint16_t w_thr, r_thr; /* column: a thread (rank * threads + threadIdx.x) or an agent */
    uint16_t w_line, r_line;
    uint8_t flags;
} shadow;

typedef struct async_copy {
    uint32_t dst;
    const uint8_t *src;
    unsigned size, src_size;
    int group; /* -1 until committed */
    int line;
} async_copy;

enum { T_RUN, T_WARP, T_BAR, T_CLUSTER, T_WG, T_NBAR, T_MBAR, T_NREG, T_DONE };
enum { OP_NONE, OP_LDMATRIX, OP_MMA, OP_SHFL };

typedef struct sim_thread {
    fattn_sim_self self;
    fattn_fiber *fiber;
    int state;
    unsigned tid, rank, gtid, lane;
    struct sim_warp *warp;
    fattn_sim_site wait_site;
    async_copy *copies;
    int ncopies, cap_copies, groups; /* groups committed so far */
    /* Hopper: this thread's own clock at each fence.proxy.async (ascending) */
    uint32_t *fences;
    int nfences, cap_fences;
    int wg_fenced;         /* a wgmma.fence since its last wgmma.commit_group or wait_group */
    int wg_groups;         /* wgmma groups committed */
    int bulk_groups;       /* bulk (TMA store) groups committed */
    struct sim_bulk *bulk; /* its TMA stores whose source reads are not retired */
    int nbulk, cap_bulk;
    int bulk_agent; /* its column for TMA store reads, or -1 */
    int mbar;       /* T_MBAR: the mbarrier slot waited on */
    unsigned mbar_parity;
    unsigned nbar; /* T_NBAR: the barrier id */
} sim_thread;

/* One lane's part of a pending warp collective. */
typedef struct lane_args {
    unsigned *r;
    unsigned addr;
    float *d;
    const unsigned *a;
    unsigned b0, b1, v, mask;
    int lanemask;
    unsigned result;
} lane_args;

/* A shared access of one lane, kept until the warp next synchronizes. */
typedef struct lane_access {
    int site; /* index into the report's sites */
    int occ;  /* the lane's how-many-th access at that site since the last sync */
    int lane;
    uint32_t addr;
    unsigned size;
} lane_access;

typedef struct sim_warp {
    int op;
    fattn_sim_site site;
    int trans;
    uint32_t arrived;
    lane_args args[32];
    lane_access *acc;
    int nacc, cap_acc;
    int occ_site[16], occ_count[16][32], nocc;
} sim_warp;

#define SIM_MBARS       64 /* mbarriers per block */
#define SIM_NBARS       16 /* named barrier ids */
#define SIM_BULK_AGENTS 8  /* threads per block issuing TMA stores, each its own column */

/* A TMA load on its way: the box as it will lie in shared memory, landing
 * on its mbarrier's phase (complete_tx) in address order. */
typedef struct sim_tma {
    uint8_t *data;
    uint32_t dst, bytes, landed;
    uint32_t seq; /* on its mbarrier's column */
    int line;
} sim_tma;

typedef struct sim_mbar {
    int live;
    uint32_t addr;
    unsigned count, pending;
    int64_t tx;
    uint32_t phase; /* phases completed */
    uint32_t seq;   /* TMA loads issued on it */
    fattn_sim_site init_site;
    /* ncols each: the releases into the current phase; the clock of the
     * last completed phase of each parity (what a wait acquires) */
    uint32_t *acc, *done[2];
    sim_tma *tma;
    int ntma, cap_tma;
} sim_mbar;

typedef struct sim_nbar {
    unsigned count, arrived;
    fattn_sim_site site;
    uint32_t *acc;
} sim_nbar;

/* A TMA store whose shared source is being read until its wait_group.read. */
typedef struct sim_bulk {
    int group; /* -1 until committed */
    uint32_t seq;
} sim_bulk;

typedef struct sim_block {
    uint8_t *alloc, *smem; /* smem: the launch's dynamic shared memory, GUARD bytes each side */
    shadow *sh;
    unsigned bar_count;
    fattn_sim_site bar_site;
    sim_mbar mbar[SIM_MBARS];
    sim_nbar nbar[SIM_NBARS];
    unsigned bulk_owner[SIM_BULK_AGENTS]; /* gtid + 1 of each TMA-store column's thread */
    uint32_t bulk_seq[SIM_BULK_AGENTS];
    unsigned regs_used; /* setmaxnreg: registers of the block's warpgroups */
    /* Its life in the cluster: threads exited, the join of their clocks at
     * exit, and per column the last arrival from another block (clock and
     * site), which must be ordered before some thread's exit. */
    unsigned exited;
    uint32_t *exit_vc, *remote_vc;
    fattn_sim_site *remote_site;
    /* wgmma in turn: the last issue's warpgroup (-1 none), thread, its own
     * clock then, and line */
    int turn_wg;
    unsigned turn_gtid;
    uint32_t turn_clock;
    int turn_line;
} sim_block;

/* A wgmma in flight: its results until each thread's wait_group retires it. */
typedef struct sim_wgmma {
    int group; /* -1 until committed */
    uint32_t seq;
    int line;
    unsigned n;
    float *d[128];              /* each thread's accumulators */
    const unsigned *a_ptr[128]; /* RS: each thread's A fragment, which must not change until retired */
    uint32_t a[128][4];         /* RS: what it held at the issue */
    float *result;              /* 128 * n / 2 */
    uint32_t retired[4];        /* the threads that retired it */
} sim_wgmma;

enum { WG_NONE, WG_WGMMA, WG_NREG };

/* A warpgroup: its collective in progress, wgmmas in flight, registers. */
typedef struct sim_wg {
    int op;
    unsigned arrived;
    fattn_sim_site site;
    unsigned n, nreg_want;
    int a_regs, trans_a, trans_b, scale_d, nreg_inc, mismatch;
    unsigned long long a_desc, b_desc;
    float *d[128];
    const unsigned *a_ptr[128];
    uint32_t a[128][4];
    uint32_t seq;
    sim_wgmma *fly;
    int nfly, cap_fly;
    unsigned nreg;    /* setmaxnreg: registers per thread now */
    int nreg_waiting; /* an inc waits for the block's pool */
} sim_wg;

typedef struct sim_buf {
    const char *name;
    uint8_t *alloc, *base;
    size_t size;
    int writable;
} sim_buf;

typedef struct sim {
    const fattn_sim_launch *l;
    fattn_sim_report *rep;
    fattn_fiber_pool *pool;
    sim_thread *threads; /* cluster * threads */
    sim_warp *warps;     /* cluster * threads / 32 */
    sim_block *blocks;   /* cluster */
    unsigned nthreads;   /* in the cluster */
    sim_wg *wgs;         /* ceil(nthreads / 128) */
    unsigned nwg;
    /* Columns of the vector clocks: the threads, then (a kernel using
     * fattn_prim_sm90.h) per block SIM_MBARS
     * mbarrier agents (their TMA loads' writes), per warpgroup a wgmma agent
     * (its operand reads), per block SIM_BULK_AGENTS TMA-store agents. */
    unsigned ncols, col_mbar, col_wg, col_bulk;
    unsigned regs;     /* registers per thread the launch allocates */
    fattn_tmap *tmaps; /* the launch's maps, based in bufs */
    /* Their 128-byte images, what a kernel taking its maps as parameters
     * (args_entry) is passed: each thread's copy is known by its bytes. */
    struct sim_tmap_img {
        _Alignas(64) unsigned char b[128];
    } * tmap_img;
    sim_buf bufs[SIM_BUFS]; /* Q, K, V, O, and the workspace (W) */
    uint8_t *o_stores;      /* per element of O: the TMA stores that wrote it (saturating) */
    /* An args_entry launch's parameters (argv[i] points at parameter i's
     * value), built once for every thread. */
    void *argv[FATTN_MAX_ARGS];
    void *arg_ptr[SIM_BUFS];
    int arg_int[3]; /* batch, heads, seqlen */
    float arg_scale;
    sim_thread *cur;
    /* Happens-before: thread i's vector clock is vc[i * ncols .. + ncols),
     * entry j the last clock of column j that i has synchronized with; a
     * thread's own entry counts its releases, an agent's its operations. */
    uint32_t *vc;
    unsigned cluster_count;
    fattn_sim_site cluster_site;
    int stop;    /* a divergent collective or a deadlock: nothing can go on */
    int faulted; /* a memory fault: the launch ends with this cluster */
} sim;

typedef struct finding_in {
    int kind;
    const sim_thread *t;
    const fattn_sim_site *site;
    const char *space;
    uint64_t addr;
    unsigned size;
    const char *insn;
    int other_thr; /* gtid, or -1 */
    int other_line;
} finding_in;

/* The accumulators of a wgmma in flight hold this NaN until it retires: a
 * signaling one, so that arithmetic on it (which quiets it) leaves other bits
 * and a read-modify-write shows at the wait_group. */
#define SIM_POISON_BITS 0x7f80dea1u

/* The launch running now (one per process). */
extern sim *fattn_sim_state;
#define S fattn_sim_state

/* Records a finding (launch.c); a divergent collective or a deadlock does
 * not return. */
void sim_finding(const finding_in *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
sim_thread *sim_me(void);
const char *sim_access_insn(char *buf, size_t n, const char *op, const char *space, unsigned size);
/* 0, or -1 with a misaligned / out-of-bounds fault recorded. */
int sim_smem_check(const fattn_sim_site *s, unsigned rank, uint64_t addr, unsigned size, unsigned align,
                   const char *insn);
uint32_t *sim_clock_of(unsigned gtid);
uint32_t sim_now(const sim_thread *t);
int sim_ordered(const sim_thread *t, unsigned col, uint32_t clk);
void sim_vc_barrier(unsigned first, unsigned n);
/* view[j] = max(view[j], c[j]) over the columns. */
void sim_vc_join(uint32_t *view, const uint32_t *c);
/* "thread 12", "the TMA loads on mbarrier 0x4000", ... for column col. */
void sim_col_name(unsigned col, char *out, size_t n);
void sim_race(int kind, const fattn_sim_site *s, unsigned addr, unsigned size, const char *insn, unsigned other,
              int other_line, const char *how);
void sim_shadow_read(const fattn_sim_site *s, unsigned rank, uint32_t addr, unsigned size, const char *insn);
/* The same read by column col at clock clk, ordered by `view` (the clock
 * vector of whoever issued it); async: by the async proxy (a wgmma operand,
 * a TMA store's source), which also needs the writer's fence.proxy.async. */
void sim_shadow_read_as(const fattn_sim_site *s, unsigned rank, uint32_t addr, unsigned size, const char *insn,
                        const uint32_t *view, unsigned col, uint32_t clk, int async);
void sim_shadow_write(const fattn_sim_site *s, unsigned rank, uint32_t addr, unsigned size, const char *insn,
                      int pending);
int sim_smem_offset(const fattn_sim_site *s, const void *p, unsigned size, const char *insn, uint32_t *off);
sim_buf *sim_global_check(const fattn_sim_site *s, const void *p, unsigned size, int write, const char *insn,
                          uint64_t *off);
void sim_warp_flush(sim_warp *w);

/* hopper.c: the version-2 calls, the per-cluster reset, the deadlock
 * description of its waits, the launch's teardown. */
void sim_hopper_reset(void);
int sim_hopper_deadlock(sim_thread *waiter);
void sim_hopper_free(sim *s);
void sim_api_wgmma_fence(fattn_sim_site s);
void sim_api_wgmma_commit(fattn_sim_site s);
void sim_api_wgmma_wait(fattn_sim_site s, int n, float *const *acc, const unsigned *size, int nacc);
void sim_api_wgmma(fattn_sim_site s, float *d, unsigned n, const unsigned *a, unsigned long long a_desc,
                   unsigned long long b_desc, int trans_a, int trans_b, int scale_d);
void sim_api_mbar_init(fattn_sim_site s, unsigned addr, unsigned count);
void sim_api_mbar_arrive(fattn_sim_site s, unsigned addr, unsigned tx);
int sim_api_mbar_try_wait(fattn_sim_site s, unsigned addr, unsigned parity);
void sim_api_fence_proxy_async(fattn_sim_site s);
void sim_api_fence_mbarrier_init(fattn_sim_site s);
void sim_api_tma_load(fattn_sim_site s, unsigned dst, const void *map, const int *coord, int rank, unsigned mbar);
void sim_api_tma_store(fattn_sim_site s, const void *map, const int *coord, int rank, unsigned src);
void sim_api_bulk_commit(fattn_sim_site s);
void sim_api_bulk_wait_read(fattn_sim_site s, int n);
void sim_api_bar_named(fattn_sim_site s, unsigned id, unsigned count, int wait);
void sim_api_setmaxnreg(fattn_sim_site s, unsigned count, int inc);
void sim_api_tma_load_ex(fattn_sim_site s, unsigned dst, const void *map, const int *coord, int rank, unsigned mbar,
                         int multicast, unsigned mask, unsigned long long policy);
void sim_api_mbar_arrive_cluster(fattn_sim_site s, unsigned addr);
/* A thread of an sm_90 launch returns: its block's exit, once all have. */
void sim_hopper_exit(sim_thread *t);

#endif
