/*
 * cudnn.c - the cuDNN SDPA forward baseline through the backend API.
 */
#include "baseline/cudnn.h"

#include <cudnn_graph.h>
#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

#define FATTN_CUDNN_FUNCTIONS(X)                                                                                       \
    X(cudnnGetVersion)                                                                                                 \
    X(cudnnGetErrorString)                                                                                             \
    X(cudnnCreate)                                                                                                     \
    X(cudnnDestroy)                                                                                                    \
    X(cudnnSetStream)                                                                                                  \
    X(cudnnBackendCreateDescriptor)                                                                                    \
    X(cudnnBackendDestroyDescriptor)                                                                                   \
    X(cudnnBackendSetAttribute)                                                                                        \
    X(cudnnBackendGetAttribute)                                                                                        \
    X(cudnnBackendFinalize)                                                                                            \
    X(cudnnBackendExecute)

/* CUDNN_ATTR_OPERATIONGRAPH_HANDLE: deprecated in recent headers, still
 * wanted by some 9.x libraries; set by value, its refusal tolerated. */
#define ATTR_OPERATIONGRAPH_HANDLE ((cudnnBackendAttributeName_t)800)

enum { ID_Q = 1, ID_K, ID_V, ID_O, ID_STATS, ID_SCALE };

struct fattn_cudnn {
    void *lib;
#define FATTN_CUDNN_MEMBER(f) __typeof__(f) *f;
    FATTN_CUDNN_FUNCTIONS(FATTN_CUDNN_MEMBER)
#undef FATTN_CUDNN_MEMBER
    cudnnHandle_t handle;
    cudnnBackendDescriptor_t plan;
    CUdeviceptr stats, workspace;
    float scale;
    char describe[128];
};

int fattn_cudnn_load(fattn_cudnn **out, char *why, size_t why_size)
{
    const char *path = getenv("FATTN_LIBCUDNN");
    if (!path || !*path)
        path = "libcudnn.so.9";
    *out = NULL;
    fattn_cudnn *c = fattn_xcalloc(1, sizeof *c);
    c->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!c->lib) {
        snprintf(why, why_size, "no cuDNN baseline: %s cannot be loaded (cuDNN 9.13 or newer is needed)", path);
        free(c);
        return -1;
    }
#define FATTN_CUDNN_RESOLVE(f)                                                                                         \
    {                                                                                                                  \
        void *p = dlsym(c->lib, #f);                                                                                   \
        if (!p) {                                                                                                      \
            snprintf(why, why_size, "no cuDNN baseline: %s lacks %s", path, #f);                                       \
            dlclose(c->lib);                                                                                           \
            free(c);                                                                                                   \
            return -1;                                                                                                 \
        }                                                                                                              \
        memcpy(&c->f, &p, sizeof p);                                                                                   \
    }
    FATTN_CUDNN_FUNCTIONS(FATTN_CUDNN_RESOLVE)
#undef FATTN_CUDNN_RESOLVE
    long v = (long)c->cudnnGetVersion();
    if (v < FATTN_CUDNN_MIN_VERSION) {
        snprintf(why, why_size,
                 "no cuDNN baseline: %s is cuDNN %ld.%ld.%ld; the fused SDPA operation needs 9.13 or "
                 "newer",
                 path, v / 10000, v / 100 % 100, v % 100);
        dlclose(c->lib);
        free(c);
        return -1;
    }
    snprintf(c->describe, sizeof c->describe, "cuDNN %ld.%ld.%ld", v / 10000, v / 100 % 100, v % 100);
    *out = c;
    return 0;
}

long fattn_cudnn_version(const fattn_cudnn *c)
{
    return (long)c->cudnnGetVersion();
}

const char *fattn_cudnn_describe(const fattn_cudnn *c)
{
    return c->describe;
}

#define CK(call)                                                                                                       \
    do {                                                                                                               \
        cudnnStatus_t st_ = (call);                                                                                    \
        if (st_ != CUDNN_STATUS_SUCCESS) {                                                                             \
            snprintf(why, why_size, "cuDNN: %s failed: %s", #call, c->cudnnGetErrorString(st_));                       \
            goto out;                                                                                                  \
        }                                                                                                              \
    } while (0)

/* A tensor descriptor: dims and strides of 4, a unique id, a data type. */
static cudnnStatus_t tensor(fattn_cudnn *c, cudnnBackendDescriptor_t *d, const int64_t dims[4],
                            const int64_t strides[4], int64_t id, cudnnDataType_t type, int by_value)
{
    int64_t align = 16;
    bool value = by_value != 0;
    cudnnStatus_t st = c->cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, d);
    if (!st)
        st = c->cudnnBackendSetAttribute(*d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
    if (!st)
        st = c->cudnnBackendSetAttribute(*d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
    if (!st)
        st = c->cudnnBackendSetAttribute(*d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
    if (!st)
        st = c->cudnnBackendSetAttribute(*d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &id);
    if (!st)
        st = c->cudnnBackendSetAttribute(*d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    if (!st && by_value)
        st = c->cudnnBackendSetAttribute(*d, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &value);
    if (!st)
        st = c->cudnnBackendFinalize(*d);
    return st;
}

int fattn_cudnn_plan(fattn_cudnn *c, const fattn_cu *cu, const fattn_shape *s, CUstream stream, char *why,
                     size_t why_size)
{
    cudnnBackendDescriptor_t t[6] = {0}, op = NULL, graph = NULL, heur = NULL, cfgs[8] = {0};
    int rc = -1;
    if (s->causal) {
        snprintf(why, why_size, "no cuDNN baseline for causal shapes: the fused SDPA operation takes no mask");
        return -1;
    }
    const int64_t B = s->batch, H = s->heads, S = s->seqlen, D = s->head_dim;
    const int64_t dims[4] = {B, H, S, D}, strides[4] = {H * S * D, S * D, D, 1};
    const int64_t sdims[4] = {B, H, S, 1}, sstrides[4] = {H * S, S, 1, 1};
    const int64_t one[4] = {1, 1, 1, 1};
    c->scale = (float)(1.0 / sqrt((double)D));

    CK(c->cudnnCreate(&c->handle));
    CK(c->cudnnSetStream(c->handle, (cudaStream_t)stream));
    CK(tensor(c, &t[0], dims, strides, ID_Q, CUDNN_DATA_HALF, 0));
    CK(tensor(c, &t[1], dims, strides, ID_K, CUDNN_DATA_HALF, 0));
    CK(tensor(c, &t[2], dims, strides, ID_V, CUDNN_DATA_HALF, 0));
    CK(tensor(c, &t[3], dims, strides, ID_O, CUDNN_DATA_HALF, 0));
    CK(tensor(c, &t[4], sdims, sstrides, ID_STATS, CUDNN_DATA_FLOAT, 0));
    CK(tensor(c, &t[5], one, one, ID_SCALE, CUDNN_DATA_FLOAT, 1));

    static const cudnnBackendAttributeName_t slots[6] = {
        CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC,     CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC,
        CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC,     CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC,
        CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC,
    };
    CK(c->cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, &op));
    for (int i = 0; i < 6; ++i)
        CK(c->cudnnBackendSetAttribute(op, slots[i], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t[i]));
    CK(c->cudnnBackendFinalize(op));

    CK(c->cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph));
    CK(c->cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op));
    c->cudnnBackendSetAttribute(graph, ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &c->handle);
    CK(c->cudnnBackendFinalize(graph));

    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    CK(c->cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur));
    CK(c->cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                   &graph));
    CK(c->cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode));
    CK(c->cudnnBackendFinalize(heur));
    for (int i = 0; i < 8; ++i)
        CK(c->cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[i]));
    int64_t found = 0;
    CK(c->cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 8, &found,
                                   cfgs));
    if (found <= 0) {
        snprintf(why, why_size, "cuDNN: the heuristics return no engine for SDPA forward on this GPU and shape");
        goto out;
    }
    /* The first configuration the library can build a plan for. */
    cudnnStatus_t last = CUDNN_STATUS_NOT_SUPPORTED;
    for (int64_t i = 0; i < found && !c->plan; ++i) {
        cudnnBackendDescriptor_t plan;
        if (c->cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan))
            continue;
        if (!(last =
                  c->cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &c->handle))
            && !(last = c->cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[i]))
            && !(last = c->cudnnBackendFinalize(plan))) {
            c->plan = plan;
            size_t len = strlen(c->describe);
            snprintf(c->describe + len, sizeof c->describe - len,
                     ", engine configuration %lld of %lld (heuristics "
                     "mode A)",
                     (long long)i + 1, (long long)found);
        } else {
            c->cudnnBackendDestroyDescriptor(plan);
        }
    }
    if (!c->plan) {
        snprintf(why, why_size, "cuDNN: no engine configuration finalizes a plan: %s", c->cudnnGetErrorString(last));
        goto out;
    }
    int64_t ws = 0;
    int64_t got = 0;
    CK(c->cudnnBackendGetAttribute(c->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &got, &ws));
    CUresult r;
    if ((r = cu->cuMemAlloc(&c->stats, (size_t)(B * H * S) * 4))
        || (ws > 0 && (r = cu->cuMemAlloc(&c->workspace, (size_t)ws)))) {
        snprintf(why, why_size, "cuDNN baseline buffers: %s", fattn_cu_error_name(cu, r));
        goto out;
    }
    rc = 0;
out:
    for (int i = 0; i < 8; ++i)
        if (cfgs[i])
            c->cudnnBackendDestroyDescriptor(cfgs[i]);
    if (heur)
        c->cudnnBackendDestroyDescriptor(heur);
    if (graph)
        c->cudnnBackendDestroyDescriptor(graph);
    if (op)
        c->cudnnBackendDestroyDescriptor(op);
    for (int i = 0; i < 6; ++i)
        if (t[i])
            c->cudnnBackendDestroyDescriptor(t[i]);
    return rc;
}

int fattn_cudnn_run(fattn_cudnn *c, CUdeviceptr q, CUdeviceptr k, CUdeviceptr v, CUdeviceptr o, char *why,
                    size_t why_size)
{
    int64_t ids[6] = {ID_Q, ID_K, ID_V, ID_O, ID_STATS, ID_SCALE};
    void *ptrs[6] = {(void *)(uintptr_t)q, (void *)(uintptr_t)k,        (void *)(uintptr_t)v,
                     (void *)(uintptr_t)o, (void *)(uintptr_t)c->stats, &c->scale};
    void *ws = (void *)(uintptr_t)c->workspace;
    cudnnBackendDescriptor_t pack = NULL;
    int rc = -1;
    CK(c->cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack));
    CK(c->cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 6, ids));
    CK(c->cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 6, ptrs));
    CK(c->cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws));
    CK(c->cudnnBackendFinalize(pack));
    CK(c->cudnnBackendExecute(c->handle, c->plan, pack));
    rc = 0;
out:
    if (pack)
        c->cudnnBackendDestroyDescriptor(pack);
    return rc;
}

void fattn_cudnn_free(fattn_cudnn **cp, const fattn_cu *cu)
{
    fattn_cudnn *c = *cp;
    if (!c)
        return;
    if (c->plan)
        c->cudnnBackendDestroyDescriptor(c->plan);
    if (c->handle)
        c->cudnnDestroy(c->handle);
    if (cu && c->stats)
        cu->cuMemFree(c->stats);
    if (cu && c->workspace)
        cu->cuMemFree(c->workspace);
    /* The library stays loaded, like the driver. */
    free(c);
    *cp = NULL;
}
