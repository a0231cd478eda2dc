/*
 * proc.h - naming a running process so that another can tell, later, whether
 * it still runs: "HOST:PID:START", START being the process's start time in
 * clock ticks since boot (/proc/PID/stat), so a reused pid is not mistaken
 * for the process that held a study.
 */
#ifndef FATTN_UTIL_PROC_H
#define FATTN_UTIL_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* The tag of process `pid` (0: this process). Returns 0, or -1 when the
 * process does not exist. */
int fattn_process_tag(pid_t pid, char *out, size_t n);

/* "process PID on HOST" for a tag. */
void fattn_process_tag_who(const char *tag, char *out, size_t n);

/* Whether the process of `tag` still runs: 1 yes, 0 no (gone, or its pid now
 * names another process), 2 unknown (another host). */
int fattn_process_tag_alive(const char *tag);

#endif
