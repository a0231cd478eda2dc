/*
 * evaluator.h - what gives a compiled configuration its verdict and time.
 *
 * Evaluators are plug-ins behind one interface (a table of function
 * pointers, dav1d's muxer shape):
 *   gpu     runs each candidate in the GPU worker process (worker.h):
 *           numerics against the reference, then timing; a fault, crash,
 *           hang or garbage from the worker becomes the trial's verdict and
 *           a new worker takes over (a launch the driver refuses leaves the
 *           context intact: the same worker goes on);
 *   replay  serves measured results from a landscape file (landscape.h), so
 *           the search loop, the store and crash recovery are tested
 *           without a GPU.
 * Adding one is a file and an entry in fattn_evaluators[].
 */
#ifndef FATTN_RUN_EVALUATOR_H
#define FATTN_RUN_EVALUATOR_H

#include <stddef.h>
#include <stdint.h>

#include "run/numerics.h"
#include "run/stats.h"
#include "space/params.h"
#include "target/shape.h"

enum fattn_eval_status {
    FATTN_EVAL_OK,       /* verified and timed */
    FATTN_EVAL_NUMERICS, /* ran; output out of tolerance or not finite */
    FATTN_EVAL_FAULT,    /* the kernel faulted or the worker died running it */
    FATTN_EVAL_TIMEOUT,  /* no answer within the watchdog limit */
    FATTN_EVAL_LAUNCH,   /* the driver refused to launch it as configured (the worker goes on) */
    FATTN_EVAL_ERROR,    /* could not be run (the engine refused, protocol error, not in the landscape); the last */
};

typedef struct fattn_eval_request {
    const fattn_config *cfg;
    const char *key;
    const void *cubin;
    size_t cubin_size;
    unsigned smem;        /* dynamic shared memory per block */
    unsigned threads;     /* per block */
    uint64_t seed;        /* of the numerics check's inputs */
    const char *baseline; /* "cudnn": run the baseline instead (cfg, cubin unused) */
} fattn_eval_request;

typedef struct fattn_eval_result {
    int status;       /* enum fattn_eval_status */
    char detail[512]; /* the CUDA error, the numerics, what the worker did */
    int has_numerics;
    fattn_numerics num;
    int has_numerics_after; /* interleaved: verified again after the timing */
    fattn_numerics num_after;
    size_t nsamples;
    double *samples; /* per-launch microseconds; owned */
    int has_timing;
    fattn_timing timing;
    double wall_ms;       /* spent on this evaluation */
    int has_phase_ms;     /* the worker's clock of its phases: */
    double validation_ms; /* checking the numerics */
    double benchmark_ms;  /* timing */
    char timing_kind[16]; /* "graph" (CUDA graph) or "stream" (launches back to back) */
    char baseline[1600];  /* what the baseline was: "cuDNN 9.14.0 (PATH, origin), engine ..." */
} fattn_eval_result;

void fattn_eval_result_release(fattn_eval_result *r);

/* How the GPU evaluator runs and times. */
typedef struct fattn_gpu_eval_config {
    const char *worker_exe; /* fattn_self_exe() */
    int device;
    fattn_shape shape;
    const void *ref_cubin; /* the reference module for this shape and arch */
    size_t ref_size;
    int timing_sets; /* input sets rotated through while timing */
    uint64_t timing_seed;
    int warmup, reps, samples;
    int flush_l2;
    fattn_tolerance tol;
    int kernel_timeout_ms; /* watchdog per step */
    int setup_timeout_ms;  /* limit of a one-time setup (worker start, a baseline's first plan); 0: 5 minutes */
} fattn_gpu_eval_config;

typedef struct fattn_evaluator fattn_evaluator;

typedef struct fattn_evaluator_ops {
    const char *name;
    int (*eval)(fattn_evaluator *e, const fattn_eval_request *req, fattn_eval_result *out);
    /* NULL where the evaluator cannot measure (replay). */
    int (*interleaved)(fattn_evaluator *e, const fattn_eval_request *reqs, size_t k, int n, fattn_eval_result *out);
    void (*close)(fattn_evaluator *e);
} fattn_evaluator_ops;

struct fattn_evaluator {
    const fattn_evaluator_ops *ops;
    char method[512]; /* how times are measured, for the study and the output */
    char device[256]; /* the GPU's name (or the landscape's) */
    char device_json[1024];
    char uuid[64];       /* the GPU's UUID, "GPU-..." as nvidia-smi writes it ("" when none: replay) */
    int ordinal;         /* the GPU's device number */
    int workers_started; /* gpu: workers started, the first included */
};

/* Starts a worker and initializes it; fails (FATTN_EFAIL, message printed)
 * where the worker cannot use a GPU. */
int fattn_evaluator_open_gpu(const fattn_gpu_eval_config *c, fattn_evaluator **out);

/* A replayed study's device: its landscape's GPU, marked so. */
#define FATTN_REPLAYED_MARK " (replayed)"

/* The GPU model a recorded device names, as the driver names it: the
 * device less the replay's mark; "" for none (NULL). For the dispatch
 * table's key (export) and a campaign row's study per model (SQL's
 * fattn_gpu_model(), store/reads.c). */
void fattn_device_gpu_model(const char *device, char *out, size_t n);

/* Loads a landscape for shape `s` (its header must name the same shape). */
int fattn_evaluator_open_replay(const char *path, const fattn_shape *s, const fattn_family *fam, fattn_evaluator **out);

int fattn_evaluate(fattn_evaluator *e, const fattn_eval_request *req, fattn_eval_result *out);

/* Measures k kernels (or baselines) interleaved, for confirm: each verified
 * on fresh inputs from reqs[0].seed, then n rounds of one sample of each in
 * turn (A B A B ...), then each verified again on inputs from seed + 1;
 * out[i] is reqs[i]'s verdict and samples. Returns FATTN_OK with the
 * verdicts (a fault or a dead worker is a verdict), or FATTN_EFAIL (message
 * printed) when the evaluator cannot measure or its worker cannot start. */
int fattn_evaluate_interleaved(fattn_evaluator *e, const fattn_eval_request *reqs, size_t k, int n,
                               fattn_eval_result *out);
void fattn_evaluator_close(fattn_evaluator **e);

/* "ok", "numerics", "runtime_fault", "timeout", "launch_refused", "error". */
const char *fattn_eval_status_name(int status);

#endif
