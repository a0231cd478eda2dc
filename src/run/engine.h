/*
 * engine.h - what runs inside the GPU worker process.
 *
 * An engine answers the requests of the wire protocol: INIT (set up the
 * device, the buffers and the reference kernel), EVAL (check one
 * configuration's numerics against the reference, then time it) and CONFIRM
 * (several kernels verified, then timed interleaved, then verified again). The GPU
 * engine (engine_gpu.c) does it with the driver; the fake engine
 * (engine_fake.c) answers without a GPU, and misbehaves on request
 * ($FATTN_WORKER_HOOK), so that the worker protocol, the watchdog and the
 * search loop are tested where there is no GPU.
 */
#ifndef FATTN_RUN_ENGINE_H
#define FATTN_RUN_ENGINE_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Verdicts of an EVAL, as the RESULT message spells them. */
#define FATTN_EVAL_STATUS_OK       "ok"       /* numerics passed; samples timed */
#define FATTN_EVAL_STATUS_NUMERICS "numerics" /* ran, wrong output */
#define FATTN_EVAL_STATUS_FAULT    "fault"    /* the kernel faulted (the CUDA error is in "error") */
#define FATTN_EVAL_STATUS_LAUNCH   "launch"   /* the driver refused to launch it; the context is intact */
#define FATTN_EVAL_STATUS_ERROR    "error"    /* could not be run (module load, attribute) */

typedef struct fattn_engine_io {
    int fd;
    /* Sends a PHASE message ("numerics", "timing"): the watchdog restarts. */
    void (*phase)(struct fattn_engine_io *io, const char *name);
    /* Sends a PHASE message for a one-time setup (what: "setting up the
     * cuDNN baseline ..."): it runs under the setup timeout, not the kernel
     * watchdog, until the next phase. */
    void (*setup)(struct fattn_engine_io *io, const char *what);
} fattn_engine_io;

typedef struct fattn_engine_ops {
    const char *name;
    /* Sets up from an INIT request; fills *ready with the device's
     * properties. Returns 0, or -1 with why. */
    int (*init)(void **state, const cJSON *req, const void *ref_cubin, size_t ref_size, cJSON *ready, char *why,
                size_t why_size);
    /* Answers an EVAL request into *result. Returns 0, or 1 when the
     * context is ruined (a sticky fault): the worker exits after replying,
     * and says so in the RESULT ("worker_exits": true). */
    int (*eval)(void *state, const cJSON *req, const void *cubin, size_t size, fattn_engine_io *io, cJSON *result);
    /* Answers a CONFIRM request: several kernels (cubins back to back in
     * the payload) and baselines measured interleaved, one sample of each
     * per round; *result holds "entries", one RESULT object each. Returns
     * as eval does. */
    int (*confirm)(void *state, const cJSON *req, const void *payload, size_t size, fattn_engine_io *io, cJSON *result);
    void (*fini)(void *state);
} fattn_engine_ops;

extern const fattn_engine_ops fattn_engine_gpu;
extern const fattn_engine_ops fattn_engine_fake;

/* The value of behaviour `name` ("arch") in $FATTN_WORKER_HOOK, the fake
 * engine's list (engine_fake.c), into buf; NULL when the hook is unset or
 * does not name it. */
const char *fattn_fake_hook(const char *name, char *buf, size_t n);

/* The worker's main loop on socket `fd` (fattn-tune __worker FD). */
int fattn_worker_main(int fd);

#endif
