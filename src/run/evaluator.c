/*
 * evaluator.c - the GPU evaluator (over the worker process) and the replay
 * evaluator (over a landscape file).
 */
#include "run/evaluator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/landscape.h"
#include "run/numerics_json.h"
#include "run/wire.h"
#include "run/worker.h"
#include "util/err.h"
#include "util/misc.h"

void fattn_eval_result_release(fattn_eval_result *r)
{
    free(r->samples);
    r->samples = NULL;
    r->nsamples = 0;
}

const char *fattn_eval_status_name(int status)
{
    switch (status) {
    case FATTN_EVAL_OK: return "ok";
    case FATTN_EVAL_NUMERICS: return "numerics";
    case FATTN_EVAL_FAULT: return "runtime_fault";
    case FATTN_EVAL_TIMEOUT: return "timeout";
    case FATTN_EVAL_LAUNCH: return "launch_refused";
    default: return "error";
    }
}

int fattn_evaluate(fattn_evaluator *e, const fattn_eval_request *req, fattn_eval_result *out)
{
    double t0 = fattn_now_ms();
    memset(out, 0, sizeof *out);
    int rc = e->ops->eval(e, req, out);
    out->wall_ms = fattn_now_ms() - t0;
    return rc;
}

int fattn_evaluate_interleaved(fattn_evaluator *e, const fattn_eval_request *reqs, size_t k, int n,
                               fattn_eval_result *out)
{
    memset(out, 0, k * sizeof *out);
    if (!e->ops->interleaved)
        return fattn_error(FATTN_EFAIL, "the %s evaluator cannot measure: confirm needs a GPU", e->ops->name);
    double t0 = fattn_now_ms();
    int rc = e->ops->interleaved(e, reqs, k, n, out);
    for (size_t i = 0; i < k; ++i)
        out[i].wall_ms = fattn_now_ms() - t0;
    return rc;
}

void fattn_evaluator_close(fattn_evaluator **e)
{
    if (*e)
        (*e)->ops->close(*e);
    *e = NULL;
}

/* ---- gpu ---- */

typedef struct gpu_eval {
    fattn_evaluator base;
    fattn_gpu_eval_config cfg;
    unsigned char *ref;
    cJSON *init;
    fattn_worker *worker;
    int sm_count; /* the worker's GPU's, for launches that depend on it */
} gpu_eval;

static void add_u64(cJSON *j, const char *name, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    cJSON_AddStringToObject(j, name, buf);
}

/* Starts and initializes a worker; on failure the message is in why. */
static int start_worker(gpu_eval *g, char *why, size_t why_size)
{
    fattn_msg reply;
    char call_why[512];
    if (fattn_worker_start(g->cfg.worker_exe, &g->worker, why, why_size))
        return FATTN_EFAIL;
    ++g->base.workers_started;
    fattn_worker_set_setup_timeout(g->worker, g->cfg.setup_timeout_ms);
    /* INIT may take a while on a fresh device (context creation, buffers). */
    int rc = fattn_worker_call(g->worker, FATTN_MSG_INIT, g->init, g->ref, g->cfg.ref_size, g->cfg.setup_timeout_ms,
                               &reply, call_why, sizeof call_why);
    if (rc) {
        snprintf(why, why_size, "the GPU worker failed to start: %.400s", call_why);
        fattn_worker_stop(&g->worker);
        return FATTN_EFAIL;
    }
    if (reply.type != FATTN_MSG_READY) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(reply.json, "message");
        snprintf(why, why_size, "%s", cJSON_IsString(m) ? m->valuestring : "the GPU worker refused to start");
        fattn_msg_release(&reply);
        fattn_worker_stop(&g->worker);
        return FATTN_EFAIL;
    }
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(reply.json, "name");
    const cJSON *sms = cJSON_GetObjectItemCaseSensitive(reply.json, "sm_count");
    g->sm_count = cJSON_IsNumber(sms) ? sms->valueint : 0;
    const cJSON *uuid = cJSON_GetObjectItemCaseSensitive(reply.json, "uuid");
    if (cJSON_IsString(name))
        snprintf(g->base.device, sizeof g->base.device, "%s", name->valuestring);
    snprintf(g->base.uuid, sizeof g->base.uuid, "%s", cJSON_IsString(uuid) ? uuid->valuestring : "");
    char *props = cJSON_PrintUnformatted(reply.json);
    snprintf(g->base.device_json, sizeof g->base.device_json, "%s", props ? props : "{}");
    cJSON_free(props);
    fattn_msg_release(&reply);
    return FATTN_OK;
}

/* Turns a RESULT message into a verdict. */
static void read_result(gpu_eval *g, const cJSON *j, fattn_eval_result *out)
{
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(j, "status");
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(j, "error");
    const cJSON *detail = cJSON_GetObjectItemCaseSensitive(j, "detail");
    const cJSON *num = cJSON_GetObjectItemCaseSensitive(j, "numerics");
    const cJSON *samples = cJSON_GetObjectItemCaseSensitive(j, "samples");
    const char *s = cJSON_IsString(status) ? status->valuestring : "";
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(j, "timing");
    const cJSON *baseline = cJSON_GetObjectItemCaseSensitive(j, "baseline");
    snprintf(out->timing_kind, sizeof out->timing_kind, "%s", cJSON_IsString(kind) ? kind->valuestring : "graph");
    if (cJSON_IsString(baseline))
        snprintf(out->baseline, sizeof out->baseline, "%s", baseline->valuestring);
    const cJSON *after = cJSON_GetObjectItemCaseSensitive(j, "numerics_after");
    const cJSON *phase = cJSON_GetObjectItemCaseSensitive(j, "phase_ms");
    const cJSON *num_ms = cJSON_GetObjectItemCaseSensitive(phase, "numerics");
    const cJSON *timing_ms = cJSON_GetObjectItemCaseSensitive(phase, "timing");
    if (cJSON_IsNumber(num_ms) && cJSON_IsNumber(timing_ms) && num_ms->valuedouble >= 0
        && timing_ms->valuedouble >= 0) {
        out->has_phase_ms = 1;
        out->validation_ms = num_ms->valuedouble;
        out->benchmark_ms = timing_ms->valuedouble;
    }
    if (cJSON_IsObject(num)) {
        out->has_numerics = 1;
        fattn_numerics_from_json(num, &out->num);
    }
    if (cJSON_IsObject(after)) {
        out->has_numerics_after = 1;
        fattn_numerics_from_json(after, &out->num_after);
    }
    if (!strcmp(s, "ok")) {
        int n = cJSON_IsArray(samples) ? cJSON_GetArraySize(samples) : 0;
        if (n <= 0) {
            out->status = FATTN_EVAL_ERROR;
            snprintf(out->detail, sizeof out->detail, "the worker reported success without samples");
            return;
        }
        out->samples = fattn_xmalloc((size_t)n * sizeof *out->samples);
        for (const cJSON *x = samples->child; x; x = x->next)
            if (cJSON_IsNumber(x) && x->valuedouble > 0)
                out->samples[out->nsamples++] = x->valuedouble;
        if (out->nsamples != (size_t)n) {
            out->status = FATTN_EVAL_ERROR;
            snprintf(out->detail, sizeof out->detail, "the worker reported malformed samples");
            return;
        }
        out->status = FATTN_EVAL_OK;
        out->has_timing = 1;
        fattn_timing_summarize(out->samples, out->nsamples, &g->cfg.shape, &out->timing);
        snprintf(out->detail, sizeof out->detail,
                 "numerics: rel L2 %.3g, max |o-r| %.3g (normalized %.3g); median %.3f us per launch (p10 %.3f, p90 "
                 "%.3f), %.1f TFLOP/s, %.1f GB/s",
                 out->num.rel_l2, out->num.max_abs_err, out->num.norm_err, out->timing.median_us, out->timing.p10_us,
                 out->timing.p90_us, out->timing.tflops, out->timing.gbps);
        return;
    }
    out->status = !strcmp(s, "numerics") ? FATTN_EVAL_NUMERICS
                  : !strcmp(s, "fault")  ? FATTN_EVAL_FAULT
                  : !strcmp(s, "launch") ? FATTN_EVAL_LAUNCH
                                         : FATTN_EVAL_ERROR;
    if (out->status == FATTN_EVAL_FAULT || out->status == FATTN_EVAL_LAUNCH)
        snprintf(out->detail, sizeof out->detail, "%s (%s)", cJSON_IsString(error) ? error->valuestring : "fault",
                 cJSON_IsString(detail) ? detail->valuestring : "");
    else if (out->status == FATTN_EVAL_NUMERICS && !cJSON_IsString(detail))
        fattn_numerics_describe(&out->num, &g->cfg.shape, out->detail, sizeof out->detail);
    else
        snprintf(out->detail, sizeof out->detail, "%s",
                 cJSON_IsString(detail) ? detail->valuestring : "the worker could not run the configuration");
}

/* A worker, started anew where the last one died. */
static int ensure_worker(gpu_eval *g, fattn_eval_result *out)
{
    char why[512];
    if (fattn_worker_alive(g->worker))
        return FATTN_OK;
    fattn_worker_stop(&g->worker);
    if (!start_worker(g, why, sizeof why))
        return FATTN_OK;
    out->status = FATTN_EVAL_ERROR;
    snprintf(out->detail, sizeof out->detail, "%s", why);
    return fattn_error(FATTN_EFAIL, "%s", why);
}

/* The request for one kernel (or baseline), without its cubin. */
static cJSON *request_json(const gpu_eval *g, const fattn_eval_request *req)
{
    const fattn_shape *s = &g->cfg.shape;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "key", req->key);
    if (req->baseline) {
        cJSON_AddStringToObject(j, "baseline", req->baseline);
    } else {
        cJSON *grid = cJSON_AddArrayToObject(j, "grid");
        fattn_launch l; /* the family's launch: its grid */
        req->cfg->fam->launch(req->cfg, s, g->sm_count, &l);
        for (int d = 0; d < 3; ++d)
            cJSON_AddItemToArray(grid, cJSON_CreateNumber(l.grid[d]));
        cJSON_AddStringToObject(j, "family", req->cfg->fam->name);
        cJSON_AddStringToObject(j, "entry", req->cfg->fam->kernel_name);
        cJSON_AddNumberToObject(j, "threads", req->threads);
        cJSON_AddNumberToObject(j, "smem", req->smem);
        /* The kernel's parameters: names, and a tensor map's tensor, box and
         * swizzle (the worker builds each for every input-buffer set). */
        cJSON *args = cJSON_AddArrayToObject(j, "args");
        for (int i = 0; i < l.nargs; ++i) {
            const fattn_arg *a = &l.args[i];
            if (a->kind != FATTN_ARG_TMAP) {
                cJSON_AddItemToArray(args, cJSON_CreateString(fattn_arg_kind_name(a->kind)));
                continue;
            }
            cJSON *m = cJSON_CreateObject();
            cJSON_AddStringToObject(m, "tmap", fattn_arg_kind_name(a->tensor));
            cJSON_AddNumberToObject(m, "box_rows", a->box_rows);
            cJSON_AddNumberToObject(m, "box_cols", a->box_cols);
            cJSON_AddNumberToObject(m, "swizzle", a->swizzle);
            cJSON_AddItemToArray(args, m);
        }
        if (l.workspace)
            add_u64(j, "workspace", l.workspace);
    }
    add_u64(j, "seed", req->seed);
    return j;
}

/* A call that got no RESULT: the verdict of what happened instead. */
static void call_failed(int rc, const fattn_msg *reply, const char *why, fattn_eval_result *out)
{
    if (rc == FATTN_WORKER_TIMEOUT) {
        out->status = FATTN_EVAL_TIMEOUT;
        snprintf(out->detail, sizeof out->detail, "%s", why);
    } else if (rc == FATTN_WORKER_DIED) {
        out->status = FATTN_EVAL_FAULT;
        snprintf(out->detail, sizeof out->detail, "%.400s while running it", why);
    } else if (rc) {
        out->status = FATTN_EVAL_ERROR;
        snprintf(out->detail, sizeof out->detail, "worker protocol error: %.400s", why);
    } else {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(reply->json, "message");
        out->status = FATTN_EVAL_ERROR;
        snprintf(out->detail, sizeof out->detail, "%s", cJSON_IsString(m) ? m->valuestring : "unexpected answer");
    }
}

/* After a call: a fault ruins the worker's context, so it exits after
 * answering and says so; after any other verdict the same worker goes on.
 * Releases the reply. */
static void worker_after(gpu_eval *g, int rc, fattn_msg *reply)
{
    if (!rc && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply->json, "worker_exits")))
        fattn_worker_stop(&g->worker);
    fattn_msg_release(reply);
}

static int gpu_eval_one(fattn_evaluator *base, const fattn_eval_request *req, fattn_eval_result *out)
{
    gpu_eval *g = (gpu_eval *)base;
    char why[512];
    fattn_msg reply;
    if (ensure_worker(g, out))
        return FATTN_EFAIL;
    cJSON *j = request_json(g, req);
    int rc = fattn_worker_call(g->worker, FATTN_MSG_EVAL, j, req->baseline ? NULL : req->cubin,
                               req->baseline ? 0 : req->cubin_size, g->cfg.kernel_timeout_ms, &reply, why, sizeof why);
    cJSON_Delete(j);
    if (!rc && reply.type == FATTN_MSG_RESULT)
        read_result(g, reply.json, out);
    else
        call_failed(rc, &reply, why, out);
    worker_after(g, rc, &reply);
    return FATTN_OK;
}

static int gpu_interleaved(fattn_evaluator *base, const fattn_eval_request *reqs, size_t k, int n,
                           fattn_eval_result *out)
{
    gpu_eval *g = (gpu_eval *)base;
    char why[512];
    fattn_msg reply;
    if (ensure_worker(g, out))
        return FATTN_EFAIL;
    cJSON *j = cJSON_CreateObject(), *entries = cJSON_AddArrayToObject(j, "entries");
    size_t total = 0;
    for (size_t i = 0; i < k; ++i)
        total += reqs[i].baseline ? 0 : reqs[i].cubin_size;
    unsigned char *payload = fattn_xmalloc(total ? total : 1);
    size_t off = 0;
    for (size_t i = 0; i < k; ++i) {
        cJSON *e = request_json(g, &reqs[i]);
        if (!reqs[i].baseline) {
            memcpy(payload + off, reqs[i].cubin, reqs[i].cubin_size);
            cJSON_AddNumberToObject(e, "offset", (double)off);
            cJSON_AddNumberToObject(e, "size", (double)reqs[i].cubin_size);
            off += reqs[i].cubin_size;
        }
        cJSON_AddItemToArray(entries, e);
    }
    cJSON_AddNumberToObject(j, "n", n);
    add_u64(j, "seed", reqs[0].seed);
    int rc = fattn_worker_call(g->worker, FATTN_MSG_CONFIRM, j, payload, total, g->cfg.kernel_timeout_ms, &reply, why,
                               sizeof why);
    cJSON_Delete(j);
    free(payload);
    const cJSON *results =
        rc || reply.type != FATTN_MSG_RESULT ? NULL : cJSON_GetObjectItemCaseSensitive(reply.json, "entries");
    for (size_t i = 0; i < k; ++i) {
        const cJSON *r = cJSON_GetArrayItem(results, (int)i);
        if (cJSON_IsObject(r))
            read_result(g, r, &out[i]);
        else if (results)
            out[i].status = FATTN_EVAL_ERROR, snprintf(out[i].detail, sizeof out[i].detail, "no answer for it");
        else
            call_failed(rc, &reply, why, &out[i]);
    }
    worker_after(g, rc, &reply);
    return FATTN_OK;
}

static void gpu_close(fattn_evaluator *base)
{
    gpu_eval *g = (gpu_eval *)base;
    fattn_worker_stop(&g->worker);
    cJSON_Delete(g->init);
    free(g->ref);
    free(g);
}

static const fattn_evaluator_ops gpu_ops = {"gpu", gpu_eval_one, gpu_interleaved, gpu_close};

int fattn_evaluator_open_gpu(const fattn_gpu_eval_config *c, fattn_evaluator **out)
{
    char why[512];
    gpu_eval *g = fattn_xcalloc(1, sizeof *g);
    g->base.ops = &gpu_ops;
    g->base.ordinal = c->device;
    g->cfg = *c;
    if (g->cfg.setup_timeout_ms <= 0)
        g->cfg.setup_timeout_ms = 300000;
    g->ref = fattn_xmalloc(c->ref_size);
    memcpy(g->ref, c->ref_cubin, c->ref_size);
    g->cfg.ref_cubin = g->ref;
    g->init = cJSON_CreateObject();
    cJSON_AddNumberToObject(g->init, "device", c->device);
    cJSON *shape = cJSON_AddObjectToObject(g->init, "shape");
    cJSON_AddNumberToObject(shape, "batch", c->shape.batch);
    cJSON_AddNumberToObject(shape, "heads", c->shape.heads);
    cJSON_AddNumberToObject(shape, "seqlen", c->shape.seqlen);
    cJSON_AddNumberToObject(shape, "head_dim", c->shape.head_dim);
    cJSON_AddNumberToObject(shape, "causal", c->shape.causal);
    cJSON_AddNumberToObject(g->init, "timing_sets", c->timing_sets);
    add_u64(g->init, "timing_seed", c->timing_seed);
    cJSON_AddNumberToObject(g->init, "warmup", c->warmup);
    cJSON_AddNumberToObject(g->init, "reps", c->reps);
    cJSON_AddNumberToObject(g->init, "samples", c->samples);
    cJSON_AddNumberToObject(g->init, "flush_l2", c->flush_l2);
    cJSON_AddNumberToObject(g->init, "atol", c->tol.atol);
    cJSON_AddNumberToObject(g->init, "rtol", c->tol.rtol);
    cJSON_AddNumberToObject(g->init, "max_rel_l2", c->tol.max_rel_l2);
    snprintf(g->base.method, sizeof g->base.method,
             "CUDA events around a CUDA graph of %d back-to-back launches rotating %d input set%s; %d warm-up "
             "replays, %d samples%s; per-launch time = elapsed / %d, launch cost included",
             c->reps, c->timing_sets, c->timing_sets == 1 ? "" : "s", c->warmup, c->samples,
             c->flush_l2 ? ", L2 flushed before each" : "", c->reps);
    size_t used = strlen(g->base.method);
    snprintf(g->base.method + used, sizeof g->base.method - used,
             "; numerics on uniform and peaky inputs: |o - r| <= %g + %g|r| and rel L2 <= %g", c->tol.atol, c->tol.rtol,
             c->tol.max_rel_l2);
    if (start_worker(g, why, sizeof why)) {
        gpu_close(&g->base);
        return fattn_error(FATTN_EFAIL, "%s", why);
    }
    *out = &g->base;
    return FATTN_OK;
}

/* ---- replay ---- */

typedef struct replay_eval {
    fattn_evaluator base;
    fattn_landscape land;
} replay_eval;

static int replay_one(fattn_evaluator *base, const fattn_eval_request *req, fattn_eval_result *out)
{
    replay_eval *r = (replay_eval *)base;
    if (req->baseline) {
        out->status = FATTN_EVAL_ERROR;
        snprintf(out->detail, sizeof out->detail, "replay: a landscape holds no baseline");
        return FATTN_OK;
    }
    const fattn_landscape_entry *e = fattn_landscape_find(&r->land, req->key);
    if (!e) {
        out->status = FATTN_EVAL_ERROR;
        snprintf(out->detail, sizeof out->detail, "replay: %s is not in the landscape", req->key);
        return FATTN_OK;
    }
    if (!strcmp(e->status, "ok")) {
        out->status = FATTN_EVAL_OK;
        out->has_timing = 1;
        out->samples = fattn_xmalloc(3 * sizeof *out->samples);
        out->samples[0] = e->p10_us, out->samples[1] = e->median_us, out->samples[2] = e->p90_us;
        out->nsamples = 3;
        fattn_timing_summarize(&e->median_us, 1, &r->land.shape, &out->timing);
        out->timing.p10_us = e->p10_us;
        out->timing.p90_us = e->p90_us;
        snprintf(out->detail, sizeof out->detail, "replay: median %.3f us per launch (p10 %.3f, p90 %.3f)",
                 e->median_us, e->p10_us, e->p90_us);
        return FATTN_OK;
    }
    /* The verdict whose name the landscape's reason is; a gate's is an error here. */
    out->status = FATTN_EVAL_ERROR;
    for (int st = FATTN_EVAL_OK; st <= FATTN_EVAL_ERROR; ++st)
        if (!strcmp(e->reason, fattn_eval_status_name(st)))
            out->status = st;
    snprintf(out->detail, sizeof out->detail, "replay: %s%s%s", e->status, *e->reason ? " " : "", e->reason);
    return FATTN_OK;
}

static void replay_close(fattn_evaluator *base)
{
    replay_eval *r = (replay_eval *)base;
    fattn_landscape_release(&r->land);
    free(r);
}

static const fattn_evaluator_ops replay_ops = {"replay", replay_one, NULL, replay_close};

int fattn_evaluator_open_replay(const char *path, const fattn_shape *s, const fattn_family *fam, fattn_evaluator **out)
{
    replay_eval *r = fattn_xcalloc(1, sizeof *r);
    int rc = fattn_landscape_load(path, &r->land);
    if (rc) {
        free(r);
        return rc;
    }
    const fattn_shape *l = &r->land.shape;
    if (l->batch != s->batch || l->heads != s->heads || l->seqlen != s->seqlen || l->head_dim != s->head_dim
        || l->causal != s->causal) {
        char a[96], b[96];
        fattn_shape_format(l, a, sizeof a);
        fattn_shape_format(s, b, sizeof b);
        replay_close(&r->base);
        return fattn_error(FATTN_EUSAGE, "--evaluator replay:%s: the landscape is for %s, not %s", path, a, b);
    }
    if (r->land.fam != fam) {
        const char *theirs = r->land.fam->name;
        replay_close(&r->base);
        return fattn_error(FATTN_EUSAGE,
                           "--evaluator replay:%s: the landscape holds the %s family's configurations; the space's "
                           "family is %s",
                           path, theirs, fam->name);
    }
    r->base.ops = &replay_ops;
    snprintf(r->base.method, sizeof r->base.method, "replayed from %.200s (measured: %.250s)", path,
             *r->land.method ? r->land.method : "unknown");
    snprintf(r->base.device, sizeof r->base.device, "%s" FATTN_REPLAYED_MARK,
             *r->land.device ? r->land.device : "unknown");
    snprintf(r->base.device_json, sizeof r->base.device_json, "{\"replay\":true}");
    *out = &r->base;
    return FATTN_OK;
}

void fattn_device_gpu_model(const char *device, char *out, size_t n)
{
    size_t len = device ? strlen(device) : 0, m = sizeof FATTN_REPLAYED_MARK - 1;
    if (len >= m && !strcmp(device + len - m, FATTN_REPLAYED_MARK))
        len -= m;
    snprintf(out, n, "%.*s", (int)len, device ? device : "");
}
