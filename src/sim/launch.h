/*
 * launch.h - one launch of a host-compiled kernel in the simulator.
 *
 * Every CUDA thread of a thread-block cluster is a fiber (sim/fiber.h); the
 * cluster's fibers run cooperatively until each has returned, clusters one
 * after another over the grid. The kernel reaches the simulator only through
 * the calls of kernels/sim/fattn_sim_api.h, and each is checked before it is
 * executed:
 *   - faults the hardware would raise end the launch: misaligned accesses
 *     (ldmatrix rows to 16 bytes, cp.async to its size, vector loads and
 *     stores to theirs, wgmma descriptors off their swizzle repeat, TMA
 *     boxes off their alignment), shared memory outside the launch's
 *     dynamic shared memory, global memory outside the exact Q, K, V and O
 *     buffers (a TMA box wholly outside its tensor), writes to Q, K or V,
 *     operands an instruction does not take (an mbarrier nothing
 *     initialized, a tensor map not the launch's, a named barrier's id or
 *     count, setmaxnreg against the warpgroup's registers), warp and
 *     warpgroup collectives not reached together (a wgmma or setmaxnreg by
 *     other than the four warps of a warpgroup, or with different operands),
 *     and deadlock (threads waiting on a barrier others never reach, an
 *     mbarrier phase that never completes, a named barrier whose count
 *     never arrives, a setmaxnreg.inc the block's registers never hold);
 *   - hazards, which the hardware would not report but which make the
 *     result depend on timing, are recorded and the launch goes on: shared-
 *     memory races between threads with no barrier between them (read after
 *     write, write after read, write after write; ldmatrix rows and DSMEM
 *     loads count), reading a cp.async destination before its wait_group,
 *     reading shared memory nothing wrote, reading a TMA load's
 *     destination before observing the mbarrier phase that lands it, the
 *     async proxy (wgmma operands, TMA store sources) reading generic writes
 *     no fence.proxy.async of their writer ordered, a wgmma issued with no
 *     wgmma.fence since the thread's last wait_group, and accumulators
 *     written (or stored) between their wgmma and the wait_group that
 *     retires it (wgmma_early_access: on the GPU ptxas serializes).
 * Each finding names the block, the thread, the address, the instruction and
 * the kernel source line (and for a race, the other thread and its line).
 *
 * Memory model: a cp.async lands when a later cp.async.wait_group of its
 * thread retires its group (src-size 0 zero-fills), as if written by that
 * thread at that moment. Order is happens-before, kept as a vector clock per
 * thread: program order within a thread, and a barrier (__syncthreads over
 * the block, barrier.cluster over the cluster, a named barrier over the
 * threads that take part) orders everything its threads did before it
 * before everything they do after; an mbarrier arrive is a release, a
 * try_wait that observes the phase complete an acquire of the phase's
 * arrivals. Asynchronous agents have clock columns of their own (sim/
 * hopper.c): a TMA load's bytes land, in address order, once the phase's
 * arrivals are in and as far as its transaction count goes, ordered for
 * whoever acquires that phase; a wgmma reads its operands until a
 * wait_group retires it, and its accumulators hold a NaN until then; a TMA
 * store reads its source until its thread's wait_group.read. Two accesses
 * to a byte that are not so ordered, one a write, race. Uninitialized
 * shared memory holds 0xff bytes (fp16 NaN).
 *
 * The launch also measures shared-memory wavefronts per warp instruction and
 * source line: the lanes' accesses of one instruction (between two points
 * where the warp synchronizes) are split into the hardware's phases and each
 * phase costs the most distinct 4-byte words any bank serves.
 *
 * Single-threaded: one launch at a time per process.
 */
#ifndef FATTN_SIM_LAUNCH_H
#define FATTN_SIM_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "gpu/tmap.h"
#include "space/family.h"

/* Findings, in the order of the verdict names (fattn_sim_kind_name()). */
enum fattn_sim_kind {
    FATTN_SIMK_MISALIGNED,
    FATTN_SIMK_SHARED_OOB,
    FATTN_SIMK_GLOBAL_OOB,
    FATTN_SIMK_INPUT_WRITE,
    FATTN_SIMK_INVALID_OPERAND,
    FATTN_SIMK_DIVERGENT,
    FATTN_SIMK_DEADLOCK,
    FATTN_SIMK_RACE_RAW,
    FATTN_SIMK_RACE_WAR,
    FATTN_SIMK_RACE_WAW,
    FATTN_SIMK_ASYNC_UNWAITED,
    FATTN_SIMK_UNINIT_READ,
    FATTN_SIMK_TMA_UNWAITED,
    FATTN_SIMK_PROXY_UNFENCED,
    FATTN_SIMK_WGMMA_UNFENCED,
    FATTN_SIMK_WGMMA_EARLY,
    FATTN_SIMK_WGMMA_UNORDERED,
    FATTN_SIMK_OUTPUT_REWRITTEN,
    FATTN_SIMK_CLUSTER_EXITED, /* an arrival or multicast into a block of the cluster not ordered before its exit */
    FATTN_SIMK_KINDS,
};

/* "misaligned", "shared_out_of_bounds", ..., "race_raw", ... */
const char *fattn_sim_kind_name(int kind);

/* 1 for the kinds that end a launch (faults), 0 for hazards. */
int fattn_sim_kind_fatal(int kind);

typedef struct fattn_sim_finding {
    int kind;
    unsigned block[3]; /* blockIdx */
    int thread;        /* threadIdx.x */
    int other_block_x; /* a race's other party (blockIdx.x; same y, z), or -1 */
    int other_thread;  /* its threadIdx.x, or -1 */
    char space[8];     /* "shared", "global" or "" */
    uint64_t addr;     /* shared: byte offset in the dynamic shared memory; global: in the buffer */
    unsigned size;     /* bytes of the access */
    char insn[48];     /* "ldmatrix.x4", "cp.async.cg 16", "st.shared.v4.b32", ... */
    char file[160];    /* the kernel source file of the call */
    int line;
    int other_line;   /* a race's other access, or 0 */
    char detail[320]; /* the whole finding, one line */
    uint64_t count;   /* occurrences with the same kind and lines */
} fattn_sim_finding;

#define FATTN_SIM_MAX_FINDINGS 32
#define FATTN_SIM_MAX_SITES    96

/* Shared-memory traffic of one instruction at one source line. */
typedef struct fattn_sim_site_stats {
    int line;
    char insn[32];
    unsigned width;        /* bytes per lane (16 per row for ldmatrix) */
    uint64_t instructions; /* warp instructions */
    uint64_t phases;       /* phases with at least one lane (the least wavefronts possible) */
    uint64_t wavefronts;   /* measured */
    unsigned worst_ways;   /* the most wavefronts one phase needed */
} fattn_sim_site_stats;

typedef struct fattn_sim_report {
    int nfindings;
    fattn_sim_finding findings[FATTN_SIM_MAX_FINDINGS];
    uint64_t findings_dropped; /* distinct findings past the table */
    int stopped;               /* a fault ended the launch */
    int nsites;
    fattn_sim_site_stats sites[FATTN_SIM_MAX_SITES];
    uint64_t blocks, collectives, switches;
} fattn_sim_report;

/* The kernel's entry: fattn_fwd(q, k, v, o, batch, heads, seqlen, scale). */
typedef void (*fattn_sim_entry_fn)(const void *q, const void *k, const void *v, void *o, int batch, int heads,
                                   int seqlen, float scale);

/* A kernel's entry taking its parameters as cuLaunchKernel does: args[i]
 * points at parameter i's value (the simulator's host build of the kernel
 * defines it, fattn_sim_entry_args). */
typedef void (*fattn_sim_args_fn)(void **args);

typedef struct fattn_sim_launch {
    fattn_sim_entry_fn entry;
    /* Instead of entry: the kernel's parameters as the family's launch lists
     * them (space/family.h), the simulator's values for each: its copies of
     * Q, K, V, O and the workspace, the shape's ints and scale, and the
     * tensor maps, the i-th FATTN_ARG_TMAP being tmaps[i]. */
    fattn_sim_args_fn args_entry;
    const fattn_arg *args;
    int nargs;
    size_t workspace; /* bytes of FATTN_ARG_WORKSPACE, zero-filled */
    /* The kernel object's fattn_sim_api_p and fattn_sim_self_p. */
    const void **api_slot;
    void **self_slot;
    unsigned grid[3];
    unsigned threads;    /* per block, a multiple of 32 */
    unsigned smem_bytes; /* dynamic shared memory per block */
    unsigned cluster;    /* blocks per cluster along x (1: none) */
    int batch, heads, seqlen, head_dim;
    float scale;
    /* Inputs and output, batch * heads * seqlen * head_dim fp16 each. */
    const uint16_t *q, *k, *v;
    uint16_t *o;
    /* The clusters along x to run (each in every y, z), in this order; NULL: all. */
    const unsigned *clusters_x;
    size_t nclusters_x;
    /* Registers per thread the launch allocates (setmaxnreg's pool is
     * regs * threads); 0: what __launch_bounds__(threads, 1) gives,
     * 65536 / threads rounded down to a multiple of 8, at most 256. */
    unsigned regs;
    /* The kernel's warpgroups issue their wgmma in turn (its
     * fattn_wgmma_turns): a warpgroup's issue after another's must be
     * ordered after it (happens-before), else wgmma_unordered. */
    int wgmma_turns;
    /* The kernel uses kernels/fattn_prim_sm90.h (fattn_sim_kernel.sm90):
     * without it the Hopper calls cannot come, and the vector clocks keep
     * no columns for their agents. */
    int sm90;
    /* TMA: the tensor maps, each based in q, k, v or o (the simulator moves
     * them onto its own copies), copied into the kernel's fattn_tensormap
     * slots at tmap_slot (the host build's fattn_tmaps). */
    const fattn_tmap *tmaps;
    unsigned ntmaps;
    void *tmap_slot;
    unsigned tmap_slots;
} fattn_sim_launch;

/* Runs the launch; *rep gets the findings and the measured traffic, o the
 * output (elements the kernel did not write keep their value). Returns 0
 * when it ran (findings or not), or FATTN_EFAIL (reported) when it could not
 * be set up (memory). */
int fattn_sim_run(const fattn_sim_launch *l, fattn_sim_report *rep);

/* The most severe finding (faults first, then races, then the rest), or NULL. */
const fattn_sim_finding *fattn_sim_report_worst(const fattn_sim_report *rep);

#endif
