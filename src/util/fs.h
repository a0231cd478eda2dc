/*
 * fs.h - small file-system helpers.
 */
#ifndef FATTN_UTIL_FS_H
#define FATTN_UTIL_FS_H

#include <stddef.h>
#include <stdio.h>

/* Reads a whole file into a NUL-terminated buffer the caller frees. On error
 * reports "<what> <path>: <reason>" and returns `code`. */
int fattn_read_file(const char *path, const char *what, int code, char **out, size_t *len);

/* Creates the directory holding `path` (one level) if it is missing. */
int fattn_make_parent_dir(const char *path);

/* Joins a directory and a name into a newly allocated path. */
char *fattn_path_join(const char *dir, const char *name);

/* 1 if `path` names an existing directory, 0 otherwise. */
int fattn_is_dir(const char *path);

/* Output that appears whole or not at all: -o FILE is written to a temporary
 * beside it and renamed over it on success. With path NULL, standard output. */
typedef struct fattn_outfile {
    FILE *f;
    const char *path;
    char *tmp;
} fattn_outfile;

/* Opens `path` (NULL: stdout). On error reports "-o <path>: ..." and returns
 * FATTN_EFAIL. */
int fattn_outfile_open(fattn_outfile *o, const char *path);

/* Closes the output. With rc == 0 the temporary replaces the file (a write
 * error is reported and returned); otherwise the temporary is removed and rc
 * returned. */
int fattn_outfile_finish(fattn_outfile *o, int rc);

#endif
