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
 *     inputs, every element compared on the host (numerics.c), once for
 *     each input set (uniform, peaky); the worse answers;
 *  2. timing, if the numerics pass: R back-to-back launches captured in a
 *     CUDA graph, rotating through the timing sets; W warm-up replays; then
 *     S samples, each the CUDA-event time of one replay divided by R (the
 *     raw per-launch time: launch cost is not subtracted). With flush_l2, a
 *     buffer twice the L2 size is overwritten before each sample.
 * A kernel's parameters are the request's "args" (space/family.h's kinds;
 * none: the attention kernels' q, k, v, o, batch, heads, seqlen, scale):
 * tensor maps are encoded at load for the numerics set and each timing set,
 * so every launch of the timing graph reads its own set's buffers through
 * its own maps; a "workspace" is allocated at load and zeroed before every
 * launch (a memset node of the graph). A family with a reference of its own
 * ("family" naming one with reference_row) is checked against it on the
 * host, on the inputs read back; attention against fattn_ref.
 * A fault that ruins the context (misaligned or illegal address, launch
 * failure: the sticky errors of gpu/driver.h) is answered, then the worker
 * exits; any other error (a launch the driver refuses, a module that does
 * not load) is answered and, the context checked, the worker goes on. A
 * PHASE message precedes each step, so the watchdog of the search process
 * times each step, not the whole request; the cuDNN baseline's one-time
 * setup is a setup phase, under the longer setup timeout.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/device.h"
#include "baseline/cudnn.h"
#include "gpu/driver.h"
#include "gpu/tmap.h"
#include "space/family.h"
#include "run/engine.h"
#include "run/numerics.h"
#include "run/numerics_json.h"
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
    fattn_tolerance tol;
    uint16_t *h_o;
    float *h_ref;
    uint16_t *h_in[3];    /* Q, K, V read back for a host reference (on first use) */
    fattn_cudnn *cudnn;   /* the baseline, planned on first use */
    char cudnn_why[1200]; /* why it cannot be, once known */
} gpu;

/* What an EVAL runs: a candidate's kernel, or the cuDNN baseline. */
typedef struct runner {
    CUfunction fn;
    unsigned gx, gy, gz, threads, smem;
    fattn_cudnn *cudnn;
    fattn_arg args[FATTN_MAX_ARGS];
    int nargs, nmaps;
    CUtensorMap *maps; /* nmaps per input set: the numerics set's, then each timing set's */
    unsigned long long workspace;
    CUdeviceptr ws;
    const fattn_family *fam; /* NULL: an attention kernel */
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

/* Fills one tensor with the seeded values of input set `set`. */
static CUresult fill(gpu *g, CUdeviceptr dst, unsigned long long seed, unsigned tensor, int set, CUstream s)
{
    unsigned long long n = g->elems;
    float mul = tensor < 2 ? fattn_input_set_qk_mul(set) : 1.0f;
    void *args[] = {&dst, &n, &seed, &tensor, &mul};
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
        /* cuDNN's handle and buffers live on the context: before it goes. */
        fattn_cudnn_free(&g->cudnn, &g->cu);
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
    free(g->q), free(g->k), free(g->v);
    free(g->h_o), free(g->h_ref);
    free(g->h_in[0]), free(g->h_in[1]), free(g->h_in[2]);
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
    g->tol.atol = dnum(req, "atol", FATTN_DEFAULT_ATOL);
    g->tol.rtol = dnum(req, "rtol", FATTN_DEFAULT_RTOL);
    g->tol.max_rel_l2 = dnum(req, "max_rel_l2", FATTN_DEFAULT_MAX_REL_L2);
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
        CU_INIT(fill(g, g->q[s], timing_seed + (unsigned long long)s, 0, FATTN_INPUTS_UNIFORM, g->stream));
        CU_INIT(fill(g, g->k[s], timing_seed + (unsigned long long)s, 1, FATTN_INPUTS_UNIFORM, g->stream));
        CU_INIT(fill(g, g->v[s], timing_seed + (unsigned long long)s, 2, FATTN_INPUTS_UNIFORM, g->stream));
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

/* A cuDNN call that failed (its message is the step's name): not a driver
 * error code, so the context is probed like any non-sticky error. */
#define CUDNN_FAILED ((CUresult)-1)

/* Steps in which a non-sticky error means the driver refused to launch the
 * candidate as configured (rejected: launch_refused). */
static int launch_step(const char *what)
{
    return !strcmp(what, "candidate launch") || !strcmp(what, "shared-memory attribute");
}

/* Records a failed step in the result and says whether the context is
 * ruined (returns 1: the worker must exit). A sticky error ruins it; any
 * other must leave it usable, which a synchronize checks, so an error the
 * table does not know to be sticky cannot spoil the worker's later trials.
 * Verdicts: fault (ruined), launch (the driver refused the candidate's
 * launch, context intact), error (anything else, context intact). */
static int failed(gpu *g, cJSON *result, const char *what, CUresult r)
{
    char detail[400], err[96];
    int sticky = fattn_cu_error_is_sticky(r);
    CUresult probe = sticky ? r : g->cu.cuCtxSynchronize();
    snprintf(err, sizeof err, "%s", r == CUDNN_FAILED ? "cuDNN error" : fattn_cu_error_name(&g->cu, r));
    if (!sticky && probe != CUDA_SUCCESS)
        snprintf(detail, sizeof detail, "%s: %s; the context then reported %s", what, err,
                 fattn_cu_error_name(&g->cu, probe));
    else
        snprintf(detail, sizeof detail, "%s: %s", what, err);
    sticky |= probe != CUDA_SUCCESS;
    cJSON_AddStringToObject(result, "status",
                            sticky                                                     ? FATTN_EVAL_STATUS_FAULT
                            : launch_step(what) && fattn_cu_error_is_launch_refusal(r) ? FATTN_EVAL_STATUS_LAUNCH
                                                                                       : FATTN_EVAL_STATUS_ERROR);
    cJSON_AddStringToObject(result, "error", sticky && probe != r ? fattn_cu_error_name(&g->cu, probe) : err);
    cJSON_AddStringToObject(result, "detail", detail);
    return sticky;
}

/* The tensors of input set `set` (-1: the numerics set): its Q, K and V,
 * and the output, in the order of FATTN_ARG_Q .. FATTN_ARG_O. */
static void set_tensors(gpu *g, int set, CUdeviceptr *t[4])
{
    t[0] = set < 0 ? &g->q0 : &g->q[set];
    t[1] = set < 0 ? &g->k0 : &g->k[set];
    t[2] = set < 0 ? &g->v0 : &g->v[set];
    t[3] = &g->o;
}

/* Enqueues one run of r on input set `set` (-1: the numerics set) -> o: the
 * workspace zeroed, then the launch with its parameters. A cuDNN failure is
 * reported as CUDNN_FAILED with the message in why. */
static CUresult run_once(gpu *g, runner *r, int set, CUstream s, char *why, size_t why_size)
{
    CUdeviceptr *tensor[4];
    set_tensors(g, set, tensor);
    if (r->cudnn)
        return fattn_cudnn_run(r->cudnn, *tensor[0], *tensor[1], *tensor[2], g->o, why, why_size) ? CUDNN_FAILED
                                                                                                  : CUDA_SUCCESS;
    int ints[3] = {g->shape.batch, g->shape.heads, g->shape.seqlen};
    float scale = (float)(1.0 / sqrt((double)g->shape.head_dim));
    CUtensorMap *maps = r->maps ? r->maps + (size_t)(set + 1) * (size_t)r->nmaps : NULL;
    void *args[FATTN_MAX_ARGS];
    for (int i = 0, m = 0; i < r->nargs; ++i) {
        const int kind = r->args[i].kind;
        args[i] = kind <= FATTN_ARG_O           ? (void *)tensor[kind]
                  : kind == FATTN_ARG_SCALE     ? (void *)&scale
                  : kind == FATTN_ARG_TMAP      ? (void *)&maps[m++]
                  : kind == FATTN_ARG_WORKSPACE ? (void *)&r->ws
                                                : (void *)&ints[kind - FATTN_ARG_BATCH];
    }
    if (r->workspace) {
        CUresult z = g->cu.cuMemsetD8Async(r->ws, 0, (size_t)r->workspace, s);
        if (z != CUDA_SUCCESS)
            return z;
    }
    return g->cu.cuLaunchKernel(r->fn, r->gx, r->gy, r->gz, r->threads, 1, 1, r->smem, s, args, NULL);
}

/* The baseline's plan, made on first use in this worker: its one-time setup
 * (load, heuristics, plan) runs under the setup timeout, not the kernel
 * watchdog. */
static fattn_cudnn *cudnn_baseline(gpu *g, fattn_engine_io *io)
{
    if (g->cudnn || g->cudnn_why[0])
        return g->cudnn;
    fattn_cudnn *c;
    io->setup(io, "setting up the cuDNN baseline (load, heuristics, plan)");
    if (fattn_cudnn_load(&c, g->cudnn_why, sizeof g->cudnn_why))
        return NULL;
    char why[480];
    if (fattn_cudnn_plan(c, &g->cu, &g->shape, g->stream, why, sizeof why)) {
        /* Which library failed, then how. */
        snprintf(g->cudnn_why, sizeof g->cudnn_why, "%.600s: %s", fattn_cudnn_describe(c), why);
        fattn_cudnn_free(&c, &g->cu);
        return NULL;
    }
    g->cudnn = c;
    return c;
}

/* One kernel being measured: its runner, module and timing graph. A failed
 * step returns the driver's error with `what` naming the step (cuDNN's own
 * message, when it failed, is in `why`). */
typedef struct timed {
    runner run;
    CUmodule mod;
    CUgraph graph;
    CUgraphExec exec;
    int use_graph;
    const char *what;
    char why[320];
} timed;

#define STEP(name, call)                                                                                               \
    do {                                                                                                               \
        CUresult r_ = (call);                                                                                          \
        if (r_ != CUDA_SUCCESS) {                                                                                      \
            t->what = t->why[0] ? t->why : (name);                                                                     \
            return r_;                                                                                                 \
        }                                                                                                              \
    } while (0)

/* Answers a request the worker cannot run (status error). Returns 1. */
static int refuse(cJSON *result, const char *detail)
{
    cJSON_AddStringToObject(result, "status", FATTN_EVAL_STATUS_ERROR);
    cJSON_AddStringToObject(result, "detail", detail);
    return 1;
}

/* The kernel's parameters, its family's reference and its workspace from
 * request j; the tensor maps of every input set encoded. Returns 0, or 1
 * with the request answered (or *err set). */
static int load_args(gpu *g, const cJSON *j, timed *t, cJSON *result, CUresult *err)
{
    runner *r = &t->run;
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(j, "args");
    const cJSON *family = cJSON_GetObjectItemCaseSensitive(j, "family");
    if (cJSON_IsString(family)) {
        const fattn_family *f = fattn_family_find(family->valuestring);
        if (!f)
            return refuse(result, "EVAL of a kernel family this worker does not know");
        r->fam = f->reference_row ? f : NULL;
    }
    if (!args) {
        fattn_launch l;
        fattn_launch_attention_args(&l);
        memcpy(r->args, l.args, sizeof r->args);
        r->nargs = l.nargs;
    } else {
        r->nargs = cJSON_GetArraySize(args);
        if (!cJSON_IsArray(args) || r->nargs > FATTN_MAX_ARGS)
            return refuse(result, "EVAL with \"args\" not an array of at most 16 parameters");
        for (int i = 0; i < r->nargs; ++i) {
            const cJSON *a = cJSON_GetArrayItem(args, i), *m = cJSON_GetObjectItemCaseSensitive(a, "tmap");
            fattn_arg *x = &r->args[i];
            memset(x, 0, sizeof *x);
            x->kind = cJSON_IsString(a) ? fattn_arg_kind_find(a->valuestring) : cJSON_IsString(m) ? FATTN_ARG_TMAP : -1;
            if (x->kind == FATTN_ARG_TMAP) {
                x->tensor = cJSON_IsString(m) ? fattn_arg_kind_find(m->valuestring) : -1;
                x->box_rows = (unsigned)num(a, "box_rows", 0);
                x->box_cols = (unsigned)num(a, "box_cols", 0);
                x->swizzle = (unsigned)num(a, "swizzle", 0);
            }
            if (x->kind < 0 || (x->kind == FATTN_ARG_TMAP && (x->tensor < FATTN_ARG_Q || x->tensor > FATTN_ARG_O)))
                return refuse(result, "EVAL with a parameter this worker does not know");
            r->nmaps += x->kind == FATTN_ARG_TMAP;
        }
    }
    const cJSON *ws = cJSON_GetObjectItemCaseSensitive(j, "workspace");
    r->workspace = cJSON_IsString(ws) ? strtoull(ws->valuestring, NULL, 10) : 0;
    if (r->workspace) {
        t->what = "workspace";
        if ((*err = g->cu.cuMemAlloc(&r->ws, (size_t)r->workspace)) != CUDA_SUCCESS)
            return 1;
    }
    if (!r->nmaps)
        return 0;
    /* The maps of the numerics set, then of each timing set. */
    t->what = "tensor map";
    r->maps = aligned_alloc(64, (size_t)(g->sets + 1) * (size_t)r->nmaps * sizeof *r->maps);
    if (!r->maps)
        return refuse(result, "out of host memory for the tensor maps");
    for (int set = -1; set < g->sets; ++set) {
        CUdeviceptr *tensor[4];
        set_tensors(g, set, tensor);
        for (int i = 0, m = 0; i < r->nargs; ++i) {
            const fattn_arg *a = &r->args[i];
            if (a->kind != FATTN_ARG_TMAP)
                continue;
            fattn_tmap d;
            fattn_tmap_attention(&d, (const void *)(uintptr_t)*tensor[a->tensor], g->shape.batch, g->shape.heads,
                                 g->shape.seqlen, g->shape.head_dim, a->box_rows, a->box_cols,
                                 fattn_tmap_swizzle(a->swizzle));
            if ((*err = fattn_tmap_encode(&g->cu, &d, &r->maps[(size_t)(set + 1) * (size_t)r->nmaps + (size_t)m++]))
                != CUDA_SUCCESS)
                return 1;
        }
    }
    return 0;
}

/* Loads the kernel of request j (or plans its baseline). A request that
 * cannot be run is answered in `result` (status error) and returns 1. */
static int timed_load(gpu *g, const cJSON *j, const void *cubin, timed *t, fattn_engine_io *io, cJSON *result,
                      CUresult *err)
{
    fattn_cu *cu = &g->cu;
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(j, "grid");
    const cJSON *baseline = cJSON_GetObjectItemCaseSensitive(j, "baseline");
    *err = CUDA_SUCCESS;
    if (cJSON_IsString(baseline)) {
        if (strcmp(baseline->valuestring, "cudnn") != 0 || !(t->run.cudnn = cudnn_baseline(g, io))) {
            cJSON_AddStringToObject(result, "status", FATTN_EVAL_STATUS_ERROR);
            cJSON_AddStringToObject(result, "detail", g->cudnn_why[0] ? g->cudnn_why : "unknown baseline");
            return 1;
        }
        cJSON_AddStringToObject(result, "baseline", fattn_cudnn_describe(t->run.cudnn));
        return 0;
    }
    t->run.gx = cJSON_GetArrayItem(grid, 0) ? (unsigned)cJSON_GetArrayItem(grid, 0)->valueint : 0;
    t->run.gy = cJSON_GetArrayItem(grid, 1) ? (unsigned)cJSON_GetArrayItem(grid, 1)->valueint : 0;
    t->run.gz = cJSON_GetArrayItem(grid, 2) ? (unsigned)cJSON_GetArrayItem(grid, 2)->valueint : 0;
    t->run.threads = (unsigned)num(j, "threads", 0);
    t->run.smem = (unsigned)num(j, "smem", 0);
    if (!cubin || !t->run.gx || !t->run.gy || !t->run.gz || !t->run.threads) {
        cJSON_AddStringToObject(result, "status", FATTN_EVAL_STATUS_ERROR);
        cJSON_AddStringToObject(result, "detail", "EVAL without a cubin, a grid or a block size");
        return 1;
    }
    /* The family's entry; a request without one is the mma kernel's. */
    const cJSON *entry = cJSON_GetObjectItemCaseSensitive(j, "entry");
    t->what = "module load";
    if ((*err = cu->cuModuleLoadData(&t->mod, cubin)) != CUDA_SUCCESS
        || (*err =
                cu->cuModuleGetFunction(&t->run.fn, t->mod, cJSON_IsString(entry) ? entry->valuestring : "fattn_fwd"))
               != CUDA_SUCCESS)
        return 1;
    t->what = "shared-memory attribute";
    if (t->run.smem > 48 * 1024
        && (*err = cu->cuFuncSetAttribute(t->run.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)t->run.smem))
               != CUDA_SUCCESS)
        return 1;
    return load_args(g, j, t, result, err);
}

/* Numerics on fresh inputs of input set `set` from `seed`, the output
 * poisoned: the kernel and the reference on the same inputs, every element
 * compared. */
static CUresult verify_set(gpu *g, timed *t, unsigned long long seed, int set, fattn_numerics *n)
{
    fattn_cu *cu = &g->cu;
    int batch = g->shape.batch, heads = g->shape.heads, seqlen = g->shape.seqlen;
    float scale = (float)(1.0 / sqrt((double)g->shape.head_dim));
    STEP("input fill", fill(g, g->q0, seed, 0, set, g->stream));
    STEP("input fill", fill(g, g->k0, seed, 1, set, g->stream));
    STEP("input fill", fill(g, g->v0, seed, 2, set, g->stream));
    STEP("poison", cu->cuStreamSynchronize(g->stream));
    STEP("poison", cu->cuMemsetD16(g->o, FATTN_HALF_POISON, g->elems));
    STEP("poison", cu->cuCtxSynchronize());
    STEP("candidate launch", run_once(g, &t->run, -1, g->stream, t->why, sizeof t->why));
    STEP("candidate run", cu->cuStreamSynchronize(g->stream));
    STEP("copy back", cu->cuMemcpyDtoH(g->h_o, g->o, g->elems * 2));
    if (t->run.fam) {
        /* The family's own reference, on the inputs as the kernel read them. */
        const CUdeviceptr in[3] = {g->q0, g->k0, g->v0};
        for (int i = 0; i < 3; ++i) {
            if (!g->h_in[i])
                g->h_in[i] = fattn_xmalloc(g->elems * 2);
            STEP("copy back", cu->cuMemcpyDtoH(g->h_in[i], in[i], g->elems * 2));
        }
        const size_t d = (size_t)g->shape.head_dim, rows = g->elems / d;
        double *row = fattn_xmalloc(d * sizeof *row);
        for (size_t i = 0; i < rows; ++i) {
            t->run.fam->reference_row(&g->shape, g->h_in[0], g->h_in[1], g->h_in[2], i, row);
            for (size_t c = 0; c < d; ++c)
                g->h_ref[i * d + c] = (float)row[c];
        }
        free(row);
    } else {
        void *args[] = {&g->q0, &g->k0, &g->v0, &g->ref_o, &batch, &heads, &seqlen, &scale};
        unsigned rx = (unsigned)((seqlen + REF_THREADS - 1) / REF_THREADS);
        STEP("reference launch", cu->cuLaunchKernel(g->ref_fn, rx, (unsigned)heads, (unsigned)batch, REF_THREADS, 1, 1,
                                                    0, g->stream, args, NULL));
        STEP("reference run", cu->cuStreamSynchronize(g->stream));
        STEP("copy back", cu->cuMemcpyDtoH(g->h_ref, g->ref_o, g->elems * 4));
    }
    fattn_numerics_compare(g->h_o, g->h_ref, g->elems, &g->tol, n);
    n->set = set;
    return CUDA_SUCCESS;
}

/* Numerics on every input set; *n is the worse. */
static CUresult verify(gpu *g, timed *t, unsigned long long seed, fattn_numerics *n)
{
    fattn_numerics each[FATTN_INPUT_SETS];
    const fattn_numerics *worse = NULL;
    for (int set = 0; set < FATTN_INPUT_SETS; ++set) {
        CUresult r = verify_set(g, t, seed, set, &each[set]);
        if (r != CUDA_SUCCESS)
            return r;
        worse = worse ? fattn_numerics_worse(worse, &each[set]) : &each[set];
    }
    *n = *worse;
    return CUDA_SUCCESS;
}

/* R runs rotating the timing sets, in a CUDA graph; where a run cannot be
 * captured (some cuDNN engines), they run back to back. */
static CUresult run_reps(gpu *g, timed *t)
{
    if (t->use_graph) {
        STEP("candidate run", g->cu.cuGraphLaunch(t->exec, g->stream));
        return CUDA_SUCCESS;
    }
    for (int i = 0; i < g->reps; ++i)
        STEP("candidate run", run_once(g, &t->run, i % g->sets, g->stream, t->why, sizeof t->why));
    return CUDA_SUCCESS;
}

/* Captures the graph and runs the warm-up replays. */
static CUresult timed_prepare(gpu *g, timed *t)
{
    fattn_cu *cu = &g->cu;
    t->use_graph = 1;
    STEP("graph capture", cu->cuStreamBeginCapture(g->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    for (int i = 0; i < g->reps && t->use_graph; ++i) {
        if (run_once(g, &t->run, i % g->sets, g->stream, t->why, sizeof t->why) != CUDA_SUCCESS)
            t->use_graph = 0;
    }
    if (cu->cuStreamEndCapture(g->stream, &t->graph) != CUDA_SUCCESS || !t->graph)
        t->use_graph = 0;
    if (t->use_graph && cu->cuGraphInstantiateWithFlags(&t->exec, t->graph, 0) != CUDA_SUCCESS)
        t->use_graph = 0;
    if (!t->use_graph) {
        if (!t->run.cudnn) {
            t->what = "graph capture";
            return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        }
        t->why[0] = '\0';
        STEP("stream", cu->cuCtxSynchronize());
    }
    for (int w = 0; w < g->warmup; ++w) {
        CUresult r = run_reps(g, t);
        if (r != CUDA_SUCCESS)
            return r;
    }
    STEP("candidate run", cu->cuStreamSynchronize(g->stream));
    return CUDA_SUCCESS;
}

/* One sample: the CUDA-event time of R runs, per run, in microseconds. */
static CUresult timed_sample(gpu *g, timed *t, int s, double *us)
{
    fattn_cu *cu = &g->cu;
    float ms = 0;
    if (g->flush)
        STEP("L2 flush", cu->cuMemsetD32Async(g->flush, (unsigned)s, g->flush_words, g->stream));
    STEP("timing", cu->cuEventRecord(g->start, g->stream));
    CUresult r = run_reps(g, t);
    if (r != CUDA_SUCCESS)
        return r;
    STEP("timing", cu->cuEventRecord(g->stop, g->stream));
    STEP("candidate run", cu->cuEventSynchronize(g->stop));
    STEP("timing", cu->cuEventElapsedTime(&ms, g->start, g->stop));
    *us = (double)ms * 1000.0 / g->reps;
    return CUDA_SUCCESS;
}

static void timed_release(gpu *g, timed *t, int ruined)
{
    if (t->exec)
        g->cu.cuGraphExecDestroy(t->exec);
    if (t->graph)
        g->cu.cuGraphDestroy(t->graph);
    if (t->mod && !ruined)
        g->cu.cuModuleUnload(t->mod);
    if (t->run.ws && !ruined)
        g->cu.cuMemFree(t->run.ws);
    free(t->run.maps);
    memset(t, 0, sizeof *t);
}

/* Answers a failed step in `result`; returns 1 when the context is ruined. */
static int step_failed(gpu *g, timed *t, cJSON *result, CUresult r)
{
    return failed(g, result, t->what ? t->what : "candidate run", r);
}

/* Verifies; answers numerics failures in `result`. Returns 0 when the
 * numerics pass, 1 when they do not, 2 on a driver error (answered), 3 when
 * that error ruined the context. */
static int verify_into(gpu *g, timed *t, unsigned long long seed, const char *name, cJSON *result)
{
    fattn_numerics n;
    CUresult r = verify(g, t, seed, &n);
    if (r != CUDA_SUCCESS)
        return step_failed(g, t, result, r) ? 3 : 2;
    fattn_numerics_to_json(result, name, &n);
    if (fattn_numerics_ok(&n))
        return 0;
    char detail[400];
    fattn_numerics_describe(&n, &g->shape, detail, sizeof detail);
    cJSON_AddStringToObject(result, "status", FATTN_EVAL_STATUS_NUMERICS);
    cJSON_AddStringToObject(result, "detail", detail);
    return 1;
}

static int gpu_eval(void *state, const cJSON *req, const void *cubin, size_t size, fattn_engine_io *io, cJSON *result)
{
    gpu *g = state;
    timed t = {0};
    CUresult r;
    int ruined = 0;
    (void)size;

    if ((r = g->cu.cuCtxSetCurrent(g->ctx)) != CUDA_SUCCESS)
        return failed(g, result, "context", r);
    if (timed_load(g, req, cubin, &t, io, result, &r)) {
        ruined = r != CUDA_SUCCESS && failed(g, result, t.what, r);
        goto out;
    }
    /* 1. Numerics on fresh inputs, output poisoned. */
    io->phase(io, "numerics");
    int v = verify_into(g, &t, u64(req, "seed"), "numerics", result);
    if (v) {
        ruined = v == 3;
        goto out;
    }
    /* 2. Timing: warm-up replays, then the samples. */
    io->phase(io, "timing");
    if ((r = timed_prepare(g, &t)) != CUDA_SUCCESS) {
        ruined = step_failed(g, &t, result, r);
        goto out;
    }
    cJSON_AddStringToObject(result, "timing", t.use_graph ? "graph" : "stream");
    cJSON *samples = cJSON_AddArrayToObject(result, "samples");
    for (int s = 0; s < g->samples; ++s) {
        double us;
        if ((r = timed_sample(g, &t, s, &us)) != CUDA_SUCCESS) {
            cJSON_DeleteItemFromObject(result, "samples");
            ruined = step_failed(g, &t, result, r);
            goto out;
        }
        cJSON_AddItemToArray(samples, cJSON_CreateNumber(us));
        if (s % 8 == 7)
            io->phase(io, "timing");
    }
    cJSON_AddStringToObject(result, "status", FATTN_EVAL_STATUS_OK);
out:
    timed_release(g, &t, ruined);
    return ruined;
}

/* CONFIRM: the kernels of "entries" (cubins back to back in the payload at
 * "offset"/"size"; or a "baseline") measured interleaved: each verified on
 * fresh inputs from "seed", graphs captured and warmed up, then "n" rounds
 * of one sample of each entry in turn (A B A B ...), then each verified
 * again on inputs from seed + 1. Answers {"entries": [RESULT, ...]}. */
static int gpu_confirm(void *state, const cJSON *req, const void *payload, size_t size, fattn_engine_io *io,
                       cJSON *result)
{
    gpu *g = state;
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(req, "entries");
    int k = cJSON_GetArraySize(entries), n = num(req, "n", 0), ruined = 0;
    unsigned long long seed = u64(req, "seed");
    cJSON *out = cJSON_AddArrayToObject(result, "entries");
    CUresult r;
    if (k < 1 || k > 64 || n < 1) {
        cJSON_AddStringToObject(result, "status", FATTN_EVAL_STATUS_ERROR);
        cJSON_AddStringToObject(result, "detail", "CONFIRM needs 1 to 64 entries and n >= 1");
        return 0;
    }
    if ((r = g->cu.cuCtxSetCurrent(g->ctx)) != CUDA_SUCCESS)
        return failed(g, result, "context", r);
    timed *t = fattn_xcalloc((size_t)k, sizeof *t);
    cJSON **res = fattn_xcalloc((size_t)k, sizeof *res), **samples = fattn_xcalloc((size_t)k, sizeof *samples);
    int *live = fattn_xcalloc((size_t)k, sizeof *live);
    for (int i = 0; i < k; ++i)
        cJSON_AddItemToArray(out, res[i] = cJSON_CreateObject());
    /* Load, verify, capture and warm up each entry. */
    io->phase(io, "numerics");
    for (int i = 0; i < k && !ruined; ++i) {
        const cJSON *e = cJSON_GetArrayItem(entries, i);
        size_t off = (size_t)num(e, "offset", 0), len = (size_t)num(e, "size", 0);
        const void *cubin = len && off + len <= size ? (const unsigned char *)payload + off : NULL;
        if (timed_load(g, e, cubin, &t[i], io, res[i], &r)) {
            ruined = r != CUDA_SUCCESS && failed(g, res[i], t[i].what, r);
            continue;
        }
        io->phase(io, "numerics"); /* after a setup, the watchdog again */
        int v = verify_into(g, &t[i], seed, "numerics", res[i]);
        if (v) {
            ruined = v == 3;
            continue;
        }
        if ((r = timed_prepare(g, &t[i])) != CUDA_SUCCESS) {
            ruined = step_failed(g, &t[i], res[i], r);
            continue;
        }
        cJSON_AddStringToObject(res[i], "timing", t[i].use_graph ? "graph" : "stream");
        live[i] = 1;
    }
    /* The rounds. */
    for (int s = 0; s < n && !ruined; ++s) {
        io->phase(io, "timing");
        for (int i = 0; i < k && !ruined; ++i) {
            double us;
            if (!live[i])
                continue;
            if ((r = timed_sample(g, &t[i], s, &us)) != CUDA_SUCCESS) {
                ruined = step_failed(g, &t[i], res[i], r);
                live[i] = 0;
                continue;
            }
            if (!samples[i])
                samples[i] = cJSON_AddArrayToObject(res[i], "samples");
            cJSON_AddItemToArray(samples[i], cJSON_CreateNumber(us));
        }
    }
    /* Verified again, on other inputs, after the timing. */
    io->phase(io, "numerics");
    for (int i = 0; i < k && !ruined; ++i) {
        if (!live[i])
            continue;
        int v = verify_into(g, &t[i], seed + 1, "numerics_after", res[i]);
        ruined = v == 3;
        if (!v)
            cJSON_AddStringToObject(res[i], "status", FATTN_EVAL_STATUS_OK);
        else if (samples[i])
            cJSON_DeleteItemFromObject(res[i], "samples");
    }
    for (int i = 0; i < k; ++i) {
        if (ruined && !cJSON_GetObjectItemCaseSensitive(res[i], "status")) {
            cJSON_AddStringToObject(res[i], "status", FATTN_EVAL_STATUS_ERROR);
            cJSON_AddStringToObject(res[i], "detail", "not measured: another kernel of the confirmation faulted");
        }
        timed_release(g, &t[i], ruined);
    }
    cJSON_AddStringToObject(result, "status", ruined ? FATTN_EVAL_STATUS_FAULT : FATTN_EVAL_STATUS_OK);
    free(t), free(res), free(samples), free(live);
    return ruined;
}

const fattn_engine_ops fattn_engine_gpu = {"gpu", gpu_init, gpu_eval, gpu_confirm, gpu_fini};
