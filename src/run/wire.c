/*
 * wire.c - framing messages over a socket, with deadlines.
 */
#include "run/wire.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/err.h"
#include "util/misc.h"

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8), p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int send_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return FATTN_WIRE_IO;
        p += w, n -= (size_t)w;
    }
    return FATTN_WIRE_OK;
}

int fattn_wire_send(int fd, uint32_t type, const cJSON *json, const void *payload, size_t len)
{
    unsigned char head[16];
    char *text = json ? cJSON_PrintUnformatted(json) : NULL;
    size_t tlen = text ? strlen(text) : 0;
    memcpy(head, "FTW1", 4);
    put32(head + 4, type);
    put32(head + 8, (uint32_t)tlen);
    put32(head + 12, (uint32_t)len);
    int rc = send_all(fd, head, sizeof head);
    if (!rc && tlen)
        rc = send_all(fd, text, tlen);
    if (!rc && len)
        rc = send_all(fd, payload, len);
    cJSON_free(text);
    return rc;
}

/* Reads n bytes before the deadline (ms on the monotonic clock; < 0: none). */
static int recv_all(int fd, void *buf, size_t n, double deadline, int *got_any)
{
    char *p = buf;
    while (n) {
        if (deadline >= 0) {
            double left = deadline - fattn_now_ms();
            if (left <= 0)
                return FATTN_WIRE_TIMEOUT;
            struct pollfd pfd = {.fd = fd, .events = POLLIN};
            int r = poll(&pfd, 1, (int)(left + 1));
            if (r < 0 && errno == EINTR)
                continue;
            if (r == 0)
                return FATTN_WIRE_TIMEOUT;
            if (r < 0)
                return FATTN_WIRE_IO;
        }
        ssize_t got = read(fd, p, n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return FATTN_WIRE_IO;
        if (got == 0)
            return *got_any ? FATTN_WIRE_GARBAGE : FATTN_WIRE_EOF;
        *got_any = 1;
        p += got, n -= (size_t)got;
    }
    return FATTN_WIRE_OK;
}

int fattn_wire_recv(int fd, int timeout_ms, fattn_msg *m, char *why, size_t why_size)
{
    unsigned char head[16];
    double deadline = timeout_ms < 0 ? -1 : fattn_now_ms() + timeout_ms;
    int any = 0, rc;
    char *text = NULL;
    memset(m, 0, sizeof *m);
    if ((rc = recv_all(fd, head, sizeof head, deadline, &any))) {
        snprintf(why, why_size, "%s",
                 rc == FATTN_WIRE_TIMEOUT ? "no answer in time"
                 : rc == FATTN_WIRE_EOF   ? "the worker closed the connection"
                 : rc == FATTN_WIRE_IO    ? strerror(errno)
                                          : "a truncated message");
        return rc;
    }
    uint32_t tlen = get32(head + 8), plen = get32(head + 12);
    if (memcmp(head, "FTW1", 4) != 0 || tlen > FATTN_WIRE_MAX_JSON || plen > FATTN_WIRE_MAX_PAYLOAD) {
        snprintf(why, why_size, "garbage instead of a message (header %02x %02x %02x %02x)", head[0], head[1], head[2],
                 head[3]);
        return FATTN_WIRE_GARBAGE;
    }
    m->type = get32(head + 4);
    text = fattn_xmalloc((size_t)tlen + 1);
    if (tlen && (rc = recv_all(fd, text, tlen, deadline, &any)))
        goto fail;
    text[tlen] = '\0';
    if (plen) {
        m->payload = fattn_xmalloc(plen);
        m->payload_len = plen;
        if ((rc = recv_all(fd, m->payload, plen, deadline, &any)))
            goto fail;
    }
    m->json = tlen ? cJSON_ParseWithLength(text, tlen) : cJSON_CreateObject();
    free(text);
    if (!m->json || !cJSON_IsObject(m->json)) {
        snprintf(why, why_size, "a message of type %u whose header is not a JSON object", m->type);
        fattn_msg_release(m);
        return FATTN_WIRE_GARBAGE;
    }
    return FATTN_WIRE_OK;
fail:
    free(text);
    fattn_msg_release(m);
    snprintf(why, why_size, "%s", rc == FATTN_WIRE_TIMEOUT ? "no answer in time" : "a truncated message");
    return rc == FATTN_WIRE_EOF ? FATTN_WIRE_GARBAGE : rc;
}

void fattn_msg_release(fattn_msg *m)
{
    cJSON_Delete(m->json);
    free(m->payload);
    memset(m, 0, sizeof *m);
}
