/*
 * engine_fake.c - an engine without a GPU, for tests ($FATTN_WORKER_HOOK).
 *
 * It answers like the GPU engine with made-up but deterministic results: a
 * per-launch time derived from the configuration key (so searches can be
 * compared run to run), numerics that pass, and the seeds' misaligned pad
 * (keys with "-pad") faulting as the GPU would. The hook variable is a
 * comma-separated list of behaviours; each names a key fragment it applies
 * to:
 *   fake                 just answer (the default)
 *   crash=FRAGMENT       the worker dies (SIGKILL) on matching keys
 *   hang=FRAGMENT        the worker never answers
 *   garbage=FRAGMENT     the worker writes garbage instead of a message
 *   fault=FRAGMENT       a sticky fault (CUDA_ERROR_ILLEGAL_ADDRESS), then exit
 *   numerics=FRAGMENT    wrong output
 *   init-error           INIT fails (as with no GPU)
 *   slow=MS              every EVAL takes MS milliseconds
 *   slower=FRAGMENT      matching keys run 10% slower (a regression)
 *   arch=ARCH            the commands take ARCH as the GPU's arch (sm_90
 *                        when absent; fattn_fake_hook())
 * A baseline request ("baseline": "cudnn") is answered as key "baseline-cudnn".
 * CONFIRM answers each entry as an EVAL with "n" samples.
 * Not for users: it measures nothing.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run/engine.h"
#include "util/err.h"

typedef struct fake {
    char *hook;
    int samples;
} fake;

/* The fragment of behaviour `name` ("crash") in the hook, or NULL. */
static const char *behaviour(const char *hook, const char *name, char *buf, size_t n)
{
    size_t len = strlen(name);
    for (const char *p = hook; p && *p;) {
        const char *end = strchr(p, ',');
        size_t item = end ? (size_t)(end - p) : strlen(p);
        if (item >= len && strncmp(p, name, len) == 0 && (item == len || p[len] == '=')) {
            size_t v = item > len ? item - len - 1 : 0;
            snprintf(buf, n, "%.*s", (int)v, p + len + (item > len));
            return buf;
        }
        p = end ? end + 1 : NULL;
    }
    return NULL;
}

const char *fattn_fake_hook(const char *name, char *buf, size_t n)
{
    const char *hook = getenv("FATTN_WORKER_HOOK");
    return hook ? behaviour(hook, name, buf, n) : NULL;
}

static int matches(const char *hook, const char *name, const char *key)
{
    char frag[128];
    const char *f = behaviour(hook, name, frag, sizeof frag);
    return f && *f && strstr(key, f) != NULL;
}

static int fake_init(void **state, const cJSON *req, const void *ref, size_t ref_size, cJSON *ready, char *why,
                     size_t why_size)
{
    (void)ref, (void)ref_size;
    const char *hook = getenv("FATTN_WORKER_HOOK");
    char buf[16];
    if (behaviour(hook, "init-error", buf, sizeof buf)) {
        snprintf(why, why_size, "no GPU: the fake engine was told to fail (FATTN_WORKER_HOOK=init-error)");
        return -1;
    }
    fake *f = fattn_xcalloc(1, sizeof *f);
    f->hook = fattn_xstrdup(hook ? hook : "fake");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(req, "samples");
    f->samples = cJSON_IsNumber(s) && s->valueint > 0 ? s->valueint : 30;
    cJSON_AddStringToObject(ready, "name", "fake engine (FATTN_WORKER_HOOK), no GPU");
    cJSON_AddStringToObject(ready, "compute_capability", "9.0");
    cJSON_AddNumberToObject(ready, "sm_count", 132);
    *state = f;
    return 0;
}

/* Answers one kernel (key) into result: its numerics and n samples.
 * Returns 1 after a sticky fault. */
static int fake_one(fake *f, const char *key, int n, fattn_engine_io *io, cJSON *result)
{
    char buf[32];
    io->phase(io, "numerics");
    const char *slow = behaviour(f->hook, "slow", buf, sizeof buf);
    if (slow)
        usleep((useconds_t)atoi(slow) * 1000u);
    if (matches(f->hook, "crash", key))
        kill(getpid(), SIGKILL);
    if (matches(f->hook, "hang", key))
        for (;;)
            pause();
    if (matches(f->hook, "garbage", key)) {
        static const char junk[] = "this is not a message, just bytes on the wire................";
        if (write(io->fd, junk, sizeof junk) < 0)
            _exit(2);
        for (;;)
            pause();
    }
    if (strstr(key, "-pad") || matches(f->hook, "fault", key)) {
        cJSON_AddStringToObject(result, "status", FATTN_EVAL_STATUS_FAULT);
        cJSON_AddStringToObject(result, "error",
                                strstr(key, "-pad") ? "CUDA_ERROR_MISALIGNED_ADDRESS" : "CUDA_ERROR_ILLEGAL_ADDRESS");
        cJSON_AddStringToObject(result, "detail", "fake engine");
        return 1;
    }
    cJSON *num = cJSON_AddObjectToObject(result, "numerics");
    int wrong = matches(f->hook, "numerics", key);
    cJSON_AddNumberToObject(num, "n", 1000);
    cJSON_AddNumberToObject(num, "n_bad", wrong ? 17 : 0);
    cJSON_AddNumberToObject(num, "n_nonfinite", 0);
    cJSON_AddNumberToObject(num, "max_abs_err", wrong ? 0.5 : 0.0009765625);
    cJSON_AddNumberToObject(num, "max_abs_ref", 0.75);
    cJSON_AddNumberToObject(num, "norm_err", wrong ? 0.5 / 0.75 : 0.0009765625 / 0.75);
    cJSON_AddNumberToObject(num, "worst", 3);
    cJSON_AddNumberToObject(num, "worst_out", 0.1);
    cJSON_AddNumberToObject(num, "worst_ref", 0.1);
    if (wrong) {
        cJSON_AddStringToObject(result, "status", FATTN_EVAL_STATUS_NUMERICS);
        return 0;
    }
    io->phase(io, "timing");
    /* A time per launch from the key: FNV-1a, 4 .. 12 us, +-1% noise. */
    unsigned long long h = 1469598103934665603ull;
    for (const char *p = key; *p; ++p)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    double base = (4.0 + (double)(h % 8000) / 1000.0) * (matches(f->hook, "slower", key) ? 1.1 : 1.0);
    cJSON *samples = cJSON_AddArrayToObject(result, "samples");
    for (int i = 0; i < n; ++i) {
        h = h * 6364136223846793005ull + 1442695040888963407ull;
        cJSON_AddItemToArray(samples, cJSON_CreateNumber(base * (1.0 + ((double)(h >> 40) / 16777216.0 - 0.5) / 50)));
    }
    cJSON_AddStringToObject(result, "timing", "graph");
    cJSON_AddStringToObject(result, "status", FATTN_EVAL_STATUS_OK);
    return 0;
}

static const char *fake_key(const cJSON *req, cJSON *result)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(req, "key");
    const cJSON *baseline = cJSON_GetObjectItemCaseSensitive(req, "baseline");
    if (cJSON_IsString(baseline))
        cJSON_AddStringToObject(result, "baseline", "fake cuDNN (FATTN_WORKER_HOOK)");
    return cJSON_IsString(baseline) ? "baseline-cudnn" : cJSON_IsString(k) ? k->valuestring : "";
}

static int fake_eval(void *state, const cJSON *req, const void *cubin, size_t size, fattn_engine_io *io, cJSON *result)
{
    fake *f = state;
    (void)cubin, (void)size;
    return fake_one(f, fake_key(req, result), f->samples, io, result);
}

static int fake_confirm(void *state, const cJSON *req, const void *payload, size_t size, fattn_engine_io *io,
                        cJSON *result)
{
    fake *f = state;
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(req, "entries");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(req, "n");
    cJSON *out = cJSON_AddArrayToObject(result, "entries");
    int ruined = 0;
    (void)payload, (void)size;
    for (const cJSON *e = entries ? entries->child : NULL; e; e = e->next) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToArray(out, r);
        if (ruined) {
            cJSON_AddStringToObject(r, "status", FATTN_EVAL_STATUS_ERROR);
            cJSON_AddStringToObject(r, "detail", "not measured: another kernel of the confirmation faulted");
            continue;
        }
        ruined = fake_one(f, fake_key(e, r), cJSON_IsNumber(n) ? n->valueint : 1, io, r);
        if (!ruined && cJSON_GetObjectItemCaseSensitive(r, "samples"))
            cJSON_AddItemToObject(r, "numerics_after", cJSON_Duplicate(cJSON_GetObjectItem(r, "numerics"), 1));
    }
    cJSON_AddStringToObject(result, "status", ruined ? FATTN_EVAL_STATUS_FAULT : FATTN_EVAL_STATUS_OK);
    return ruined;
}

static void fake_fini(void *state)
{
    fake *f = state;
    free(f->hook);
    free(f);
}

const fattn_engine_ops fattn_engine_fake = {"fake", fake_init, fake_eval, fake_confirm, fake_fini};
