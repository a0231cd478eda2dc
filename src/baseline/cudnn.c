/*
 * cudnn.c - the cuDNN SDPA forward baseline through the backend API.
 */
#include "baseline/cudnn.h"

#include <cudnn_graph.h>
#include <dlfcn.h>
#include <link.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/err.h"
#include "util/paths.h"
#include "util/strbuf.h"

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
    int with_stats; /* the plan writes the softmax stats (the library wanted them) */
    float scale;
    char describe[1400];
};

static void add_candidate(fattn_cudnn_candidate *out, size_t max, size_t *n, const char *path, const char *origin)
{
    if (*n >= max)
        return;
    snprintf(out[*n].path, sizeof out[*n].path, "%s", path);
    snprintf(out[*n].origin, sizeof out[*n].origin, "%s", origin);
    ++*n;
}

size_t fattn_cudnn_candidates(fattn_cudnn_candidate *out, size_t max, int with_python)
{
    size_t n = 0;
    char path[1024];
    const char *env = getenv("FATTN_LIBCUDNN");
    if (env && *env) {
        add_candidate(out, max, &n, env, "$FATTN_LIBCUDNN");
        return n;
    }
    add_candidate(out, max, &n, "libcudnn.so.9", "system library path");
    snprintf(path, sizeof path, "%s/lib64/libcudnn.so.9", fattn_cuda_root());
    if (access(path, R_OK) == 0)
        add_candidate(out, max, &n, path, "CUDA toolkit");
    if (!with_python)
        return n;
    /* PyTorch's cuDNN: the nvidia-cudnn package (nvidia/cudnn/lib) of the
     * python3 on PATH, wherever its site-packages are. */
    FILE *p = popen("python3 -c 'import os, nvidia.cudnn as m\nfor d in m.__path__: "
                    "print(os.path.join(d, \"lib\", \"libcudnn.so.9\"))' 2>/dev/null",
                    "r");
    while (p && fgets(path, sizeof path, p)) {
        path[strcspn(path, "\n")] = '\0';
        if (*path && access(path, R_OK) == 0)
            add_candidate(out, max, &n, path, "python3's nvidia-cudnn package");
    }
    if (p)
        pclose(p);
    return n;
}

/* Opens one candidate: 0 with *out, or -1 with why it is not usable. */
static int load_one(const fattn_cudnn_candidate *cand, fattn_cudnn **out, char *why, size_t why_size)
{
    fattn_cudnn *c = fattn_xcalloc(1, sizeof *c);
    c->lib = dlopen(cand->path, RTLD_NOW | RTLD_LOCAL);
    if (!c->lib) {
        snprintf(why, why_size, "cannot be loaded");
        free(c);
        return -1;
    }
#define FATTN_CUDNN_RESOLVE(f)                                                                                         \
    {                                                                                                                  \
        void *p = dlsym(c->lib, #f);                                                                                   \
        if (!p) {                                                                                                      \
            snprintf(why, why_size, "lacks %s", #f);                                                                   \
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
        snprintf(why, why_size, "is cuDNN %ld.%ld.%ld", v / 10000, v / 100 % 100, v % 100);
        dlclose(c->lib);
        free(c);
        return -1;
    }
    /* The file the loader chose, when a bare name was asked for. */
    const char *file = cand->path;
    struct link_map *lm = NULL;
    if (dlinfo(c->lib, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name)
        file = lm->l_name;
    snprintf(c->describe, sizeof c->describe, "cuDNN %ld.%ld.%ld (%s, %s)", v / 10000, v / 100 % 100, v % 100, file,
             cand->origin);
    *out = c;
    return 0;
}

int fattn_cudnn_load_from(const fattn_cudnn_candidate *cand, size_t n, fattn_cudnn **out, char *why, size_t why_size)
{
    fattn_strbuf tried;
    *out = NULL;
    fattn_sb_init(&tried);
    for (size_t i = 0; i < n; ++i) {
        char one[128];
        if (load_one(&cand[i], out, one, sizeof one) == 0) {
            fattn_sb_release(&tried);
            return 0;
        }
        fattn_sb_addf(&tried, "%s%s (%s) %s", i ? "; " : "", cand[i].path, cand[i].origin, one);
    }
    snprintf(why, why_size, "no cuDNN baseline: cuDNN %d.%d.%d or newer is needed (the fused SDPA operation); %s",
             FATTN_CUDNN_MIN_VERSION / 10000, FATTN_CUDNN_MIN_VERSION / 100 % 100, FATTN_CUDNN_MIN_VERSION % 100,
             n ? tried.s : "nowhere to look");
    fattn_sb_release(&tried);
    return -1;
}

int fattn_cudnn_load(fattn_cudnn **out, char *why, size_t why_size)
{
    fattn_cudnn_candidate cand[8];
    size_t n = fattn_cudnn_candidates(cand, 8, 0);
    if (fattn_cudnn_load_from(cand, n, out, why, why_size) == 0)
        return 0;
    /* Not found in the system's places: PyTorch's, if there is one. */
    if (getenv("FATTN_LIBCUDNN") && *getenv("FATTN_LIBCUDNN"))
        return -1;
    n = fattn_cudnn_candidates(cand, 8, 1);
    return fattn_cudnn_load_from(cand, n, out, why, why_size);
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

/* Builds the SDPA forward graph (with the softmax stats output or without,
 * the inference forward), its heuristics and the first plan that finalizes.
 * Returns 0 with c->plan, or -1 with why. */
static int plan_graph(fattn_cudnn *c, const fattn_shape *s, int stats, char *why, size_t why_size)
{
    cudnnBackendDescriptor_t t[6] = {0}, op = NULL, graph = NULL, heur = NULL, cfgs[8] = {0};
    int rc = -1;
    const int64_t B = s->batch, H = s->heads, S = s->seqlen, D = s->head_dim;
    const int64_t dims[4] = {B, H, S, D}, strides[4] = {H * S * D, S * D, D, 1};
    const int64_t sdims[4] = {B, H, S, 1}, sstrides[4] = {H * S, S, 1, 1};
    const int64_t one[4] = {1, 1, 1, 1};

    CK(tensor(c, &t[0], dims, strides, ID_Q, CUDNN_DATA_HALF, 0));
    CK(tensor(c, &t[1], dims, strides, ID_K, CUDNN_DATA_HALF, 0));
    CK(tensor(c, &t[2], dims, strides, ID_V, CUDNN_DATA_HALF, 0));
    CK(tensor(c, &t[3], dims, strides, ID_O, CUDNN_DATA_HALF, 0));
    CK(tensor(c, &t[5], one, one, ID_SCALE, CUDNN_DATA_FLOAT, 1));
    if (stats)
        CK(tensor(c, &t[4], sdims, sstrides, ID_STATS, CUDNN_DATA_FLOAT, 0));

    static const cudnnBackendAttributeName_t slots[6] = {
        CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC,     CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC,
        CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC,     CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC,
        CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC,
    };
    CK(c->cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, &op));
    for (int i = 0; i < 6; ++i)
        if (t[i])
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
                     ", engine configuration %lld of %lld (heuristics mode A), %s", (long long)i + 1, (long long)found,
                     stats ? "forward with stats output" : "inference forward (no stats output)");
        } else {
            c->cudnnBackendDestroyDescriptor(plan);
        }
    }
    if (!c->plan) {
        snprintf(why, why_size, "cuDNN: no engine configuration finalizes a plan: %s", c->cudnnGetErrorString(last));
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

int fattn_cudnn_plan(fattn_cudnn *c, const fattn_cu *cu, const fattn_shape *s, CUstream stream, char *why,
                     size_t why_size)
{
    int rc = -1;
    if (s->causal) {
        snprintf(why, why_size, "no cuDNN baseline for causal shapes: the fused SDPA operation takes no mask");
        return -1;
    }
    c->scale = (float)(1.0 / sqrt((double)s->head_dim));
    CK(c->cudnnCreate(&c->handle));
    CK(c->cudnnSetStream(c->handle, (cudaStream_t)stream));
    /* The inference forward: no softmax stats to write, as PyTorch's
     * inference path asks. A library that refuses it gets the stats. */
    char first[320];
    if (plan_graph(c, s, 0, first, sizeof first)) {
        if (plan_graph(c, s, 1, why, why_size)) {
            size_t len = strlen(why);
            snprintf(why + len, why_size - len, " (without stats: %s)", first);
            goto out;
        }
        c->with_stats = 1;
    }
    int64_t ws = 0, got = 0;
    CK(c->cudnnBackendGetAttribute(c->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &got, &ws));
    CUresult r = CUDA_SUCCESS;
    if ((c->with_stats && (r = cu->cuMemAlloc(&c->stats, (size_t)s->batch * s->heads * s->seqlen * 4)))
        || (ws > 0 && (r = cu->cuMemAlloc(&c->workspace, (size_t)ws)))) {
        snprintf(why, why_size, "cuDNN baseline buffers: %s", fattn_cu_error_name(cu, r));
        goto out;
    }
    rc = 0;
out:
    return rc;
}

int fattn_cudnn_run(fattn_cudnn *c, CUdeviceptr q, CUdeviceptr k, CUdeviceptr v, CUdeviceptr o, char *why,
                    size_t why_size)
{
    int64_t ids[6] = {ID_Q, ID_K, ID_V, ID_O, ID_SCALE, ID_STATS};
    void *ptrs[6] = {
        (void *)(uintptr_t)q,       (void *)(uintptr_t)k, (void *)(uintptr_t)v, (void *)(uintptr_t)o, &c->scale,
        (void *)(uintptr_t)c->stats};
    int64_t n = c->with_stats ? 6 : 5;
    void *ws = (void *)(uintptr_t)c->workspace;
    cudnnBackendDescriptor_t pack = NULL;
    int rc = -1;
    CK(c->cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack));
    CK(c->cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, ids));
    CK(c->cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs));
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
