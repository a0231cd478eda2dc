/*
 * kernel_src.c - loading kernel sources with their local headers.
 */
#include "compile/kernel_src.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/fs.h"
#include "util/paths.h"
#include "util/sha256.h"

static int have_header(const fattn_kernel_src *ks, const char *name)
{
    for (int i = 0; i < ks->nheaders; ++i)
        if (strcmp(ks->header_names[i], name) == 0)
            return 1;
    return strcmp(ks->name, name) == 0;
}

/* Adds every `#include "x"` of `text` (and, recursively, of x). */
static int scan_includes(fattn_kernel_src *ks, const char *text, const char *from)
{
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        const char *q = p;
        while (*q == ' ' || *q == '\t')
            ++q;
        if (*q++ != '#')
            continue;
        while (*q == ' ' || *q == '\t')
            ++q;
        if (strncmp(q, "include", 7) != 0)
            continue;
        q += 7;
        while (*q == ' ' || *q == '\t')
            ++q;
        if (*q != '"')
            continue;
        const char *end = strchr(q + 1, '"');
        const char *nl = strchr(q + 1, '\n');
        if (!end || (nl && nl < end))
            return fattn_error(FATTN_EFAIL, "kernel source %s/%s: malformed #include line", ks->dir, from);
        char *name = fattn_xstrndup(q + 1, (size_t)(end - q - 1));
        if (have_header(ks, name)) {
            free(name);
            continue;
        }
        if (ks->nheaders == FATTN_KERNEL_MAX_HEADERS) {
            free(name);
            return fattn_error(FATTN_EFAIL, "kernel source %s/%s: more than %d local headers", ks->dir, from,
                               FATTN_KERNEL_MAX_HEADERS);
        }
        char *path = fattn_path_join(ks->dir, name), *htext;
        int rc = fattn_read_file(path, "kernel header", FATTN_EFAIL, &htext, NULL);
        free(path);
        if (rc) {
            free(name);
            return rc;
        }
        int i = ks->nheaders++;
        ks->header_names[i] = name;
        ks->header_texts[i] = htext;
        if ((rc = scan_includes(ks, htext, name)))
            return rc;
    }
    return FATTN_OK;
}

int fattn_kernel_src_load(const char *dir, const char *file, fattn_kernel_src *ks)
{
    memset(ks, 0, sizeof *ks);
    if (!dir)
        dir = fattn_default_kernel_dir();
    ks->dir = fattn_xstrdup(dir);
    ks->name = fattn_xstrdup(file);
    char *path = fattn_path_join(dir, file);
    int rc = fattn_read_file(path, "kernel source", FATTN_EFAIL, &ks->text, NULL);
    free(path);
    if (!rc)
        rc = scan_includes(ks, ks->text, file);
    if (rc) {
        fattn_kernel_src_release(ks);
        return rc;
    }
    fattn_sha256 c;
    unsigned char d[32];
    fattn_sha256_init(&c);
    fattn_sha256_update(&c, ks->name, strlen(ks->name) + 1);
    fattn_sha256_update(&c, ks->text, strlen(ks->text) + 1);
    for (int i = 0; i < ks->nheaders; ++i) {
        fattn_sha256_update(&c, ks->header_names[i], strlen(ks->header_names[i]) + 1);
        fattn_sha256_update(&c, ks->header_texts[i], strlen(ks->header_texts[i]) + 1);
    }
    fattn_sha256_final(&c, d);
    fattn_hex(d, 32, ks->hash);
    return FATTN_OK;
}

void fattn_kernel_src_release(fattn_kernel_src *ks)
{
    free(ks->dir);
    free(ks->name);
    free(ks->text);
    for (int i = 0; i < ks->nheaders; ++i) {
        free(ks->header_names[i]);
        free(ks->header_texts[i]);
    }
    memset(ks, 0, sizeof *ks);
}

void fattn_kernel_src_copy(const fattn_kernel_src *from, fattn_kernel_src *to)
{
    memset(to, 0, sizeof *to);
    to->dir = from->dir ? fattn_xstrdup(from->dir) : NULL;
    to->name = from->name ? fattn_xstrdup(from->name) : NULL;
    to->text = from->text ? fattn_xstrdup(from->text) : NULL;
    to->nheaders = from->nheaders;
    for (int i = 0; i < from->nheaders; ++i) {
        to->header_names[i] = fattn_xstrdup(from->header_names[i]);
        to->header_texts[i] = fattn_xstrdup(from->header_texts[i]);
    }
    memcpy(to->hash, from->hash, sizeof to->hash);
}
