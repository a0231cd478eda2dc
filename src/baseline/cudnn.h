/*
 * cudnn.h - cuDNN's fused attention (SDPA forward) as a baseline.
 *
 * cuDNN is loaded at run time (dlopen), from the first of these places that
 * holds cuDNN 9.13.1 or newer, whose backend API has a dedicated SDPA_FWD
 * operation: $FATTN_LIBCUDNN alone when it is set; else libcudnn.so.9 on the
 * system's library path, the CUDA toolkit's lib64, and the nvidia-cudnn
 * package of python3 (PyTorch's cuDNN). The graph: tensors Q, K, V, O (fp16
 * [B, H, S, D]) and the fp32 scale by value, the SDPA operation as the
 * inference forward (no softmax stats output; with the stats [B, H, S, 1]
 * only where the library refuses it without), an operation graph,
 * heuristics (mode A), an execution plan, a variant pack per set of buffers.
 * The fused operation has no mask: causal shapes have no cuDNN baseline.
 * It runs in the GPU worker, on the worker's context and stream, on the same
 * inputs and under the same timing as the candidates.
 */
#ifndef FATTN_BASELINE_CUDNN_H
#define FATTN_BASELINE_CUDNN_H

#include <cuda.h>
#include <stddef.h>

#include "gpu/driver.h"
#include "target/shape.h"

#define FATTN_CUDNN_MIN_VERSION 91301

typedef struct fattn_cudnn fattn_cudnn;

/* A place to look for libcudnn.so.9. */
typedef struct fattn_cudnn_candidate {
    char path[1024]; /* a file, or a bare name for the system's search */
    char origin[64]; /* "system library path", "CUDA toolkit", ... */
} fattn_cudnn_candidate;

/* The places to look, in order (at most max); with_python adds those of
 * python3's nvidia-cudnn package (runs python3). */
size_t fattn_cudnn_candidates(fattn_cudnn_candidate *out, size_t max, int with_python);

/* Loads the first candidate that is cuDNN 9.13.1 or newer. Returns 0, or -1
 * with why, naming every place tried and what it held. Needs no GPU. */
int fattn_cudnn_load_from(const fattn_cudnn_candidate *cand, size_t n, fattn_cudnn **out, char *why, size_t why_size);

/* Loads cuDNN from the candidates above (python3's only when the others
 * fail). Returns 0, or -1 with why. Needs no GPU. */
int fattn_cudnn_load(fattn_cudnn **out, char *why, size_t why_size);

/* cudnnGetVersion(), e.g. 91400. */
long fattn_cudnn_version(const fattn_cudnn *c);

/* Creates the handle on the current context and builds the SDPA forward
 * plan for shape s (non-causal) on `stream`, allocating the workspace (and
 * the stats buffer, where the library wants one) with `cu`. Returns 0, or
 * -1 with why. */
int fattn_cudnn_plan(fattn_cudnn *c, const fattn_cu *cu, const fattn_shape *s, CUstream stream, char *why,
                     size_t why_size);

/* Enqueues O = SDPA(Q, K, V) on the plan's stream. Returns 0, or -1 with why. */
int fattn_cudnn_run(fattn_cudnn *c, CUdeviceptr q, CUdeviceptr k, CUdeviceptr v, CUdeviceptr o, char *why,
                    size_t why_size);

/* Which library, and once planned which plan: "cuDNN 9.14.0
 * (/usr/lib/x86_64-linux-gnu/libcudnn.so.9, system library path), engine
 * configuration 1 of 3 (heuristics mode A), inference forward (no stats
 * output)". */
const char *fattn_cudnn_describe(const fattn_cudnn *c);

/* Destroys the plan and the handle and frees the buffers: call it while
 * the context they were made on is still alive. */
void fattn_cudnn_free(fattn_cudnn **c, const fattn_cu *cu);

#endif
