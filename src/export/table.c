/*
 * table.c - the three output formats of a result set (store/rows.h).
 */
#include "export/table.h"

#include <stdlib.h>
#include <string.h>

#include "util/err.h"

int fattn_format_parse(const char *s, const char *option, int *out)
{
    if (strcmp(s, "table") == 0)
        *out = FATTN_FMT_TABLE;
    else if (strcmp(s, "csv") == 0)
        *out = FATTN_FMT_CSV;
    else if (strcmp(s, "json") == 0)
        *out = FATTN_FMT_JSON;
    else
        return fattn_error(FATTN_EUSAGE, "%s '%s': expected table, csv or json", option, s);
    return FATTN_OK;
}

static void csv_cell(FILE *f, const char *s)
{
    if (!s)
        return;
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; ++s) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void json_value(FILE *f, const char *s, int numeric)
{
    if (!s)
        fputs("null", f);
    else if (numeric)
        fputs(s, f);
    else
        fattn_json_string(f, s);
}

static void json_object(FILE *f, const fattn_rows *r, int row, const char *indent)
{
    fputc('{', f);
    for (int c = 0; c < r->ncols; ++c) {
        fprintf(f, "%s\n%s  ", c ? "," : "", indent);
        fattn_json_string(f, r->names[c]);
        fputs(": ", f);
        json_value(f, r->cells[row][c], r->numeric[row][c]);
    }
    fprintf(f, "\n%s}", indent);
}

/* A cell of the aligned table: text from the database reaches a terminal,
 * so its control characters are shown as '?' (fattn_terminal_safe). */
static void print_cell(FILE *f, const char *s, int width, int right, int max_width)
{
    char *t = fattn_terminal_safe(s ? s : "");
    int len = (int)strlen(t);
    int cut = max_width > 3 && len > max_width;
    int shown = cut ? max_width : len;
    int pad = width > shown ? width - shown : 0;
    if (right)
        fprintf(f, "%*s", pad, "");
    if (cut)
        fprintf(f, "%.*s...", max_width - 3, t);
    else
        fputs(t, f);
    if (!right)
        fprintf(f, "%*s", pad, "");
    free(t);
}

void fattn_rows_print(FILE *f, const fattn_rows *r, int format, int max_width)
{
    if (format == FATTN_FMT_CSV) {
        for (int c = 0; c < r->ncols; ++c) {
            if (c)
                fputc(',', f);
            csv_cell(f, r->names[c]);
        }
        fputc('\n', f);
        for (int i = 0; i < r->nrows; ++i) {
            for (int c = 0; c < r->ncols; ++c) {
                if (c)
                    fputc(',', f);
                csv_cell(f, r->cells[i][c]);
            }
            fputc('\n', f);
        }
        return;
    }
    if (format == FATTN_FMT_JSON) {
        fputc('[', f);
        for (int i = 0; i < r->nrows; ++i) {
            fputs(i ? ",\n  " : "\n  ", f);
            json_object(f, r, i, "  ");
        }
        fputs(r->nrows ? "\n]\n" : "]\n", f);
        return;
    }
    int *w = fattn_xcalloc((size_t)(r->ncols ? r->ncols : 1), sizeof *w);
    for (int c = 0; c < r->ncols; ++c) {
        w[c] = (int)strlen(r->names[c]);
        for (int i = 0; i < r->nrows; ++i) {
            int len = r->cells[i][c] ? (int)strlen(r->cells[i][c]) : 0;
            if (max_width > 3 && len > max_width)
                len = max_width;
            if (len > w[c])
                w[c] = len;
        }
    }
    /* Each line is built in memory so that trailing blanks can be cut. */
    char *line = NULL;
    size_t len = 0;
    for (int i = -2; i < r->nrows; ++i) {
        FILE *m = open_memstream(&line, &len);
        for (int c = 0; c < r->ncols; ++c) {
            int last = c + 1 == r->ncols;
            if (i == -2) {
                print_cell(m, r->names[c], w[c], 0, 0);
            } else if (i == -1) {
                for (int k = 0; k < w[c]; ++k)
                    fputc('-', m);
            } else {
                print_cell(m, r->cells[i][c], w[c], r->numeric[i][c], max_width);
            }
            if (!last)
                fputs("  ", m);
        }
        fclose(m);
        while (len && line[len - 1] == ' ')
            line[--len] = '\0';
        fputs(line, f);
        fputc('\n', f);
        free(line);
        line = NULL;
    }
    free(w);
}

void fattn_rows_print_record(FILE *f, const fattn_rows *r, int row, int format)
{
    if (format == FATTN_FMT_JSON) {
        json_object(f, r, row, "");
        fputc('\n', f);
        return;
    }
    if (format == FATTN_FMT_CSV) {
        fattn_rows one = *r;
        one.nrows = 1;
        one.cells = &r->cells[row];
        one.numeric = &r->numeric[row];
        fattn_rows_print(f, &one, format, 0);
        return;
    }
    int w = 0;
    for (int c = 0; c < r->ncols; ++c)
        if ((int)strlen(r->names[c]) > w)
            w = (int)strlen(r->names[c]);
    /* A value of several lines (a compile log) keeps its lines, the later
     * ones indented under the first. */
    for (int c = 0; c < r->ncols; ++c) {
        char *name = fattn_terminal_safe(r->names[c]);
        const char *v = r->cells[row][c] ? r->cells[row][c] : "";
        fprintf(f, "%s:%*s ", name, w - (int)strlen(name), "");
        for (int first = 1;; first = 0) {
            size_t n = strcspn(v, "\n");
            char *line = fattn_xstrndup(v, n), *t = fattn_terminal_safe(line);
            if (n && t[n - 1] == '?' && line[n - 1] == '\r')
                t[n - 1] = '\0';
            fprintf(f, "%*s%s\n", first ? 0 : w + 2, "", t);
            free(line), free(t);
            v += n;
            if (!*v || !v[1])
                break;
            ++v;
        }
        free(name);
    }
}
