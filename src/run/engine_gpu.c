/*
 * engine_gpu.c - the GPU engine: runs inside the worker process.
 *
 * INIT sets up the device: the primary context, a stream, the reference
 * module (fattn_ref and fattn_fill), one input set for numerics checks and
 * `timing_sets` more for timing, the output buffers, and an L2 flush buffer.
 *
 * EVAL checks and times one configuration:
 *  1. numerics: fresh inputs from the request's seed (fattn_fill), the output
 *     poisoned with NaN, the candidate and the reference run on the same
 *     inputs, every element compared on the host (numerics.c);
 *  2. timing, if the numerics pass: R back-to-back launches captured in a
 *     CUDA graph, rotating through the timing sets; W warm-up replays; then
 *     S samples, each the CUDA-event time of one replay divided by R (the
 *     raw per-launch time: launch cost is not subtracted). With flush_l2, a
 *     buffer twice the L2 size is overwritten before each sample.
 * A fault that ruins the context (misaligned or illegal address, launch
 * failure) is answered, then the worker exits; any other error is answered
 * and the worker goes on. A PHASE message precedes each step, so the
 * watchdog of the search process times each step, not the whole request.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/device.h"
#include "baseline/cudnn.h"
#include "gpu/driver.h"
#include "run/engine.h"
#include "run/numerics.h"
#include "target/shape.h"
#include "util/err.h"

#define FILL_THREADS 256
#define REF_THREADS  128

typedef struct gpu {
    fattn_cu cu;
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    CUmodule ref_mod;
    CUfunction ref_fn, fill_fn;
    CUevent start, stop;
    fattn_shape shape;
    size_t elems;
    int sets;               /* timing input sets */
    CUdeviceptr q0, k0, v0; /* the numerics set */
    CUdeviceptr *q, *k, *v; /* timing sets */
    CUdeviceptr o, ref_o, flush;
    size_t flush_words;
    int warmup, reps, samples, flush_l2;
    double atol, rtol;
    uint16_t *h_o;
    float *h_ref;
    fattn_cudnn *cudnn;  /* the baseline, planned on first use */
    char cudnn_why[320]; /* why it cannot be, once known */
} gpu;

/* What an EVAL runs: a candidate's kernel, or the cuDNN baseline. */
typedef struct runner {
    CUfunction fn;
    unsigned gx, gy, gz, threads, smem;
    fattn_cudnn *cudnn;
} runner;

static int num(const cJSON *j, const char *name, double def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, name);
    return cJSON_IsNumber(v) ? v->valueint : (int)def;
}

static double dnum(const cJSON *j, const char *name, double def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, name);
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

static unsigned long long u64(const cJSON *j, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, name);
    return cJSON_IsString(v)   ? strtoull(v->valuestring, NULL, 10)
           : cJSON_IsNumber(v) ? (unsigned long long)v->valuedouble
                               : 0;
}

/* Fills one tensor of a set with the seeded values. */
static CUresult fill(gpu *g, CUdeviceptr dst, unsigned long long seed, unsigned tensor, CUstream s)
{
    unsigned long long n = g->elems;
    void *args[] = {&dst, &n, &seed, &tensor};
    unsigned blocks = (unsigned)((n + FILL_THREADS - 1) / FILL_THREADS);
    if (blocks > 65535u * 8)
        blocks = 65535u * 8;
    return g->cu.cuLaunchKernel(g->fill_fn, blocks, 1, 1, FILL_THREADS, 1, 1, 0, s, args, NULL);
}

static void gpu_fini(void *state)
{
    gpu *g = state;
    if (!g)
        return;
    fattn_cu *cu = &g->cu;
    if (g->ctx) {
        cu->cuCtxSetCurrent(g->ctx);
        CUdeviceptr bufs[] = {g->q0, g->k0, g->v0, g->o, g->ref_o, g->flush};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; ++i)
            if (bufs[i])
                cu->cuMemFree(bufs[i]);
        for (int s = 0; s < g->sets && g->q; ++s) {
            if (g->q[s])
                cu->cuMemFree(g->q[s]);
            if (g->k[s])
                cu->cuMemFree(g->k[s]);
            if (g->v[s])
                cu->cuMemFree(g->v[s]);
        }
        if (g->start)
            cu->cuEventDestroy(g->start);
        if (g->stop)
            cu->cuEventDestroy(g->stop);
        if (g->ref_mod)
            cu->cuModuleUnload(g->ref_mod);
        if (g->stream)
            cu->cuStreamDestroy(g->stream);
        cu->cuDevicePrimaryCtxRelease(g->dev);
    }
    fattn_cudnn_free(&g->cudnn, &g->cu);
    free(g->q), free(g->k), free(g->v);
    free(g->h_o), free(g->h_ref);
    free(g);
}

#define CU_INIT(call)                                                                                                  \
    do {                                                                                                               \
        CUresult r_ = (call);                                                                                          \
        if (r_ != CUDA_SUCCESS) {                                                                                      \
            snprintf(why, why_size, "%s failed: %s", #call, fattn_cu_error_name(&g->cu, r_));                          \
            goto fail;                                                                                                 \
        }                                                                                                              \
    } while (0)

static int gpu_init(void **state, const cJSON *req, const void *ref_cubin, size_t ref_size, cJSON *ready, char *why,
                    size_t why_size)
{
    gpu *g = fattn_xcalloc(1, sizeof *g);
    fattn_gpu_info info;
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(req, "shape");
    int device = num(req, "device", 0);
    *state = NULL;
    if (!ref_cubin || !ref_size || !cJSON_IsObject(shape)) {
        snprintf(why, why_size, "INIT without a reference cubin or a shape");
        free(g);
        return -1;
    }
    g->shape.batch = num(shape, "batch", 1);
    g->shape.heads = num(shape, "heads", 1);
    g->shape.seqlen = num(shape, "seqlen", 1);
    g->shape.head_dim = num(shape, "head_dim", 64);
    g->shape.causal = num(shape, "causal", 0);
    g->elems = (size_t)fattn_shape_elems(&g->shape);
    g->sets = num(req, "timing_sets", 1);
    g->warmup = num(req, "warmup", 5);
    g->reps = num(req, "reps", 20);
    g->samples = num(req, "samples", 30);
    g->flush_l2 = num(req, "flush_l2", 0);
    g->atol = dnum(req, "atol", FATTN_DEFAULT_ATOL);
    g->rtol = dnum(req, "rtol", FATTN_DEFAULT_RTOL);
    if (g->sets < 1 || g->reps < 1 || g->samples < 1) {
        snprintf(why, why_size, "INIT with timing_sets, reps or samples below 1");
        free(g);
        return -1;
    }
    if (fattn_cu_load(&g->cu, why, why_size) || fattn_gpu_probe(device, &info, why, why_size)) {
        free(g);
        return -1;
    }
    CU_INIT(g->cu.cuDeviceGet(&g->dev, device));
    CU_INIT(g->cu.cuDevicePrimaryCtxRetain(&g->ctx, g->dev));
    CU_INIT(g->cu.cuCtxSetCurrent(g->ctx));
    CU_INIT(g->cu.cuStreamCreate(&g->stream, CU_STREAM_NON_BLOCKING));
    CU_INIT(g->cu.cuEventCreate(&g->start, CU_EVENT_DEFAULT));
    CU_INIT(g->cu.cuEventCreate(&g->stop, CU_EVENT_DEFAULT));
    CU_INIT(g->cu.cuModuleLoadData(&g->ref_mod, ref_cubin));
    CU_INIT(g->cu.cuModuleGetFunction(&g->ref_fn, g->ref_mod, "fattn_ref"));
    CU_INIT(g->cu.cuModuleGetFunction(&g->fill_fn, g->ref_mod, "fattn_fill"));

    size_t bytes = g->elems * 2;
    CU_INIT(g->cu.cuMemAlloc(&g->q0, bytes));
    CU_INIT(g->cu.cuMemAlloc(&g->k0, bytes));
    CU_INIT(g->cu.cuMemAlloc(&g->v0, bytes));
    CU_INIT(g->cu.cuMemAlloc(&g->o, bytes));
    CU_INIT(g->cu.cuMemAlloc(&g->ref_o, g->elems * 4));
    g->q = fattn_xcalloc((size_t)g->sets, sizeof *g->q);
    g->k = fattn_xcalloc((size_t)g->sets, sizeof *g->k);
    g->v = fattn_xcalloc((size_t)g->sets, sizeof *g->v);
    unsigned long long timing_seed = u64(req, "timing_seed");
    for (int s = 0; s < g->sets; ++s) {
        CU_INIT(g->cu.cuMemAlloc(&g->q[s], bytes));
        CU_INIT(g->cu.cuMemAlloc(&g->k[s], bytes));
        CU_INIT(g->cu.cuMemAlloc(&g->v[s], bytes));
        CU_INIT(fill(g, g->q[s], timing_seed + (unsigned long long)s, 0, g->stream));
        CU_INIT(fill(g, g->k[s], timing_seed + (unsigned long long)s, 1, g->stream));
        CU_INIT(fill(g, g->v[s], timing_seed + (unsigned long long)s, 2, g->stream));
    }
    if (g->flush_l2) {
        g->flush_words = (size_t)(info.l2_bytes > 0 ? info.l2_bytes : 64 << 20) * 2 / 4;
        CU_INIT(g->cu.cuMemAlloc(&g->flush, g->flush_words * 4));
    }
    CU_INIT(g->cu.cuStreamSynchronize(g->stream));
    g->h_o = fattn_xmalloc(bytes);
    g->h_ref = fattn_xmalloc(g->elems * 4);

    char props[1024];
    fattn_gpu_info_json(&info, props, sizeof props);
    cJSON *p = cJSON_Parse(props);
    if (p) {
        for (cJSON *it = p->child; it; it = it->next)
            cJSON_AddItemToObject(ready, it->string, cJSON_Duplicate(it, 1));
        cJSON_Delete(p);
    }
    *state = g;
    return 0;
fail:
    gpu_fini(g);
    return -1;
}

/* Records a driver error in the result; returns 1 when it ruined the context. */
static int failed(gpu *g, cJSON *result, const char *what, CUresult r)
{
    char detail[256];
    int sticky = fattn_cu_error_is_sticky(r);
    snprintf(detail, sizeof detail, "%s: %s", what, fattn_cu_error_name(&g->cu, r));
    cJSON_AddStringToObject(
        result, "status", sticky || !strncmp(what, "candidate", 9) ? FATTN_EVAL_STATUS_FAULT : FATTN_EVAL_STATUS_ERROR);
    cJSON_AddStringToObject(result, "error", fattn_cu_error_name(&g->cu, r));
    cJSON_AddStringToObject(result, "detail", detail);
    return sticky;
}

#define CU_EVAL(what, call)                                                                                            \
    do {                                                                                                               \
        CUresult r_ = (call);                                                                                          \
        if (r_ != CUDA_SUCCESS) {                                                                                      \
            ruined = failed(g, result, what, r_);                                                                      \
            goto out;                                                                                                  \
        }                                                                                                              \
    } while (0)

static void add_numerics(cJSON *result, const fattn_numerics *n)
{
    cJSON *j = cJSON_AddObjectToObject(result, "numerics");
    cJSON_AddNumberToObject(j, "n", (double)n->n);
    cJSON_AddNumberToObject(j, "n_bad", (double)n->n_bad);
    cJSON_AddNumberToObject(j, "n_nonfinite", (double)n->n_nonfinite);
    cJSON_AddNumberToObject(j, "max_abs_err", n->max_abs_err);
    cJSON_AddNumberToObject(j, "max_abs_ref", n->max_abs_ref);
    cJSON_AddNumberToObject(j, "norm_err", n->norm_err);
    cJSON_AddNumberToObject(j, "worst", (double)n->worst);
    cJSON_AddNumberToObject(j, "worst_out", isfinite(n->worst_out) ? n->worst_out : 0);
    cJSON_AddNumberToObject(j, "worst_ref", n->worst_ref);
}

/* Enqueues one run of r on (q, k, v) -> o. A cuDNN failure is reported as
 * CUDA_ERROR_UNKNOWN with the message in why. */
static CUresult run_once(gpu *g, runner *r, CUdeviceptr *q, CUdeviceptr *k, CUdeviceptr *v, CUstream s, char *why,
                         size_t why_size)
{
    if (r->cudnn)
        return fattn_cudnn_run(r->cudnn, *q, *k, *v, g->o, why, why_size) ? CUDA_ERROR_UNKNOWN : CUDA_SUCCESS;
    int batch = g->shape.batch, heads = g->shape.heads, seqlen = g->shape.seqlen;
    float scale = (float)(1.0 / sqrt((double)g->shape.head_dim));
    void *args[] = {q, k, v, &g->o, &batch, &heads, &seqlen, &scale};
    return g->cu.cuLaunchKernel(r->fn, r->gx, r->gy, r->gz, r->threads, 1, 1, r->smem, s, args, NULL);
}

/* The baseline's plan, made on first use in this worker. */
static fattn_cudnn *cudnn_baseline(gpu *g)
{
    if (g->cudnn || g->cudnn_why[0])
        return g->cudnn;
    fattn_cudnn *c;
    if (fattn_cudnn_load(&c, g->cudnn_why, sizeof g->cudnn_why))
        return NULL;
    if (fattn_cudnn_plan(c, &g->cu, &g->shape, g->stream, g->cudnn_why, sizeof g->cudnn_why)) {
        fattn_cudnn_free(&c, &g->cu);
        return NULL;
    }
    g->cudnn = c;
    return c;
}

static int gpu_eval(void *state, const cJSON *req, const void *cubin, size_t size, fattn_engine_io *io, cJSON *result)
{
    gpu *g = state;
    fattn_cu *cu = &g->cu;
    CUmodule mod = NULL;
    CUgraph graph = NULL;
    CUgraphExec exec = NULL;
    runner run = {0};
    int ruined = 0, use_graph = 1;
    char why[320] = "";
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(req, "grid");
    const cJSON *baseline = cJSON_GetObjectItemCaseSensitive(req, "baseline");
    unsigned long long seed = u64(req, "seed");
    int batch = g->shape.batch, heads = g->shape.heads, seqlen = g->shape.seqlen;
    float scale = (float)(1.0 / sqrt((double)g->shape.head_dim));
    (void)size;

    CU_EVAL("context", cu->cuCtxSetCurrent(g->ctx));
    if (cJSON_IsString(baseline)) {
        if (strcmp(baseline->valuestring, "cudnn") != 0 || !(run.cudnn = cudnn_baseline(g))) {
            cJSON_AddStringToObject(result, "status", FATTN_EVAL_STATUS_ERROR);
            cJSON_AddStringToObject(result, "detail", g->cudnn_why[0] ? g->cudnn_why : "unknown baseline");
            return 0;
        }
        cJSON_AddStringToObject(result, "baseline", fattn_cudnn_describe(run.cudnn));
    } else {
        run.gx = cJSON_GetArrayItem(grid, 0) ? (unsigned)cJSON_GetArrayItem(grid, 0)->valueint : 0;
        run.gy = cJSON_GetArrayItem(grid, 1) ? (unsigned)cJSON_GetArrayItem(grid, 1)->valueint : 0;
        run.gz = cJSON_GetArrayItem(grid, 2) ? (unsigned)cJSON_GetArrayItem(grid, 2)->valueint : 0;
        run.threads = (unsigned)num(req, "threads", 0);
        run.smem = (unsigned)num(req, "smem", 0);
        if (!cubin || !run.gx || !run.gy || !run.gz || !run.threads) {
            cJSON_AddStringToObject(result, "status", FATTN_EVAL_STATUS_ERROR);
            cJSON_AddStringToObject(result, "detail", "EVAL without a cubin, a grid or a block size");
            return 0;
        }
        CU_EVAL("module load", cu->cuModuleLoadData(&mod, cubin));
        CU_EVAL("module load", cu->cuModuleGetFunction(&run.fn, mod, "fattn_fwd"));
        if (run.smem > 48 * 1024)
            CU_EVAL("shared-memory attribute",
                    cu->cuFuncSetAttribute(run.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)run.smem));
    }

    /* 1. Numerics on fresh inputs, output poisoned. */
    io->phase(io, "numerics");
    CU_EVAL("input fill", fill(g, g->q0, seed, 0, g->stream));
    CU_EVAL("input fill", fill(g, g->k0, seed, 1, g->stream));
    CU_EVAL("input fill", fill(g, g->v0, seed, 2, g->stream));
    CU_EVAL("poison", cu->cuStreamSynchronize(g->stream));
    CU_EVAL("poison", cu->cuMemsetD16(g->o, FATTN_HALF_POISON, g->elems));
    CU_EVAL("poison", cu->cuCtxSynchronize());
    CU_EVAL(why[0] ? why : "candidate launch", run_once(g, &run, &g->q0, &g->k0, &g->v0, g->stream, why, sizeof why));
    CU_EVAL("candidate run", cu->cuStreamSynchronize(g->stream));
    {
        void *args[] = {&g->q0, &g->k0, &g->v0, &g->ref_o, &batch, &heads, &seqlen, &scale};
        unsigned rx = (unsigned)((seqlen + REF_THREADS - 1) / REF_THREADS);
        CU_EVAL("reference launch", cu->cuLaunchKernel(g->ref_fn, rx, (unsigned)heads, (unsigned)batch, REF_THREADS, 1,
                                                       1, 0, g->stream, args, NULL));
        CU_EVAL("reference run", cu->cuStreamSynchronize(g->stream));
    }
    CU_EVAL("copy back", cu->cuMemcpyDtoH(g->h_o, g->o, g->elems * 2));
    CU_EVAL("copy back", cu->cuMemcpyDtoH(g->h_ref, g->ref_o, g->elems * 4));
    fattn_numerics n;
    fattn_numerics_compare(g->h_o, g->h_ref, g->elems, g->atol, g->rtol, &n);
    add_numerics(result, &n);
    if (!fattn_numerics_ok(&n)) {
        char detail[400];
        fattn_numerics_describe(&n, &g->shape, detail, sizeof detail);
        cJSON_AddStringToObject(result, "status", FATTN_EVAL_STATUS_NUMERICS);
        cJSON_AddStringToObject(result, "detail", detail);
        goto out;
    }

    /* 2. Timing: R runs in a graph, rotating the timing sets; where a run
     * cannot be captured (some cuDNN engines), R runs back to back. */
    io->phase(io, "timing");
    CU_EVAL("graph capture", cu->cuStreamBeginCapture(g->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    for (int i = 0; i < g->reps && use_graph; ++i) {
        int s = i % g->sets;
        if (run_once(g, &run, &g->q[s], &g->k[s], &g->v[s], g->stream, why, sizeof why) != CUDA_SUCCESS)
            use_graph = 0;
    }
    if (cu->cuStreamEndCapture(g->stream, &graph) != CUDA_SUCCESS || !graph)
        use_graph = 0;
    if (use_graph && cu->cuGraphInstantiateWithFlags(&exec, graph, 0) != CUDA_SUCCESS)
        use_graph = 0;
    if (!use_graph) {
        if (!run.cudnn)
            CU_EVAL("graph capture", CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
        why[0] = '\0';
        CU_EVAL("stream", cu->cuCtxSynchronize());
    }
    cJSON_AddStringToObject(result, "timing", use_graph ? "graph" : "stream");
    for (int w = 0; w < g->warmup; ++w) {
        if (use_graph) {
            CU_EVAL("candidate run", cu->cuGraphLaunch(exec, g->stream));
        } else {
            for (int i = 0; i < g->reps; ++i)
                CU_EVAL(why[0] ? why : "candidate run", run_once(g, &run, &g->q[i % g->sets], &g->k[i % g->sets],
                                                                 &g->v[i % g->sets], g->stream, why, sizeof why));
        }
    }
    CU_EVAL("candidate run", cu->cuStreamSynchronize(g->stream));
    cJSON *samples = cJSON_AddArrayToObject(result, "samples");
    for (int s = 0; s < g->samples; ++s) {
        float ms = 0;
        if (g->flush)
            CU_EVAL("L2 flush", cu->cuMemsetD32Async(g->flush, (unsigned)s, g->flush_words, g->stream));
        CU_EVAL("timing", cu->cuEventRecord(g->start, g->stream));
        if (use_graph) {
            CU_EVAL("candidate run", cu->cuGraphLaunch(exec, g->stream));
        } else {
            for (int i = 0; i < g->reps; ++i)
                CU_EVAL(why[0] ? why : "candidate run", run_once(g, &run, &g->q[i % g->sets], &g->k[i % g->sets],
                                                                 &g->v[i % g->sets], g->stream, why, sizeof why));
        }
        CU_EVAL("timing", cu->cuEventRecord(g->stop, g->stream));
        CU_EVAL("candidate run", cu->cuEventSynchronize(g->stop));
        CU_EVAL("timing", cu->cuEventElapsedTime(&ms, g->start, g->stop));
        cJSON_AddItemToArray(samples, cJSON_CreateNumber((double)ms * 1000.0 / g->reps));
        if (s % 8 == 7)
            io->phase(io, "timing");
    }
    cJSON_AddStringToObject(result, "status", FATTN_EVAL_STATUS_OK);
out:
    if (exec)
        cu->cuGraphExecDestroy(exec);
    if (graph)
        cu->cuGraphDestroy(graph);
    if (mod && !ruined)
        cu->cuModuleUnload(mod);
    return ruined;
}

const fattn_engine_ops fattn_engine_gpu = {"gpu", gpu_init, gpu_eval, gpu_fini};
