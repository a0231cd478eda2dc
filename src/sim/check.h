/*
 * check.h - one configuration of the kernel through the simulator at one
 * shape: build it for the host, run it on the seeded inputs, and hold its
 * output to the fp64 reference with the project's numerics gate.
 *
 * The verdict is the most severe thing found: a fault (the launch stopped),
 * else a hazard (a race, an unwaited cp.async read, an uninitialized read),
 * else wrong numerics, else ok; "host_compile" when the kernel could not be
 * built for the host at all.
 */
#ifndef FATTN_SIM_CHECK_H
#define FATTN_SIM_CHECK_H

#include <stdint.h>

#include "compile/kernel_src.h"
#include "run/numerics.h"
#include "sim/launch.h"
#include "space/params.h"
#include "target/shape.h"

#define FATTN_SIMV_OK           "ok"
#define FATTN_SIMV_NUMERICS     "numerics"
#define FATTN_SIMV_HOST_COMPILE "host_compile"

/* The SMs of the simulator's GPU, as a launch that depends on them sees it:
 * few, so that a persistent grid (min(SMs, tiles) blocks) has fewer blocks
 * than the covering sample's tiles and every block loops. */
#define FATTN_SIM_SMS 3

typedef struct fattn_sim_check {
    char verdict[32]; /* "ok", "numerics", "host_compile" or a finding kind (fattn_sim_kind_name) */
    char detail[512]; /* one line: the finding, the numerics, or the compiler's error */
    char fix[200];    /* what to change, where one is known ("" otherwise) */
    fattn_sim_report rep;
    fattn_numerics num;              /* the worse input set's */
    double rel_l2[FATTN_INPUT_SETS]; /* each set's relative L2 error; -1 where it was not compared */
    int ran;                         /* the launch ran (rep and num are meaningful) */
    int cache_hit;
    int cache_rebuilt; /* the cached host build was damaged or foreign: built again */
    double compile_ms, run_ms;
    unsigned smem_bytes, threads, cluster;
} fattn_sim_check;

/* What a check runs on. */
typedef struct fattn_sim_inputs {
    uint64_t seed;
    unsigned sets; /* input sets, bits 1 << enum fattn_input_set; 0: all (uniform, then peaky) */
    /* The row blocks to simulate (blockIdx.x / cluster: a cluster holds one),
     * each in every head and batch; the numerics then cover those rows only.
     * NULL: all. For long sequences, where a whole launch takes minutes. */
    const unsigned *row_blocks;
    size_t nrow_blocks;
    const fattn_tolerance *tol; /* NULL: fattn_tolerance_default() */
} fattn_sim_inputs;

/* Checks cfg at `shape` (its causal flag included) on `in`'s inputs: a
 * launch per input set, up to the first that does not pass; out->num is the
 * worse set's numerics. Returns 0 with *out filled (whatever the verdict),
 * or FATTN_EFAIL (reported) when the simulator itself could not run: no
 * compiler, no memory, an unwritable cache, a row block past the grid. */
int fattn_sim_check_config(const fattn_kernel_src *src, const fattn_config *cfg, const fattn_shape *shape,
                           const fattn_sim_inputs *in, const char *cache_dir, fattn_sim_check *out);

/* 1 when the verdict lets the configuration run on a GPU. */
int fattn_sim_check_passed(const fattn_sim_check *c);

#endif
