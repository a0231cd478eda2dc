/*
 * proc.c - process tags from /proc.
 */
#include "util/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The start time (field 22 of /proc/PID/stat), or 0 when there is none or
 * the process has ended (a zombie, state Z or X, that nobody reaped: a
 * process killed -9 under a parent killed with it). */
static unsigned long long start_time(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* After the command name, in parentheses that it may itself contain. */
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
        return 0;
    ++p;
    for (int field = 3; field < 22 && p; ++field) {
        p = strchr(p + 1, ' ');
    }
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

int fattn_process_tag(pid_t pid, char *out, size_t n)
{
    char host[256] = "localhost";
    if (!pid)
        pid = getpid();
    unsigned long long st = start_time(pid);
    if (!st)
        return -1;
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    snprintf(out, n, "%s:%d:%llu", host, (int)pid, st);
    return 0;
}

/* Splits HOST:PID:START: *pid_at at PID, *start_at at START's ':'; 0, or -1
 * for a malformed tag. */
static int split(const char *tag, const char **pid_at, const char **start_at)
{
    const char *a = strrchr(tag, ':');
    if (!a || a == tag)
        return -1;
    const char *b = a - 1;
    while (b > tag && *b != ':')
        --b;
    if (*b != ':')
        return -1;
    *pid_at = b + 1, *start_at = a;
    return 0;
}

void fattn_process_tag_who(const char *tag, char *out, size_t n)
{
    const char *p, *a;
    if (split(tag, &p, &a))
        snprintf(out, n, "process %s", tag);
    else
        snprintf(out, n, "process %.*s on %.*s", (int)(a - p), p, (int)(p - 1 - tag), tag);
}

int fattn_process_tag_alive(const char *tag)
{
    char host[256] = "localhost";
    const char *p, *a;
    if (split(tag, &p, &a))
        return 0;
    const char *b = p - 1;
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    if ((size_t)(b - tag) != strlen(host) || strncmp(tag, host, (size_t)(b - tag)) != 0)
        return 2;
    pid_t pid = (pid_t)strtol(b + 1, NULL, 10);
    unsigned long long st = strtoull(a + 1, NULL, 10);
    return pid > 0 && st && start_time(pid) == st;
}
