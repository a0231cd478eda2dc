/*
 * mock_cudnn.c - cuDNN's backend API without a GPU, for tests
 * ($FATTN_LIBCUDNN), beside tests/mock/mock_cuda.c.
 *
 * It takes the SDPA forward graph src/baseline/cudnn.c builds, plans it in
 * one engine configuration, and "executes" it by writing 0.25 (fp16) into
 * the output tensor (the mock candidates' value, so the baseline passes the
 * numerics gate), and taking 8 us of the mock driver's clock on the
 * handle's stream (captured into a graph like a kernel: the mock driver is
 * $FATTN_LIBCUDA). cudnnGetVersion() returns MOCK_CUDNN_VERSION (a build
 * option, so that tests can load an old and a new library).
 *   $FATTN_MOCK_CUDNN_SETUP_MS   heuristics take that long (a slow first plan)
 *   $FATTN_MOCK_CUDNN_NEED_STATS the SDPA operation refuses to finalize
 *                                without a stats output (as an older library
 *                                might)
 *   $FATTN_MOCK_LOG              one line per handle, stats and execute call
 * Not for users: it computes nothing.
 */
#include <cudnn_graph.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mock_log.h"

#ifndef MOCK_CUDNN_VERSION
#define MOCK_CUDNN_VERSION 91400
#endif

typedef struct desc {
    cudnnBackendDescriptorType_t type;
    int64_t uid, dims[4];
    int has_stats, finalized;
    int64_t ids[8];
    void *ptrs[8];
    int64_t nptrs;
} desc;

struct cudnnContext {
    cudaStream_t stream;
};

static int64_t out_elems; /* of the tensor with unique id 4 (O) */

size_t cudnnGetVersion(void)
{
    return MOCK_CUDNN_VERSION;
}

const char *cudnnGetErrorString(cudnnStatus_t st)
{
    return st == CUDNN_STATUS_SUCCESS ? "CUDNN_STATUS_SUCCESS" : "CUDNN_STATUS_NOT_SUPPORTED (mock)";
}

cudnnStatus_t cudnnCreate(cudnnHandle_t *h)
{
    mock_log("cudnnCreate");
    *h = calloc(1, sizeof **h);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t h)
{
    mock_log("cudnnDestroy");
    free(h);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s)
{
    h->stream = s;
    return CUDNN_STATUS_SUCCESS;
}

/* The mock driver's clock: this "kernel" takes 8 us on the handle's stream. */
static cudnnStatus_t take_time(cudnnHandle_t h)
{
    const char *path = getenv("FATTN_LIBCUDA");
    void *lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    int (*external)(void *, double) = NULL;
    if (lib) {
        void *p = dlsym(lib, "mock_cuda_external");
        memcpy(&external, &p, sizeof p);
    }
    int r = external ? external(h->stream, 8.0) : 0;
    if (lib)
        dlclose(lib);
    return r ? CUDNN_STATUS_EXECUTION_FAILED : CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t t, cudnnBackendDescriptor_t *d)
{
    desc *x = calloc(1, sizeof *x);
    x->type = t;
    *d = x;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d)
{
    free(d);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t count, const void *elems)
{
    desc *x = d;
    (void)type;
    switch (name) {
    case CUDNN_ATTR_TENSOR_UNIQUE_ID: x->uid = *(const int64_t *)elems; break;
    case CUDNN_ATTR_TENSOR_DIMENSIONS:
        if (count != 4)
            return CUDNN_STATUS_BAD_PARAM;
        memcpy(x->dims, elems, sizeof x->dims);
        break;
    case CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC:
        x->has_stats = 1;
        mock_log("cudnn SDPA_FWD_STATSDESC");
        break;
    case CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS:
    case CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS:
        if (count > 8)
            return CUDNN_STATUS_BAD_PARAM;
        if (name == CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS)
            memcpy(x->ids, elems, (size_t)count * sizeof *x->ids);
        else
            memcpy(x->ptrs, elems, (size_t)count * sizeof *x->ptrs);
        x->nptrs = count;
        break;
    default: break;
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const d, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t requested, int64_t *count, void *elems)
{
    (void)d, (void)type, (void)elems;
    if (name == CUDNN_ATTR_ENGINEHEUR_RESULTS) {
        *count = requested > 0 ? 1 : 0;
        return CUDNN_STATUS_SUCCESS;
    }
    if (name == CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE) {
        *count = 1;
        *(int64_t *)elems = 4096;
        return CUDNN_STATUS_SUCCESS;
    }
    return CUDNN_STATUS_NOT_SUPPORTED;
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d)
{
    desc *x = d;
    if (x->type == CUDNN_BACKEND_TENSOR_DESCRIPTOR && x->uid == 4)
        out_elems = x->dims[0] * x->dims[1] * x->dims[2] * x->dims[3];
    if (x->type == CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR && !x->has_stats
        && getenv("FATTN_MOCK_CUDNN_NEED_STATS"))
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (x->type == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR && getenv("FATTN_MOCK_CUDNN_SETUP_MS"))
        usleep((useconds_t)atoi(getenv("FATTN_MOCK_CUDNN_SETUP_MS")) * 1000u);
    x->finalized = 1;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t h, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t pack)
{
    desc *p = pack;
    (void)plan;
    mock_log("cudnnBackendExecute");
    for (int64_t i = 0; i < p->nptrs; ++i)
        if (p->ids[i] == 4) {
            uint16_t *o = p->ptrs[i];
            for (int64_t j = 0; j < out_elems; ++j)
                o[j] = 0x3400;
            return take_time(h);
        }
    return CUDNN_STATUS_BAD_PARAM;
}
