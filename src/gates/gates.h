/*
 * gates.h - hard gates: the reasons a configuration is rejected before (or
 * instead of) spending GPU time on it.
 *
 * Static gates run on the configuration and shape alone, in this order:
 *   device_memory, tiling, misaligned_cp_async, misaligned_ldmatrix,
 *   smem_overflow, bank_conflicts, coalescing, register_budget
 * each family running those it has (space/family.h: static_gates; mma the
 * first seven, a Hopper family its register model)
 * The compile stage adds the post-compile gates (compile/postgates.h:
 * compile_error, smem_mismatch, spills, low_occupancy), the GPU engine the
 * run-time verdicts (launch_refused, runtime_fault, timeout, numerics, each
 * named as run/evaluator.h names its verdict) and search the simulator's
 * stored verdicts (simulator); their reasons live in the one table here. Every reason has a stable code, a one-line explanation and a
 * suggested fix; every verdict carries the numbers it was decided on.
 */
#ifndef FATTN_GATES_GATES_H
#define FATTN_GATES_GATES_H

#include <stdint.h>

#include "gates/access.h"
#include "space/params.h"
#include "space/space.h"
#include "target/arch.h"
#include "target/shape.h"

enum fattn_reason {
    FATTN_R_NONE = 0,
    /* static, in gate order */
    FATTN_R_DEVICE_MEMORY,
    FATTN_R_TILING,
    FATTN_R_MISALIGNED_CP_ASYNC,
    FATTN_R_MISALIGNED_LDMATRIX,
    FATTN_R_SMEM_OVERFLOW,
    FATTN_R_BANK_CONFLICTS,
    FATTN_R_COALESCING,
    FATTN_R_REGISTER_BUDGET,
    /* after compiling */
    FATTN_R_COMPILE_ERROR,
    FATTN_R_SMEM_MISMATCH,
    FATTN_R_SPILLS,
    FATTN_R_LOW_OCCUPANCY,
    FATTN_R_UNLAUNCHABLE,
    FATTN_R_SETMAXNREG_IGNORED,
    FATTN_R_WGMMA_SERIALIZED,
    FATTN_R_SETMAXNREG_POOL,
    /* on the GPU */
    FATTN_R_LAUNCH_REFUSED,
    FATTN_R_RUNTIME_FAULT,
    FATTN_R_TIMEOUT,
    FATTN_R_NUMERICS,
    /* found earlier by the simulator (fattn-tune check), same kernel source */
    FATTN_R_SIMULATOR,
    FATTN_R_COUNT,
    FATTN_R_FIRST_STATIC = FATTN_R_DEVICE_MEMORY,
    FATTN_R_LAST_STATIC = FATTN_R_REGISTER_BUDGET,
    FATTN_R_LAST_COMPILE = FATTN_R_SETMAXNREG_POOL,
};

enum fattn_gate_stage { FATTN_STAGE_STATIC, FATTN_STAGE_COMPILE, FATTN_STAGE_RUN };

typedef struct fattn_reason_info {
    const char *code; /* "smem_overflow" */
    int stage;        /* enum fattn_gate_stage */
    const char *what; /* one-line explanation */
    const char *fix;  /* suggested fix */
} fattn_reason_info;

/* Info for reason `r` (1 .. FATTN_R_COUNT-1). */
const fattn_reason_info *fattn_reason(int r);

/* The fix for reason `r` in family `fam`'s parameters: its own text, else
 * the generic one (fam NULL: the generic one). */
const char *fattn_reason_fix(int r, const fattn_family *fam);

/* The reason whose code is `code`, or FATTN_R_NONE. */
int fattn_reason_find(const char *code);

/* Thresholds of the gates. */
typedef struct fattn_gate_limits {
    unsigned smem_limit;           /* bytes of shared memory per block; 48 KiB unless raised */
    unsigned max_bank_ways;        /* worst tolerated bank-conflict ways (1 = none) */
    double min_coalescing;         /* bytes used / bytes of sectors touched, per warp load */
    uint64_t mem_budget;           /* bytes of device memory for the shape's buffers */
    int input_sets;                /* copies of Q, K, V the engine rotates through */
    unsigned max_spill_bytes;      /* spill stores + loads tolerated */
    double min_occupancy;          /* resident warps / max warps per SM */
    int occupancy_cp_async_exempt; /* the seeds' rule: cp.async configs may run below it */
    unsigned skip;                 /* test only: gates (1 << reason) whose rejection is ignored */
} fattn_gate_limits;

#define FATTN_DEFAULT_SMEM_LIMIT 49152u
#define FATTN_DEFAULT_MEM_BUDGET (20000ull << 20)

void fattn_gate_limits_default(fattn_gate_limits *lim);

/* Writes the limits as a JSON object (for the study record). */
void fattn_gate_limits_json(const fattn_gate_limits *lim, char *out, int n);

/* Reads limits written by fattn_gate_limits_json() into *lim: the defaults,
 * then every field the object holds (input_sets is the measuring command's
 * own and is not read). Returns the number of fields read, or -1 when
 * `json` is NULL or not a JSON object (*lim then holds the defaults). Names
 * of the known fields missing from the object go to `missing` (comma-
 * separated; "" when none). */
int fattn_gate_limits_parse(const char *json, fattn_gate_limits *lim, char *missing, size_t missing_size);

#define FATTN_DETAIL_MAX 400

typedef struct fattn_verdict {
    int reason; /* the gate */
    int pass;   /* 1 passed, 0 rejected, -1 not evaluated */
    char detail[FATTN_DETAIL_MAX];
} fattn_verdict;

typedef struct fattn_gate_input {
    const fattn_config *cfg;
    const fattn_shape *shape;
    const fattn_arch *arch;
    const fattn_gate_limits *lim;
} fattn_gate_input;

/* Runs the static gates of the configuration's family in order. Returns
 * FATTN_R_NONE when all pass, else the first failing reason, whose verdict
 * is in *first (may be NULL). When `all` is non-NULL, every gate is
 * evaluated and all[r] holds its verdict (pass = -1 for gates that cannot
 * be evaluated after a tiling failure, and for gates the family has not). */
int fattn_gates_static(const fattn_gate_input *in, fattn_verdict *first, fattn_verdict all[FATTN_R_COUNT]);

/* The mma family's static gates (the layout, access and bank models), as
 * fattn_gates_static() runs them for it. */
int fattn_mma_gates_static(const fattn_gate_input *in, fattn_verdict *first, fattn_verdict all[FATTN_R_COUNT]);

/* The device_memory gate, which every family runs first. */
int fattn_gate_device_memory(const fattn_gate_input *in, fattn_verdict *v);

/* The tiling gate alone: 1 when the configuration is a kernel at all for
 * the shape and arch (mma: whole 16-row strips per warp, BLOCK_K dividing
 * D, a cluster no larger than the key tiles, ...; another family: its
 * gates' tiling verdict), 0 with why in *v. */
int fattn_gate_tiling(const fattn_gate_input *in, fattn_verdict *v);

/* The bank-conflict gate's model: the worst ways of any phase of each
 * access kind (gates/access.h) of the layout. */
void fattn_bank_model_ways(const fattn_layout *l, unsigned worst[FATTN_ACC_KINDS]);

/* The static gates over a whole space. */
typedef struct fattn_space_verdicts {
    size_t n;          /* configurations in the space */
    fattn_verdict *v;  /* v[i].reason: -1 filtered out, FATTN_R_NONE survives, else the first failing gate */
    size_t considered; /* matching the filter */
    size_t *survivors; /* indices of the survivors, in space order */
    size_t nsurvivors;
    int counts[FATTN_R_COUNT]; /* rejections by reason; counts[FATTN_R_NONE] = survivors */
} fattn_space_verdicts;

/* Runs the static gates on every configuration of `space` that matches
 * `filter` (NULL: all). `shape`, `arch` and `lim` as in fattn_gate_input. */
void fattn_gates_space(const fattn_space *space, const fattn_filter *filter, const fattn_shape *shape,
                       const fattn_arch *arch, const fattn_gate_limits *lim, fattn_space_verdicts *out);
void fattn_space_verdicts_release(fattn_space_verdicts *sv);

/* Rejects survivor `i` (a space index) after the static gates, for `reason`
 * (the simulator's earlier verdict): it leaves survivors[] and is counted
 * under the reason. Returns 1, or 0 when i was no survivor. */
int fattn_space_verdicts_reject(fattn_space_verdicts *sv, size_t i, int reason, const char *detail);

/* A verdict of gate `r` after the test-only skip mask: a rejection by a
 * skipped gate is recorded as a pass that says so. Returns the pass flag. */
int fattn_gate_apply_skip(const fattn_gate_limits *lim, int r, fattn_verdict *v);

/* A family's static gates, evaluated into v[0 .. n-1] in order (each
 * v[i].reason its gate; the tiling gate is never skipped), as the
 * fattn_gates_static() contract takes them: the skip mask applied, every
 * verdict into all[] (may be NULL), the first rejection into *first (may be
 * NULL). Returns FATTN_R_NONE or the first rejecting reason. */
int fattn_gates_collect(const fattn_gate_input *in, fattn_verdict *v, int n, fattn_verdict *first, fattn_verdict *all);

/* Sets a verdict: pass (1), reject (0) or not evaluated (-1), and its detail;
 * returns `pass`. */
int fattn_verdict_set(fattn_verdict *v, int pass, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
