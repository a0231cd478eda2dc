/*
 * table.c - result sets and their three output formats.
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

void fattn_rows_init(fattn_rows *r, int ncols, const char *const *names)
{
    memset(r, 0, sizeof *r);
    r->ncols = ncols;
    r->names = fattn_xcalloc((size_t)ncols, sizeof *r->names);
    for (int i = 0; i < ncols; ++i)
        r->names[i] = fattn_xstrdup(names[i]);
}

void fattn_rows_release(fattn_rows *r)
{
    for (int i = 0; i < r->nrows; ++i) {
        for (int c = 0; c < r->ncols; ++c)
            free(r->cells[i][c]);
        free(r->cells[i]);
        free(r->numeric[i]);
    }
    for (int c = 0; c < r->ncols; ++c)
        free(r->names[c]);
    free(r->names);
    free(r->cells);
    free(r->numeric);
    memset(r, 0, sizeof *r);
}

void fattn_rows_add(fattn_rows *r, const char *const *cells, const unsigned char *numeric)
{
    if (r->nrows == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->cells = fattn_xrealloc(r->cells, (size_t)r->cap * sizeof *r->cells);
        r->numeric = fattn_xrealloc(r->numeric, (size_t)r->cap * sizeof *r->numeric);
    }
    char **row = fattn_xcalloc((size_t)r->ncols, sizeof *row);
    unsigned char *num = fattn_xcalloc((size_t)r->ncols, 1);
    for (int c = 0; c < r->ncols; ++c) {
        row[c] = cells[c] ? fattn_xstrdup(cells[c]) : NULL;
        num[c] = numeric ? numeric[c] : 0;
    }
    r->cells[r->nrows] = row;
    r->numeric[r->nrows] = num;
    ++r->nrows;
}

int fattn_rows_from_stmt(fattn_rows *r, sqlite3_stmt *st)
{
    int n = sqlite3_column_count(st), rc;
    const char **names = fattn_xcalloc((size_t)(n ? n : 1), sizeof *names);
    for (int c = 0; c < n; ++c)
        names[c] = sqlite3_column_name(st, c);
    fattn_rows_init(r, n, names);
    free(names);
    char **cells = fattn_xcalloc((size_t)(n ? n : 1), sizeof *cells);
    unsigned char *num = fattn_xcalloc((size_t)(n ? n : 1), 1);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int c = 0; c < n; ++c) {
            char buf[64];
            int type = sqlite3_column_type(st, c);
            num[c] = type == SQLITE_INTEGER || type == SQLITE_FLOAT;
            if (type == SQLITE_NULL) {
                cells[c] = NULL;
            } else if (type == SQLITE_FLOAT) {
                snprintf(buf, sizeof buf, "%.6g", sqlite3_column_double(st, c));
                cells[c] = fattn_xstrdup(buf);
            } else if (type == SQLITE_BLOB) {
                snprintf(buf, sizeof buf, "<blob %d bytes>", sqlite3_column_bytes(st, c));
                cells[c] = fattn_xstrdup(buf);
            } else {
                const unsigned char *t = sqlite3_column_text(st, c);
                cells[c] = fattn_xstrdup(t ? (const char *)t : "");
            }
        }
        fattn_rows_add(r, (const char *const *)cells, num);
        for (int c = 0; c < n; ++c)
            free(cells[c]);
    }
    free(cells);
    free(num);
    return rc == SQLITE_DONE ? 0 : rc;
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
