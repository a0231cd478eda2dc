/*
 * numerics_json.c - a check's numerics on the wire.
 */
#include "run/numerics_json.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

void fattn_numerics_to_json(cJSON *parent, const char *name, const fattn_numerics *n)
{
    cJSON *j = cJSON_AddObjectToObject(parent, name);
    cJSON_AddNumberToObject(j, "n", (double)n->n);
    cJSON_AddNumberToObject(j, "n_bad", (double)n->n_bad);
    cJSON_AddNumberToObject(j, "n_nonfinite", (double)n->n_nonfinite);
    cJSON_AddNumberToObject(j, "max_abs_err", n->max_abs_err);
    cJSON_AddNumberToObject(j, "max_abs_ref", n->max_abs_ref);
    cJSON_AddNumberToObject(j, "norm_err", n->norm_err);
    cJSON_AddNumberToObject(j, "worst", (double)n->worst);
    cJSON_AddNumberToObject(j, "worst_out", isfinite(n->worst_out) ? n->worst_out : 0);
    cJSON_AddNumberToObject(j, "worst_ref", n->worst_ref);
    cJSON_AddNumberToObject(j, "l2_err", n->l2_err);
    cJSON_AddNumberToObject(j, "l2_ref", n->l2_ref);
    cJSON_AddNumberToObject(j, "rel_l2", n->rel_l2);
    cJSON_AddNumberToObject(j, "l2_bound", n->l2_bound);
    cJSON_AddNumberToObject(j, "l2_bad", n->l2_bad);
    cJSON_AddStringToObject(j, "inputs", fattn_input_set_name(n->set));
}

void fattn_numerics_from_json(const cJSON *j, fattn_numerics *n)
{
    enum { SIZE, DOUBLE, INT };
    static const struct {
        const char *name;
        size_t offset;
        int type;
    } fields[] = {
        {"n", offsetof(fattn_numerics, n), SIZE},
        {"n_bad", offsetof(fattn_numerics, n_bad), SIZE},
        {"n_nonfinite", offsetof(fattn_numerics, n_nonfinite), SIZE},
        {"worst", offsetof(fattn_numerics, worst), SIZE},
        {"max_abs_err", offsetof(fattn_numerics, max_abs_err), DOUBLE},
        {"max_abs_ref", offsetof(fattn_numerics, max_abs_ref), DOUBLE},
        {"norm_err", offsetof(fattn_numerics, norm_err), DOUBLE},
        {"worst_out", offsetof(fattn_numerics, worst_out), DOUBLE},
        {"worst_ref", offsetof(fattn_numerics, worst_ref), DOUBLE},
        {"l2_err", offsetof(fattn_numerics, l2_err), DOUBLE},
        {"l2_ref", offsetof(fattn_numerics, l2_ref), DOUBLE},
        {"rel_l2", offsetof(fattn_numerics, rel_l2), DOUBLE},
        {"l2_bound", offsetof(fattn_numerics, l2_bound), DOUBLE},
        {"l2_bad", offsetof(fattn_numerics, l2_bad), INT},
    };
    memset(n, 0, sizeof *n);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, fields[i].name);
        if (!cJSON_IsNumber(v))
            continue;
        if (fields[i].type == SIZE)
            *(size_t *)((char *)n + fields[i].offset) = (size_t)v->valuedouble;
        else if (fields[i].type == INT)
            *(int *)((char *)n + fields[i].offset) = v->valuedouble != 0;
        else
            *(double *)((char *)n + fields[i].offset) = v->valuedouble;
    }
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(j, "inputs");
    n->set = cJSON_IsString(inputs) && !strcmp(inputs->valuestring, fattn_input_set_name(FATTN_INPUTS_PEAKY))
                 ? FATTN_INPUTS_PEAKY
                 : FATTN_INPUTS_UNIFORM;
}
