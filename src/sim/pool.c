/*
 * pool.c - simulator checks in child processes.
 */
#include "sim/pool.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/err.h"
#include "util/misc.h"

/* What a child writes back: its return code and the check. */
typedef struct record {
    int rc;
    char error[400]; /* rc < 0: the message */
    fattn_sim_check c;
} record;

typedef struct slot {
    pid_t pid; /* 0: free */
    int fd;
    size_t job;
    double deadline; /* ms, 0: none */
    size_t got;
    int killed; /* past the time limit */
    record *r;
} slot;

int fattn_sim_verdict_defect(const char *v)
{
    if (!v || !*v)
        return 0;
    if (!strcmp(v, FATTN_SIMV_NUMERICS))
        return 1;
    for (int k = 0; k < FATTN_SIMK_KINDS; ++k)
        if (!strcmp(v, fattn_sim_kind_name(k)))
            return 1;
    return 0;
}

static void child(const fattn_sim_pool *p, const fattn_sim_job *job, int fd)
{
    /* The parent decides about signals: a Ctrl-C reaches it, and it kills
     * the children; its death kills them too. */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_DFL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    fattn_error_set_quiet(1);
    record *r = calloc(1, sizeof *r);
    if (!r)
        _exit(3);
    const fattn_sim_inputs in = {.seed = p->seed};
    r->rc = fattn_sim_check_config(p->src, &job->cfg, &job->shape, &in, p->cache_dir, &r->c);
    if (r->rc < 0)
        snprintf(r->error, sizeof r->error, "%s", fattn_last_error());
    const char *b = (const char *)r;
    size_t left = sizeof *r;
    while (left) {
        ssize_t w = write(fd, b, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            _exit(4);
        b += w, left -= (size_t)w;
    }
    _exit(0);
}

static int start(const fattn_sim_pool *p, const fattn_sim_job *jobs, size_t i, slot *s)
{
    int fd[2];
    if (pipe(fd) != 0)
        return fattn_error(FATTN_EFAIL, "simulator: cannot make a pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]), close(fd[1]);
        return fattn_error(FATTN_EFAIL, "simulator: cannot start a process: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fd[0]);
        child(p, &jobs[i], fd[1]);
    }
    close(fd[1]);
    s->pid = pid;
    s->fd = fd[0];
    s->job = i;
    s->got = 0;
    s->killed = 0;
    s->deadline = p->timeout_ms > 0 ? fattn_now_ms() + p->timeout_ms : 0;
    memset(s->r, 0, sizeof *s->r);
    return FATTN_OK;
}

static void describe_status(int status, char *out, size_t n)
{
    if (WIFSIGNALED(status))
        snprintf(out, n, "signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status))
        snprintf(out, n, "exit status %d", WEXITSTATUS(status));
    else
        snprintf(out, n, "status %d", status);
}

/* The child of slot s has closed its pipe: reap it and turn what it wrote
 * (or did not) into a result. Returns on_result's code, FATTN_EFAIL for a
 * child that could not run the simulator, or 0. */
static int finish(const fattn_sim_pool *p, slot *s)
{
    int status = 0;
    while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
        ;
    close(s->fd);
    s->pid = 0;
    record *r = s->r;
    if (s->got == sizeof *r && r->rc < 0)
        return fattn_error(FATTN_EFAIL, "%s", r->error[0] ? r->error : "simulator: the check failed");
    if (s->got != sizeof *r || r->rc != 0) {
        char how[96];
        fattn_sim_check *c = &r->c;
        memset(c, 0, sizeof *c);
        if (s->killed) {
            snprintf(c->verdict, sizeof c->verdict, "%s", FATTN_SIMV_TIMEOUT);
            snprintf(c->detail, sizeof c->detail, "the simulator ran past %.0f s on this configuration; killed",
                     p->timeout_ms / 1000.0);
            snprintf(c->fix, sizeof c->fix, "raise --timeout, or look for a loop that never reaches a barrier");
        } else {
            describe_status(status, how, sizeof how);
            snprintf(c->verdict, sizeof c->verdict, "%s", FATTN_SIMV_CRASH);
            snprintf(c->detail, sizeof c->detail, "the simulator process died (%s) on this configuration", how);
        }
    }
    return p->on_result ? p->on_result(p->arg, s->job, &r->c) : 0;
}

static void kill_all(slot *slots, int n)
{
    for (int j = 0; j < n; ++j)
        if (slots[j].pid) {
            kill(slots[j].pid, SIGKILL);
            while (waitpid(slots[j].pid, NULL, 0) < 0 && errno == EINTR)
                ;
            close(slots[j].fd);
            slots[j].pid = 0;
        }
}

int fattn_sim_pool_run(const fattn_sim_pool *p, const fattn_sim_job *jobs, size_t n)
{
    const int nj = p->jobs < 1 ? 1 : p->jobs;
    slot *slots = calloc((size_t)nj, sizeof *slots);
    struct pollfd *pfd = calloc((size_t)nj, sizeof *pfd);
    if (!slots || !pfd) {
        free(slots), free(pfd);
        return fattn_error(FATTN_EFAIL, "simulator: out of memory");
    }
    int rc = FATTN_OK;
    for (int j = 0; j < nj; ++j)
        if (!(slots[j].r = malloc(sizeof(record)))) {
            rc = fattn_error(FATTN_EFAIL, "simulator: out of memory");
            goto out;
        }
    size_t next = 0, done = 0;
    while (done < n) {
        if (p->interrupted && *p->interrupted) {
            rc = 1;
            break;
        }
        /* Fill the free slots. */
        for (int j = 0; j < nj && next < n; ++j)
            if (!slots[j].pid && (rc = start(p, jobs, next++, &slots[j])))
                goto out;
        /* Wait for output, an end, or the nearest deadline. */
        int np = 0, timeout = 1000;
        double now = fattn_now_ms();
        for (int j = 0; j < nj; ++j) {
            if (!slots[j].pid)
                continue;
            pfd[np++] = (struct pollfd){.fd = slots[j].fd, .events = POLLIN};
            if (slots[j].deadline > 0 && !slots[j].killed) {
                double left = slots[j].deadline - now;
                if (left < timeout)
                    timeout = left < 0 ? 0 : (int)left + 1;
            }
        }
        int pr = poll(pfd, (nfds_t)np, timeout);
        if (pr < 0 && errno != EINTR) {
            rc = fattn_error(FATTN_EFAIL, "simulator: poll: %s", strerror(errno));
            break;
        }
        now = fattn_now_ms();
        for (int j = 0, k = 0; j < nj; ++j) {
            slot *s = &slots[j];
            if (!s->pid)
                continue;
            short ev = pr > 0 ? pfd[k].revents : 0;
            ++k;
            if (s->deadline > 0 && now >= s->deadline && !s->killed) {
                s->killed = 1;
                kill(s->pid, SIGKILL);
            }
            if (!(ev & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t got = s->got < sizeof(record) ? read(s->fd, (char *)s->r + s->got, sizeof(record) - s->got) : 0;
            if (got < 0 && errno == EINTR)
                continue;
            if (got > 0) {
                s->got += (size_t)got;
                continue;
            }
            /* End of file: the child is done (or dead). */
            ++done;
            if ((rc = finish(p, s)))
                goto out;
        }
    }
out:
    kill_all(slots, nj);
    for (int j = 0; j < nj; ++j)
        free(slots[j].r);
    free(slots);
    free(pfd);
    return rc;
}
