/*
 * numerics_json.h - a check's numerics (run/numerics.h) as the worker's
 * RESULT message carries them: written by the engines, read by the
 * evaluator.
 */
#ifndef FATTN_RUN_NUMERICS_JSON_H
#define FATTN_RUN_NUMERICS_JSON_H

#include <cjson/cJSON.h>

#include "run/numerics.h"

/* Adds object `name` ("numerics", "numerics_after") to `parent`. */
void fattn_numerics_to_json(cJSON *parent, const char *name, const fattn_numerics *n);

/* Reads such an object; fields it lacks are 0 (the uniform set). */
void fattn_numerics_from_json(const cJSON *j, fattn_numerics *n);

#endif
