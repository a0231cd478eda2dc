/*
 * wire.h - the messages between the search process and its GPU worker.
 *
 * A frame is a 16-byte header (magic "FTW1", type, JSON length, payload
 * length, little-endian), a JSON object, and a binary payload (a cubin).
 * Frames travel over a Unix stream socket; reading has a deadline, so a
 * worker that hangs, dies or sends garbage is noticed, never waited on
 * forever.
 */
#ifndef FATTN_RUN_WIRE_H
#define FATTN_RUN_WIRE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

enum fattn_msg_type {
    /* search process -> worker */
    FATTN_MSG_INIT = 1, /* shape, seeds, timing plan; payload: the reference cubin */
    FATTN_MSG_EVAL = 2, /* one configuration; payload: its cubin */
    FATTN_MSG_QUIT = 3,
    FATTN_MSG_CONFIRM = 4, /* kernels measured interleaved; payload: their cubins back to back */
    /* worker -> search process */
    FATTN_MSG_READY = 101,  /* initialized; the device's properties */
    FATTN_MSG_PHASE = 102,  /* still working: a new phase began (resets the watchdog) */
    FATTN_MSG_RESULT = 103, /* the verdict and samples of an EVAL */
    FATTN_MSG_ERROR = 104,  /* the worker cannot go on (no GPU, bad request) */
};

#define FATTN_WIRE_MAX_JSON    (4u << 20)
#define FATTN_WIRE_MAX_PAYLOAD (256u << 20)

typedef struct fattn_msg {
    uint32_t type;
    cJSON *json;            /* owned; an empty object when the frame had none */
    unsigned char *payload; /* owned; NULL when empty */
    size_t payload_len;
} fattn_msg;

/* Outcomes of fattn_wire_recv(). */
enum {
    FATTN_WIRE_OK = 0,
    FATTN_WIRE_TIMEOUT = -10,
    FATTN_WIRE_EOF = -11,
    FATTN_WIRE_GARBAGE = -12,
    FATTN_WIRE_IO = -13
};

/* Sends one frame (json may be NULL). Returns 0 or FATTN_WIRE_IO. */
int fattn_wire_send(int fd, uint32_t type, const cJSON *json, const void *payload, size_t len);

/* Receives one frame within timeout_ms (< 0: no limit). Returns an outcome
 * above; on error `why` says what happened. */
int fattn_wire_recv(int fd, int timeout_ms, fattn_msg *m, char *why, size_t why_size);

void fattn_msg_release(fattn_msg *m);

#endif
