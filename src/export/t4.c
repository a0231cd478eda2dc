/*
 * t4.c - a study as T4 results, the open autotuning results format that
 * Kernel Tuner and KTT read (schema_version 1.0.0): one result per trial,
 * with its configuration, its times (milliseconds, under the names Kernel
 * Tuner's writer gives them: compilation, benchmark, framework,
 * search_algorithm, validation, runtimes), its invalidity and its
 * measurements. tests/scripts/t4-peer.sh holds the key set to Kernel
 * Tuner's own output.
 *
 * Invalidity: "correct" (verified and timed), "correctness" (numerics),
 * "compile" (NVRTC failed), "runtime" (fault, or the worker broke the
 * protocol), "timeout", "constraints" (a gate rejected it before it ran).
 * Compiled but never run trials (compile studies) are left out: they have
 * no outcome yet.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "export/table.h"
#include "store/read.h"
#include "util/err.h"
#include "util/escape.h"

static const char *invalidity(const char *status, const char *reason)
{
    if (!strcmp(status, "ok"))
        return "correct";
    if (!strcmp(status, "error"))
        return "runtime";
    if (!reason)
        return "constraints";
    if (!strcmp(reason, "numerics"))
        return "correctness";
    if (!strcmp(reason, "runtime_fault") || !strcmp(reason, "launch_refused"))
        return "runtime";
    if (!strcmp(reason, "timeout"))
        return "timeout";
    if (!strcmp(reason, "compile_error"))
        return "compile";
    return "constraints";
}

/* A trial's key parsed without a word on stderr (any text a user's database
 * may hold: what does not parse is left out). */
static int config_of(const char *key, fattn_config *c)
{
    int was = fattn_error_set_quiet_thread(1);
    int rc = fattn_config_parse(key, "key", c);
    fattn_error_set_quiet_thread(was);
    return rc;
}

int fattn_export_t4(fattn_store *s, long long study, FILE *out)
{
    sqlite3_stmt *st;
    if (!study && !(study = fattn_latest_study(s)))
        return FATTN_EFAIL;
    if (fattn_study_exists(s, study))
        return FATTN_EUSAGE;
    if (fattn_store_read(s, FATTN_READ_T4, &(fattn_read_args){.id = study}, &st))
        return FATTN_EFAIL;
    /* The metadata Kernel Tuner (1.5.0) writes: the unit of every time. */
    fputs("{\n  \"schema_version\": \"1.0.0\",\n  \"metadata\": {\"timeunit\": \"milliseconds\"},\n  \"results\": [",
          out);
    int r, first = 1;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const char *status = (const char *)sqlite3_column_text(st, 13);
        const char *reason = (const char *)sqlite3_column_text(st, 14);
        const char *inv = invalidity(status, reason);
        fprintf(out, "%s\n    {\"timestamp\": ", first ? "" : ",");
        first = 0;
        fattn_json_string(out, (const char *)sqlite3_column_text(st, 1));
        fputs(", \"configuration\": {", out);
        fattn_config c;
        const char *key = (const char *)sqlite3_column_text(st, 21);
        if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
            for (int p = 0; p < FATTN_MMA_NTUNABLES; ++p)
                fprintf(out, "%s\"%s\": %d", p ? ", " : "", fattn_mma_params[p].name, sqlite3_column_int(st, 2 + p));
        } else if (key && !config_of(key, &c)) {
            /* Another family's trial: the parameters its key names. */
            for (int p = 0, n = 0; p < c.fam->nparams; ++p)
                if (!c.fam->params[p].test_only)
                    fprintf(out, "%s\"%s\": %d", n++ ? ", " : "", c.fam->params[p].name, c.v[p]);
        }
        /* The times as Kernel Tuner's writer names them (file_utils.py,
         * store_output_file), in milliseconds, 0 where a trial spent none
         * or its study did not record it: NVRTC, the worker's timing and
         * numerics check, the rest of the worker's evaluation, the
         * strategy's time since the trial before, the per-launch samples. */
        double compile = sqlite3_column_double(st, 15), run = sqlite3_column_double(st, 16);
        double validation = sqlite3_column_double(st, 23), benchmark = sqlite3_column_double(st, 24);
        int phases = sqlite3_column_type(st, 23) != SQLITE_NULL && sqlite3_column_type(st, 24) != SQLITE_NULL;
        double framework = phases ? run - validation - benchmark : 0;
        const double times[5] = {compile > 0 ? compile : 0.0, benchmark, framework > 0 ? framework : 0.0,
                                 sqlite3_column_double(st, 25), validation};
        static const char *const names[5] = {"compilation", "benchmark", "framework", "search_algorithm", "validation"};
        fputs("}, \"objectives\": [\"time\"], \"times\": {", out);
        for (int k = 0; k < 5; ++k) {
            fprintf(out, "%s\"%s\": ", k ? ", " : "", names[k]);
            fattn_json_number(out, times[k]);
        }
        fputs(", \"runtimes\": [", out);
        const unsigned char *samples = sqlite3_column_text(st, 22);
        /* Per-launch samples, microseconds stored, milliseconds written. */
        for (const char *p = samples ? (const char *)samples : ""; *p;) {
            char *end;
            double us = strtod(p, &end);
            fputs(p == (const char *)samples ? "" : ", ", out);
            fattn_json_number(out, us / 1000.0);
            p = *end == ',' ? end + 1 : end + strlen(end);
        }
        fputc(']', out);
        fprintf(out, "}, \"invalidity\": \"%s\", \"correctness\": %d, \"measurements\": [", inv,
                !strcmp(inv, "correct") ? 1 : 0);
        if (!strcmp(inv, "correct")) {
            fputs("{\"name\": \"time\", \"value\": ", out);
            fattn_json_number(out, sqlite3_column_double(st, 17) / 1000.0);
            fputs(", \"unit\": \"ms\"}, {\"name\": \"TFLOP/s\", \"value\": ", out);
            fattn_json_number(out, sqlite3_column_double(st, 18));
            fputs(", \"unit\": \"TFLOP/s\"}, {\"name\": \"GB/s\", \"value\": ", out);
            fattn_json_number(out, sqlite3_column_double(st, 19));
            fputs(", \"unit\": \"GB/s\"}", out);
            if (sqlite3_column_type(st, 20) != SQLITE_NULL) {
                fputs(", {\"name\": \"max_abs_err\", \"value\": ", out);
                fattn_json_number(out, sqlite3_column_double(st, 20));
                fputs(", \"unit\": \"\"}", out);
            }
        } else if (reason) {
            fputs("{\"name\": \"reason\", \"value\": ", out);
            fattn_json_string(out, reason);
            fputs(", \"unit\": \"\"}", out);
        }
        fputs("]}", out);
    }
    sqlite3_finalize(st);
    if (r != SQLITE_DONE)
        return fattn_store_fail(s, "cannot read trials");
    fputs("\n  ]\n}\n", out);
    return FATTN_OK;
}
