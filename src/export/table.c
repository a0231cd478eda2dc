/*
 * table.c - the three output formats of a result set (store/rows.h).
 */
#include "export/table.h"

#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/escape.h"

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
    if (!s || (numeric && !fattn_json_number_text(s))) /* "inf": SQLite's REAL may be infinite */
        fputs("null", f);
    else if (numeric)
        fputs(s, f);
    else
        fattn_json_string(f, s);
}

static void json_object(FILE *f, int ncols, char *const *names, const char *const *cells, const unsigned char *numeric,
                        const char *indent)
{
    fputc('{', f);
    for (int c = 0; c < ncols; ++c) {
        fprintf(f, "%s\n%s  ", c ? "," : "", indent);
        fattn_json_string(f, names[c]);
        fputs(": ", f);
        json_value(f, cells[c], numeric[c]);
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

struct fattn_printer {
    FILE *f;
    int format, max_width, hold;
    fattn_rows held; /* names; for a table, the rows that size its columns */
    int *w;          /* column widths, once the table's head is printed */
    long long printed;
};

static void csv_row(FILE *f, int ncols, const char *const *cells)
{
    for (int c = 0; c < ncols; ++c) {
        if (c)
            fputc(',', f);
        csv_cell(f, cells[c]);
    }
    fputc('\n', f);
}

/* One line of the table (i: -2 the names, -1 the rule, else cells); trailing
 * blanks cut. */
static void table_line(fattn_printer *p, int i, const char *const *cells, const unsigned char *numeric)
{
    char *line = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&line, &len);
    for (int c = 0; c < p->held.ncols; ++c) {
        if (i == -2)
            print_cell(m, p->held.names[c], p->w[c], 0, 0);
        else if (i == -1)
            for (int k = 0; k < p->w[c]; ++k)
                fputc('-', m);
        else
            print_cell(m, cells[c], p->w[c], numeric[c], p->max_width);
        if (c + 1 < p->held.ncols)
            fputs("  ", m);
    }
    fclose(m);
    while (len && line[len - 1] == ' ')
        line[--len] = '\0';
    fputs(line, p->f);
    fputc('\n', p->f);
    free(line);
}

/* The table's column widths, from the names and the rows r (cells cut at
 * max_width), and its head. */
static void table_head(fattn_printer *p, const fattn_rows *r)
{
    p->w = fattn_xcalloc((size_t)(r->ncols ? r->ncols : 1), sizeof *p->w);
    for (int c = 0; c < r->ncols; ++c) {
        p->w[c] = (int)strlen(r->names[c]);
        for (int i = 0; i < r->nrows; ++i) {
            int len = r->cells[i][c] ? (int)strlen(r->cells[i][c]) : 0;
            if (p->max_width > 3 && len > p->max_width)
                len = p->max_width;
            if (len > p->w[c])
                p->w[c] = len;
        }
    }
    table_line(p, -2, NULL, NULL);
    table_line(p, -1, NULL, NULL);
}

/* The table's head and the held rows, the columns sized by them. */
static void table_flush(fattn_printer *p)
{
    fattn_rows *r = &p->held;
    table_head(p, r);
    for (int i = 0; i < r->nrows; ++i)
        table_line(p, i, (const char *const *)r->cells[i], r->numeric[i]);
    fattn_rows_clear(r);
}

fattn_printer *fattn_printer_open(FILE *f, int format, int max_width, int hold, int ncols, const char *const *names)
{
    fattn_printer *p = fattn_xcalloc(1, sizeof *p);
    p->f = f, p->format = format, p->max_width = max_width, p->hold = hold;
    fattn_rows_init(&p->held, ncols, names);
    if (format == FATTN_FMT_CSV)
        csv_row(f, ncols, names);
    else if (format == FATTN_FMT_JSON)
        fputc('[', f);
    return p;
}

void fattn_printer_row(fattn_printer *p, const char *const *cells, const unsigned char *numeric)
{
    if (p->format == FATTN_FMT_CSV) {
        csv_row(p->f, p->held.ncols, cells);
    } else if (p->format == FATTN_FMT_JSON) {
        fputs(p->printed ? ",\n  " : "\n  ", p->f);
        json_object(p->f, p->held.ncols, p->held.names, cells, numeric, "  ");
    } else if (p->w) {
        table_line(p, 0, cells, numeric);
    } else {
        fattn_rows_add(&p->held, cells, numeric);
        if (p->hold > 0 && p->held.nrows >= p->hold)
            table_flush(p);
    }
    ++p->printed;
}

void fattn_printer_close(fattn_printer **pp)
{
    fattn_printer *p = *pp;
    if (!p)
        return;
    if (p->format == FATTN_FMT_JSON)
        fputs(p->printed ? "\n]\n" : "]\n", p->f);
    else if (p->format == FATTN_FMT_TABLE && !p->w)
        table_flush(p);
    fattn_rows_release(&p->held);
    free(p->w);
    free(p);
    *pp = NULL;
}

void fattn_rows_print(FILE *f, const fattn_rows *r, int format, int max_width)
{
    fattn_printer *p = fattn_printer_open(f, format, max_width, 0, r->ncols, (const char *const *)r->names);
    if (format == FATTN_FMT_TABLE) /* sized by the rows at hand: none held again */
        table_head(p, r);
    for (int i = 0; i < r->nrows; ++i)
        fattn_printer_row(p, (const char *const *)r->cells[i], r->numeric[i]);
    fattn_printer_close(&p);
}

void fattn_rows_print_record(FILE *f, const fattn_rows *r, int row, int format)
{
    if (format == FATTN_FMT_JSON) {
        json_object(f, r->ncols, r->names, (const char *const *)r->cells[row], r->numeric[row], "");
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
