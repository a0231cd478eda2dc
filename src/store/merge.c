/*
 * merge.c - merging results databases: identities first (which copy of
 * each study and simulator run to take), then one input at a time, its
 * snapshot attached to the output's connection, its rows copied table by
 * table with new ids (merge.h).
 */
#include "store/merge.h"
#include "store/sql.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/schema.h"
#include "store/store.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/strbuf.h"

/* The tables merge copies; a table of the schema missing here is refused
 * (a migration that adds one must say how it is merged). */
static const char *const known_tables[] = {
    "studies",        "study_families",
    "trials",         "samples",
    "confirmations",  "confirmation_samples",
    "compile_cache",  "sim_runs",
    "sim_checks",     "campaigns",
    "campaign_rows",  "gpu_checks",
    "trials_running", NULL,
};

/* A study or a simulator run of an input: its identity, and how far it got
 * (trials then confirmations; a run: checks). */
typedef struct ident {
    char *uuid; /* NULL: a row without one (its own) */
    int input;
    long long id, rows, rows2;
    int chosen;
} ident;

typedef struct idents {
    ident *v;
    size_t n, cap;
} idents;

static void idents_free(idents *l)
{
    for (size_t i = 0; i < l->n; ++i)
        free(l->v[i].uuid);
    free(l->v);
    *l = (idents){0};
}

static int by_uuid(const void *a, const void *b)
{
    const ident *x = a, *y = b;
    int c = !x->uuid || !y->uuid ? (x->uuid != NULL) - (y->uuid != NULL) : strcmp(x->uuid, y->uuid);
    if (!c)
        c = (x->input > y->input) - (x->input < y->input);
    if (!c)
        c = (x->id > y->id) - (x->id < y->id);
    return c;
}

static int read_idents(fattn_store *s, const char *sql, int input, idents *l, const char *what)
{
    sqlite3_stmt *st;
    if (fattn_store_prepare(s, sql, &st))
        return FATTN_EFAIL;
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        if (l->n == l->cap) {
            l->cap = l->cap ? 2 * l->cap : 64;
            l->v = fattn_xrealloc(l->v, l->cap * sizeof *l->v);
        }
        const unsigned char *u = sqlite3_column_text(st, 1);
        l->v[l->n++] = (ident){u ? fattn_xstrdup((const char *)u) : NULL,
                               input,
                               sqlite3_column_int64(st, 0),
                               sqlite3_column_int64(st, 2),
                               sqlite3_column_int64(st, 3),
                               0};
    }
    sqlite3_finalize(st);
    return r == SQLITE_DONE ? FATTN_OK : fattn_store_fail(s, what);
}

/* Marks the copy to take of each identity, and counts the others; a note
 * for copies that differ. */
static void choose(idents *l, fattn_merge_input *in, int studies, FILE *notes)
{
    if (l->n > 1)
        qsort(l->v, l->n, sizeof *l->v, by_uuid);
    for (size_t i = 0; i < l->n;) {
        size_t j = i + 1;
        while (j < l->n && l->v[i].uuid && l->v[j].uuid && !strcmp(l->v[i].uuid, l->v[j].uuid))
            ++j;
        size_t best = i;
        int differ = 0;
        for (size_t k = i + 1; k < j; ++k) {
            const ident *a = &l->v[k], *b = &l->v[best];
            differ |= a->rows != l->v[i].rows || a->rows2 != l->v[i].rows2;
            if (a->rows > b->rows || (a->rows == b->rows && a->rows2 > b->rows2))
                best = k;
        }
        l->v[best].chosen = 1;
        for (size_t k = i; k < j; ++k)
            if (k != best)
                ++*(studies ? &in[l->v[k].input].studies_elsewhere : &in[l->v[k].input].sim_runs_elsewhere);
        if (differ && notes) {
            fprintf(notes, "fattn-tune: note: %s %s has copies that differ:", studies ? "study" : "simulator run",
                    l->v[i].uuid);
            for (size_t k = i; k < j; ++k) {
                const ident *c = &l->v[k];
                if (studies)
                    fprintf(notes, "%s %s's study %lld (%lld trials, %lld confirmations)", k > i ? ";" : "",
                            in[c->input].path, c->id, c->rows, c->rows2);
                else
                    fprintf(notes, "%s %s's run %lld (%lld checks)", k > i ? ";" : "", in[c->input].path, c->id,
                            c->rows);
            }
            fprintf(notes, "; copied %s's, which got furthest\n", in[l->v[best].input].path);
        }
        i = j;
    }
}

/* The identities of the attached snapshot's studies and simulator runs,
 * with how far each got. */
static int survey(fattn_store *o, int i, idents *studies, idents *runs)
{
    return read_idents(o,
                       "SELECT id, uuid, (SELECT count(*) FROM src.trials t WHERE t.study_id = s.id), (SELECT count(*) "
                       "FROM src.confirmations c WHERE c.study_id = s.id) FROM src.studies s ORDER BY id",
                       i, studies, "cannot read an input's studies")
           || read_idents(o,
                          "SELECT id, uuid, (SELECT count(*) FROM src.sim_checks c WHERE c.run_id = r.id), 0 FROM "
                          "src.sim_runs r ORDER BY id",
                          i, runs, "cannot read an input's simulator runs");
}

/* SQLite's busy and progress callbacks: a merge stops soon after *stop. */
static int stopped(void *arg)
{
    volatile sig_atomic_t *stop = arg;
    return stop && *stop;
}

/* Copies input i (checked: a fattn-tune database, not newer, intact) into
 * `dst`, a new file, through SQLite's backup: a consistent copy even while
 * another process writes the input. Sets in[i].version. */
static int snapshot(fattn_merge_input *in, int i, const char *dst, volatile sig_atomic_t *stop)
{
    fattn_store *s;
    sqlite3 *d = NULL;
    sqlite3_stmt *st;
    if (fattn_store_open(in[i].path, FATTN_DB_SOURCE, &s))
        return FATTN_EFAIL;
    int rc = FATTN_EFAIL;
    if (fattn_store_prepare(s, "PRAGMA user_version", &st))
        goto out;
    in[i].version = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    if (sqlite3_open_v2(dst, &d, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        fattn_error(FATTN_EFAIL, "merge: cannot create %s: %s", dst, d ? sqlite3_errmsg(d) : "out of memory");
        goto out;
    }
    sqlite3_backup *b = sqlite3_backup_init(d, "main", fattn_store_db(s), "main");
    int r = SQLITE_ERROR;
    if (b) {
        do /* a step at a time, so that Ctrl-C stops a large copy */
            r = sqlite3_backup_step(b, 4096);
        while ((r == SQLITE_OK || r == SQLITE_BUSY || r == SQLITE_LOCKED) && !stopped((void *)stop));
        sqlite3_backup_finish(b);
    }
    if (r == SQLITE_DONE)
        rc = FATTN_OK;
    else if (stopped((void *)stop))
        fattn_error(FATTN_EFAIL, "merge: interrupted; nothing written");
    else
        fattn_error(FATTN_EFAIL, "merge: cannot copy %s: %s", in[i].path, b ? sqlite3_errstr(r) : sqlite3_errmsg(d));
out:
    sqlite3_close_v2(d);
    fattn_store_close(&s);
    return rc;
}

/* A column's value in the copy: an SQL expression over the input's row
 * `t` and the id maps, or NULL to let the output number it. */
typedef struct colmap {
    const char *column;
    const char *expr;
} colmap;

/* `verb` INTO main.table (its every column) SELECT each column, mapped by
 * `maps` (or t.column), FROM src.table t `from`; *changed: rows written. */
static int copy_rows(fattn_store *o, const char *verb, const char *table, const colmap *maps, const char *from,
                     long long *changed)
{
    sqlite3_stmt *st;
    fattn_strbuf cols, vals;
    if (fattn_store_prepare(o, "SELECT name FROM pragma_table_info(?1, 'main') ORDER BY cid", &st))
        return FATTN_EFAIL;
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    fattn_sb_init(&cols);
    fattn_sb_init(&vals);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        const colmap *m = maps;
        while (m && m->column && strcmp(m->column, name))
            ++m;
        if (m && m->column && !m->expr)
            continue;
        fattn_sb_addf(&cols, "%s\"%s\"", cols.len ? ", " : "", name);
        if (m && m->column)
            fattn_sb_addf(&vals, "%s%s", vals.len ? ", " : "", m->expr);
        else
            fattn_sb_addf(&vals, "%st.\"%s\"", vals.len ? ", " : "", name);
    }
    sqlite3_finalize(st);
    char *c = fattn_sb_detach(&cols), *v = fattn_sb_detach(&vals);
    char *sql =
        sqlite3_mprintf("%s INTO main.\"%w\" (%s) SELECT %s FROM src.\"%w\" t %s", verb, table, c, v, table, from);
    free(c);
    free(v);
    if (!sql)
        return fattn_error(FATTN_EFAIL, "merge: out of memory");
    int rc = fattn_store_exec(o, sql);
    sqlite3_free(sql);
    if (!rc)
        *changed = sqlite3_changes(fattn_store_db(o));
    return rc;
}

/* The ids of input i's rows chosen in `l` into temp.`table`. */
static int fill_chosen(fattn_store *o, const char *table, const idents *l, int i)
{
    char sql[128];
    sqlite3_stmt *st;
    snprintf(sql, sizeof sql, "INSERT INTO temp.%s (old) VALUES (?1)", table);
    if (fattn_store_prepare(o, sql, &st))
        return FATTN_EFAIL;
    for (size_t k = 0; k < l->n; ++k) {
        if (l->v[k].input != i || !l->v[k].chosen)
            continue;
        sqlite3_bind_int64(st, 1, l->v[k].id);
        if (sqlite3_step(st) != SQLITE_DONE) {
            sqlite3_finalize(st);
            return fattn_store_fail(o, "cannot note the rows to copy");
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return FATTN_OK;
}

/* The id maps: each copied row of the input (old) and its id in the output
 * (new), numbered on from the output's largest, in the input's order. */
static const char maps_sql[] = "DROP TABLE IF EXISTS temp.chosen_studies; DROP TABLE IF EXISTS temp.chosen_runs;\n"
                               "DROP TABLE IF EXISTS temp.study_map; DROP TABLE IF EXISTS temp.trial_map;\n"
                               "DROP TABLE IF EXISTS temp.conf_map; DROP TABLE IF EXISTS temp.run_map;\n"
                               "DROP TABLE IF EXISTS temp.campaign_map;\n"
                               "CREATE TEMP TABLE chosen_studies (old INTEGER PRIMARY KEY);\n"
                               "CREATE TEMP TABLE chosen_runs (old INTEGER PRIMARY KEY);\n"
                               "CREATE TEMP TABLE study_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);\n"
                               "CREATE TEMP TABLE trial_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);\n"
                               "CREATE TEMP TABLE conf_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);\n"
                               "CREATE TEMP TABLE run_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);\n"
                               "CREATE TEMP TABLE campaign_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);\n";

static const char fill_maps_sql[] =
    "INSERT INTO temp.study_map SELECT id, (SELECT ifnull(max(id), 0) FROM main.studies) + row_number() OVER "
    "(ORDER BY id) FROM src.studies WHERE id IN (SELECT old FROM temp.chosen_studies);\n"
    "INSERT INTO temp.trial_map SELECT id, (SELECT ifnull(max(id), 0) FROM main.trials) + row_number() OVER "
    "(ORDER BY id) FROM src.trials WHERE study_id IN (SELECT old FROM temp.study_map);\n"
    "INSERT INTO temp.conf_map SELECT id, (SELECT ifnull(max(id), 0) FROM main.confirmations) + row_number() OVER "
    "(ORDER BY id) FROM src.confirmations WHERE study_id IN (SELECT old FROM temp.study_map);\n"
    "INSERT INTO temp.run_map SELECT id, (SELECT ifnull(max(id), 0) FROM main.sim_runs) + row_number() OVER "
    "(ORDER BY id) FROM src.sim_runs WHERE id IN (SELECT old FROM temp.chosen_runs);\n"
    /* A campaign is its file and arguments, the same in every copy: the first is taken. */
    "INSERT INTO temp.campaign_map SELECT id, (SELECT ifnull(max(id), 0) FROM main.campaigns) + row_number() OVER "
    "(ORDER BY id) FROM src.campaigns WHERE uuid NOT IN (SELECT uuid FROM main.campaigns);\n";

/* What each copied confirmation names outside its own row: its baseline's
 * trial ("trial:ID", a trial of any study of the shape and arch) and the
 * confirmation it was compared with (--against previous: of any study), by
 * identity (the study's UUID and the trial's seq; the confirmation's study,
 * time and configuration), resolved once every input is in (resolve()). */
static const char refs_sql[] =
    "CREATE TEMP TABLE IF NOT EXISTS refs (conf INTEGER PRIMARY KEY, base_uuid TEXT, base_seq INTEGER, "
    "prev_uuid TEXT, prev_at TEXT, prev_key TEXT);\n"
    "INSERT INTO temp.refs SELECT cm.new, bs.uuid, bt.seq, ps.uuid, p.created_at, p.config_key FROM src.confirmations "
    "c "
    "JOIN temp.conf_map cm ON cm.old = c.id "
    "LEFT JOIN src.trials bt ON c.baseline GLOB 'trial:[0-9]*' AND bt.id = CAST(substr(c.baseline, 7) AS INTEGER) "
    "LEFT JOIN src.studies bs ON bs.id = bt.study_id "
    "LEFT JOIN src.confirmations p ON p.id = c.previous_id LEFT JOIN src.studies ps ON ps.id = p.study_id "
    "WHERE bt.id IS NOT NULL OR p.id IS NOT NULL;\n";

/* Copies the attached input i's chosen rows, in one transaction. */
static int copy_input(fattn_store *o, fattn_merge_input *in, int i, const idents *studies, const idents *runs)
{
    char *abs = realpath(in[i].path, NULL);
    char *origin =
        sqlite3_mprintf("CASE WHEN t.origin_db IS NULL THEN %Q ELSE t.origin_db END", abs ? abs : in[i].path);
    free(abs);
    if (!origin)
        return fattn_error(FATTN_EFAIL, "merge: out of memory");
    const colmap study_cols[] = {
        {"id", "m.new"},       {"runner", "NULL"}, /* a copy: no process runs it */
        {"origin_db", origin}, {"origin_id", "CASE WHEN t.origin_db IS NULL THEN t.id ELSE t.origin_id END"},
        {NULL, NULL},
    };
    const colmap family_cols[] = {{"study_id", "m.new"}, {NULL, NULL}};
    const colmap trial_cols[] = {{"id", "tm.new"}, {"study_id", "m.new"}, {NULL, NULL}};
    const colmap sample_cols[] = {{"trial_id", "tm.new"}, {NULL, NULL}};
    const colmap conf_cols[] = {
        {"id", "cm.new"},
        {"study_id", "m.new"},
        {"trial_id", "(SELECT new FROM temp.trial_map WHERE old = t.trial_id)"},
        {"previous_id", "NULL"}, /* resolve() */
        {NULL, NULL},
    };
    const colmap conf_sample_cols[] = {{"confirmation_id", "cm.new"}, {NULL, NULL}};
    const colmap run_cols[] = {{"id", "rm.new"}, {NULL, NULL}};
    const colmap check_cols[] = {{"id", NULL}, {"run_id", "rm.new"}, {NULL, NULL}};
    const colmap campaign_cols[] = {{"id", "cpm.new"}, {NULL, NULL}};
    const colmap campaign_row_cols[] = {{"campaign_id", "cpm.new"}, {NULL, NULL}};
    const colmap gpu_check_cols[] = {{"id", NULL}, {"study_id", "m.new"}, {NULL, NULL}};
    const colmap running_cols[] = {{"study_id", "m.new"}, {NULL, NULL}};
    long long ignored;
    fattn_merge_input *r = &in[i];
    int rc = fattn_store_begin(o);
    if (rc) {
        sqlite3_free(origin);
        return rc;
    }
    rc = fattn_store_exec(o, maps_sql) || fill_chosen(o, "chosen_studies", studies, i)
                 || fill_chosen(o, "chosen_runs", runs, i) || fattn_store_exec(o, fill_maps_sql)
                 || copy_rows(o, "INSERT", "studies", study_cols,
                              "JOIN temp.study_map m ON m.old = t.id ORDER BY m.new", &r->studies)
                 || copy_rows(o, "INSERT", "study_families", family_cols,
                              "JOIN temp.study_map m ON m.old = t.study_id ORDER BY m.new, t.position", &ignored)
                 || copy_rows(
                     o, "INSERT", "trials", trial_cols,
                     "JOIN temp.trial_map tm ON tm.old = t.id JOIN temp.study_map m ON m.old = t.study_id ORDER BY "
                     "tm.new",
                     &r->trials)
                 || copy_rows(o, "INSERT", "samples", sample_cols,
                              "JOIN temp.trial_map tm ON tm.old = t.trial_id ORDER BY tm.new, t.idx", &r->samples)
                 || copy_rows(
                     o, "INSERT", "confirmations", conf_cols,
                     "JOIN temp.conf_map cm ON cm.old = t.id JOIN temp.study_map m ON m.old = t.study_id ORDER BY "
                     "cm.new",
                     &r->confirmations)
                 || fattn_store_exec(o, refs_sql)
                 || copy_rows(o, "INSERT", "confirmation_samples", conf_sample_cols,
                              "JOIN temp.conf_map cm ON cm.old = t.confirmation_id ORDER BY cm.new, t.side, t.idx",
                              &ignored)
                 || copy_rows(o, "INSERT", "sim_runs", run_cols,
                              "JOIN temp.run_map rm ON rm.old = t.id ORDER BY rm.new", &r->sim_runs)
                 || copy_rows(o, "INSERT", "sim_checks", check_cols,
                              "JOIN temp.run_map rm ON rm.old = t.run_id ORDER BY rm.new, t.seq", &r->sim_checks)
                 || copy_rows(o, "INSERT OR IGNORE", "compile_cache", NULL, "ORDER BY t.rowid", &r->cache_entries)
                 || copy_rows(o, "INSERT", "campaigns", campaign_cols,
                              "JOIN temp.campaign_map cpm ON cpm.old = t.id ORDER BY cpm.new", &r->campaigns)
                 || copy_rows(o, "INSERT", "campaign_rows", campaign_row_cols,
                              "JOIN temp.campaign_map cpm ON cpm.old = t.campaign_id ORDER BY cpm.new, t.row", &ignored)
                 || copy_rows(o, "INSERT", "gpu_checks", gpu_check_cols,
                              "JOIN temp.study_map m ON m.old = t.study_id ORDER BY m.new, t.id", &ignored)
                 || copy_rows(o, "INSERT", "trials_running", running_cols,
                              "JOIN temp.study_map m ON m.old = t.study_id ORDER BY m.new, t.seq", &ignored)
             ? FATTN_EFAIL
             : fattn_store_commit(o);
    sqlite3_free(origin);
    if (rc)
        fattn_store_rollback(o);
    return rc;
}

/* The references recorded by copy_input, once every study is in: a trial
 * baseline names the trial's id here (one no copy holds: the configuration
 * it measured, "config:KEY"), previous_id the confirmation here (none: NULL). */
static const char resolve_sql[] =
    "UPDATE main.confirmations SET previous_id = (SELECT c2.id FROM temp.refs r JOIN main.studies s2 ON s2.uuid = "
    "r.prev_uuid JOIN main.confirmations c2 ON c2.study_id = s2.id AND c2.created_at = r.prev_at AND c2.config_key = "
    "r.prev_key WHERE r.conf = confirmations.id ORDER BY c2.id LIMIT 1) WHERE id IN (SELECT conf FROM temp.refs "
    "WHERE prev_uuid IS NOT NULL);\n"
    "UPDATE main.confirmations SET baseline = coalesce((SELECT 'trial:' || t2.id FROM temp.refs r JOIN main.studies "
    "s2 ON s2.uuid = r.base_uuid JOIN main.trials t2 ON t2.study_id = s2.id AND t2.seq = r.base_seq WHERE r.conf = "
    "confirmations.id), CASE WHEN base_kind = 'config' AND base_desc IS NOT NULL THEN 'config:' || base_desc END, "
    "baseline) WHERE id IN (SELECT conf FROM temp.refs WHERE base_uuid IS NOT NULL);\n";

static int resolve(fattn_store *o)
{
    if (fattn_store_exec(o, "CREATE TEMP TABLE IF NOT EXISTS refs (conf INTEGER PRIMARY KEY, base_uuid TEXT, "
                            "base_seq INTEGER, prev_uuid TEXT, prev_at TEXT, prev_key TEXT)")
        || fattn_store_begin(o))
        return FATTN_EFAIL;
    if (fattn_store_exec(o, resolve_sql)) {
        fattn_store_rollback(o);
        return FATTN_EFAIL;
    }
    return fattn_store_commit(o);
}

/* Every table of the output's schema is one merge copies. */
static int tables_known(fattn_store *o)
{
    sqlite3_stmt *st;
    if (fattn_store_prepare(o, "SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
                            &st))
        return FATTN_EFAIL;
    int rc = FATTN_OK;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        const char *const *k = known_tables;
        while (*k && strcmp(*k, name))
            ++k;
        if (!*k)
            rc = fattn_error(FATTN_EFAIL,
                             "merge: the schema's table %s is not one merge knows how to copy (a bug: "
                             "src/store/merge.c); nothing written",
                             name);
    }
    sqlite3_finalize(st);
    return rc;
}

static int attach(fattn_store *o, const char *path)
{
    sqlite3_stmt *st;
    if (fattn_store_prepare(o, "ATTACH ?1 AS src", &st))
        return FATTN_EFAIL;
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    return fattn_store_step_done(o, st, "cannot attach an input's snapshot");
}

/* Removes a database file and its side files. */
static void remove_db(const char *path)
{
    static const char *const sides[] = {"", "-wal", "-shm", "-journal"};
    for (size_t k = 0; k < sizeof sides / sizeof sides[0]; ++k) {
        fattn_strbuf b;
        fattn_sb_init(&b);
        fattn_sb_addf(&b, "%s%s", path, sides[k]);
        char *p = fattn_sb_detach(&b);
        unlink(p);
        free(p);
    }
}

/* The checks that need no database opened: the output is new, every input
 * exists and is named once. */
static int check_paths(const fattn_merge_input *in, int n, const char *out)
{
    struct stat st, a, b;
    if (!*out)
        return fattn_error(FATTN_EUSAGE, "merge: -o '': expected a new database file's path");
    if (lstat(out, &st) == 0)
        return fattn_error(FATTN_EUSAGE,
                           "merge: -o %s exists; expected a new path (merge writes a new database, never into one)",
                           out);
    for (int i = 0; i < n; ++i) {
        if (stat(in[i].path, &a) != 0)
            return fattn_error(FATTN_EFAIL, "merge: cannot read %s: %s; expected a fattn-tune database", in[i].path,
                               strerror(errno));
        for (int j = 0; j < i; ++j)
            if (stat(in[j].path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
                return fattn_error(FATTN_EUSAGE, "merge: %s and %s are the same file; name each database once",
                                   in[j].path, in[i].path);
    }
    return FATTN_OK;
}

/* Links the finished database into place, refusing to replace a file that
 * appeared meanwhile; a file system without hard links gets a rename. */
static int publish(const char *built, const char *out)
{
    struct stat st;
    if (link(built, out) == 0)
        return FATTN_OK;
    if (errno == EEXIST)
        return fattn_error(FATTN_EUSAGE, "merge: -o %s appeared while merging; nothing written", out);
    if (lstat(out, &st) == 0)
        return fattn_error(FATTN_EUSAGE, "merge: -o %s appeared while merging; nothing written", out);
    if (rename(built, out) != 0)
        return fattn_error(FATTN_EFAIL, "merge: cannot write %s: %s", out, strerror(errno));
    return FATTN_OK;
}

/* Leaves the built database in one file (WAL checkpointed, rollback
 * journal), checked, and closes it. */
static int finish(fattn_store **o, const char *built)
{
    sqlite3_stmt *st;
    int ok = fattn_store_prepare(*o, "PRAGMA main.journal_mode = DELETE", &st) == FATTN_OK;
    ok = ok && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)
         && !strcmp((const char *)sqlite3_column_text(st, 0), "delete");
    sqlite3_finalize(st);
    int rc = ok ? FATTN_OK : fattn_store_fail(*o, "cannot write the merged database out of its journal");
    fattn_store_close(o);
    struct stat sb;
    fattn_strbuf b;
    fattn_sb_init(&b);
    fattn_sb_addf(&b, "%s-wal", built);
    char *wal = fattn_sb_detach(&b);
    if (!rc && stat(wal, &sb) == 0 && sb.st_size > 0)
        rc = fattn_error(FATTN_EFAIL, "merge: the merged database's journal was not written back; nothing written");
    free(wal);
    return rc;
}

int fattn_merge(fattn_merge_input *in, int n, const char *out, FILE *notes, volatile sig_atomic_t *stop)
{
    idents studies = {0}, runs = {0};
    int rc = check_paths(in, n, out);
    if (rc)
        return rc;

    /* The output's folder (made when missing, removed again on failure),
     * and a private folder beside the output for the work: the inputs'
     * snapshots, the database built. */
    struct stat st;
    char *parent = fattn_xstrdup(out), *slash = strrchr(parent, '/');
    if (slash)
        slash == parent ? (void)(slash[1] = '\0') : (void)(*slash = '\0');
    int made_parent = slash && stat(parent, &st) != 0;
    fattn_strbuf b;
    fattn_sb_init(&b);
    fattn_sb_addf(&b, "%s.merge-XXXXXX", out);
    char *work = fattn_sb_detach(&b), *built = NULL;
    char **snap = fattn_xcalloc((size_t)n, sizeof *snap);
    fattn_store *o = NULL;
    if ((rc = fattn_make_parent_dir(out)))
        goto out;
    if (!mkdtemp(work)) {
        rc = fattn_error(FATTN_EFAIL, "merge: cannot make a working folder beside %s: %s", out, strerror(errno));
        goto out;
    }
    built = fattn_path_join(work, "merged.db");
    /* Every input's snapshot first (each checked as it is read), upgraded
     * when older: what is chosen and what is copied are the same rows. */
    for (int i = 0; i < n; ++i) {
        char name[32];
        snprintf(name, sizeof name, "input-%d.db", i + 1);
        snap[i] = fattn_path_join(work, name);
        if ((rc = snapshot(in, i, snap[i], stop)))
            goto clean;
        if (in[i].version < fattn_schema_latest()) {
            fattn_store *m;
            if ((rc = fattn_store_open(snap[i], FATTN_DB_WRITE, &m)))
                goto clean;
            fattn_store_close(&m);
        }
    }
    if ((rc = fattn_store_open(built, FATTN_DB_WRITE, &o)) || (rc = tables_known(o)))
        goto clean;
    sqlite3_progress_handler(fattn_store_db(o), 100000, stopped, (void *)stop);
    for (int i = 0; i < n && !rc; ++i) {
        if (!(rc = attach(o, snap[i])))
            rc = survey(o, i, &studies, &runs);
        if (fattn_store_exec(o, "DETACH src") && !rc)
            rc = FATTN_EFAIL;
    }
    if (rc)
        goto clean;
    choose(&studies, in, 1, notes);
    choose(&runs, in, 0, notes);
    for (int i = 0; i < n && !rc; ++i) {
        if (!(rc = attach(o, snap[i])))
            rc = copy_input(o, in, i, &studies, &runs);
        if (fattn_store_exec(o, "DETACH src") && !rc)
            rc = FATTN_EFAIL;
        remove_db(snap[i]);
    }
    if (!rc)
        rc = resolve(o);
    if (!rc)
        rc = finish(&o, built);
    if (!rc && stopped((void *)stop))
        rc = FATTN_EFAIL;
    if (!rc)
        rc = publish(built, out);
clean:
    if (rc && stopped((void *)stop))
        fattn_error(FATTN_EFAIL, "merge: interrupted; nothing written");
    fattn_store_close(&o);
    for (int i = 0; i < n; ++i)
        if (snap[i])
            remove_db(snap[i]);
    if (built)
        remove_db(built);
    rmdir(work);
out:
    if (rc && made_parent)
        rmdir(parent);
    for (int i = 0; i < n; ++i)
        free(snap[i]);
    free(snap);
    free(built);
    free(work);
    free(parent);
    idents_free(&studies);
    idents_free(&runs);
    return rc;
}
