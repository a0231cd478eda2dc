/*
 * hostile.h - databases whose rows hold hostile text, and the checks that
 * what fattn-tune writes from them (the C header, the dispatch header, the
 * HTML report, JSON) kept every such text inside the construct it was
 * written into. Shared by test_hostile (fixed hostile strings), fixture_db
 * (a database for the CLI test that compiles the header) and fuzz_export
 * (strings from the fuzzer).
 *
 * The database: two studies of different shapes (so that a dispatch header
 * can be made), each with timed trials and a rejected one, the first with a
 * confirmation and its samples. hostile_poison() then writes text into every
 * TEXT column of every table but the two whose values the code branches on
 * (trials.status, confirmation_samples.side), the identities (the uuid
 * columns: unique, matched) and the campaign tables (no output shows
 * them), and into trials.registers (an
 * INTEGER column the report prints, which SQLite lets hold text): column k
 * gets strings[k % n], but every config_key column gets the first one's
 * (confirmations name the trials they measured).
 *
 * The checks compare structure: an output made from hostile strings must
 * have the structure of the output made from benign stand-ins (each unsafe
 * string replaced by a distinct plain word, equal strings by the same one),
 * where structure is, for C, the text with every comment and literal
 * reduced to an empty one (after trigraphs and line splices, as a compiler
 * reads it), and for HTML the sequence of tags and attribute names.
 */
#ifndef FATTN_TESTS_HOSTILE_H
#define FATTN_TESTS_HOSTILE_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "export/export.h"
#include "export/table.h"
#include "report/report.h"
#include "space/params.h"
#include "store/store.h"
#include "util/err.h"
#include "util/escape.h"
#include "util/strbuf.h"

/* ---- the database ---- */

static inline int hostile_sql(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    fprintf(stderr, "hostile: %s: %s\n", sql, msg ? msg : "?");
    sqlite3_free(msg);
    return -1;
}

/* Builds the two studies in the database `s` (empty, opened for writing).
 * Returns 0, or -1 after saying why. */
static inline int hostile_build(fattn_store *s)
{
    static const struct {
        const char *key, *status, *reason;
        double median;
    } rows[] = {
        {"bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "ok", NULL, 7.4},
        {"bm128-bn64-bk32-w8-s2-u1-cp1-sw1-h1", "ok", NULL, 6.1},
        {"bm32-bn32-bk16-w4-s1-u1-cp0-sw0-h0", "rejected", "tiling", 0},
    };
    static const fattn_shape shapes[2] = {{2, 8, 512, 64, 0}, {1, 4, 1024, 128, 1}};
    sqlite3 *db = fattn_store_db(s);
    for (int k = 0; k < 2; ++k) {
        fattn_study_rec sr = {.command = "search",
                              .strategy = "tpe",
                              .seed = 7,
                              .has_seed = 1,
                              .shape = shapes[k],
                              .arch = "sm_90",
                              .device = "device",
                              .nvrtc_version = "13.0",
                              .space_path = "space.json",
                              .space_hash = "space",
                              .kernel_hash = "kernel",
                              .limits_json = "{}",
                              .argv = "argv",
                              .evaluator = "gpu",
                              .timing_method = "timing"};
        long long study;
        if (fattn_store_study_begin(s, &sr, &study))
            return -1;
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
            fattn_config c;
            long long id;
            if (fattn_config_parse(rows[i].key, "hostile", &c))
                return -1;
            fattn_trial_rec tr = {.study_id = study,
                                  .seq = (long long)i,
                                  .cfg = &c,
                                  .status = rows[i].status,
                                  .reason = rows[i].reason,
                                  .detail = "detail",
                                  .cache_key = "cache",
                                  .compile_ms = -1};
            if (fattn_store_trial_add(s, &tr, &id))
                return -1;
            char sql[256];
            snprintf(sql, sizeof sql,
                     "UPDATE trials SET median_us = %g, p10_us = %g, p90_us = %g, tflops = 100, gbps = 1000, "
                     "registers = 96, occupancy = 0.5 WHERE id = %lld AND %d",
                     rows[i].median, rows[i].median * 0.99, rows[i].median * 1.02, id, rows[i].median > 0);
            if (hostile_sql(db, sql))
                return -1;
        }
        if (fattn_store_study_end(s, study, "done"))
            return -1;
    }
    /* A confirmation of study 1's best, with its samples. */
    if (hostile_sql(db, "INSERT INTO confirmations (study_id, created_at, config_key, baseline, n, median_us, "
                        "ci_lo_us, ci_hi_us, p90_us, base_median_us, base_ci_lo_us, base_ci_hi_us, base_p90_us, "
                        "speedup, speedup_ci_lo, speedup_ci_hi, mwu_p, cliffs_delta, verdict, base_desc, resamples) "
                        "VALUES (1, 'created', 'bm128-bn64-bk32-w8-s2-u1-cp1-sw1-h1', 'baseline', 4, 6.0, 5.9, 6.1, "
                        "6.2, 7.0, 6.9, 7.1, 7.2, 1.16, 1.1, 1.2, 0.01, 0.9, 'success', 'desc', 1000)")
        || hostile_sql(db, "INSERT INTO confirmation_samples (confirmation_id, side, idx, us) VALUES "
                           "(1, 'candidate', 0, 5.9), (1, 'candidate', 1, 6.0), (1, 'candidate', 2, 6.1), "
                           "(1, 'candidate', 3, 6.0), (1, 'baseline', 0, 7.0), (1, 'baseline', 1, 6.9), "
                           "(1, 'baseline', 2, 7.1), (1, 'baseline', 3, 7.0)"))
        return -1;
    return 0;
}

/* The columns hostile_poison() writes, as "table\tcolumn" lines. */
static inline char *hostile_columns(sqlite3 *db)
{
    static const char sql[] =
        "SELECT m.name, p.name FROM sqlite_schema m, pragma_table_info(m.name) p WHERE m.type = 'table' AND "
        "m.name NOT LIKE 'sqlite_%' AND ((upper(p.type) = 'TEXT' AND NOT (m.name = 'trials' AND p.name = 'status') "
        "AND NOT (m.name = 'confirmation_samples' AND p.name = 'side') AND p.name NOT IN ('uuid', 'campaign_uuid') AND "
        "m.name NOT IN ('campaigns', 'campaign_rows')) OR (m.name = 'trials' AND "
        "p.name = "
        "'registers')) ORDER BY m.name, p.cid";
    sqlite3_stmt *st;
    fattn_strbuf b;
    fattn_sb_init(&b);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return NULL;
    while (sqlite3_step(st) == SQLITE_ROW)
        fattn_sb_addf(&b, "%s\t%s\n", (const char *)sqlite3_column_text(st, 0),
                      (const char *)sqlite3_column_text(st, 1));
    sqlite3_finalize(st);
    return fattn_sb_detach(&b);
}

/* Writes strings[k % n] into the k-th column of hostile_columns(), every
 * row, in one transaction. Returns 0, or -1 after saying why. */
static inline int hostile_poison(sqlite3 *db, const char *columns, const char *const *strings, int n)
{
    if (hostile_sql(db, "BEGIN"))
        return -1;
    int k = 0, rc = 0, key_k = -1;
    for (const char *p = columns; *p && !rc; ++k) {
        const char *tab = strchr(p, '\t'), *nl = strchr(p, '\n');
        /* Every config_key column gets the same string: confirmations name
         * the trials they measured. */
        int is_key = nl - tab - 1 == 10 && !strncmp(tab + 1, "config_key", 10);
        if (is_key && key_k < 0)
            key_k = k;
        char sql[160];
        snprintf(sql, sizeof sql, "UPDATE \"%.*s\" SET \"%.*s\" = ?1", (int)(tab - p), p, (int)(nl - tab - 1), tab + 1);
        sqlite3_stmt *st;
        rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK;
        if (!rc) {
            sqlite3_bind_text(st, 1, strings[(is_key ? key_k : k) % n], -1, SQLITE_STATIC);
            rc = sqlite3_step(st) != SQLITE_DONE;
            sqlite3_finalize(st);
        }
        if (rc)
            fprintf(stderr, "hostile: %s: %s\n", sql, sqlite3_errmsg(db));
        p = nl + 1;
    }
    if (rc) {
        hostile_sql(db, "ROLLBACK");
        return -1;
    }
    return hostile_sql(db, "COMMIT");
}

/* A string no C, HTML or JSON writer needs to escape: letters, digits,
 * '_', '.', '-'. */
static inline int hostile_plain(const char *s)
{
    return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == strlen(s);
}

/* Benign stand-ins for strings[0..n): plain strings stay, each other one
 * becomes PREFIX<i>, i the index of its first occurrence, PREFIX chosen so
 * that no plain string starts with it. out[i] are owned by the caller. */
static inline void hostile_benign(const char *const *strings, int n, char **out)
{
    char prefix[64] = "benign";
    for (int clash = 1; clash && strlen(prefix) < sizeof prefix - 2;) {
        clash = 0;
        for (int i = 0; i < n; ++i)
            if (hostile_plain(strings[i]) && !strncmp(strings[i], prefix, strlen(prefix)))
                clash = 1;
        if (clash)
            strcat(prefix, "z");
    }
    for (int i = 0; i < n; ++i) {
        int first = 0;
        while (strcmp(strings[first], strings[i]) != 0)
            ++first;
        char buf[96];
        snprintf(buf, sizeof buf, "%s%d", prefix, first);
        out[i] = fattn_xstrdup(hostile_plain(strings[i]) ? strings[i] : buf);
    }
}

/* ---- C ---- */

/* The text as a C compiler sees it after translation phases 1 and 2:
 * trigraphs replaced, backslash-newline pairs removed. */
static inline char *c_phase2(const char *src)
{
    static const char tri_from[] = "=(/)'<!>-", tri_to[] = "#[\\]^{|}~";
    size_t n = strlen(src);
    char *a = fattn_xmalloc(n + 1), *b = fattn_xmalloc(n + 1);
    size_t j = 0;
    for (size_t i = 0; i < n; ++i) {
        const char *t;
        if (src[i] == '?' && src[i + 1] == '?' && src[i + 2] && (t = strchr(tri_from, src[i + 2]))) {
            a[j++] = tri_to[t - tri_from];
            i += 2;
        } else {
            a[j++] = src[i];
        }
    }
    a[j] = 0;
    size_t k = 0;
    for (size_t i = 0; i < j; ++i) {
        if (a[i] == '\\' && a[i + 1] == '\n')
            ++i;
        else
            b[k++] = a[i];
    }
    b[k] = 0;
    free(a);
    return b;
}

/* Skips the literal at p (quote q) and returns the character after it, or
 * NULL when it is unterminated, spans a line, holds a raw control byte or
 * an escape C does not have. */
static inline const char *c_literal_end(const char *p, char q)
{
    for (++p;; ++p) {
        unsigned char c = (unsigned char)*p;
        if (c == (unsigned char)q)
            return p + 1;
        if (!c || c == '\n' || (c < 0x20 && c != '\t') || c == 0x7f)
            return NULL;
        if (c != '\\')
            continue;
        c = (unsigned char)*++p;
        if (c >= '0' && c <= '7') {
            for (int k = 1; k < 3 && p[1] >= '0' && p[1] <= '7'; ++k)
                ++p;
        } else if (c == 'x') {
            if (!strchr("0123456789abcdefABCDEF", p[1]) || !p[1])
                return NULL;
            while (p[1] && strchr("0123456789abcdefABCDEF", p[1]))
                ++p;
        } else if (!c || !strchr("'\"?\\abfnrtv", c)) {
            return NULL;
        }
    }
}

/* The structure of C source: every comment written as an empty one, every
 * string and character literal as an empty one. NULL when a comment or a
 * literal is unterminated or malformed, or a block comment holds "/" "*"
 * (which -Wcomment refuses). */
static inline char *c_skeleton(const char *src)
{
    char *t = c_phase2(src);
    fattn_strbuf b;
    fattn_sb_init(&b);
    const char *p = t;
    while (*p) {
        if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            if (!end)
                goto bad;
            for (const char *q = p + 2; q < end; ++q)
                if ((q[0] == '/' && q[1] == '*') || ((unsigned char)*q < 0x20 && *q != '\n' && *q != '\t'))
                    goto bad;
            fattn_sb_adds(&b, "/**/");
            p = end + 2;
        } else if (p[0] == '/' && p[1] == '/') {
            p += strcspn(p, "\n");
            fattn_sb_adds(&b, "//");
        } else if (*p == '"' || *p == '\'') {
            char q = *p;
            if (!(p = c_literal_end(p, q)))
                goto bad;
            fattn_sb_add(&b, q == '"' ? "\"\"" : "''", 2);
        } else {
            fattn_sb_add(&b, p++, 1);
        }
    }
    free(t);
    return fattn_sb_detach(&b);
bad:
    free(t);
    fattn_sb_release(&b);
    return NULL;
}

/* The value of the string literal of `#define NAME "..."` in `src`, decoded
 * (owned by the caller); NULL when there is no such definition. */
static inline char *c_define_string(const char *src, const char *name)
{
    char *t = c_phase2(src), head[128];
    snprintf(head, sizeof head, "\n#define %s \"", name);
    const char *p = strstr(t, head);
    if (!p || !c_literal_end(p + strlen(head) - 1, '"')) {
        free(t);
        return NULL;
    }
    fattn_strbuf b;
    fattn_sb_init(&b);
    for (p += strlen(head); *p != '"'; ++p) {
        if (*p != '\\') {
            fattn_sb_add(&b, p, 1);
            continue;
        }
        ++p;
        char c = *p;
        if (c >= '0' && c <= '7') {
            int v = 0;
            for (int k = 0; k < 3 && *p >= '0' && *p <= '7'; ++k, ++p)
                v = v * 8 + (*p - '0');
            --p;
            c = (char)v;
        } else if (c == 'x') {
            int v = 0;
            while (p[1] && strchr("0123456789abcdefABCDEF", p[1])) {
                ++p;
                v = v * 16 + (*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
            }
            c = (char)v;
        } else {
            const char *from = "abfnrtv", *to = "\a\b\f\n\r\t\v", *e = strchr(from, c);
            if (e)
                c = to[e - from];
        }
        fattn_sb_add(&b, &c, 1);
    }
    free(t);
    return fattn_sb_detach(&b);
}

/* ---- HTML ---- */

/* An entity at p ("&amp;", "&#39;", "&#xfffd;"): its length, 0 if none. */
static inline size_t html_entity(const char *p)
{
    size_t n = 1;
    if (p[n] == '#') {
        ++n;
        const char *digits = "0123456789";
        if (p[n] == 'x')
            ++n, digits = "0123456789abcdefABCDEF";
        size_t d = strspn(p + n, digits);
        return d && p[n + d] == ';' ? n + d + 1 : 0;
    }
    size_t d = strspn(p + n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
    return d && p[n + d] == ';' ? n + d + 1 : 0;
}

/* Text or an attribute value up to `stop` (a quote, or '<' for text): NULL
 * when it holds a raw '<' or '>', an '&' that starts no entity, a control
 * character other than tab and newline, or a byte of malformed UTF-8 (the
 * writer turns those into U+FFFD). */
static inline const char *html_text_end(const char *p, char stop)
{
    while (*p && *p != stop) {
        unsigned cp;
        int n = fattn_utf8_len((const unsigned char *)p, &cp);
        if (!n || *p == '<' || *p == '>' || ((cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) && cp != '\t' && cp != '\n'))
            return NULL;
        if (*p == '&') {
            size_t e = html_entity(p);
            if (!e)
                return NULL;
            p += e;
        } else {
            p += n;
        }
    }
    return p;
}

/* The structure of an HTML document: its tags with their attribute names,
 * in order (text, attribute values and <style> contents left out). NULL
 * when the text is not of the form fattn-tune writes (see html_text_end;
 * also an unquoted or unterminated attribute value, a '<' opening no tag). */
static inline char *html_skeleton(const char *h)
{
    static const char name_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_:.";
    fattn_strbuf b;
    fattn_sb_init(&b);
    const char *p = h;
    while (*p) {
        if (*p != '<') {
            if (!(p = html_text_end(p, '<')))
                goto bad;
            continue;
        }
        ++p;
        if (*p == '!') { /* <!DOCTYPE html> */
            size_t n = strcspn(p, "<>");
            if (p[n] != '>')
                goto bad;
            fattn_sb_adds(&b, "<!>");
            p += n + 1;
            continue;
        }
        int closing = *p == '/';
        p += closing;
        size_t n = strspn(p, name_chars);
        if (!n)
            goto bad;
        fattn_sb_addf(&b, "<%s%.*s", closing ? "/" : "", (int)n, p);
        int style = !closing && n == 5 && !strncmp(p, "style", 5);
        p += n;
        for (;;) {
            p += strspn(p, " \n\t");
            if (*p == '>' || (p[0] == '/' && p[1] == '>')) {
                p += *p == '>' ? 1 : 2;
                break;
            }
            n = strspn(p, name_chars);
            if (!n || closing)
                goto bad;
            fattn_sb_addf(&b, " %.*s", (int)n, p);
            p += n;
            if (*p != '=')
                continue;
            char q = *++p;
            if (q != '"' && q != '\'')
                goto bad;
            if (!(p = html_text_end(p + 1, q)) || *p != q)
                goto bad;
            ++p;
        }
        fattn_sb_adds(&b, ">");
        if (style) {
            const char *end = strstr(p, "</style>");
            if (!end || memchr(p, '<', (size_t)(end - p)))
                goto bad;
            p = end;
        }
    }
    return fattn_sb_detach(&b);
bad:
    fattn_sb_release(&b);
    return NULL;
}

/* ---- every output, made and compared ---- */

enum { HOSTILE_HEADER, HOSTILE_DISPATCH, HOSTILE_REPORT, HOSTILE_JSON, HOSTILE_T4, HOSTILE_TABLE, HOSTILE_NOUT };
static const char *const hostile_out_names[HOSTILE_NOUT] = {"export header", "export dispatch", "report",
                                                            "export json",   "export t4",       "query table"};

typedef struct hostile_outputs {
    char *text[HOSTILE_NOUT];
} hostile_outputs;

static inline void hostile_outputs_release(hostile_outputs *o)
{
    for (int i = 0; i < HOSTILE_NOUT; ++i)
        free(o->text[i]);
}

/* Every output of the database `s`: NULL where the writer failed. */
static inline void hostile_render(fattn_store *s, hostile_outputs *o)
{
    static const long long both[2] = {1, 2};
    for (int i = 0; i < HOSTILE_NOUT; ++i) {
        size_t len = 0;
        FILE *f = open_memstream(&o->text[i], &len);
        int rc = FATTN_EFAIL;
        switch (i) {
        case HOSTILE_HEADER: rc = fattn_export_best(s, 1, NULL, FATTN_EXPORT_HEADER, f); break;
        case HOSTILE_DISPATCH: rc = fattn_export_dispatch(s, both, 2, f); break;
        case HOSTILE_REPORT: rc = fattn_report_write(s, both, 2, f); break;
        case HOSTILE_JSON: rc = fattn_export_best(s, 1, NULL, FATTN_EXPORT_JSON, f); break;
        case HOSTILE_T4: rc = fattn_export_t4(s, 1, f); break;
        case HOSTILE_TABLE: {
            sqlite3_stmt *st;
            fattn_rows r;
            if (sqlite3_prepare_v2(fattn_store_db(s), "SELECT * FROM studies", -1, &st, NULL) == SQLITE_OK) {
                rc = fattn_rows_from_stmt(&r, st) ? FATTN_EFAIL : FATTN_OK;
                sqlite3_finalize(st);
                if (!rc) {
                    fattn_rows_print(f, &r, FATTN_FMT_TABLE, 0);
                    fattn_rows_print_record(f, &r, 0, FATTN_FMT_TABLE);
                }
                fattn_rows_release(&r);
            }
            break;
        }
        }
        fclose(f);
        if (rc) {
            free(o->text[i]);
            o->text[i] = NULL;
        }
    }
}

/* Text fit for a terminal: valid UTF-8, no control character but newline. */
static inline int hostile_terminal_clean(const char *t)
{
    for (const unsigned char *p = (const unsigned char *)t; *p;) {
        unsigned cp;
        int n = fattn_utf8_len(p, &cp);
        if (!n || ((cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) && cp != '\n'))
            return 0;
        p += n;
    }
    return 1;
}

/* 1 when `s` is valid UTF-8 (what a JSON string can carry unchanged). */
static inline int hostile_utf8(const char *s)
{
    unsigned cp;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = fattn_utf8_len(p, &cp);
        if (!n)
            return 0;
        p += n;
    }
    return 1;
}

/* A value of the database, as text (caller frees; "" when none). */
static inline char *hostile_value(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    char *v = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW
        && sqlite3_column_text(st, 0))
        v = fattn_xstrdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v ? v : fattn_xstrdup("");
}

/* Checks `o` (made from the hostile strings now in `s`) against `benign`
 * (made from their stand-ins). Returns NULL when every check holds, else
 * what failed (a static text, or one written into why[n]). */
static inline const char *hostile_compare(fattn_store *s, const hostile_outputs *o, const hostile_outputs *benign,
                                          char *why, size_t n)
{
    sqlite3 *db = fattn_store_db(s);
    for (int i = 0; i < HOSTILE_NOUT; ++i) {
        if (!benign->text[i] || !o->text[i]) {
            snprintf(why, n, "%s failed (%s strings)", hostile_out_names[i], o->text[i] ? "benign" : "hostile");
            return why;
        }
        char *a = NULL, *b = NULL;
        int c = i == HOSTILE_HEADER || i == HOSTILE_DISPATCH, h = i == HOSTILE_REPORT;
        if (c || h) {
            a = c ? c_skeleton(o->text[i]) : html_skeleton(o->text[i]);
            b = c ? c_skeleton(benign->text[i]) : html_skeleton(benign->text[i]);
            int same = a && b && !strcmp(a, b);
            snprintf(why, n, "%s: %s", hostile_out_names[i],
                     !b   ? "malformed with benign strings"
                     : !a ? "malformed: a string got out of its comment, literal, text or attribute"
                          : "its structure differs from the one made with benign strings");
            free(a), free(b);
            if (!same)
                return why;
        } else if (i == HOSTILE_TABLE) {
            if (!hostile_terminal_clean(o->text[i]))
                return "query table: a control character or malformed UTF-8 reaches the terminal";
        } else {
            cJSON *j = cJSON_Parse(o->text[i]);
            cJSON_Delete(j);
            if (!j) {
                snprintf(why, n, "%s: not valid JSON", hostile_out_names[i]);
                return why;
            }
        }
    }
    /* The header's string literals are the database's bytes, exactly. */
    static const struct {
        const char *macro, *sql;
    } lits[] = {
        {"FATTN_TUNED_ARCH", "SELECT arch FROM studies WHERE id = 1"},
        {"FATTN_TUNED_CONFIG", "SELECT config_key FROM trials WHERE study_id = 1 AND status = 'ok'"},
        {"FATTN_TUNED_BASELINE", "SELECT baseline FROM confirmations WHERE id = 1"},
        {"FATTN_TUNED_VERDICT", "SELECT verdict FROM confirmations WHERE id = 1"},
    };
    for (size_t i = 0; i < sizeof lits / sizeof lits[0]; ++i) {
        char *got = c_define_string(o->text[HOSTILE_HEADER], lits[i].macro), *want = hostile_value(db, lits[i].sql);
        int same = got && !strcmp(got, want);
        free(got), free(want);
        if (!same) {
            snprintf(why, n, "export header: %s is not the database's value", lits[i].macro);
            return why;
        }
    }
    /* JSON strings decode to the database's text where it is valid UTF-8. */
    cJSON *j = cJSON_Parse(o->text[HOSTILE_JSON]);
    char *cmd = hostile_value(db, "SELECT command FROM studies WHERE id = 1");
    const char *got = cJSON_GetStringValue(cJSON_GetObjectItem(j, "command"));
    int ok = got && (!hostile_utf8(cmd) || !strcmp(got, cmd));
    free(cmd);
    cJSON_Delete(j);
    return ok ? NULL : "export json: \"command\" is not the database's value";
}

/* Poisons `s` with strings[0..n) and with their benign stand-ins, renders
 * both and compares them (hostile_compare). */
static inline const char *hostile_check(fattn_store *s, const char *columns, const char *const *strings, int n,
                                        char *why, size_t why_n)
{
    char **benign = fattn_xcalloc((size_t)n, sizeof *benign);
    hostile_benign(strings, n, benign);
    hostile_outputs ob = {{0}}, oh = {{0}};
    const char *r = "cannot write the strings into the database";
    if (!hostile_poison(fattn_store_db(s), columns, (const char *const *)benign, n)) {
        hostile_render(s, &ob);
        if (!hostile_poison(fattn_store_db(s), columns, strings, n)) {
            hostile_render(s, &oh);
            r = hostile_compare(s, &oh, &ob, why, why_n);
        }
    }
    hostile_outputs_release(&ob), hostile_outputs_release(&oh);
    for (int i = 0; i < n; ++i)
        free(benign[i]);
    free(benign);
    return r;
}

#endif
