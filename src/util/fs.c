/*
 * fs.c - reading files, making the results folder.
 */
#include "util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"
#include "util/strbuf.h"

static const char *file_kind(mode_t m);

int fattn_read_file(const char *path, const char *what, int code, char **out, size_t *len)
{
    struct stat st;
    /* Opened without blocking (a FIFO with no writer would wait forever),
     * and only a regular file read. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return fattn_error(code, "cannot read %s %s: %s", what, path, strerror(errno));
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return fattn_error(code, "cannot read %s %s: %s", what, path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        if (S_ISDIR(st.st_mode))
            return fattn_error(code, "cannot read %s %s: it is a directory", what, path);
        return fattn_error(code, "cannot read %s %s: it is %s; expected a regular file", what, path,
                           file_kind(st.st_mode));
    }
    FILE *f = fcntl(fd, F_SETFL, 0) == 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        int e = errno;
        close(fd);
        return fattn_error(code, "cannot read %s %s: %s", what, path, strerror(e));
    }
    if (st.st_size > FATTN_TEXT_MAX) {
        fclose(f);
        return fattn_error(code, "cannot read %s %s: %lld bytes, over the limit of %d MiB for a text file", what, path,
                           (long long)st.st_size, FATTN_TEXT_MAX >> 20);
    }
    /* Read in pieces, stopping at the first NUL byte or past the limit (a
     * file that grows while it is read). */
    size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096, n = 0;
    char *buf = fattn_xmalloc(cap);
    const char *why = NULL;
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        const char *nul = memchr(buf + n, '\0', got);
        if (nul) {
            n = (size_t)(nul - buf);
            why = "nul";
            break;
        }
        n += got;
        if (n > FATTN_TEXT_MAX) {
            why = "big";
            break;
        }
        if (n + 1 < cap)
            break;
        cap = cap * 2 > (size_t)FATTN_TEXT_MAX + 2 ? (size_t)FATTN_TEXT_MAX + 2 : cap * 2;
        buf = fattn_xrealloc(buf, cap);
    }
    int bad = ferror(f);
    fclose(f);
    if (bad || why) {
        free(buf);
        if (why && *why == 'n')
            return fattn_error(code, "cannot read %s %s: byte %zu is NUL; expected a text file", what, path, n);
        if (why)
            return fattn_error(code, "cannot read %s %s: over the limit of %d MiB for a text file", what, path,
                               FATTN_TEXT_MAX >> 20);
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

/* The file a write to `path` lands on: symlinks followed (a relative target
 * from the link's folder), at most 40 of them. Newly allocated. */
static char *link_target(const char *path)
{
    char *cur = fattn_xstrdup(path);
    for (int hops = 0; hops < 40; hops++) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            return cur;
        char buf[4096];
        ssize_t n = readlink(cur, buf, sizeof buf - 1);
        if (n < 0)
            return cur;
        buf[n] = '\0';
        char *next;
        const char *slash = strrchr(cur, '/');
        if (buf[0] == '/' || !slash) {
            next = fattn_xstrdup(buf);
        } else {
            char *dir = fattn_xstrndup(cur, (size_t)(slash - cur + 1));
            next = fattn_path_join(dir, buf);
            free(dir);
        }
        free(cur);
        cur = next;
    }
    return cur;
}

static const char *file_kind(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

int fattn_outfile_is_stdout(const char *path)
{
    return !path || !strcmp(path, "-") || !strcmp(path, "/dev/stdout");
}

int fattn_outfile_open(fattn_outfile *o, const char *path)
{
    *o = (fattn_outfile){stdout, path, NULL, NULL};
    if (path && !*path)
        return fattn_error(FATTN_EUSAGE, "-o '': expected a file's path, or - for standard output");
    if (fattn_outfile_is_stdout(path)) {
        o->path = NULL;
        return FATTN_OK;
    }
    char *target = link_target(path);
    struct stat st;
    int exists = stat(target, &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {
        int rc = fattn_error(FATTN_EFAIL,
                             "-o %s: %s%s%sis %s, which is not replaced; expected a regular file's path, "
                             "or - for standard output",
                             path, strcmp(target, path) ? "its target " : "", strcmp(target, path) ? target : "",
                             strcmp(target, path) ? " " : "", file_kind(st.st_mode));
        free(target);
        *o = (fattn_outfile){0};
        return rc;
    }
    fattn_strbuf tmp;
    fattn_sb_init(&tmp);
    fattn_sb_addf(&tmp, "%s.tmp.%ld", target, (long)getpid());
    o->tmp = fattn_sb_detach(&tmp);
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, exists ? (st.st_mode & 07777) : 0666);
    if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
        int rc = fattn_error(FATTN_EFAIL, "-o %s: cannot write %s: %s", path, o->tmp, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(o->tmp);
        }
        free(o->tmp);
        free(target);
        *o = (fattn_outfile){0};
        return rc;
    }
    if (exists)
        (void)fchmod(fd, st.st_mode & 07777);
    o->target = target;
    return FATTN_OK;
}

int fattn_outfile_close(fattn_outfile *o, int rc)
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
    o->f = NULL;
    return rc;
}

int fattn_outfile_finish(fattn_outfile *o, int rc)
{
    rc = fattn_outfile_close(o, rc);
    if (!o->tmp)
        return rc;
    if (!rc && rename(o->tmp, o->target) != 0)
        rc = fattn_error(FATTN_EFAIL, "-o %s: cannot replace %s: %s", o->path, o->target, strerror(errno));
    if (rc)
        unlink(o->tmp);
    free(o->tmp);
    free(o->target);
    *o = (fattn_outfile){0};
    return rc;
}
