/*
 * hardware.c - the families' hardware records (hardware.h).
 */
#include "space/hardware.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fs.h"
#include "util/paths.h"

/* One line's fields into r; 0 when they are all there. */
static int parse(char *line, const char **family, fattn_hw_record *r)
{
    char *f[5], *save = NULL;
    int n = 0;
    for (char *t = strtok_r(line, "\t", &save); t && n < 5; t = strtok_r(NULL, "\t", &save))
        f[n++] = t;
    if (n != 5 || strlen(f[3]) != 64)
        return -1;
    *family = f[0];
    snprintf(r->date, sizeof r->date, "%s", f[1]);
    snprintf(r->gpu, sizeof r->gpu, "%s", f[2]);
    snprintf(r->hash, sizeof r->hash, "%s", f[3]);
    snprintf(r->check, sizeof r->check, "%s", f[4]);
    return 0;
}

/* The records of one file, merged into *out. */
static void read_records(const char *dir, const char *family, const char *kernel_hash, fattn_hw_status *out)
{
    char *path = fattn_path_join(dir, FATTN_HW_RECORDS);
    FILE *f = fopen(path, "r");
    free(path);
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        const char *fam;
        fattn_hw_record r;
        if (line[0] == '#' || parse(line, &fam, &r) || strcmp(fam, family))
            continue;
        const int mine = kernel_hash && !strcmp(r.hash, kernel_hash);
        /* The latest record of this source, else the latest of any (ISO dates compare as text). */
        if ((mine && (!out->proven || strcmp(r.date, out->last.date) >= 0))
            || (!mine && !out->proven && (!out->any || strcmp(r.date, out->last.date) >= 0)))
            out->last = r;
        out->any = 1;
        out->proven |= mine;
    }
    fclose(f);
}

void fattn_hw_lookup(const char *kernel_dir, const char *family, const char *kernel_hash, fattn_hw_status *out)
{
    memset(out, 0, sizeof *out);
    /* The product's records hold for any copy of its kernels (they are keyed by the source's hash). */
    read_records(fattn_default_kernel_dir(), family, kernel_hash, out);
    if (kernel_dir && strcmp(kernel_dir, fattn_default_kernel_dir()))
        read_records(kernel_dir, family, kernel_hash, out);
}

void fattn_hw_describe(const fattn_hw_status *st, char *out, size_t n)
{
    if (st->proven)
        snprintf(out, n, "proven on hardware: this kernel source passed %s on %s, %s", st->last.check, st->last.date,
                 st->last.gpu);
    else if (st->any)
        snprintf(out, n,
                 "unproven on hardware: this kernel source has passed no device check (the family's last: %s on %s, "
                 "%s, kernel %.12s)",
                 st->last.check, st->last.date, st->last.gpu, st->last.hash);
    else
        snprintf(out, n, "unproven on hardware: the family has never passed a device check on a GPU");
}
