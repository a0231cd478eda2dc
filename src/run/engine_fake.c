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
 *   plant=BUG            every kernel computes the INIT shape's attention on
 *                        the CPU (fp64, both input sets) with a planted bug,
 *                        held to the reference by the real numerics gates:
 *                        drop-last-key (key S-1 ignored), unmasked-tail (the
 *                        last key tile's zero-filled padding to a multiple of
 *                        64 keys left in a non-causal softmax), causal-diagonal (row i
 *                        also sees key i+1), none (no bug: the control)
 *   plant-inputs=SET     only input set SET (uniform, peaky) for plant=
 *   init-error           INIT fails (as with no GPU)
 *   slow=MS              every EVAL takes MS milliseconds
 *   slower=FRAGMENT      matching keys run 10% slower (a regression)
 *   arch=ARCH            the commands take ARCH as the GPU's arch (sm_90
 *                        when absent; fattn_fake_hook())
 *   land=PATH            times and verdicts from a landscape file (a key it
 *                        lacks is an error): a measured entry's samples are
 *                        its median; a rejected one fails as its reason says
 *                        (numerics; runtime_fault, sticky; any other as a
 *                        launch the driver refused)
 *   model=N:NAME         GPU N (INIT's "device") is named NAME, not the fake
 *                        engine's name (GPUs of two models)
 *   speed=N:F            GPU N's times are F times the others'
 * Each GPU N has a UUID of its own, GPU-fa4e0000-0000-4000-8000-0000000000NN.
 * Otherwise the numerics are made up (passing ones near a correct fp16
 * kernel's figures). A baseline request ("baseline": "cudnn") is answered as
 * key "baseline-cudnn".
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
#include "run/landscape.h"
#include "run/numerics.h"
#include "run/numerics_json.h"
#include "util/err.h"

typedef struct fake {
    char *hook;
    int samples;
    fattn_shape shape;
    fattn_tolerance tol;
    int has_plant;
    fattn_numerics plant; /* the planted bug's numerics, computed at INIT */
    int has_land;
    fattn_landscape land; /* land=PATH */
    double speed;         /* this GPU's times over the others' (speed=N:F) */
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

static void fake_fini(void *state)
{
    fake *f = state;
    if (f->has_land)
        fattn_landscape_release(&f->land);
    free(f->hook);
    free(f);
}

/* The planted bugs of plant=BUG: how many keys row i of S sees, from key 0
 * on; past S they are the last key tile's padding, K = V = 0 (score 0). */
enum { PLANT_NONE, PLANT_DROP_LAST_KEY, PLANT_UNMASKED_TAIL, PLANT_CAUSAL_DIAGONAL };
static const char *const plant_names[] = {"none", "drop-last-key", "unmasked-tail", "causal-diagonal"};

static int plant_keys(int bug, int causal, int s, int i)
{
    if (bug == PLANT_UNMASKED_TAIL && !causal) /* causal: the mask hides the padding */
        return (s + 63) / 64 * 64;
    if (bug == PLANT_CAUSAL_DIAGONAL && causal)
        return i + 2 < s ? i + 2 : s;
    if (bug == PLANT_DROP_LAST_KEY)
        return (causal ? i + 1 : s) - (causal ? i == s - 1 : 1);
    return causal ? i + 1 : s;
}

/* The numerics of a kernel with planted bug `bug` at f's shape: the worse
 * input set's, through the real gates. Returns 0, or -1 with why. */
static int plant_numerics(fake *f, int bug, const char *only, char *why, size_t why_size)
{
    const fattn_shape *sh = &f->shape;
    const int d = sh->head_dim, s = sh->seqlen;
    const size_t head = (size_t)s * (size_t)d, n = head * (size_t)sh->batch * (size_t)sh->heads;
    if (n > ((size_t)1 << 24) || s > 8192) {
        snprintf(why, why_size, "plant=%s: the shape is too large for the CPU (at most 2^24 elements)",
                 plant_names[bug]);
        return -1;
    }
    /* K and V with a tile of zero keys past S, for unmasked-tail. */
    const size_t padded = head + 64 * (size_t)d;
    float *q = fattn_xmalloc(head * sizeof *q), *k = fattn_xcalloc(padded, sizeof *k),
          *v = fattn_xcalloc(padded, sizeof *v);
    float *ref = fattn_xmalloc(n * sizeof *ref);
    uint16_t *out = fattn_xmalloc(n * sizeof *out);
    double *scores = fattn_xmalloc(((size_t)s + 64) * sizeof *scores),
           *row = fattn_xmalloc((size_t)d * 2 * sizeof *row);
    const fattn_numerics *worse = NULL;
    fattn_numerics each[FATTN_INPUT_SETS];
    for (int set = 0; set < FATTN_INPUT_SETS; ++set) {
        if (only && strcmp(only, fattn_input_set_name(set)))
            continue;
        for (size_t bh = 0; bh < (size_t)sh->batch * (size_t)sh->heads; ++bh) {
            for (size_t i = 0; i < head; ++i) {
                q[i] = fattn_input_value(1, set, 0, bh * head + i);
                k[i] = fattn_input_value(1, set, 1, bh * head + i);
                v[i] = fattn_input_value(1, set, 2, bh * head + i);
            }
            for (int i = 0; i < s; ++i) {
                const float *qi = q + (size_t)i * (size_t)d;
                size_t at = bh * head + (size_t)i * (size_t)d;
                fattn_cpu_attend(qi, k, v, plant_keys(PLANT_NONE, sh->causal, s, i), d, scores, row);
                fattn_cpu_attend(qi, k, v, plant_keys(bug, sh->causal, s, i), d, scores, row + d);
                for (int c = 0; c < d; ++c) {
                    ref[at + (size_t)c] = (float)row[c];
                    out[at + (size_t)c] = fattn_float_to_half((float)row[d + c]);
                }
            }
        }
        fattn_numerics_compare(out, ref, n, &f->tol, &each[set]);
        each[set].set = set;
        worse = worse ? fattn_numerics_worse(worse, &each[set]) : &each[set];
    }
    if (worse)
        f->plant = *worse, f->has_plant = 1;
    else
        snprintf(why, why_size, "plant-inputs=%s: expected uniform or peaky", only);
    free(q), free(k), free(v), free(ref), free(out), free(scores), free(row);
    return worse ? 0 : -1;
}

static double number(const cJSON *j, const char *name, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, name);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static int fake_init(void **state, const cJSON *req, const void *ref, size_t ref_size, cJSON *ready, char *why,
                     size_t why_size)
{
    (void)ref, (void)ref_size;
    const char *hook = getenv("FATTN_WORKER_HOOK");
    char buf[32];
    *why = '\0';
    if (behaviour(hook, "init-error", buf, sizeof buf)) {
        snprintf(why, why_size, "no GPU: the fake engine was told to fail (FATTN_WORKER_HOOK=init-error)");
        return -1;
    }
    fake *f = fattn_xcalloc(1, sizeof *f);
    f->hook = fattn_xstrdup(hook ? hook : "fake");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(req, "samples");
    f->samples = cJSON_IsNumber(s) && s->valueint > 0 ? s->valueint : 30;
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(req, "shape");
    f->shape =
        (fattn_shape){(int)number(shape, "batch", 1), (int)number(shape, "heads", 1), (int)number(shape, "seqlen", 1),
                      (int)number(shape, "head_dim", 64), (int)number(shape, "causal", 0)};
    f->tol = (fattn_tolerance){number(req, "atol", FATTN_DEFAULT_ATOL), number(req, "rtol", FATTN_DEFAULT_RTOL),
                               number(req, "max_rel_l2", FATTN_DEFAULT_MAX_REL_L2)};
    const char *bug = behaviour(f->hook, "plant", buf, sizeof buf);
    char only[32];
    if (bug) {
        int b = 0;
        while (b < (int)(sizeof plant_names / sizeof *plant_names) && strcmp(plant_names[b], bug))
            ++b;
        if (b == (int)(sizeof plant_names / sizeof *plant_names)) {
            snprintf(why, why_size, "plant=%s: expected none, drop-last-key, unmasked-tail or causal-diagonal", bug);
            fake_fini(f);
            return -1;
        }
        if (f->shape.seqlen < 1 || f->shape.batch < 1 || f->shape.heads < 1
            || (f->shape.head_dim != 64 && f->shape.head_dim != 128)
            || plant_numerics(f, b, behaviour(f->hook, "plant-inputs", only, sizeof only), why, why_size)) {
            if (!*why)
                snprintf(why, why_size, "plant=%s: INIT without a usable shape", bug);
            fake_fini(f);
            return -1;
        }
    }
    const int device = (int)number(req, "device", 0);
    char land[1024], model[300], speed[64], name[256] = "fake engine (FATTN_WORKER_HOOK), no GPU", uuid[48];
    f->speed = 1;
    if (behaviour(f->hook, "model", model, sizeof model) && atoi(model) == device && strchr(model, ':'))
        snprintf(name, sizeof name, "%s", strchr(model, ':') + 1);
    if (behaviour(f->hook, "speed", speed, sizeof speed) && atoi(speed) == device && strchr(speed, ':'))
        f->speed = atof(strchr(speed, ':') + 1);
    if (behaviour(f->hook, "land", land, sizeof land)) {
        int was = fattn_error_set_quiet_thread(1), bad = fattn_landscape_load(land, &f->land);
        fattn_error_set_quiet_thread(was);
        if (bad) {
            snprintf(why, why_size, "land=%s: not a landscape fattn-tune reads (%s)", land, fattn_last_error());
            fake_fini(f);
            return -1;
        }
        f->has_land = 1;
    }
    if (!(f->speed > 0)) {
        snprintf(why, why_size, "speed=%s: expected N:F with F > 0", speed);
        fake_fini(f);
        return -1;
    }
    snprintf(uuid, sizeof uuid, "GPU-fa4e0000-0000-4000-8000-%012d", device);
    cJSON_AddStringToObject(ready, "name", name);
    cJSON_AddStringToObject(ready, "uuid", uuid);
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
    const fattn_landscape_entry *le = NULL;
    if (f->has_land && strncmp(key, "baseline-", 9)) {
        if (!(le = fattn_landscape_find(&f->land, key))) {
            cJSON_AddStringToObject(result, "status", FATTN_EVAL_STATUS_ERROR);
            cJSON_AddStringToObject(result, "detail", "fake engine: the key is not in the land= landscape");
            return 0;
        }
        if (strcmp(le->status, "ok") && strcmp(le->reason, "numerics")) {
            int sticky = !strcmp(le->reason, "runtime_fault");
            cJSON_AddStringToObject(result, "status", sticky ? FATTN_EVAL_STATUS_FAULT : FATTN_EVAL_STATUS_LAUNCH);
            cJSON_AddStringToObject(result, "error",
                                    sticky ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "CUDA_ERROR_INVALID_VALUE");
            cJSON_AddStringToObject(result, "detail", "fake engine: the landscape's verdict");
            return sticky;
        }
    }
    int wrong = matches(f->hook, "numerics", key) || (le && strcmp(le->status, "ok"));
    fattn_numerics made = {
        .n = 1000,
        .n_bad = wrong ? 17 : 0,
        .max_abs_err = wrong ? 0.5 : 0.0009765625,
        .max_abs_ref = 0.75,
        .norm_err = wrong ? 0.5 / 0.75 : 0.0009765625 / 0.75,
        .worst = 3,
        .worst_out = 0.1,
        .worst_ref = 0.1,
        .l2_err = wrong ? 0.5 : 0.0075,
        .l2_ref = 25,
        .rel_l2 = wrong ? 0.02 : 3e-4,
        .l2_bound = f->tol.max_rel_l2,
    };
    made.l2_bad = !(made.rel_l2 <= made.l2_bound);
    const fattn_numerics *num = f->has_plant && strncmp(key, "baseline-", 9) ? &f->plant : &made;
    fattn_numerics_to_json(result, "numerics", num);
    if (!fattn_numerics_ok(num)) {
        char detail[400];
        fattn_numerics_describe(num, &f->shape, detail, sizeof detail);
        cJSON_AddStringToObject(result, "status", FATTN_EVAL_STATUS_NUMERICS);
        cJSON_AddStringToObject(result, "detail", detail);
        return 0;
    }
    io->phase(io, "timing");
    /* A time per launch from the key: FNV-1a, 4 .. 12 us, +-1% noise. */
    unsigned long long h = 1469598103934665603ull;
    for (const char *p = key; *p; ++p)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    double base = (le ? le->median_us : 4.0 + (double)(h % 8000) / 1000.0)
                  * (matches(f->hook, "slower", key) ? 1.1 : 1.0) * f->speed;
    cJSON *samples = cJSON_AddArrayToObject(result, "samples");
    for (int i = 0; i < n; ++i) {
        h = h * 6364136223846793005ull + 1442695040888963407ull;
        cJSON_AddItemToArray(
            samples, cJSON_CreateNumber(le ? base : base * (1.0 + ((double)(h >> 40) / 16777216.0 - 0.5) / 50)));
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

const fattn_engine_ops fattn_engine_fake = {"fake", fake_init, fake_eval, fake_confirm, fake_fini};
