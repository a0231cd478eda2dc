/*
 * landscape.c - reading and writing landscape files.
 */
#include "run/landscape.h"

#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/fs.h"
#include "util/misc.h"

static int by_key(const void *a, const void *b)
{
    return strcmp(((const fattn_landscape_entry *)a)->key, ((const fattn_landscape_entry *)b)->key);
}

/* Splits a CSV line of plain fields (no quotes in landscapes) in place. */
static int split(char *line, char **fields, int max)
{
    int n = 0;
    for (char *p = line;; ++p) {
        if (n < max)
            fields[n] = p;
        ++n;
        p = strchr(p, ',');
        if (!p)
            break;
        *p = '\0';
    }
    return n;
}

static const char *const columns[6] = {"key", "status", "reason", "median_us", "p10_us", "p90_us"};

/* A time field: empty (0), or a number from FATTN_LANDSCAPE_MIN_US to
 * FATTN_LANDSCAPE_MAX_US. */
static int time_field(const char *path, int lineno, int col, const char *s, double *out)
{
    if (!*s) {
        *out = 0;
        return FATTN_OK;
    }
    if (fattn_parse_double(s, out) || !(*out >= FATTN_LANDSCAPE_MIN_US) || *out > FATTN_LANDSCAPE_MAX_US)
        return fattn_error(FATTN_EUSAGE,
                           "%s: line %d: field %s is '%s'; expected a time in microseconds from %g (a nanosecond) "
                           "to %.0f (an hour)",
                           path, lineno, columns[col], fattn_clip(s).s, FATTN_LANDSCAPE_MIN_US, FATTN_LANDSCAPE_MAX_US);
    return FATTN_OK;
}

/* One entry line, split into its six fields, into *e. */
static int entry(const char *path, int lineno, char **f, const fattn_family *fam, fattn_landscape_entry *e)
{
    fattn_config cfg;
    int rc;
    int was = fattn_error_set_quiet_thread(1);
    int bad_key = fattn_config_parse(f[0], "key", &cfg);
    fattn_error_set_quiet_thread(was);
    if (bad_key)
        return fattn_error(FATTN_EUSAGE, "%s: line %d: field key is '%s'; expected a configuration key of family %s",
                           path, lineno, fattn_clip(f[0]).s, fam->name);
    if (cfg.fam != fam)
        return fattn_error(FATTN_EUSAGE, "%s: line %d: key %s is of family %s; the landscape's is %s", path, lineno,
                           f[0], cfg.fam->name, fam->name);
    if (strcmp(f[1], "ok") && strcmp(f[1], "rejected") && strcmp(f[1], "error"))
        return fattn_error(FATTN_EUSAGE, "%s: line %d: field status is '%s'; expected ok, rejected or error", path,
                           lineno, fattn_clip(f[1]).s);
    if (strlen(f[2]) >= sizeof e->reason)
        return fattn_error(FATTN_EUSAGE, "%s: line %d: field reason is %zu characters; expected at most %zu", path,
                           lineno, strlen(f[2]), sizeof e->reason - 1);
    double *t[3] = {&e->median_us, &e->p10_us, &e->p90_us};
    for (int c = 3; c < 6; ++c)
        if ((rc = time_field(path, lineno, c, f[c], t[c - 3])))
            return rc;
    if (!strcmp(f[1], "ok")) {
        for (int c = 3; c < 6; ++c)
            if (!*t[c - 3])
                return fattn_error(FATTN_EUSAGE, "%s: line %d: field %s is empty; an ok entry has its three times",
                                   path, lineno, columns[c]);
        if (e->p10_us > e->median_us || e->median_us > e->p90_us)
            return fattn_error(FATTN_EUSAGE,
                               "%s: line %d: field %s is %s, %s the median %s; expected p10_us <= median_us <= "
                               "p90_us",
                               path, lineno, e->p10_us > e->median_us ? "p10_us" : "p90_us",
                               e->p10_us > e->median_us ? f[4] : f[5], e->p10_us > e->median_us ? "above" : "below",
                               f[3]);
    }
    fattn_config_key(&cfg, e->key);
    snprintf(e->status, sizeof e->status, "%s", f[1]);
    snprintf(e->reason, sizeof e->reason, "%s", f[2]);
    e->line = lineno;
    return FATTN_OK;
}

int fattn_landscape_load(const char *path, fattn_landscape *l)
{
    char *text;
    int rc = FATTN_OK, lineno = 0, header = 0;
    size_t cap = 0;
    memset(l, 0, sizeof *l);
    l->fam = fattn_families[0];
    if ((rc = fattn_read_file(path, "landscape file", FATTN_EUSAGE, &text, NULL)))
        return rc;
    for (char *line = text, *next; line && *line; line = next) {
        /* Line by line, blank ones counted: an error names the file's line. */
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        ++lineno;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r')
            line[--len] = '\0';
        if (!len)
            continue;
        if (line[0] == '#') {
            const char *v;
            if (lineno == 1 && strcmp(line, "# fattn-tune landscape 1") != 0) {
                rc = fattn_error(FATTN_EUSAGE, "%s: line 1: expected \"# fattn-tune landscape 1\"", path);
                break;
            }
            if ((v = strstr(line, "# device: ")) == line)
                snprintf(l->device, sizeof l->device, "%s", v + 10);
            else if ((v = strstr(line, "# arch: ")) == line)
                snprintf(l->arch, sizeof l->arch, "%s", v + 8);
            else if ((v = strstr(line, "# family: ")) == line) {
                if (!(l->fam = fattn_family_find(v + 10))) {
                    rc = fattn_error(FATTN_EUSAGE, "%s: line %d: unknown kernel family '%s'; expected one of %s", path,
                                     lineno, v + 10, fattn_family_names());
                    break;
                }
            } else if ((v = strstr(line, "# method: ")) == line)
                snprintf(l->method, sizeof l->method, "%s", v + 10);
            else if ((v = strstr(line, "# causal: ")) == line) {
                if (strcmp(v + 10, "0") && strcmp(v + 10, "1")) {
                    rc = fattn_error(FATTN_EUSAGE, "%s: line %d: field causal is '%s'; expected 0 or 1", path, lineno,
                                     fattn_clip(v + 10).s);
                    break;
                }
                l->shape.causal = v[10] == '1';
            } else if ((v = strstr(line, "# shape: ")) == line) {
                int c = l->shape.causal;
                int was = fattn_error_set_quiet_thread(1);
                int bad = fattn_shape_parse(v + 9, &l->shape);
                fattn_error_set_quiet_thread(was);
                if (bad) {
                    rc = fattn_error(FATTN_EUSAGE, "%s: line %d: malformed shape '%s'", path, lineno, v + 9);
                    break;
                }
                l->shape.causal = c;
            }
            continue;
        }
        if (lineno == 1) {
            rc = fattn_error(FATTN_EUSAGE, "%s: line 1: expected \"# fattn-tune landscape 1\"", path);
            break;
        }
        if (!header) {
            if (strcmp(line, "key,status,reason,median_us,p10_us,p90_us") != 0) {
                rc = fattn_error(FATTN_EUSAGE,
                                 "%s: line %d: expected the column header "
                                 "key,status,reason,median_us,p10_us,p90_us",
                                 path, lineno);
                break;
            }
            header = 1;
            continue;
        }
        char *f[6];
        fattn_landscape_entry e = {0};
        int nf = split(line, f, 6);
        if (nf != 6) {
            rc = fattn_error(FATTN_EUSAGE, "%s: line %d: %d field%s; expected 6 (%s)", path, lineno, nf,
                             nf == 1 ? "" : "s", "key,status,reason,median_us,p10_us,p90_us");
            break;
        }
        if ((rc = entry(path, lineno, f, l->fam, &e)))
            break;
        if (l->n == cap) {
            cap = cap ? 2 * cap : 256;
            l->e = fattn_xrealloc(l->e, cap * sizeof *l->e);
        }
        l->e[l->n++] = e;
    }
    free(text);
    if (!rc && (!l->shape.head_dim || !header || !l->n))
        rc = fattn_error(FATTN_EUSAGE,
                         "%s: no \"# shape:\" line or no entries; expected a landscape written by "
                         "fattn-tune query landscape",
                         path);
    if (rc) {
        fattn_landscape_release(l);
        return rc;
    }
    qsort(l->e, l->n, sizeof *l->e, by_key);
    for (size_t i = 1; i < l->n; ++i)
        if (!strcmp(l->e[i - 1].key, l->e[i].key)) {
            const fattn_landscape_entry *a = &l->e[i - 1], *b = &l->e[i];
            rc =
                fattn_error(FATTN_EUSAGE,
                            "%s: line %d: field key %s is given on line %d as well; expected each "
                            "configuration once",
                            path, a->line > b->line ? a->line : b->line, a->key, a->line < b->line ? a->line : b->line);
            fattn_landscape_release(l);
            return rc;
        }
    return FATTN_OK;
}

const fattn_landscape_entry *fattn_landscape_find(const fattn_landscape *l, const char *key)
{
    fattn_landscape_entry probe;
    snprintf(probe.key, sizeof probe.key, "%s", key);
    return bsearch(&probe, l->e, l->n, sizeof *l->e, by_key);
}

void fattn_landscape_release(fattn_landscape *l)
{
    free(l->e);
    memset(l, 0, sizeof *l);
}

void fattn_landscape_write_header(FILE *f, const char *device, const char *arch, const char *family,
                                  const fattn_shape *s, const char *method)
{
    fprintf(f,
            "# fattn-tune landscape 1\n# device: %s\n# arch: %s\n# family: %s\n# shape: %d,%d,%d,%d\n# causal: "
            "%d\n",
            device ? device : "unknown", arch, family, s->batch, s->heads, s->seqlen, s->head_dim, s->causal);
    fprintf(f, "# method: %s\nkey,status,reason,median_us,p10_us,p90_us\n", method ? method : "unknown");
}
