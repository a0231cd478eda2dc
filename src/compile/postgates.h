/*
 * postgates.h - the gates that read a compiled kernel: compile_error,
 * smem_mismatch (the layout model against the size the cubin exports),
 * spills (from the ptxas report) and low_occupancy (the occupancy model on
 * the compiled registers and shared memory).
 */
#ifndef FATTN_COMPILE_POSTGATES_H
#define FATTN_COMPILE_POSTGATES_H

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
} fattn_compiled;

/* Occupancy figures of a compiled configuration (see occupancy.h). */
typedef struct fattn_compiled_occ {
    double occupancy;
    int blocks_per_sm;
    const char *limiter;
} fattn_compiled_occ;

/* Runs the post-compile gates in order. Returns FATTN_R_NONE or the first
 * failing reason (verdict in *first); fills *occ when the kernel compiled.
 * `all` as for fattn_gates_static(). */
int fattn_gates_compiled(const fattn_gate_input *in, const fattn_compiled *c, fattn_compiled_occ *occ,
                         fattn_verdict *first, fattn_verdict all[FATTN_R_COUNT]);

#endif
