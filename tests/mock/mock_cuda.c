/*
 * mock_cuda.c - a CUDA driver without a GPU, for tests ($FATTN_LIBCUDA).
 *
 * fattn-tune's GPU engine (src/run/engine_gpu.c) runs on it unchanged: the
 * library answers cuInit and cuGetProcAddress_v2 with the entry points of
 * src/gpu/driver.h, "device" memory is host memory, and the three kernels
 * have effects the engine can check:
 *   fattn_fill  writes small values into its tensor;
 *   fattn_ref   writes 0.25 (fp32) into every output element;
 *   fattn_fwd   writes 0.25 (fp16) into every output element, so a healthy
 *               candidate passes the numerics gate;
 *   fattn_tmacopy  (the tmacopy family: tensor maps of V and O, batch,
 *               heads, seqlen[, workspace]) copies V into O through the
 *               addresses its maps hold, so it passes its O = V reference,
 *               and logs "tmacopy V" with V's address (a test can see each
 *               launch read its own input set).
 * cuMemsetD8Async is captured like a launch. With the directive `ws`, a
 * tmacopy launch takes a sixth parameter, a workspace, that must be zero
 * when it runs (else the next synchronizing call fails with
 * CUDA_ERROR_ILLEGAL_ADDRESS, sticky) and that it leaves nonzero.
 * Each launch "takes" a fixed time (10 us unless the module says otherwise),
 * which CUDA events measure, so timing arithmetic can be checked exactly.
 * Stream capture records launches; a graph launch replays them.
 *
 * A module whose image is the text "MOCK:" followed by comma-separated
 * directives misbehaves as they say (any other image is a healthy module):
 *   launch=N   cuLaunchKernel of its functions returns error N;
 *   attr=N     cuFuncSetAttribute on its functions returns N;
 *   sync=N     launches succeed, and the next synchronizing call returns N;
 *   sticky     with sync= or launch=: the error ruins the context, so every
 *              later call returns it (as CUDA_ERROR_ILLEGAL_ADDRESS does);
 *   ruin=N     with launch=: the launch returns its error and the context is
 *              silently ruined with N (every later call returns N);
 *   us=X       each launch takes X microseconds;
 *   output=none  the candidate writes nothing (the poison stays).
 * A real driver, beside it, checks a launch's block size (at most 1024
 * threads) and its dynamic shared memory (at most 48 KiB unless raised by
 * cuFuncSetAttribute, at most 227 KiB) and refuses bad ones with
 * CUDA_ERROR_INVALID_VALUE, as the mock does.
 *
 * $FATTN_MOCK_LOG names a file that gets one line per driver call (with the
 * process id), so tests can check the order of set-up and tear-down.
 * Not for users: it computes nothing.
 */
#include <cuda.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mock_log.h"

#include "gpu/driver.h"

#define MOCK_SMEM_OPTIN  232448
#define MOCK_MAX_CAPTURE 4096

struct CUctx_st {
    int retained;
};

struct CUfunc_st {
    struct CUmod_st *mod;
    int kind; /* 0 fill, 1 ref, 2 fwd */
    int max_dynamic_smem;
};

struct CUmod_st {
    CUresult launch_err, attr_err, sync_err, ruin;
    int sticky, no_output, ws;
    double us;
    struct CUfunc_st fn[4];
    unsigned char tmaps[16 * 128];
};

/* What one launch does, with its arguments' values copied. */
typedef struct effect {
    struct CUfunc_st *fn; /* NULL: another library's kernel (mock_cuda_external) */
    double us;
    CUdeviceptr dst, src, ws;
    unsigned long long n, seed, ws_bytes;
    unsigned tensor;
    int memset8; /* cuMemsetD8Async of n bytes of `tensor` at dst */
} effect;

struct CUstream_st {
    int capturing;
    effect *cap;
    size_t ncap;
};

struct CUgraph_st {
    effect *e;
    size_t n;
};

struct CUgraphExec_st {
    effect *e;
    size_t n;
};

struct CUevent_st {
    double at_us;
};

static struct CUctx_st ctx;
static CUresult ruined;  /* every later call returns it */
static CUresult pending; /* the next synchronizing call returns it */
static double clock_us;  /* device time so far */

#define ENTER(name)                                                                                                    \
    do {                                                                                                               \
        mock_log("%s", name);                                                                                          \
        if (ruined)                                                                                                    \
            return ruined;                                                                                             \
    } while (0)

/* A synchronizing call: reports the pending asynchronous error. */
static CUresult sync_point(const char *name)
{
    ENTER(name);
    CUresult r = pending;
    pending = CUDA_SUCCESS;
    return r;
}

CUresult cuInit(unsigned int flags)
{
    (void)flags;
    mock_log("cuInit");
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n)
{
    *n = 1;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (ordinal != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    (void)d;
    snprintf(name, (size_t)len, "Mock H100 (tests/mock/mock_cuda.c)");
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice d)
{
    for (int i = 0; i < 16; ++i)
        uuid->bytes[i] = (char)(0x10 * (d + 1) + i);
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t *bytes, CUdevice d)
{
    (void)d;
    *bytes = (size_t)80 << 30;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = MOCK_SMEM_OPTIN; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 233472; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 1 << 20; break; /* small: --flush-l2 allocates twice it */
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1980000; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 2619000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 5120; break;
    default: *v = 0;
    }
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    (void)d;
    ENTER("cuDevicePrimaryCtxRetain");
    ++ctx.retained;
    *c = &ctx;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice d)
{
    (void)d;
    mock_log("cuDevicePrimaryCtxRelease");
    if (ctx.retained > 0)
        --ctx.retained;
    return CUDA_SUCCESS;
}

/* Calls that need a live context. */
#define NEED_CTX(name)                                                                                                 \
    do {                                                                                                               \
        ENTER(name);                                                                                                   \
        if (!ctx.retained) {                                                                                           \
            mock_log("ERROR %s without a context", name);                                                              \
            return CUDA_ERROR_INVALID_CONTEXT;                                                                         \
        }                                                                                                              \
    } while (0)

CUresult cuCtxSetCurrent(CUcontext c)
{
    ENTER("cuCtxSetCurrent");
    return c == &ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuCtxSynchronize(void)
{
    return sync_point("cuCtxSynchronize");
}

/* CUDA 13's cuCtxSynchronize_v2(ctx), which cuGetProcAddress hands back for
 * "cuCtxSynchronize" asked at version 13000 or later, as the real driver
 * does: called through cuda.h's cuCtxSynchronize(void), ctx is whatever the
 * register held, and the driver answers CONTEXT_IS_DESTROYED. */
static CUresult mock_ctx_synchronize_v2(CUcontext c)
{
    return c == &ctx ? sync_point("cuCtxSynchronize") : CUDA_ERROR_CONTEXT_IS_DESTROYED;
}

static CUresult directive(struct CUmod_st *m, const char *d)
{
    char *end;
    if (!strncmp(d, "launch=", 7))
        m->launch_err = (CUresult)strtol(d + 7, &end, 10);
    else if (!strncmp(d, "attr=", 5))
        m->attr_err = (CUresult)strtol(d + 5, &end, 10);
    else if (!strncmp(d, "sync=", 5))
        m->sync_err = (CUresult)strtol(d + 5, &end, 10);
    else if (!strncmp(d, "ruin=", 5))
        m->ruin = (CUresult)strtol(d + 5, &end, 10);
    else if (!strncmp(d, "us=", 3))
        m->us = strtod(d + 3, &end);
    else if (!strcmp(d, "sticky"))
        return CUDA_SUCCESS;
    else if (!strcmp(d, "output=none") || !strcmp(d, "ws"))
        return CUDA_SUCCESS;
    else
        return CUDA_ERROR_INVALID_IMAGE;
    return *end ? CUDA_ERROR_INVALID_IMAGE : CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *out, const void *image)
{
    NEED_CTX("cuModuleLoadData");
    struct CUmod_st *m = calloc(1, sizeof *m);
    m->us = 10;
    if (!strncmp(image, "MOCK:", 5)) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", (const char *)image + 5);
        mock_log("module %s", buf);
        for (char *save = NULL, *d = strtok_r(buf, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
            if (directive(m, d)) {
                free(m);
                return CUDA_ERROR_INVALID_IMAGE;
            }
            m->sticky |= !strcmp(d, "sticky");
            m->no_output |= !strcmp(d, "output=none");
            m->ws |= !strcmp(d, "ws");
        }
    }
    *out = m;
    return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule m)
{
    NEED_CTX("cuModuleUnload");
    free(m);
    return CUDA_SUCCESS;
}

/* A module's globals: fattn_tmaps (the TMA tensor maps of a Hopper kernel),
 * 16 slots of 128 bytes; no other. */
CUresult cuModuleGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUmodule m, const char *name)
{
    NEED_CTX("cuModuleGetGlobal");
    if (!m || strcmp(name, "fattn_tmaps"))
        return CUDA_ERROR_NOT_FOUND;
    if (dptr)
        *dptr = (CUdeviceptr)(uintptr_t)m->tmaps;
    if (bytes)
        *bytes = sizeof m->tmaps;
    return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *out, CUmodule m, const char *name)
{
    NEED_CTX("cuModuleGetFunction");
    static const char *const kinds[] = {"fattn_fill", "fattn_ref", "fattn_fwd", "fattn_tmacopy"};
    for (int k = 0; k < 4; ++k)
        if (!strcmp(name, kinds[k])) {
            struct CUfunc_st *f = &m->fn[k];
            f->mod = m, f->kind = k;
            if (!f->max_dynamic_smem)
                f->max_dynamic_smem = 48 * 1024;
            *out = f;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}

CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
    NEED_CTX("cuFuncSetAttribute");
    if (f->mod->attr_err)
        return f->mod->attr_err;
    if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
        if (v < 0 || v > MOCK_SMEM_OPTIN)
            return CUDA_ERROR_INVALID_VALUE;
        f->max_dynamic_smem = v;
    }
    return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr *p, size_t bytes)
{
    NEED_CTX("cuMemAlloc");
    void *m = calloc(1, bytes ? bytes : 1);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (CUdeviceptr)(uintptr_t)m;
    return CUDA_SUCCESS;
}

CUresult cuMemFree(CUdeviceptr p)
{
    NEED_CTX("cuMemFree");
    free((void *)(uintptr_t)p);
    return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n)
{
    CUresult r = sync_point("cuMemcpyHtoD");
    if (!r)
        memcpy((void *)(uintptr_t)dst, src, n);
    return r;
}

CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n)
{
    CUresult r = sync_point("cuMemcpyDtoH");
    if (!r)
        memcpy(dst, (const void *)(uintptr_t)src, n);
    return r;
}

CUresult cuMemsetD16(CUdeviceptr p, unsigned short v, size_t n)
{
    NEED_CTX("cuMemsetD16");
    uint16_t *d = (uint16_t *)(uintptr_t)p;
    for (size_t i = 0; i < n; ++i)
        d[i] = v;
    return CUDA_SUCCESS;
}

CUresult cuMemsetD32(CUdeviceptr p, unsigned int v, size_t n)
{
    NEED_CTX("cuMemsetD32");
    uint32_t *d = (uint32_t *)(uintptr_t)p;
    for (size_t i = 0; i < n; ++i)
        d[i] = v;
    return CUDA_SUCCESS;
}

CUresult cuMemsetD32Async(CUdeviceptr p, unsigned int v, size_t n, CUstream s)
{
    (void)s;
    return cuMemsetD32(p, v, n);
}

static CUresult enqueue(CUstream s, const effect *e);

CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s)
{
    NEED_CTX("cuMemsetD8Async");
    effect e = {.dst = p, .n = n, .tensor = v, .memset8 = 1};
    return enqueue(s, &e);
}

CUresult cuMemGetInfo(size_t *free_, size_t *total)
{
    *free_ = (size_t)79 << 30, *total = (size_t)80 << 30;
    return CUDA_SUCCESS;
}

/* Runs one launch's effect on "device" memory. */
static void run_effect(const effect *e)
{
    struct CUfunc_st *f = e->fn;
    if (e->memset8) {
        memset((void *)(uintptr_t)e->dst, (int)e->tensor, e->n);
        return;
    }
    if (!f) {
        clock_us += e->us;
        return;
    }
    clock_us += f->mod->us;
    if (f->mod->sync_err && !pending) {
        pending = f->mod->sync_err;
        if (f->mod->sticky)
            ruined = f->mod->sync_err;
    }
    if (f->kind == 0) {
        uint16_t *d = (uint16_t *)(uintptr_t)e->dst;
        for (unsigned long long i = 0; i < e->n; ++i)
            d[i] = (uint16_t)(0x2c00 + (e->seed + i + e->tensor) % 0x300); /* 0.0625 .. 0.25 */
    } else if (f->kind == 1) {
        float *d = (float *)(uintptr_t)e->dst;
        for (unsigned long long i = 0; i < e->n; ++i)
            d[i] = 0.25f;
    } else if (f->kind == 3) {
        mock_log("tmacopy V %llx", (unsigned long long)e->src);
        const unsigned char *w = (const unsigned char *)(uintptr_t)e->ws;
        for (unsigned long long i = 0; i < e->ws_bytes; ++i)
            if (w[i] && !pending)
                pending = ruined = CUDA_ERROR_ILLEGAL_ADDRESS;
        if (e->ws_bytes)
            memset((void *)(uintptr_t)e->ws, 0xab, e->ws_bytes);
        if (!f->mod->no_output)
            memcpy((void *)(uintptr_t)e->dst, (const void *)(uintptr_t)e->src, e->n * 2);
    } else if (!f->mod->no_output) {
        uint16_t *d = (uint16_t *)(uintptr_t)e->dst;
        for (unsigned long long i = 0; i < e->n; ++i)
            d[i] = 0x3400; /* 0.25 in fp16 */
    }
}

/* Captures e on a capturing stream, or runs it. */
static CUresult enqueue(CUstream s, const effect *e)
{
    if (s && s->capturing) {
        if (s->ncap == MOCK_MAX_CAPTURE)
            return CUDA_ERROR_OUT_OF_MEMORY;
        s->cap[s->ncap++] = *e;
        return CUDA_SUCCESS;
    }
    run_effect(e);
    return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, CUstream s, void **params, void **extra)
{
    (void)extra;
    NEED_CTX("cuLaunchKernel");
    if (f->mod->launch_err) {
        if (f->mod->sticky)
            ruined = f->mod->launch_err;
        if (f->mod->ruin)
            ruined = f->mod->ruin;
        return f->mod->launch_err;
    }
    if (!gx || !gy || !gz || (unsigned long long)bx * by * bz > 1024 || (int)smem > f->max_dynamic_smem)
        return CUDA_ERROR_INVALID_VALUE;
    effect e = {.fn = f};
    if (f->kind == 0) {
        e.dst = *(CUdeviceptr *)params[0];
        e.n = *(unsigned long long *)params[1];
        e.seed = *(unsigned long long *)params[2];
        e.tensor = *(unsigned *)params[3];
    } else if (f->kind == 3) {
        /* The mock's maps hold their tensor's address and element count. */
        const unsigned char *mv = params[0], *mo = params[1];
        if (memcmp(mv, "MOCKTMAP", 8) || memcmp(mo, "MOCKTMAP", 8))
            return CUDA_ERROR_INVALID_VALUE;
        memcpy(&e.src, mv + 32, sizeof e.src);
        memcpy(&e.dst, mo + 32, sizeof e.dst);
        memcpy(&e.n, mv + 40, sizeof e.n);
        if (f->mod->ws) {
            e.ws = *(CUdeviceptr *)params[5];
            e.ws_bytes = 4096;
        }
    } else {
        int b = *(int *)params[4], h = *(int *)params[5], sq = *(int *)params[6];
        float scale = *(float *)params[7];
        long d = lround(1.0 / ((double)scale * scale));
        e.dst = *(CUdeviceptr *)params[3];
        e.n = (unsigned long long)b * h * sq * d;
    }
    return enqueue(s, &e);
}

/* cuLaunchKernelEx: the launch of its config; a cluster dimension
 * attribute must divide the grid. */
CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    NEED_CTX("cuLaunchKernelEx");
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < c->numAttrs; ++i)
        if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
            const unsigned x = c->attrs[i].value.clusterDim.x, y = c->attrs[i].value.clusterDim.y,
                           z = c->attrs[i].value.clusterDim.z;
            if (!x || !y || !z || c->gridDimX % x || c->gridDimY % y || c->gridDimZ % z || x * y * z > 8)
                return CUDA_ERROR_INVALID_CLUSTER_SIZE;
        }
    return cuLaunchKernel(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
                          c->sharedMemBytes, c->hStream, params, extra);
}

/* A kernel of another library (the mock cuDNN) taking `us` on stream s:
 * captured like a launch, or run. */
CUresult mock_cuda_external(CUstream s, double us);
CUresult mock_cuda_external(CUstream s, double us)
{
    NEED_CTX("mock_cuda_external");
    effect e = {.us = us};
    return enqueue(s, &e);
}

CUresult cuStreamCreate(CUstream *s, unsigned flags)
{
    (void)flags;
    NEED_CTX("cuStreamCreate");
    *s = calloc(1, sizeof **s);
    return CUDA_SUCCESS;
}

CUresult cuStreamDestroy(CUstream s)
{
    NEED_CTX("cuStreamDestroy");
    free(s->cap);
    free(s);
    return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream s)
{
    (void)s;
    return sync_point("cuStreamSynchronize");
}

CUresult cuEventCreate(CUevent *e, unsigned flags)
{
    (void)flags;
    NEED_CTX("cuEventCreate");
    *e = calloc(1, sizeof **e);
    return CUDA_SUCCESS;
}

CUresult cuEventDestroy(CUevent e)
{
    NEED_CTX("cuEventDestroy");
    free(e);
    return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent e, CUstream s)
{
    (void)s;
    NEED_CTX("cuEventRecord");
    e->at_us = clock_us;
    return CUDA_SUCCESS;
}

CUresult cuEventSynchronize(CUevent e)
{
    (void)e;
    return sync_point("cuEventSynchronize");
}

CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
    NEED_CTX("cuEventElapsedTime");
    *ms = (float)((b->at_us - a->at_us) / 1000.0);
    return CUDA_SUCCESS;
}

CUresult cuStreamBeginCapture(CUstream s, CUstreamCaptureMode mode)
{
    (void)mode;
    NEED_CTX("cuStreamBeginCapture");
    s->capturing = 1;
    s->ncap = 0;
    if (!s->cap)
        s->cap = calloc(MOCK_MAX_CAPTURE, sizeof *s->cap);
    return CUDA_SUCCESS;
}

CUresult cuStreamEndCapture(CUstream s, CUgraph *g)
{
    NEED_CTX("cuStreamEndCapture");
    if (!s->capturing)
        return CUDA_ERROR_ILLEGAL_STATE;
    s->capturing = 0;
    *g = calloc(1, sizeof **g);
    (*g)->e = malloc((s->ncap ? s->ncap : 1) * sizeof *s->cap);
    memcpy((*g)->e, s->cap, s->ncap * sizeof *s->cap);
    (*g)->n = s->ncap;
    return CUDA_SUCCESS;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *x, CUgraph g, unsigned long long flags)
{
    (void)flags;
    NEED_CTX("cuGraphInstantiateWithFlags");
    *x = calloc(1, sizeof **x);
    (*x)->e = malloc((g->n ? g->n : 1) * sizeof *g->e);
    memcpy((*x)->e, g->e, g->n * sizeof *g->e);
    (*x)->n = g->n;
    return CUDA_SUCCESS;
}

CUresult cuGraphLaunch(CUgraphExec x, CUstream s)
{
    (void)s;
    NEED_CTX("cuGraphLaunch");
    for (size_t i = 0; i < x->n; ++i)
        run_effect(&x->e[i]);
    return CUDA_SUCCESS;
}

CUresult cuGraphExecDestroy(CUgraphExec x)
{
    NEED_CTX("cuGraphExecDestroy");
    free(x->e);
    free(x);
    return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph g)
{
    NEED_CTX("cuGraphDestroy");
    free(g->e);
    free(g);
    return CUDA_SUCCESS;
}

/* cuda.h (CUDA 13.0), cuTensorMapEncodeTiled: "The parameters passed are
 * bound to the following requirements", each refused here with
 * CUDA_ERROR_INVALID_VALUE as the driver does (the packed 4- and 6-bit
 * types aside: nothing here asks for them). The map it writes is the mock's
 * own: "MOCKTMAP", then the rank and the box, so a test can see it filled. */
CUresult cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                                void *globalAddress, const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                const cuuint32_t *boxDim, const cuuint32_t *elementStrides,
                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill)
{
    /* Not in cuda.h, but seen: driver 580.159 on an H200 answers
     * CUDA_ERROR_INVALID_CONTEXT to every map encoded without a context. */
    NEED_CTX("cuTensorMapEncodeTiled");
    static const unsigned esize[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
    static const unsigned span[] = {0, 32, 64, 128, 128, 128, 128};
#define REFUSE(why)                                                                                                    \
    do {                                                                                                               \
        mock_log("ERROR cuTensorMapEncodeTiled: %s", why);                                                             \
        return CUDA_ERROR_INVALID_VALUE;                                                                               \
    } while (0)
    /* "tensorMap address must be aligned to 64 bytes." */
    if (!tensorMap || (uintptr_t)tensorMap % 64)
        REFUSE("tensorMap not 64-byte aligned");
    if ((unsigned)tensorDataType >= sizeof esize / sizeof *esize)
        REFUSE("tensorDataType");
    /* "tensorRank must be non-zero and less than or equal to ... 5"; ">= 3"
     * when interleaved. */
    if (tensorRank == 0 || tensorRank > 5 || (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE && tensorRank < 3))
        REFUSE("tensorRank");
    if ((unsigned)interleave > CU_TENSOR_MAP_INTERLEAVE_32B || (unsigned)swizzle > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B
        || (unsigned)l2Promotion > CU_TENSOR_MAP_L2_PROMOTION_L2_256B
        || (unsigned)oobFill > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
        REFUSE("an enum out of range");
    const unsigned es = esize[tensorDataType];
    /* "globalAddress ... must be 16 byte aligned"; 32 when interleave is 32B. */
    if ((uintptr_t)globalAddress % (interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16))
        REFUSE("globalAddress alignment");
    for (cuuint32_t i = 0; i < tensorRank; ++i) {
        /* "globalDim ... must be non-zero and less than or equal to 2^32." */
        if (globalDim[i] == 0 || globalDim[i] > (1ull << 32))
            REFUSE("globalDim");
        /* "boxDim ... must be non-zero and less than or equal to 256." */
        if (boxDim[i] == 0 || boxDim[i] > 256)
            REFUSE("boxDim");
        /* "elementStrides ... must be non-zero and less than or equal to 8." */
        if (elementStrides[i] == 0 || elementStrides[i] > 8)
            REFUSE("elementStrides");
    }
    /* "globalStrides ... must be a multiple of 16 and less than 2^40" (32
     * when interleave is 32B). */
    for (cuuint32_t i = 0; i + 1 < tensorRank; ++i)
        if (globalStrides[i] % (interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16)
            || globalStrides[i] >= (1ull << 40))
            REFUSE("globalStrides");
    if (interleave == CU_TENSOR_MAP_INTERLEAVE_NONE) {
        /* "boxDim[0] * elementSizeInBytes(tensorDataType) must be a multiple
         * of 16 bytes", and at most the swizzle size. */
        if (boxDim[0] * es % 16)
            REFUSE("inner box bytes not a multiple of 16");
        if (swizzle != CU_TENSOR_MAP_SWIZZLE_NONE && boxDim[0] * es > span[swizzle])
            REFUSE("inner box bytes past the swizzle span");
    }
    /* "When interleave is CU_TENSOR_MAP_INTERLEAVE_32B, swizzle must be
     * CU_TENSOR_MAP_SWIZZLE_32B." */
    if (interleave == CU_TENSOR_MAP_INTERLEAVE_32B && swizzle != CU_TENSOR_MAP_SWIZZLE_32B)
        REFUSE("interleave 32B without swizzle 32B");
    /* The NaN fill "can only be used when tensorDataType represents a
     * floating-point data type". */
    if (oobFill != CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE && tensorDataType < CU_TENSOR_MAP_DATA_TYPE_FLOAT16)
        REFUSE("NaN fill of an integer type");
#undef REFUSE
    memset(tensorMap, 0, sizeof *tensorMap);
    unsigned char *m = (unsigned char *)tensorMap;
    memcpy(m, "MOCKTMAP", 8);
    m[8] = (unsigned char)tensorRank;
    memcpy(m + 12, boxDim, tensorRank * sizeof *boxDim);
    /* The tensor, for the mock's tmacopy kernel: its address and elements. */
    CUdeviceptr base = (CUdeviceptr)(uintptr_t)globalAddress;
    unsigned long long elems = 1;
    for (cuuint32_t i = 0; i < tensorRank; ++i)
        elems *= globalDim[i];
    memcpy(m + 32, &base, sizeof base);
    memcpy(m + 40, &elems, sizeof elems);
    return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult r, const char **s)
{
    switch (r) {
    case CUDA_SUCCESS: *s = "CUDA_SUCCESS"; break;
    case CUDA_ERROR_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
    case CUDA_ERROR_INVALID_CONTEXT: *s = "CUDA_ERROR_INVALID_CONTEXT"; break;
    case CUDA_ERROR_ILLEGAL_ADDRESS: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: *s = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"; break;
    case CUDA_ERROR_MISALIGNED_ADDRESS: *s = "CUDA_ERROR_MISALIGNED_ADDRESS"; break;
    case CUDA_ERROR_INVALID_CLUSTER_SIZE: *s = "CUDA_ERROR_INVALID_CLUSTER_SIZE"; break;
    case CUDA_ERROR_UNKNOWN: *s = "CUDA_ERROR_UNKNOWN"; break;
    default: *s = NULL; return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* The entry points by name and the version each ABI appeared in, as
 * src/gpu/driver.h names them, and the newer ABIs of those names that the
 * real driver has. */
/* clang-format off */
static const struct {
    const char *name;
    int version;
    void *fn;
} table[] = {
    {"cuCtxSynchronize", 13000, (void *)&mock_ctx_synchronize_v2},
#define MOCK_ENTRY(f, v) {#f, v, (void *)&f},
    FATTN_CU_FUNCTIONS(MOCK_ENTRY)
#undef MOCK_ENTRY
};
/* clang-format on */

/* As the driver: the newest ABI of the name not newer than the version
 * asked for. */
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
    (void)flags;
    int best = -1, found = 0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i)
        if (!strcmp(table[i].name, symbol)) {
            found = 1;
            if (table[i].version <= version && (best < 0 || table[i].version > table[best].version))
                best = (int)i;
        }
    *pfn = best >= 0 ? table[best].fn : NULL;
    if (status)
        *status = best >= 0 ? CU_GET_PROC_ADDRESS_SUCCESS
                  : found   ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                            : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return best >= 0 ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
