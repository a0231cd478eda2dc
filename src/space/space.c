/*
 * space.c - loading, validating and enumerating configuration spaces.
 */
#include "space/space.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/fs.h"
#include "util/misc.h"
#include "util/strbuf.h"
#include "util/sha256.h"

static const char *json_type(const cJSON *j)
{
    if (cJSON_IsNumber(j))
        return "a number";
    if (cJSON_IsString(j))
        return "a string";
    if (cJSON_IsArray(j))
        return "an array";
    if (cJSON_IsObject(j))
        return "an object";
    if (cJSON_IsBool(j))
        return "a boolean";
    return "null";
}

/* Reports the first key that appears twice among an object's members. */
static int check_duplicates(const cJSON *obj, const char *label, const char *path)
{
    for (const cJSON *a = obj->child; a; a = a->next)
        for (const cJSON *b = a->next; b; b = b->next)
            if (strcmp(a->string, b->string) == 0)
                return fattn_error(FATTN_EUSAGE, "%s: %s: key \"%s\" appears twice; expected each key once", label,
                                   path, fattn_clip(a->string).s);
    return FATTN_OK;
}

static int parse_values(fattn_space *sp, int id, const cJSON *arr, const char *label)
{
    const fattn_param_info *p = &sp->fam->params[id];
    int n = 0;
    if (!cJSON_IsArray(arr))
        return fattn_error(FATTN_EUSAGE, "%s: $.parameters.%s: expected an array of integers, got %s", label, p->name,
                           json_type(arr));
    if (!arr->child)
        return fattn_error(FATTN_EUSAGE, "%s: $.parameters.%s: empty value set; expected at least one integer", label,
                           p->name);
    for (const cJSON *v = arr->child; v; v = v->next, ++n) {
        if (n == FATTN_SPACE_MAX_VALUES)
            return fattn_error(FATTN_EUSAGE, "%s: $.parameters.%s: more than %d values", label, p->name,
                               FATTN_SPACE_MAX_VALUES);
        if (!cJSON_IsNumber(v))
            return fattn_error(FATTN_EUSAGE, "%s: $.parameters.%s[%d]: expected an integer, got %s", label, p->name, n,
                               json_type(v));
        double d = v->valuedouble;
        if (d != floor(d))
            return fattn_error(FATTN_EUSAGE, "%s: $.parameters.%s[%d]: expected an integer, got %.17g", label, p->name,
                               n, d);
        if (d < p->min || d > p->max)
            return fattn_error(FATTN_EUSAGE, "%s: $.parameters.%s[%d]: %.17g is out of range; expected %d to %d", label,
                               p->name, n, d, p->min, p->max);
        int x = (int)d;
        if (x < p->min || x > p->max)
            return fattn_error(FATTN_EUSAGE, "%s: $.parameters.%s[%d]: %d is out of range; expected %d to %d", label,
                               p->name, n, x, p->min, p->max);
        for (int k = 0; k < n; ++k)
            if (sp->values[id][k] == x)
                return fattn_error(FATTN_EUSAGE, "%s: $.parameters.%s[%d]: value %d is listed twice", label, p->name, n,
                                   x);
        sp->values[id][n] = x;
    }
    sp->nvalues[id] = n;
    sp->listed[id] = 1;
    return FATTN_OK;
}

static void syntax_position(const char *text, const char *at, int *line, int *col)
{
    *line = 1, *col = 1;
    for (const char *p = text; p < at && *p; ++p) {
        if (*p == '\n')
            ++*line, *col = 1;
        else
            ++*col;
    }
}

int fattn_space_parse(const char *text, size_t len, const char *label, fattn_space *sp)
{
    int rc = FATTN_OK;
    const char *end = NULL;
    memset(sp, 0, sizeof *sp);
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        int line, col;
        syntax_position(text, end ? end : text, &line, &col);
        return fattn_error(FATTN_EUSAGE,
                           "%s: line %d, column %d: not valid JSON; expected an object such as "
                           "{\"parameters\": {\"BLOCK_M\": [64, 128]}}",
                           label, line, col);
    }
    for (const char *p = end; p && p < text + len; ++p) {
        if (*p != ' ' && *p != '\n' && *p != '\t' && *p != '\r') {
            int line, col;
            syntax_position(text, p, &line, &col);
            rc = fattn_error(FATTN_EUSAGE, "%s: line %d, column %d: text after the JSON object", label, line, col);
            goto out;
        }
    }
    if (!cJSON_IsObject(root)) {
        rc = fattn_error(FATTN_EUSAGE, "%s: $: expected an object with a \"parameters\" member, got %s", label,
                         json_type(root));
        goto out;
    }
    if ((rc = check_duplicates(root, label, "$")))
        goto out;
    const cJSON *params = NULL;
    sp->fam = fattn_families[0];
    for (const cJSON *m = root->child; m; m = m->next) {
        if (strcmp(m->string, "parameters") == 0) {
            params = m;
        } else if (strcmp(m->string, "family") == 0) {
            if (!cJSON_IsString(m)) {
                rc = fattn_error(FATTN_EUSAGE, "%s: $.family: expected a family name (one of %s), got %s", label,
                                 fattn_family_names(), json_type(m));
                goto out;
            }
            if (!(sp->fam = fattn_family_find(m->valuestring))) {
                rc = fattn_error(FATTN_EUSAGE, "%s: $.family: unknown kernel family \"%s\"; expected one of %s", label,
                                 m->valuestring, fattn_family_names());
                goto out;
            }
            sp->family_named = 1;
        } else if (strcmp(m->string, "description") == 0) {
            if (!cJSON_IsString(m)) {
                rc = fattn_error(FATTN_EUSAGE, "%s: $.description: expected a string, got %s", label, json_type(m));
                goto out;
            }
        } else {
            rc = fattn_error(FATTN_EUSAGE,
                             "%s: $.%s: unknown key; expected \"parameters\" and optionally "
                             "\"description\" and \"family\"",
                             label, fattn_clip(m->string).s);
            goto out;
        }
    }
    if (!params) {
        rc = fattn_error(FATTN_EUSAGE,
                         "%s: $: missing \"parameters\"; expected an object mapping parameter names "
                         "to value arrays",
                         label);
        goto out;
    }
    if (!cJSON_IsObject(params)) {
        rc = fattn_error(FATTN_EUSAGE, "%s: $.parameters: expected an object, got %s", label, json_type(params));
        goto out;
    }
    if ((rc = check_duplicates(params, label, "$.parameters")))
        goto out;
    for (const cJSON *m = params->child; m; m = m->next) {
        int id = fattn_param_find(sp->fam, m->string);
        if (id < 0) {
            char names[512];
            rc = fattn_error(FATTN_EUSAGE, "%s: $.parameters.%s: unknown parameter; expected one of %s%s%s", label,
                             fattn_clip(m->string).s, fattn_param_names(sp->fam, names, sizeof names),
                             sp->family_named ? " of family " : "", sp->family_named ? sp->fam->name : "");
            goto out;
        }
        if ((rc = parse_values(sp, id, m, label)))
            goto out;
    }
    sp->count = 1;
    for (int i = 0; i < FATTN_MAX_PARAMS; ++i) {
        if (!sp->listed[i]) {
            sp->nvalues[i] = 1;
            sp->values[i][0] = i < sp->fam->nparams ? sp->fam->params[i].def : 0;
        }
        sp->count *= (size_t)sp->nvalues[i];
    }
    /* (At most 64 values a parameter: the product stays far below 2^64.) */
    if (sp->count > FATTN_SPACE_MAX) {
        rc = fattn_error(FATTN_EUSAGE, "%s: %zu configurations; expected at most %d (the product of the value counts)",
                         label, sp->count, FATTN_SPACE_MAX);
        goto out;
    }
    sp->label = fattn_xstrdup(label);
    sp->json = fattn_xstrndup(text, len);
    fattn_sha256_hex(text, len, sp->hash);
out:
    cJSON_Delete(root);
    return rc;
}

int fattn_space_load(const char *path, fattn_space *sp)
{
    char *text;
    size_t len;
    int rc = fattn_read_file(path, "space file", FATTN_EUSAGE, &text, &len);
    if (rc)
        return rc;
    rc = fattn_space_parse(text, len, path, sp);
    free(text);
    return rc;
}

void fattn_space_release(fattn_space *sp)
{
    free(sp->label);
    free(sp->json);
    memset(sp, 0, sizeof *sp);
}

void fattn_space_config(const fattn_space *sp, size_t index, fattn_config *out)
{
    out->fam = sp->fam;
    for (int i = FATTN_MAX_PARAMS - 1; i >= 0; --i) {
        size_t n = (size_t)sp->nvalues[i];
        out->v[i] = sp->values[i][index % n];
        index /= n;
    }
}

enum { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };

/* 1 when `param` has a term already and either is an equality: what the
 * other term says is then redundant or contradicts it. (Ranges and several
 * exclusions, BLOCK_M>=32,BLOCK_M<=64 or BLOCK_M!=32,BLOCK_M!=64, are fine.) */
static int repeated(const fattn_filter *f, int param, int op)
{
    for (int i = 0; i < f->n; ++i)
        if (f->terms[i].param == param && (op == OP_EQ || f->terms[i].op == OP_EQ))
            return 1;
    return 0;
}

int fattn_filter_parse(const char *text, const fattn_family *fam, fattn_filter *f)
{
    static const struct {
        const char *s;
        int op;
    } ops[] = {{"==", OP_EQ}, {"!=", OP_NE}, {"<=", OP_LE}, {">=", OP_GE}, {"=", OP_EQ}, {"<", OP_LT}, {">", OP_GT}};
    int rc = FATTN_OK;
    char *copy = fattn_xstrdup(text), *save = NULL;
    f->n = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            ++tok;
        size_t name_len = strcspn(tok, "=!<> ");
        char *name = fattn_xstrndup(tok, name_len);
        const char *rest = tok + name_len;
        while (*rest == ' ')
            ++rest;
        int id = fattn_param_find(fam, name), op = -1;
        size_t op_len = 0;
        for (size_t i = 0; i < sizeof ops / sizeof ops[0] && op < 0; ++i)
            if (strncmp(rest, ops[i].s, strlen(ops[i].s)) == 0)
                op = ops[i].op, op_len = strlen(ops[i].s);
        long v;
        const char *value = rest + op_len;
        while (*value == ' ')
            ++value;
        if (id < 0)
            rc = fattn_error(FATTN_EUSAGE,
                             "--filter '%s': unknown parameter '%s'; expected NAME<op>VALUE with "
                             "NAME such as BLOCK_M",
                             text, name);
        else if (op < 0 || fattn_parse_long(value, -1000000, 1000000, &v))
            rc = fattn_error(FATTN_EUSAGE,
                             "--filter '%s': cannot read '%s'; expected NAME<op>VALUE, op one of "
                             "= != < <= > >=, e.g. BLOCK_M>=64,CP_ASYNC=1",
                             text, tok);
        else if (f->n == (int)(sizeof f->terms / sizeof f->terms[0]))
            rc = fattn_error(FATTN_EUSAGE, "--filter '%s': more than 32 terms", text);
        else if (repeated(f, id, op))
            rc = fattn_error(FATTN_EUSAGE,
                             "--filter '%s': %s is named twice, once with =; expected = once, or other "
                             "comparisons only (a range, exclusions)",
                             text, name);
        else {
            f->terms[f->n].param = id;
            f->terms[f->n].op = op;
            f->terms[f->n].value = (int)v;
            ++f->n;
        }
        free(name);
        if (rc)
            break;
    }
    if (!rc && f->n == 0)
        rc = fattn_error(FATTN_EUSAGE, "--filter '%s': no terms; expected NAME<op>VALUE, e.g. BLOCK_M>=64", text);
    free(copy);
    return rc;
}

int fattn_filter_match(const fattn_filter *f, const fattn_config *c)
{
    for (int i = 0; i < f->n; ++i) {
        int x = c->v[f->terms[i].param], v = f->terms[i].value, ok = 0;
        switch (f->terms[i].op) {
        case OP_EQ: ok = x == v; break;
        case OP_NE: ok = x != v; break;
        case OP_LT: ok = x < v; break;
        case OP_LE: ok = x <= v; break;
        case OP_GT: ok = x > v; break;
        case OP_GE: ok = x >= v; break;
        }
        if (!ok)
            return 0;
    }
    return 1;
}

int fattn_filter_check(const fattn_filter *f, const char *text, const fattn_space *sp)
{
    for (int i = 0; i < f->n; ++i) {
        int p = f->terms[i].param, found = 0;
        if (f->terms[i].op > OP_NE)
            continue;
        for (int k = 0; k < sp->nvalues[p]; ++k)
            found |= sp->values[p][k] == f->terms[i].value;
        if (!found) {
            fattn_strbuf vals;
            fattn_sb_init(&vals);
            for (int k = 0; k < sp->nvalues[p]; ++k)
                fattn_sb_addf(&vals, "%s%d", k ? ", " : "", sp->values[p][k]);
            char *list = fattn_sb_detach(&vals);
            int rc = fattn_error(FATTN_EUSAGE, "--filter '%s': %d is not a value of %s in %s; expected one of %s", text,
                                 f->terms[i].value, sp->fam->params[p].name, sp->label, list);
            free(list);
            return rc;
        }
    }
    for (size_t i = 0; i < sp->count; ++i) {
        fattn_config c;
        fattn_space_config(sp, i, &c);
        if (fattn_filter_match(f, &c))
            return FATTN_OK;
    }
    return fattn_error(FATTN_EUSAGE, "--filter '%s': matches none of the %zu configurations of %s", text, sp->count,
                       sp->label);
}

size_t fattn_space_select(const fattn_space *sp, const fattn_filter *f, size_t **indices)
{
    size_t n = 0;
    *indices = fattn_xcalloc(sp->count ? sp->count : 1, sizeof **indices);
    for (size_t i = 0; i < sp->count; ++i) {
        fattn_config c;
        fattn_space_config(sp, i, &c);
        if (!f || fattn_filter_match(f, &c))
            (*indices)[n++] = i;
    }
    return n;
}
