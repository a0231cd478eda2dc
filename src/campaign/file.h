/*
 * file.h - a campaign file: the shapes to tune, one study each.
 *
 * TSV (a header line naming the columns, then a row per line; '#' starts a
 * comment line) or JSON ({"rows": [{...}, ...]} or the array alone, a .json
 * name or text starting with '{' or '['). Columns (keys):
 *
 *   shape      B,H,S,D (required)
 *   mask       none (default; '-' too) or causal
 *   budget     the study's --budget: 90s, 20m, 1h30m ('-' or empty: none)
 *   trials     the study's --trials ('-' or empty: none)
 *   evaluator  gpu (default) or replay:FILE, FILE relative to the campaign
 *              file's folder
 *   name       a label for the row (reports)
 *
 * A row needs a budget or trials (a study without either ends only when its
 * strategy is exhausted); a shape and mask appears once. Every mistake is
 * one line naming the file, the line (JSON: the row) and what is expected.
 */
#ifndef FATTN_CAMPAIGN_FILE_H
#define FATTN_CAMPAIGN_FILE_H

#include <stddef.h>

#include "target/shape.h"

#define FATTN_CAMPAIGN_MAX_ROWS 10000

typedef struct fattn_campaign_row {
    int line;          /* TSV: the file's line; JSON: the row's index + 1 */
    fattn_shape shape; /* causal from the mask */
    char budget[32];   /* as written, "" for none */
    double budget_ms;  /* 0: none */
    long trials;       /* 0: none */
    char *evaluator;   /* "replay:/abs/path", NULL: the GPU */
    char *name;        /* NULL: none */
} fattn_campaign_row;

typedef struct fattn_campaign_file {
    char *path;
    char *text; /* the file as read */
    char sha256[65];
    fattn_campaign_row *rows;
    int n;
} fattn_campaign_file;

/* Reads and checks `path`. FATTN_EUSAGE with one line on a mistake. */
int fattn_campaign_file_read(const char *path, fattn_campaign_file *f);
void fattn_campaign_file_release(fattn_campaign_file *f);

/* "4,16,2048,128 causal": a row's shape and mask. */
void fattn_campaign_row_label(const fattn_campaign_row *r, char *out, size_t n);

#endif
