/*
 * fs.h - small file-system helpers.
 */
#ifndef FATTN_UTIL_FS_H
#define FATTN_UTIL_FS_H

#include <stddef.h>
#include <stdio.h>

/* The largest text file fattn-tune reads (space files, landscapes, kernel
 * sources): 16 MiB, far above any it writes. */
#define FATTN_TEXT_MAX (16 << 20)

/* Reads a whole text file into a NUL-terminated buffer the caller frees.
 * Only a regular file is read: a FIFO, a device or a socket is refused at
 * once (never waited on), as is a file over FATTN_TEXT_MAX or holding a NUL
 * byte. On error reports "cannot read <what> <path>: <reason>" and returns
 * `code`. */
int fattn_read_file(const char *path, const char *what, int code, char **out, size_t *len);

/* Creates the directory holding `path` (one level) if it is missing. */
int fattn_make_parent_dir(const char *path);

/* Joins a directory and a name into a newly allocated path. */
char *fattn_path_join(const char *dir, const char *name);

/* 1 if `path` names an existing directory, 0 otherwise. */
int fattn_is_dir(const char *path);

/* Output that appears whole or not at all: -o FILE is written to a temporary
 * beside it and renamed over it on success. A symlink's target is replaced,
 * not the link; an existing path that is not a regular file (a device, a FIFO,
 * a folder) is refused. NULL, "-" and "/dev/stdout" are standard output. */
typedef struct fattn_outfile {
    FILE *f;
    const char *path; /* as given; NULL for standard output */
    char *target;     /* the regular file replaced: path with links followed */
    char *tmp;
} fattn_outfile;

/* 1 when `path` means standard output: NULL, "-" or "/dev/stdout". */
int fattn_outfile_is_stdout(const char *path);

/* Opens `path`. On error reports "-o <path>: ..." and returns FATTN_EFAIL
 * with nothing written. */
int fattn_outfile_open(fattn_outfile *o, const char *path);

/* Flushes and closes the output, keeping the temporary; returns rc, or the
 * write error (reported) when rc was 0. */
int fattn_outfile_close(fattn_outfile *o, int rc);

/* Closes the output if still open. With rc == 0 the temporary replaces the
 * file (a write error is reported and returned); otherwise the temporary is
 * removed and rc returned. */
int fattn_outfile_finish(fattn_outfile *o, int rc);

#endif
