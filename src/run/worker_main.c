/*
 * worker_main.c - the GPU worker's loop: INIT, then EVAL after EVAL, until
 * QUIT or the end of the socket. A sticky fault (the context is ruined)
 * ends the worker after its RESULT; the search process starts another.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/engine.h"
#include "run/wire.h"
#include "util/err.h"
#include "util/misc.h"

/* A PHASE message: its name, and for a setup what it does. */
static void phase_message(int fd, const char *name, const char *what)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "phase", name);
    if (what)
        cJSON_AddStringToObject(j, "what", what);
    fattn_wire_send(fd, FATTN_MSG_PHASE, j, NULL, 0);
    cJSON_Delete(j);
}

/* The worker's clock of the phases of a request: milliseconds spent in
 * "numerics" and in "timing", which the RESULT carries as "phase_ms"; the
 * phase running (0 none or a setup, 1 numerics, 2 timing) since t0. */
static struct {
    double numerics_ms, timing_ms, t0;
    int now;
} clock_;

static void phase_end(void)
{
    double now = fattn_now_ms();
    if (clock_.now == 1)
        clock_.numerics_ms += now - clock_.t0;
    else if (clock_.now == 2)
        clock_.timing_ms += now - clock_.t0;
    clock_.now = 0;
    clock_.t0 = now;
}

static void send_phase(fattn_engine_io *io, const char *name)
{
    phase_end();
    clock_.now = !strcmp(name, "numerics") ? 1 : !strcmp(name, "timing") ? 2 : 0;
    phase_message(io->fd, name, NULL);
}

static void send_setup(fattn_engine_io *io, const char *what)
{
    phase_end();
    phase_message(io->fd, "setup", what);
}

static int reply_error(int fd, const char *message)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "message", message);
    int rc = fattn_wire_send(fd, FATTN_MSG_ERROR, j, NULL, 0);
    cJSON_Delete(j);
    return rc;
}

int fattn_worker_main(int fd)
{
    const fattn_engine_ops *ops = getenv("FATTN_WORKER_HOOK") ? &fattn_engine_fake : &fattn_engine_gpu;
    fattn_engine_io io = {.fd = fd, .phase = send_phase, .setup = send_setup};
    void *state = NULL;
    char why[512];
    int status = 0;
    fattn_error_set_quiet(1);
    /* Ctrl-C at a terminal signals the whole process group: the search
     * process decides (it lets the trial in flight finish), so the worker
     * must not die of it and be recorded as a fault. So with SIGTERM, which
     * Slurm sends every process of a job it stops (a requeue, preemption,
     * the time limit). A dead parent still ends the worker: its socket
     * reads EOF; the parent kills it (SIGKILL) on a timeout. */
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    for (;;) {
        fattn_msg m;
        int rc = fattn_wire_recv(fd, -1, &m, why, sizeof why);
        if (rc == FATTN_WIRE_EOF)
            break;
        if (rc) {
            fprintf(stderr, "fattn-tune worker: %s\n", why);
            status = 2;
            break;
        }
        if (m.type == FATTN_MSG_QUIT) {
            fattn_msg_release(&m);
            break;
        }
        if (m.type == FATTN_MSG_INIT) {
            cJSON *ready = cJSON_CreateObject();
            if (state) {
                ops->fini(state);
                state = NULL;
            }
            if (ops->init(&state, m.json, m.payload, m.payload_len, ready, why, sizeof why))
                rc = reply_error(fd, why);
            else
                rc = fattn_wire_send(fd, FATTN_MSG_READY, ready, NULL, 0);
            cJSON_Delete(ready);
        } else if ((m.type == FATTN_MSG_EVAL || m.type == FATTN_MSG_CONFIRM) && state) {
            cJSON *result = cJSON_CreateObject();
            clock_.numerics_ms = clock_.timing_ms = 0, clock_.now = 0, clock_.t0 = fattn_now_ms();
            int ruined = m.type == FATTN_MSG_EVAL ? ops->eval(state, m.json, m.payload, m.payload_len, &io, result)
                                                  : ops->confirm(state, m.json, m.payload, m.payload_len, &io, result);
            phase_end();
            cJSON *ms = cJSON_AddObjectToObject(result, "phase_ms");
            cJSON_AddNumberToObject(ms, "numerics", clock_.numerics_ms);
            cJSON_AddNumberToObject(ms, "timing", clock_.timing_ms);
            if (ruined)
                cJSON_AddBoolToObject(result, "worker_exits", 1);
            rc = fattn_wire_send(fd, FATTN_MSG_RESULT, result, NULL, 0);
            cJSON_Delete(result);
            if (ruined) {
                fattn_msg_release(&m);
                status = 3;
                break;
            }
        } else {
            snprintf(why, sizeof why, "unexpected message of type %u%s", m.type,
                     m.type == FATTN_MSG_EVAL || m.type == FATTN_MSG_CONFIRM ? " before INIT" : "");
            rc = reply_error(fd, why);
        }
        fattn_msg_release(&m);
        if (rc) {
            status = 2;
            break;
        }
    }
    if (state)
        ops->fini(state);
    close(fd);
    return status;
}
