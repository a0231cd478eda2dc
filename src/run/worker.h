/*
 * worker.h - the GPU worker process, seen from the search process.
 *
 * Candidates run in a separate process, `fattn-tune __worker FD`, talking
 * over a Unix socket (wire.h). A kernel fault, a crash, a hang or garbage on
 * the socket ends only the worker: fattn_worker_call() says what happened,
 * the worker is killed and reaped, and the caller starts a new one. The
 * search process itself never touches the GPU.
 */
#ifndef FATTN_RUN_WORKER_H
#define FATTN_RUN_WORKER_H

#include <sys/types.h>

#include "run/wire.h"

typedef struct fattn_worker fattn_worker;

/* Outcomes of fattn_worker_call() besides FATTN_WIRE_OK. */
enum { FATTN_WORKER_TIMEOUT = -20, FATTN_WORKER_DIED = -21, FATTN_WORKER_GARBAGE = -22 };

/* The running executable (/proc/self/exe), for starting workers. */
const char *fattn_self_exe(void);

/* Starts `exe __worker FD`. Returns 0, or FATTN_EFAIL with why. */
int fattn_worker_start(const char *exe, fattn_worker **out, char *why, size_t why_size);

/* Sends a request and waits for its answer (READY, RESULT or ERROR); a PHASE
 * message restarts the clock, with timeout_ms, or with the worker's setup
 * timeout after a setup phase (fattn_worker_set_setup_timeout; a timeout
 * then names the setup). timeout_ms < 0 waits forever. Returns
 * FATTN_WIRE_OK with *reply, or FATTN_WORKER_TIMEOUT, FATTN_WORKER_DIED or
 * FATTN_WORKER_GARBAGE with why ("killed by SIGSEGV", ...); after those the
 * worker is gone (killed and reaped). */
int fattn_worker_call(fattn_worker *w, uint32_t type, const cJSON *json, const void *payload, size_t len,
                      int timeout_ms, fattn_msg *reply, char *why, size_t why_size);

/* The limit of a setup phase (a baseline's first plan): ms > 0, or 0 for
 * the call's own timeout (the default). */
void fattn_worker_set_setup_timeout(fattn_worker *w, int ms);

/* 1 while the worker process runs. */
int fattn_worker_alive(const fattn_worker *w);

pid_t fattn_worker_pid(const fattn_worker *w);

/* Asks the worker to quit, kills it if it does not, reaps it, frees; sets
 * *w to NULL. */
void fattn_worker_stop(fattn_worker **w);

#endif
