/*
 * fs.c - reading files, making the results folder.
 */
#include "util/fs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"

int fattn_read_file(const char *path, const char *what, int code, char **out, size_t *len)
{
    struct stat st;
    FILE *f = fopen(path, "rb");
    if (!f)
        return fattn_error(code, "cannot read %s %s: %s", what, path, strerror(errno));
    if (fstat(fileno(f), &st) != 0 || S_ISDIR(st.st_mode)) {
        fclose(f);
        return fattn_error(code, "cannot read %s %s: %s", what, path,
                           S_ISDIR(st.st_mode) ? "it is a directory" : strerror(errno));
    }
    size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096, n = 0;
    char *buf = fattn_xmalloc(cap);
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n + 1 < cap)
            break;
        cap *= 2;
        buf = fattn_xrealloc(buf, cap);
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return fattn_error(code, "cannot read %s %s: read error", what, path);
    }
    buf[n] = '\0';
    *out = buf;
    if (len)
        *len = n;
    return FATTN_OK;
}

int fattn_make_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return FATTN_OK;
    char *dir = fattn_xstrndup(path, (size_t)(slash - path));
    int rc = FATTN_OK;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        rc = fattn_error(FATTN_EFAIL, "cannot create directory %s for %s: %s", dir, path, strerror(errno));
    free(dir);
    return rc;
}

char *fattn_path_join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = fattn_xmalloc(a + b + 2);
    memcpy(p, dir, a);
    size_t n = a;
    if (a && dir[a - 1] != '/')
        p[n++] = '/';
    memcpy(p + n, name, b + 1);
    return p;
}

int fattn_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int fattn_outfile_open(fattn_outfile *o, const char *path)
{
    *o = (fattn_outfile){stdout, path, NULL};
    if (!path)
        return FATTN_OK;
    size_t n = strlen(path) + 32;
    o->tmp = fattn_xmalloc(n);
    snprintf(o->tmp, n, "%s.tmp.%ld", path, (long)getpid());
    if (!(o->f = fopen(o->tmp, "w"))) {
        int rc = fattn_error(FATTN_EFAIL, "-o %s: cannot write %s: %s", path, o->tmp, strerror(errno));
        free(o->tmp);
        *o = (fattn_outfile){0};
        return rc;
    }
    return FATTN_OK;
}

int fattn_outfile_finish(fattn_outfile *o, int rc)
{
    if (!o->f)
        return rc;
    if (!o->tmp) {
        if (fflush(o->f) != 0 && !rc)
            rc = fattn_error(FATTN_EFAIL, "standard output: write error: %s", strerror(errno));
        o->f = NULL;
        return rc;
    }
    int bad = ferror(o->f);
    if ((fclose(o->f) != 0 || bad) && !rc)
        rc = fattn_error(FATTN_EFAIL, "-o %s: write error", o->path);
    if (!rc && rename(o->tmp, o->path) != 0)
        rc = fattn_error(FATTN_EFAIL, "-o %s: cannot replace the file: %s", o->path, strerror(errno));
    if (rc)
        unlink(o->tmp);
    free(o->tmp);
    *o = (fattn_outfile){0};
    return rc;
}
