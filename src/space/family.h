/*
 * family.h - a kernel family: one kernel source with its own parameters,
 * plugged into the pipeline as one table entry (src/family/).
 *
 * A family is data and function pointers: its name, kernel source, and
 * parameter table here; the stages that differ between families (gates,
 * NVRTC options, launch, reference check, simulator, export) read theirs
 * from the entry as they are routed through it. Every configuration
 * carries its family (fattn_config.fam).
 *
 * Config keys of the first family, mma (the Ampere-style mma.sync kernel,
 * kernels/fattn_fwd.cu), are its parameters' tags alone, as before families
 * existed; every other family's keys start with its name:
 *   bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1     (mma)
 *   tmacopy-br64                           (family tmacopy, BOX_ROWS=64)
 * A space file names its family ("family": "tmacopy"); one without
 * "family" is the mma family.
 */
#ifndef FATTN_SPACE_FAMILY_H
#define FATTN_SPACE_FAMILY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "target/shape.h"

#define FATTN_MAX_PARAMS 16

/* The most families one command (one study) takes. */
#define FATTN_MAX_FAMILIES 8

struct fattn_config;
struct fattn_gate_input;
struct fattn_verdict;

typedef struct fattn_param_info {
    const char *name; /* macro name, e.g. "BLOCK_M" */
    const char *tag;  /* key tag, e.g. "bm" */
    int def;          /* value when a space does not list it */
    int min, max;     /* accepted values */
    int test_only;    /* not a tunable: a layout override for tests */
    int optional;     /* in keys and NVRTC options only when not at its default */
    const char *help;
} fattn_param_info;

/* The kernel's parameters, in order: what the host passes to each launch.
 * The tensors are fp16 (batch, heads, seqlen, head_dim), contiguous. */
enum fattn_arg_kind {
    FATTN_ARG_Q, /* const half *: the tensor's device address */
    FATTN_ARG_K,
    FATTN_ARG_V,
    FATTN_ARG_O,         /* half *: the output */
    FATTN_ARG_BATCH,     /* int */
    FATTN_ARG_HEADS,     /* int */
    FATTN_ARG_SEQLEN,    /* int */
    FATTN_ARG_SCALE,     /* float: 1 / sqrt(head_dim) */
    FATTN_ARG_TMAP,      /* const __grid_constant__ CUtensorMap (128 bytes) of tensor `tensor` */
    FATTN_ARG_WORKSPACE, /* void *: the launch's workspace, zeroed before every launch */
    FATTN_ARG_KINDS,
};

#define FATTN_MAX_ARGS 16

typedef struct fattn_arg {
    int kind; /* enum fattn_arg_kind */
    /* FATTN_ARG_TMAP: the tensor (FATTN_ARG_Q .. FATTN_ARG_O) mapped 3-D as
     * gpu/tmap.h says, rebuilt by the host for every input-buffer set, with
     * boxes of box_rows rows by box_cols elements and a swizzle of 0, 32, 64
     * or 128 bytes. */
    int tensor;
    unsigned box_rows, box_cols, swizzle;
} fattn_arg;

/* How one configuration launches at one shape: what the evaluator, the
 * simulator, the post-compile gates and export read. One kernel per forward
 * in this version. */
typedef struct fattn_launch {
    unsigned grid[3];
    unsigned threads;      /* per block, as the kernel's __launch_bounds__ */
    unsigned cluster;      /* blocks per cluster along x; 1: no cluster */
    unsigned smem;         /* dynamic shared memory the model expects, bytes */
    int one_block_per_sm;  /* the kernel is built for one resident block per SM */
    int async_copies;      /* it prefetches asynchronously: the seeds' low_occupancy waiver */
    const char *async_why; /* what the waiver says: "CP_ASYNC=1 prefetches" */
    fattn_arg args[FATTN_MAX_ARGS];
    int nargs;
    unsigned long long workspace; /* bytes of FATTN_ARG_WORKSPACE (0: none) */
    /* Query rows each cluster along x covers (x-th cluster: rows x * rows_per_block
     * onward; the simulator's row-block sampling); with causal_last_first, a
     * causal launch's cluster x covers row block (blocks - 1 - x) instead. */
    unsigned rows_per_block;
    int causal_last_first;
    /* The grid is min(SMs, tiles) blocks, each looping over its tiles
     * (grid[0] from the launch's sm_count): an export launches it on the
     * device's SM count, not the numbers here. */
    int sm_bound;
} fattn_launch;

/* "q", "k", "v", "o", "batch", "heads", "seqlen", "scale", "tmap",
 * "workspace" (the wire and export names of the kinds), or NULL. */
const char *fattn_arg_kind_name(int kind);

/* The kind named `name`, or -1. */
int fattn_arg_kind_find(const char *name);

/* The attention kernels' parameters (q, k, v, o, batch, heads, seqlen,
 * scale): fills out->args. */
void fattn_launch_attention_args(fattn_launch *out);

/* A family's own fix text for a gate reason (gates/gates.h's FATTN_R_*),
 * in its own parameters. */
typedef struct fattn_family_fix {
    int reason;
    const char *fix;
} fattn_family_fix;

typedef struct fattn_family {
    const char *name;    /* "mma"; every other family's keys start with it */
    const char *summary; /* one line */
    const fattn_param_info *params;
    int nparams;             /* at most FATTN_MAX_PARAMS */
    const char *kernel_file; /* in the kernel directory */
    /* Its default space, a file of the search directory (search/), for a
     * command given no --space; NULL: the family is not attention (a test
     * family), taken only from a space file that names it. */
    const char *default_space;
    /* Its configurations need shared memory past the default per-block
     * limit: without --smem-limit, the gates take the arch's opt-in maximum
     * for it. */
    int smem_optin;
    const char *kernel_name; /* its __global__ entry (extern "C") */
    /* The static gates (gates/gates.h's fattn_gates_static() contract). */
    int (*gates_static)(const struct fattn_gate_input *in, struct fattn_verdict *first, struct fattn_verdict *all);
    /* The static gates it has: bit r for reason r (gates/gates.h), what the
     * gates table and --explain list for it. */
    unsigned static_gates;
    /* The launch of configuration c at shape s on a GPU of sm_count SMs. */
    void (*launch)(const struct fattn_config *c, const fattn_shape *s, int sm_count, fattn_launch *out);
    /* NVRTC compiles for the architecture-specific target (sm_90a rather
     * than sm_90): wgmma, setmaxnreg. The static gates refuse what lacks it. */
    int arch_specific;
    /* The output row `row` (of batch * heads * seqlen) of the kernel on
     * inputs q, k, v of shape s, head_dim values into out. NULL: attention,
     * the fp64 reference (on the GPU, the engine's fattn_ref kernel). */
    void (*reference_row)(const fattn_shape *s, const uint16_t *q, const uint16_t *k, const uint16_t *v, size_t row,
                          double *out);
    /* Export: the grid's rule over the shape and the parameters, one
     * expression per dimension (JSON, the header), and the header comment's
     * launch paragraph (" * Launch: ...", ending the comment). A family
     * with tensor maps or a workspace gets a host launcher written from its
     * parameter list (export/export.c). */
    const char *grid_rule[3];
    /* The same for a launch that is sm_bound (NULL: the family has none). */
    const char *grid_rule_sm_bound[3];
    const char *launch_doc;
    /* Fix texts of its own, ended by {0, NULL}; the gates' generic text
     * (the mma family's parameters) for any reason not listed. NULL: none. */
    const fattn_family_fix *fixes;
    /* What confirm measures against where cuDNN cannot serve (a causal
     * shape, or libcudnn absent): the configurations of this family whose
     * design it follows, in order of preference at head dimension head_dim
     * with the mask or not (NULL-terminated; confirm takes the first the
     * static gates pass, else the last), named by reference_name. NULL: the
     * family names none, and such a confirm needs --baseline config:KEY. */
    const char *const *(*reference_keys)(int head_dim, int causal);
    const char *reference_name; /* "FlashAttention-2-like" */
} fattn_family;

/* The families, first the default (mma); NULL-terminated (family/table.c). */
extern const fattn_family *const fattn_families[];

/* The mma family (family/mma.c). */
extern const fattn_family fattn_family_mma;

/* The family named `name`, or NULL. */
const fattn_family *fattn_family_find(const char *name);

/* "mma, tmacopy": the known families' names, for messages. */
const char *fattn_family_names(void);

/* "a" when family `f` builds for the architecture-specific target of the
 * arch named `arch` (sm_90 -> sm_90a: wgmma, setmaxnreg) and the name does
 * not say it already; "" otherwise (f NULL: the reference kernel). */
static inline const char *fattn_family_arch_suffix(const fattn_family *f, const char *arch)
{
    const size_t len = arch ? strlen(arch) : 0;
    return f && f->arch_specific && len && arch[len - 1] != 'a' ? "a" : "";
}

/* 1 when keys of family `f` start with its name (every family but mma). */
static inline int fattn_family_named_keys(const fattn_family *f)
{
    return f != fattn_families[0];
}

#endif
