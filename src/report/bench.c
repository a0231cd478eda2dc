/*
 * bench.c - bench's report (report.h): the kernel and the cuDNN baseline
 * side by side, and the ratio of their medians.
 */
#include <stdio.h>

#include "export/table.h"
#include "report/report.h"

static void add_row(fattn_rows *rows, const char *name, const fattn_eval_result *r)
{
    char cells[10][64];
    const char *ptrs[10];
    const unsigned char numeric[10] = {0, 0, 1, 1, 1, 1, 1, 1, 1, 0};
    snprintf(cells[0], sizeof cells[0], "%s", name);
    snprintf(cells[1], sizeof cells[1], "%s", fattn_eval_status_name(r->status));
    for (int i = 2; i < 10; ++i)
        cells[i][0] = '\0';
    if (r->has_timing) {
        snprintf(cells[2], sizeof cells[2], "%.3f", r->timing.median_us);
        snprintf(cells[3], sizeof cells[3], "%.3f", r->timing.p10_us);
        snprintf(cells[4], sizeof cells[4], "%.3f", r->timing.p90_us);
        snprintf(cells[5], sizeof cells[5], "%.1f", r->timing.tflops);
        snprintf(cells[6], sizeof cells[6], "%.1f", r->timing.gbps);
        snprintf(cells[9], sizeof cells[9], "%s", r->timing_kind);
    }
    if (r->has_numerics) {
        snprintf(cells[7], sizeof cells[7], "%.3g", r->num.max_abs_err);
        snprintf(cells[8], sizeof cells[8], "%.2g", r->num.rel_l2);
    }
    for (int i = 0; i < 10; ++i)
        ptrs[i] = cells[i][0] || i < 2 ? cells[i] : NULL;
    fattn_rows_add(rows, ptrs, numeric);
}

/* The table (or JSON) of the kernel and the baseline, and the ratio. */
void fattn_report_bench(const fattn_bench_report *r, int baseline, int format, FILE *f)
{
    char shape[96];
    fattn_shape_format(&r->shape, shape, sizeof shape);
    const char *names[] = {"kernel",  "status", "median_us",   "p10_us", "p90_us",
                           "TFLOP/s", "GB/s",   "max_abs_err", "rel_l2", "timing"};
    fattn_rows rows;
    fattn_rows_init(&rows, 10, names);
    add_row(&rows, r->key, &r->res);
    if (baseline)
        add_row(&rows, "cudnn", &r->base);
    double ratio =
        baseline && r->res.has_timing && r->base.has_timing ? r->base.timing.median_us / r->res.timing.median_us : 0;
    if (format == FATTN_FMT_JSON) {
        fattn_rows_print(f, &rows, FATTN_FMT_JSON, 0);
    } else {
        fprintf(f, "bench: %s on %s, %s\n", shape, r->arch, r->device);
        fprintf(f, "timing: %s\n\n", r->method);
        fattn_rows_print(f, &rows, FATTN_FMT_TABLE, 0);
        fprintf(f, "\n%s: %s\n", r->key, r->res.detail);
        if (baseline)
            fprintf(f, "cudnn (%s): %s\n", r->base.baseline[0] ? r->base.baseline : "cuDNN", r->base.detail);
        if (ratio > 0)
            fprintf(f, "median cuDNN / median fattn-tune = %.3f (%s)\n", ratio,
                    ratio >= 1 ? "fattn-tune faster" : "cuDNN faster");
    }
    fattn_rows_release(&rows);
}
