/*
 * cudnn.h - cuDNN's fused attention (SDPA forward) as a baseline.
 *
 * cuDNN is loaded at run time (dlopen of libcudnn.so.9, or $FATTN_LIBCUDNN),
 * and must be 9.13 or newer, whose backend API has a dedicated
 * SDPA_FWD operation: six tensors (Q, K, V, O fp16 [B, H, S, D], the fp32
 * softmax stats [B, H, S, 1], the fp32 scale by value), an operation graph,
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

#define FATTN_CUDNN_MIN_VERSION 91300

typedef struct fattn_cudnn fattn_cudnn;

/* Loads libcudnn and checks its version. Returns 0, or -1 with why (not
 * found, or older than 9.13). Needs no GPU. */
int fattn_cudnn_load(fattn_cudnn **out, char *why, size_t why_size);

/* cudnnGetVersion(), e.g. 91400. */
long fattn_cudnn_version(const fattn_cudnn *c);

/* Creates the handle on the current context and builds the SDPA forward
 * plan for shape s (non-causal) on `stream`, allocating the stats buffer and
 * the workspace with `cu`. Returns 0, or -1 with why. */
int fattn_cudnn_plan(fattn_cudnn *c, const fattn_cu *cu, const fattn_shape *s, CUstream stream, char *why,
                     size_t why_size);

/* Enqueues O = SDPA(Q, K, V) on the plan's stream. Returns 0, or -1 with why. */
int fattn_cudnn_run(fattn_cudnn *c, CUdeviceptr q, CUdeviceptr k, CUdeviceptr v, CUdeviceptr o, char *why,
                    size_t why_size);

/* "cuDNN 9.14.0, engine 7 (heuristics mode A)" once planned. */
const char *fattn_cudnn_describe(const fattn_cudnn *c);

void fattn_cudnn_free(fattn_cudnn **c, const fattn_cu *cu);

#endif
