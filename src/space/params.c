/*
 * params.c - configurations of a family's parameters and their keys.
 */
#include "space/params.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/misc.h"

int fattn_param_find(const fattn_family *f, const char *name)
{
    for (int i = 0; i < f->nparams; ++i)
        if (strcmp(f->params[i].name, name) == 0)
            return i;
    return -1;
}

const char *fattn_param_names(const fattn_family *f, char *out, size_t size)
{
    /* the tunables, then the test-only overrides in parentheses */
    size_t n = 0;
    int k[2] = {0, 0};
    out[0] = '\0';
    for (int pass = 0; pass < 2; ++pass)
        for (int i = 0; i < f->nparams && n < size; ++i) {
            if (f->params[i].test_only != pass)
                continue;
            const char *sep = k[pass]++ ? ", " : pass ? " (test only: " : "";
            n += (size_t)snprintf(out + n, size - n, "%s%s", sep, f->params[i].name);
        }
    if (k[1] && n < size)
        snprintf(out + n, size - n, ")");
    return out;
}

void fattn_config_default(fattn_config *c, const fattn_family *f)
{
    memset(c, 0, sizeof *c);
    c->fam = f;
    for (int i = 0; i < f->nparams; ++i)
        c->v[i] = f->params[i].def;
}

void fattn_config_key(const fattn_config *c, char *out)
{
    size_t n = 0;
    out[0] = '\0';
    if (fattn_family_named_keys(c->fam))
        n += (size_t)snprintf(out, FATTN_KEY_MAX, "%s", c->fam->name);
    for (int i = 0; i < c->fam->nparams && n < FATTN_KEY_MAX; ++i) {
        if (!fattn_param_shown(c, i))
            continue;
        n += (size_t)snprintf(out + n, FATTN_KEY_MAX - n, "%s%s%d", n ? "-" : "", c->fam->params[i].tag, c->v[i]);
    }
}

void fattn_config_describe(const fattn_config *c, char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    if (fattn_family_named_keys(c->fam))
        n += (size_t)snprintf(out, size, "family=%s", c->fam->name);
    for (int i = 0; i < c->fam->nparams && n < size; ++i) {
        if (!fattn_param_shown(c, i))
            continue;
        n += (size_t)snprintf(out + n, size - n, "%s%s=%d", n ? " " : "", c->fam->params[i].name, c->v[i]);
    }
}

void fattn_config_json(const fattn_config *c, char *out, size_t size)
{
    size_t n = (size_t)snprintf(out, size, "{");
    for (int i = 0; i < c->fam->nparams && n < size; ++i)
        n += (size_t)snprintf(out + n, size - n, "%s\"%s\":%d", i ? "," : "", c->fam->params[i].name, c->v[i]);
    if (n < size)
        snprintf(out + n, size - n, "}");
}

int fattn_config_equal(const fattn_config *a, const fattn_config *b)
{
    return a->fam == b->fam && memcmp(a->v, b->v, sizeof a->v) == 0;
}

static int set_value(fattn_config *c, int id, const char *value, const char *text, const char *what, unsigned *seen)
{
    long v;
    const fattn_param_info *p = &c->fam->params[id];
    if (*seen & (1u << id))
        return fattn_error(FATTN_EUSAGE, "%s '%s': %s given twice", what, text, p->name);
    *seen |= 1u << id;
    if (fattn_parse_long(value, p->min, p->max, &v))
        return fattn_error(FATTN_EUSAGE, "%s '%s': %s is '%s'; expected an integer from %d to %d", what, text, p->name,
                           value, p->min, p->max);
    c->v[id] = (int)v;
    return FATTN_OK;
}

/* One token of a key ("bm64") or of a list ("BLOCK_M=64"). */
static int parse_token(const char *tok, fattn_config *c, const char *text, const char *what, unsigned *seen)
{
    const char *eq = strchr(tok, '=');
    if (eq) {
        char *name = fattn_xstrndup(tok, (size_t)(eq - tok));
        int id = fattn_param_find(c->fam, name);
        int rc;
        char names[512];
        if (id < 0)
            rc = fattn_error(FATTN_EUSAGE, "%s '%s': unknown parameter '%s'; expected one of %s%s%s", what, text, name,
                             fattn_param_names(c->fam, names, sizeof names),
                             fattn_family_named_keys(c->fam) ? " of family " : "",
                             fattn_family_named_keys(c->fam) ? c->fam->name : "");
        else
            rc = set_value(c, id, eq + 1, text, what, seen);
        free(name);
        return rc;
    }
    size_t t = 0;
    while (isalpha((unsigned char)tok[t]))
        ++t;
    for (int i = 0; i < c->fam->nparams; ++i)
        if (t && strlen(c->fam->params[i].tag) == t && strncmp(c->fam->params[i].tag, tok, t) == 0)
            return set_value(c, i, tok + t, text, what, seen);
    return fattn_error(FATTN_EUSAGE,
                       "%s '%s': cannot read '%s'; expected a config key such as bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1 "
                       "or NAME=VALUE pairs such as BLOCK_M=64,BLOCK_N=64",
                       what, text, tok);
}

/* The family a key or list starts with: a family's name (a key) or
 * family=NAME (a list); else mma. NULL for family=NAME of no family. */
static const fattn_family *family_token(const char *tok)
{
    if (tok && strncmp(tok, "family=", 7) == 0)
        return fattn_family_find(tok + 7);
    const fattn_family *f = tok ? fattn_family_find(tok) : NULL;
    return f ? f : fattn_families[0];
}

int fattn_config_parse(const char *text, const char *what, fattn_config *out)
{
    fattn_config c;
    unsigned seen = 0;
    int rc = FATTN_OK;
    if (!text || !*text)
        return fattn_error(FATTN_EUSAGE, "%s: empty; expected a config key such as bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1",
                           what);
    char *copy = fattn_xstrdup(text);
    const char *seps = strchr(copy, '=') ? ", " : "-";
    char *save = NULL;
    char *tok = strtok_r(copy, seps, &save);
    const fattn_family *f = family_token(tok);
    if (f == NULL) {
        rc = fattn_error(FATTN_EUSAGE, "%s '%s': unknown family '%s'; expected one of %s", what, text,
                         strchr(tok, '=') + 1, fattn_family_names());
        free(copy);
        return rc;
    }
    fattn_config_default(&c, f);
    if (tok && (strncmp(tok, "family=", 7) == 0 || strcmp(tok, f->name) == 0))
        tok = strtok_r(NULL, seps, &save);
    for (; tok && rc == FATTN_OK; tok = strtok_r(NULL, seps, &save))
        rc = parse_token(tok, &c, text, what, &seen);
    free(copy);
    if (rc == FATTN_OK)
        *out = c;
    return rc;
}
