/*
 * file.c - reading a campaign file (file.h): TSV or JSON, each row checked
 * as it is read.
 */
#include "campaign/file.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/fs.h"
#include "util/misc.h"
#include "util/sha256.h"

enum { COL_SHAPE, COL_MASK, COL_BUDGET, COL_TRIALS, COL_EVALUATOR, COL_NAME, NCOLS };
static const char *const columns[NCOLS] = {"shape", "mask", "budget", "trials", "evaluator", "name"};

static int column_find(const char *name)
{
    for (int c = 0; c < NCOLS; ++c)
        if (!strcmp(columns[c], name))
            return c;
    return -1;
}

void fattn_campaign_row_label(const fattn_campaign_row *r, char *out, size_t n)
{
    snprintf(out, n, "%d,%d,%d,%d %s", r->shape.batch, r->shape.heads, r->shape.seqlen, r->shape.head_dim,
             r->shape.causal ? "causal" : "none");
}

/* "FILE:LINE" for a TSV row, "FILE: row K" for a JSON one. */
static const char *where(const fattn_campaign_file *f, int json, int line, char *buf, size_t n)
{
    if (json)
        snprintf(buf, n, "%s: row %d", f->path, line);
    else
        snprintf(buf, n, "%s:%d", f->path, line);
    return buf;
}

/* The folder of the campaign file, for relative landscape paths. */
static char *resolve(const char *file, const char *rel)
{
    if (rel[0] == '/')
        return fattn_xstrdup(rel);
    const char *slash = strrchr(file, '/');
    char *dir = slash ? fattn_xstrndup(file, (size_t)(slash - file)) : fattn_xstrdup(".");
    char *p = fattn_path_join(dir, rel);
    free(dir);
    char *abs = realpath(p, NULL);
    if (abs) {
        free(p);
        return abs;
    }
    return p; /* the search says it cannot read it */
}

/* Sets column c of row r from `v` (TSV text, or a JSON value as text). */
static int set_field(const fattn_campaign_file *f, fattn_campaign_row *r, int c, const char *v, const char *at)
{
    switch (c) {
    case COL_SHAPE: {
        int causal = r->shape.causal;
        int was = fattn_error_set_quiet_thread(1);
        int bad = fattn_shape_parse(v, &r->shape);
        fattn_error_set_quiet_thread(was);
        r->shape.causal = causal;
        if (bad) {
            char why[512];
            snprintf(why, sizeof why, "%s", fattn_last_error());
            return fattn_error(FATTN_EUSAGE, "%s: %s", at, why);
        }
        return FATTN_OK;
    }
    case COL_MASK:
        if (!*v || !strcmp(v, "none") || !strcmp(v, "-"))
            r->shape.causal = 0;
        else if (!strcmp(v, "causal"))
            r->shape.causal = 1;
        else
            return fattn_error(FATTN_EUSAGE, "%s: mask '%s': expected none or causal", at, v);
        return FATTN_OK;
    case COL_BUDGET:
        if (!*v || !strcmp(v, "-"))
            return FATTN_OK;
        if (fattn_parse_duration(v, &r->budget_ms) || r->budget_ms < 10000 || strlen(v) >= sizeof r->budget)
            return fattn_error(FATTN_EUSAGE,
                               "%s: budget '%s': expected a duration of at least 10s, such as 90s, 20m "
                               "or 1h30m, or - for none",
                               at, v);
        snprintf(r->budget, sizeof r->budget, "%s", v);
        return FATTN_OK;
    case COL_TRIALS:
        if (!*v || !strcmp(v, "-"))
            return FATTN_OK;
        if (fattn_parse_long(v, 1, 100000000, &r->trials))
            return fattn_error(FATTN_EUSAGE, "%s: trials '%s': expected a count from 1 to 100000000, or - for none", at,
                               v);
        return FATTN_OK;
    case COL_EVALUATOR:
        free(r->evaluator);
        r->evaluator = NULL;
        if (!*v || !strcmp(v, "gpu"))
            return FATTN_OK;
        if (strncmp(v, "replay:", 7) || !v[7])
            return fattn_error(FATTN_EUSAGE, "%s: evaluator '%s': expected gpu or replay:FILE", at, v);
        {
            char *p = resolve(f->path, v + 7);
            size_t n = strlen(p) + 8;
            r->evaluator = fattn_xmalloc(n);
            snprintf(r->evaluator, n, "replay:%s", p);
            free(p);
        }
        return FATTN_OK;
    case COL_NAME:
        free(r->name);
        r->name = *v ? fattn_xstrdup(v) : NULL;
        return FATTN_OK;
    }
    return FATTN_EUSAGE;
}

/* The checks of a whole row, and of the rows before it. */
static int check_row(const fattn_campaign_file *f, const fattn_campaign_row *r, int has_shape, const char *at)
{
    if (!has_shape)
        return fattn_error(FATTN_EUSAGE, "%s: no shape; expected B,H,S,D in the shape column", at);
    if (!r->budget_ms && !r->trials)
        return fattn_error(FATTN_EUSAGE,
                           "%s: expected a budget or trials for the row (a study without either ends only when its "
                           "strategy has tried every configuration)",
                           at);
    for (int k = 0; k < f->n; ++k)
        if (!memcmp(&f->rows[k].shape, &r->shape, sizeof r->shape)) {
            char label[96];
            fattn_campaign_row_label(r, label, sizeof label);
            return fattn_error(FATTN_EUSAGE, "%s: %s again (its row %d); expected each shape and mask once", at, label,
                               k + 1);
        }
    return FATTN_OK;
}

static int add_row(fattn_campaign_file *f, const fattn_campaign_row *r, const char *at)
{
    if (f->n == FATTN_CAMPAIGN_MAX_ROWS)
        return fattn_error(FATTN_EUSAGE, "%s: more than %d rows; expected at most %d", at, FATTN_CAMPAIGN_MAX_ROWS,
                           FATTN_CAMPAIGN_MAX_ROWS);
    f->rows = fattn_xrealloc(f->rows, (size_t)(f->n + 1) * sizeof *f->rows);
    f->rows[f->n++] = *r;
    return FATTN_OK;
}

static void row_release(fattn_campaign_row *r)
{
    free(r->evaluator);
    free(r->name);
}

/* The row read: checked, then added (its fields the file's from then on). */
static int finish_row(fattn_campaign_file *f, fattn_campaign_row *r, int has_shape, const char *at)
{
    int rc = check_row(f, r, has_shape, at);
    return rc ? rc : add_row(f, r, at);
}

/* Cuts a line at tabs into at most `max` fields, each trimmed of spaces. */
static int split_tabs(char *line, char **fields, int max)
{
    int n = 0;
    for (char *p = line;; ++n) {
        char *tab = strchr(p, '\t');
        if (tab)
            *tab = '\0';
        while (*p == ' ')
            ++p;
        char *end = p + strlen(p);
        while (end > p && (end[-1] == ' ' || end[-1] == '\r'))
            *--end = '\0';
        if (n < max)
            fields[n] = p;
        if (!tab)
            return n + 1;
        p = tab + 1;
    }
}

static int read_tsv(fattn_campaign_file *f)
{
    char *copy = fattn_xstrdup(f->text), at[4200];
    int map[NCOLS + 8], ncols = 0, lineno = 0, rc = FATTN_OK;
    char *fields[NCOLS + 8];
    for (char *line = copy, *next; line && !rc; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        ++lineno;
        const char *p = line;
        while (*p == ' ' || *p == '\t' || *p == '\r')
            ++p;
        if (!*p || *p == '#')
            continue;
        int n = split_tabs(line, fields, NCOLS + 8);
        where(f, 0, lineno, at, sizeof at);
        if (!ncols) { /* the header */
            if (n > NCOLS)
                rc = fattn_error(FATTN_EUSAGE, "%s: %d columns; expected at most %d (%s)", at, n, NCOLS,
                                 "shape, mask, budget, trials, evaluator, name");
            for (int c = 0; !rc && c < n; ++c) {
                map[c] = column_find(fields[c]);
                if (map[c] < 0)
                    rc = fattn_error(FATTN_EUSAGE,
                                     "%s: column '%s': expected a header of tab-separated names among shape, mask, "
                                     "budget, trials, evaluator, name",
                                     at, fields[c]);
                for (int d = 0; !rc && d < c; ++d)
                    if (map[d] == map[c])
                        rc = fattn_error(FATTN_EUSAGE, "%s: column '%s' twice; expected each once", at, fields[c]);
            }
            ncols = n;
            continue;
        }
        if (n > ncols) {
            rc = fattn_error(FATTN_EUSAGE, "%s: %d fields; expected at most %d, as the header names", at, n, ncols);
            break;
        }
        fattn_campaign_row r = {.line = lineno};
        int has_shape = 0;
        /* The mask first: the shape keeps the causal flag it sets. */
        for (int pass = 0; pass < 2 && !rc; ++pass)
            for (int c = 0; c < n && !rc; ++c)
                if ((map[c] == COL_MASK) == !pass) {
                    rc = set_field(f, &r, map[c], fields[c], at);
                    has_shape |= map[c] == COL_SHAPE && *fields[c];
                }
        if (rc || (rc = finish_row(f, &r, has_shape, at)))
            row_release(&r);
    }
    free(copy);
    if (!rc && !f->n)
        rc = fattn_error(FATTN_EUSAGE, "%s: no rows; expected a header line, then a row per shape", f->path);
    return rc;
}

static int read_json(fattn_campaign_file *f)
{
    char at[4200];
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(f->text, &end, 1);
    if (!root)
        return fattn_error(FATTN_EUSAGE, "%s: not valid JSON near byte %td; expected {\"rows\": [...]} or an array",
                           f->path, end ? end - f->text : (ptrdiff_t)0);
    const cJSON *rows = cJSON_IsArray(root) ? root : cJSON_GetObjectItemCaseSensitive(root, "rows");
    int rc = FATTN_OK;
    if (!cJSON_IsArray(rows))
        rc = fattn_error(FATTN_EUSAGE, "%s: expected {\"rows\": [...]} or an array of rows", f->path);
    if (!rc && cJSON_IsObject(root))
        for (const cJSON *k = root->child; k && !rc; k = k->next)
            if (strcmp(k->string, "rows"))
                rc = fattn_error(FATTN_EUSAGE, "%s: key '%s': expected only \"rows\"", f->path, k->string);
    int i = 0;
    for (const cJSON *e = rows ? rows->child : NULL; e && !rc; e = e->next) {
        where(f, 1, ++i, at, sizeof at);
        if (!cJSON_IsObject(e)) {
            rc = fattn_error(FATTN_EUSAGE,
                             "%s: expected an object such as {\"shape\": \"4,16,2048,128\", "
                             "\"budget\": \"20m\"}",
                             at);
            break;
        }
        fattn_campaign_row r = {.line = i};
        int has_shape = 0;
        for (int pass = 0; pass < 2 && !rc; ++pass)
            for (const cJSON *k = e->child; k && !rc; k = k->next) {
                int c = column_find(k->string);
                if (c < 0) {
                    rc = fattn_error(FATTN_EUSAGE,
                                     "%s: key '%s': expected shape, mask, budget, trials, evaluator or name", at,
                                     k->string);
                    break;
                }
                if ((c == COL_MASK) != !pass)
                    continue;
                char num[32];
                const char *v;
                if (cJSON_IsString(k))
                    v = k->valuestring;
                else if (cJSON_IsNumber(k) && (c == COL_TRIALS || c == COL_BUDGET) && k->valuedouble >= 0
                         && k->valuedouble <= 1e9 && k->valuedouble == (double)(long)k->valuedouble)
                    snprintf(num, sizeof num, c == COL_BUDGET ? "%lds" : "%ld", (long)k->valuedouble), v = num;
                else if (cJSON_IsNull(k))
                    v = "";
                else {
                    rc = fattn_error(FATTN_EUSAGE, "%s: %s: expected a string%s", at, k->string,
                                     c == COL_TRIALS   ? " or a whole number"
                                     : c == COL_BUDGET ? " or seconds"
                                                       : "");
                    break;
                }
                rc = set_field(f, &r, c, v, at);
                has_shape |= c == COL_SHAPE;
            }
        if (rc || (rc = finish_row(f, &r, has_shape, at)))
            row_release(&r);
    }
    cJSON_Delete(root);
    if (!rc && !f->n)
        rc = fattn_error(FATTN_EUSAGE, "%s: no rows; expected a row per shape", f->path);
    return rc;
}

int fattn_campaign_file_read(const char *path, fattn_campaign_file *f)
{
    size_t len;
    *f = (fattn_campaign_file){0};
    f->path = fattn_xstrdup(path);
    int rc = fattn_read_file(path, "campaign file", FATTN_EUSAGE, &f->text, &len);
    if (rc) {
        fattn_campaign_file_release(f);
        return rc;
    }
    fattn_sha256_hex(f->text, len, f->sha256);
    const char *p = f->text;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        ++p;
    size_t pl = strlen(path);
    int json = *p == '{' || *p == '[' || (pl > 5 && !strcmp(path + pl - 5, ".json"));
    rc = json ? read_json(f) : read_tsv(f);
    if (rc)
        fattn_campaign_file_release(f);
    return rc;
}

void fattn_campaign_file_release(fattn_campaign_file *f)
{
    for (int k = 0; k < f->n; ++k)
        row_release(&f->rows[k]);
    free(f->rows);
    free(f->text);
    free(f->path);
    *f = (fattn_campaign_file){0};
}
