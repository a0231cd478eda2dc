/*
 * postgates.h - the gates that read a compiled kernel: compile_error,
 * smem_mismatch (the layout model against the size the cubin exports),
 * spills (from the ptxas report), low_occupancy and unlaunchable (the
 * occupancy model on the compiled registers and shared memory), and the
 * Hopper notices of the ptxas report: setmaxnreg_ignored (C7507, C7508)
 * and wgmma_serialized (C7510-C7517); setmaxnreg_pool (the launch's
 * registers against what the warpgroups ask for with setmaxnreg).
 */
#ifndef FATTN_COMPILE_POSTGATES_H
#define FATTN_COMPILE_POSTGATES_H

#include <stddef.h>

#include "gates/gates.h"

/* What the compile step learned about one configuration. */
typedef struct fattn_compiled {
    int ok;          /* NVRTC succeeded */
    const char *log; /* NVRTC + ptxas log */
    unsigned regs;
    unsigned spill_stores, spill_loads;
    unsigned stack_frame;
    unsigned smem_static;  /* the kernel's own static shared memory */
    unsigned smem_dynamic; /* fattn_smem_bytes read from the cubin */
    unsigned threads;      /* fattn_threads read from the cubin */
    unsigned nreg_pool;    /* fattn_setmaxnreg_pool from the cubin: registers the block's warpgroups hold
                              after setmaxnreg (0: the kernel exports none, reallocates none) */
} fattn_compiled;

/* Occupancy figures of a compiled configuration (see occupancy.h). */
typedef struct fattn_compiled_occ {
    double occupancy;
    int blocks_per_sm;
    const char *limiter;
} fattn_compiled_occ;

/* The first ptxas notice in `log` with a code in [first, last] (7508 for
 * "(C7508)"): returns the code and copies the notice's text after the code
 * (to the end of its line) into text; 0 when there is none. */
int fattn_ptxas_notice(const char *log, int first, int last, char *text, size_t n);

/* Runs the post-compile gates in order. Returns FATTN_R_NONE or the first
 * failing reason (verdict in *first); fills *occ when the kernel compiled.
 * `all` as for fattn_gates_static(). */
int fattn_gates_compiled(const fattn_gate_input *in, const fattn_compiled *c, fattn_compiled_occ *occ,
                         fattn_verdict *first, fattn_verdict all[FATTN_R_COUNT]);

#endif
