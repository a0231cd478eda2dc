/*
 * worker.c - starting, calling, watching and ending worker processes.
 */
#include "run/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/err.h"
#include "util/misc.h"

struct fattn_worker {
    pid_t pid;
    int fd;
    int alive;
    int setup_ms; /* limit of a setup phase; 0: the call's */
};

void fattn_worker_set_setup_timeout(fattn_worker *w, int ms)
{
    w->setup_ms = ms;
}

const char *fattn_self_exe(void)
{
    static char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        return "fattn-tune";
    path[n] = '\0';
    return path;
}

int fattn_worker_start(const char *exe, fattn_worker **out, char *why, size_t why_size)
{
    int sv[2];
    *out = NULL;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(why, why_size, "cannot create the worker's socket: %s", strerror(errno));
        return FATTN_EFAIL;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, why_size, "cannot start a worker: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return FATTN_EFAIL;
    }
    if (pid == 0) {
        /* The child keeps stdin, stdout (for its own diagnostics, stderr) and
         * fd 3, its end of the socket; every other descriptor (the
         * database's among them) closes. */
        if (dup2(sv[1], 3) < 0)
            _exit(127);
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) {
            dup2(devnull, 0);
            dup2(2, 1);
        }
        closefrom(4);
        char *argv[] = {(char *)exe, "__worker", "3", NULL};
        execv(exe, argv);
        _exit(127);
    }
    close(sv[1]);
    fattn_worker *w = fattn_xcalloc(1, sizeof *w);
    w->pid = pid;
    w->fd = sv[0];
    w->alive = 1;
    *out = w;
    return FATTN_OK;
}

/* Reaps the worker, describing how it ended. */
static void reap(fattn_worker *w, int kill_first, char *why, size_t why_size)
{
    int status = 0;
    if (!w->alive)
        return;
    if (kill_first)
        kill(w->pid, SIGKILL);
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
        ;
    w->alive = 0;
    close(w->fd);
    w->fd = -1;
    if (!why || kill_first)
        return;
    if (WIFSIGNALED(status))
        snprintf(why, why_size, "the worker was killed by %s (signal %d)", strsignal(WTERMSIG(status)),
                 WTERMSIG(status));
    else if (WIFEXITED(status))
        snprintf(why, why_size, "the worker exited with status %d", WEXITSTATUS(status));
}

int fattn_worker_call(fattn_worker *w, uint32_t type, const cJSON *json, const void *payload, size_t len,
                      int timeout_ms, fattn_msg *reply, char *why, size_t why_size)
{
    char wire_why[256];
    memset(reply, 0, sizeof *reply);
    if (!w->alive) {
        snprintf(why, why_size, "the worker is not running");
        return FATTN_WORKER_DIED;
    }
    if (fattn_wire_send(w->fd, type, json, payload, len)) {
        reap(w, 0, why, why_size);
        return FATTN_WORKER_DIED;
    }
    int limit = timeout_ms;
    char setup[160] = ""; /* what the setup phase in progress does */
    for (;;) {
        int rc = fattn_wire_recv(w->fd, limit, reply, wire_why, sizeof wire_why);
        if (rc == FATTN_WIRE_OK && reply->type == FATTN_MSG_PHASE) {
            const cJSON *what = cJSON_GetObjectItemCaseSensitive(reply->json, "what");
            const cJSON *phase = cJSON_GetObjectItemCaseSensitive(reply->json, "phase");
            int is_setup = cJSON_IsString(phase) && !strcmp(phase->valuestring, "setup") && timeout_ms >= 0;
            snprintf(setup, sizeof setup, "%s", is_setup && cJSON_IsString(what) ? what->valuestring : "");
            limit = is_setup && w->setup_ms > 0 ? w->setup_ms : timeout_ms;
            fattn_msg_release(reply);
            continue;
        }
        if (rc == FATTN_WIRE_OK)
            return FATTN_WIRE_OK;
        if (rc == FATTN_WIRE_TIMEOUT) {
            reap(w, 1, NULL, 0);
            if (*setup)
                snprintf(why, why_size, "no answer from the worker in %.1f s while %s (--setup-timeout); killed",
                         limit / 1000.0, setup);
            else
                snprintf(why, why_size, "no answer from the worker in %.1f s; killed", limit / 1000.0);
            return FATTN_WORKER_TIMEOUT;
        }
        if (rc == FATTN_WIRE_EOF || rc == FATTN_WIRE_IO) {
            reap(w, 0, why, why_size);
            return FATTN_WORKER_DIED;
        }
        reap(w, 1, NULL, 0);
        snprintf(why, why_size, "the worker sent %s; killed", wire_why);
        return FATTN_WORKER_GARBAGE;
    }
}

int fattn_worker_alive(const fattn_worker *w)
{
    return w && w->alive;
}

pid_t fattn_worker_pid(const fattn_worker *w)
{
    return w->pid;
}

void fattn_worker_stop(fattn_worker **wp)
{
    fattn_worker *w = *wp;
    if (!w)
        return;
    if (w->alive) {
        fattn_wire_send(w->fd, FATTN_MSG_QUIT, NULL, NULL, 0);
        /* Give it a moment to leave on its own (it releases the GPU). */
        for (int i = 0; i < 200; ++i) {
            int status;
            pid_t r = waitpid(w->pid, &status, WNOHANG);
            if (r == w->pid || (r < 0 && errno != EINTR)) {
                w->alive = 0;
                close(w->fd);
                break;
            }
            usleep(10000);
        }
        reap(w, 1, NULL, 0);
    }
    free(w);
    *wp = NULL;
}
