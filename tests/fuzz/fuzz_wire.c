/*
 * fuzz_wire.c - the worker wire decoder (fattn_wire_recv), as the search
 * process reads a worker that may send anything: the bytes arrive on a
 * socket, then the worker hangs up. Every frame is either decoded (a JSON
 * object, a payload of the announced length) or refused as garbage, and the
 * end is an end; never a crash, a leak or a read past the frame.
 */
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz.h"
#include "run/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    int sv[2];
    FUZZ_ASSERT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    /* The socket buffer holds the input whole (-max_len keeps it small). */
    int big = 1 << 20;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    FUZZ_ASSERT(size == 0 || write(sv[0], data, size) == (ssize_t)size);
    close(sv[0]);
    char why[256];
    for (int frames = 0; frames < 1000; ++frames) {
        fattn_msg m;
        int r = fattn_wire_recv(sv[1], 1000, &m, why, sizeof why);
        if (r != FATTN_WIRE_OK) {
            FUZZ_ASSERT(r == FATTN_WIRE_EOF || r == FATTN_WIRE_GARBAGE || r == FATTN_WIRE_IO);
            break;
        }
        FUZZ_ASSERT(cJSON_IsObject(m.json));
        FUZZ_ASSERT(!m.payload == !m.payload_len);
        fattn_msg_release(&m);
    }
    close(sv[1]);
    return 0;
}
