/*
 * store.c - opening, migrating and writing the results database.
 */
#include "store/store.h"
#include "store/read.h"
#include "store/sql.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "store/schema.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/misc.h"
#include "util/proc.h"
#include "util/strbuf.h"

struct fattn_store {
    sqlite3 *db;
    char *path;
    int mode;
    int no_checkpoint; /* a source whose -wal was there before: left as found */
};

sqlite3 *fattn_store_db(fattn_store *s)
{
    return s->db;
}

const char *fattn_store_path(const fattn_store *s)
{
    return s->path;
}

int fattn_store_fail(fattn_store *s, const char *what)
{
    int code = sqlite3_extended_errcode(s->db);
    const char *msg = sqlite3_errmsg(s->db);
    if ((code & 0xff) == SQLITE_READONLY)
        return fattn_error(FATTN_EFAIL, "database %s is read-only (%s); expected a writable file", s->path, what);
    if ((code & 0xff) == SQLITE_NOTADB || (code & 0xff) == SQLITE_CORRUPT)
        return fattn_error(FATTN_EFAIL,
                           "database %s: %s: not a SQLite database or corrupt (%s); expected a "
                           "fattn-tune database or a new path",
                           s->path, what, msg);
    if ((code & 0xff) == SQLITE_FULL)
        return fattn_error(FATTN_EFAIL, "database %s: %s: disk full", s->path, what);
    return fattn_error(FATTN_EFAIL, "database %s: %s: %s", s->path, what, msg);
}

int fattn_store_exec(fattn_store *s, const char *sql)
{
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return fattn_store_fail(s, "statement failed");
    return FATTN_OK;
}

int fattn_store_begin(fattn_store *s)
{
    return fattn_store_exec(s, "BEGIN IMMEDIATE");
}

int fattn_store_commit(fattn_store *s)
{
    return fattn_store_exec(s, "COMMIT");
}

void fattn_store_rollback(fattn_store *s)
{
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

static int pragma_int(fattn_store *s, const char *sql, long long *out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return fattn_store_fail(s, "cannot read the header");
    int r = sqlite3_step(st);
    if (r != SQLITE_ROW) {
        sqlite3_finalize(st);
        return fattn_store_fail(s, "cannot read the header");
    }
    *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return FATTN_OK;
}

/* Every command first asks SQLite's quick_check (every page read once: 0.16 s
 * for a 96 MB file of 100,000 trials of 15 samples each, on 2 cores) whether
 * the file is intact: a writer refuses a damaged database (writing into it
 * can lose what it still holds), a reader warns that what it shows may be
 * incomplete or wrong. */
static int intact(fattn_store *s, int reader, int source)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "PRAGMA quick_check(1)", -1, &st, NULL) != SQLITE_OK)
        return fattn_store_fail(s, "cannot check it");
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return fattn_store_fail(s, "cannot check it");
    }
    const char *verdict = (const char *)sqlite3_column_text(st, 0);
    int rc = FATTN_OK;
    if (!verdict || strcmp(verdict, "ok")) {
        char line[256]; /* the verdict on one line */
        snprintf(line, sizeof line, "%s", verdict ? verdict : "no verdict");
        for (char *p = line; *p; ++p)
            if (*p == '\n')
                *p = ' ';
        if (reader)
            fattn_warn("database %s is damaged (SQLite's quick_check: %s); what is shown may be incomplete or "
                       "wrong: restore a copy",
                       s->path, line);
        else if (source)
            rc = fattn_error(FATTN_EFAIL,
                             "database %s is damaged (SQLite's quick_check: %s); nothing written: restore a copy, "
                             "or leave it out",
                             s->path, line);
        else
            rc = fattn_error(FATTN_EFAIL,
                             "database %s is damaged (SQLite's quick_check: %s); nothing written: restore a copy, "
                             "or pass a new --db path",
                             s->path, line);
    }
    sqlite3_finalize(st);
    return rc;
}

/* WAL: readers never block the writer, and a killed writer loses only its
 * open transaction. */
static int set_wal(fattn_store *s)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL) != SQLITE_OK)
        return fattn_store_fail(s, "cannot set WAL mode");
    int ok = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)
             && strcmp((const char *)sqlite3_column_text(st, 0), "wal") == 0;
    sqlite3_finalize(st);
    return ok ? FATTN_OK : fattn_store_fail(s, "cannot set WAL mode");
}

int fattn_store_schema_version(void)
{
    return fattn_schema_latest();
}

static int migrate(fattn_store *s, long long from)
{
    for (int v = (int)from + 1; v <= fattn_schema_latest(); ++v) {
        char sql[128];
        if (fattn_store_begin(s))
            return FATTN_EFAIL;
        if (sqlite3_exec(s->db, fattn_schema_migration(v), NULL, NULL, NULL) != SQLITE_OK) {
            int rc = fattn_store_fail(s, "migration failed");
            fattn_store_rollback(s);
            return rc;
        }
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d; PRAGMA application_id = %d", v, FATTN_APPLICATION_ID);
        if (fattn_store_exec(s, sql) || fattn_store_commit(s)) {
            fattn_store_rollback(s);
            return FATTN_EFAIL;
        }
    }
    return FATTN_OK;
}

/* Refuses, before SQLite touches anything, a file or folder the user cannot
 * write: SQLite would otherwise fail later, or open the file read-only. */
static int writable(const char *path, int exists)
{
    if (exists && access(path, W_OK) != 0)
        return fattn_error(FATTN_EFAIL, "database %s is read-only (%s); expected a writable file", path,
                           strerror(errno));
    char *dir = fattn_xstrdup(path);
    char *slash = strrchr(dir, '/');
    const char *d = slash ? (slash == dir ? "/" : (*slash = '\0', dir)) : ".";
    int rc = FATTN_OK;
    if (access(d, W_OK) != 0)
        rc = fattn_error(FATTN_EFAIL,
                         "database %s: its folder %s is not writable (%s); SQLite needs it for the "
                         "journal files",
                         path, d, strerror(errno));
    free(dir);
    return rc;
}

/* Readers open a writable file read-write under PRAGMA query_only, which
 * refuses every change: a read-only connection would leave the WAL's -wal
 * and -shm files behind when it closes. */
static int connect(fattn_store *s, int immutable)
{
    int flags = s->mode == FATTN_DB_WRITE                  ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                : !immutable && access(s->path, W_OK) == 0 ? SQLITE_OPEN_READWRITE
                                                           : SQLITE_OPEN_READONLY;
    char *name = s->path;
    if (s->db)
        sqlite3_close_v2(s->db);
    s->db = NULL;
    if (immutable) {
        /* file: URI with the path percent-encoded. */
        fattn_strbuf sb;
        fattn_sb_init(&sb);
        fattn_sb_adds(&sb, "file:");
        for (const unsigned char *p = (const unsigned char *)s->path; *p; ++p) {
            if (isalnum(*p) || strchr("/._-~", *p))
                fattn_sb_add(&sb, (const char *)p, 1);
            else
                fattn_sb_addf(&sb, "%%%02X", *p);
        }
        fattn_sb_adds(&sb, "?immutable=1");
        name = fattn_sb_detach(&sb);
        flags |= SQLITE_OPEN_URI;
    }
    int r = sqlite3_open_v2(name, &s->db, flags | SQLITE_OPEN_FULLMUTEX, NULL);
    if (immutable)
        free(name);
    if (r != SQLITE_OK) {
        if (s->db)
            return fattn_store_fail(s, "cannot open");
        return fattn_error(FATTN_EFAIL, "database %s: cannot open: out of memory", s->path);
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, 10000);
    /* A source's -wal (a writer at work, or one killed) stays where it is:
     * the last connection to close would otherwise checkpoint it into the
     * file. */
    if (s->no_checkpoint && sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL) != SQLITE_OK)
        return fattn_store_fail(s, "cannot open it to copy from");
    fattn_store_add_functions(s->db);
    if (s->mode == FATTN_DB_READ && sqlite3_exec(s->db, "PRAGMA query_only = ON", NULL, NULL, NULL) != SQLITE_OK)
        return fattn_store_fail(s, "cannot open read-only");
    return FATTN_OK;
}

static int read_header(fattn_store *s, long long *app, long long *version, long long *tables)
{
    return pragma_int(s, "PRAGMA application_id", app) || pragma_int(s, "PRAGMA user_version", version)
           || pragma_int(s, "SELECT count(*) FROM sqlite_master", tables);
}

/* 1 when the database has a -wal or -shm file: a connection is open (a
 * writer at work: WAL mode keeps its -shm while connected), or one was
 * killed and the -wal may hold what it committed. Without either, a reader
 * opens the file immutable: it locks nothing and makes no -wal or -shm, so
 * a reader stopped or killed leaves none behind. */
static int wal_in_use(const char *path)
{
    struct stat st;
    int in_use = 0;
    for (int i = 0; i < 2; ++i) {
        fattn_strbuf side;
        fattn_sb_init(&side);
        fattn_sb_addf(&side, "%s-%s", path, i ? "shm" : "wal");
        char *name = fattn_sb_detach(&side);
        in_use |= stat(name, &st) == 0;
        free(name);
    }
    return in_use;
}

static int retry_immutable(int code)
{
    return (code & 0xff) == SQLITE_READONLY || (code & 0xff) == SQLITE_CANTOPEN;
}

int fattn_store_open(const char *path, int mode, fattn_store **out)
{
    struct stat st;
    *out = NULL;
    if (!*path)
        return fattn_error(FATTN_EUSAGE, "--db '': expected a database file's path, such as results/fattn.db");
    int exists = stat(path, &st) == 0;
    int rc = FATTN_EFAIL;
    if (mode != FATTN_DB_WRITE && !exists)
        return fattn_error(FATTN_EFAIL,
                           "database %s does not exist; run fattn-tune compile (or search) first, or "
                           "pass --db",
                           path);
    int source = mode == FATTN_DB_SOURCE;
    if (mode == FATTN_DB_UPDATE)
        mode = FATTN_DB_WRITE;
    if (source)
        mode = FATTN_DB_READ;
    if (exists && S_ISDIR(st.st_mode))
        return fattn_error(FATTN_EFAIL, "database %s is a directory; expected a database file", path);
    if (mode == FATTN_DB_WRITE && !exists && fattn_make_parent_dir(path))
        return FATTN_EFAIL;

    if (mode == FATTN_DB_WRITE && writable(path, exists))
        return FATTN_EFAIL;

    fattn_store *s = fattn_xcalloc(1, sizeof *s);
    s->path = fattn_xstrdup(path);
    s->mode = mode, s->no_checkpoint = source && wal_in_use(path);
    long long app = 0, version = 0, tables = 0;
    /* A WAL database the user cannot write (or whose folder they cannot
     * write) cannot be opened normally even for reading: SQLite needs its
     * -shm file. Reading, such a file is opened as immutable instead; the
     * first attempt stays quiet until it is known to be the answer. */
    int was_quiet = fattn_error_set_quiet_thread(1);
    /* A source a writer may open meanwhile is not read immutable (a
     * checkpoint during the copy would tear it). */
    int immutable = mode == FATTN_DB_READ && !wal_in_use(path) && !(source && access(path, W_OK) == 0);
    int bad = connect(s, immutable) || read_header(s, &app, &version, &tables);
    fattn_error_set_quiet_thread(was_quiet);
    if (bad) {
        int code = s->db ? sqlite3_extended_errcode(s->db) : SQLITE_NOMEM;
        if (mode != FATTN_DB_READ || !retry_immutable(code)) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", fattn_last_error());
            fattn_error(FATTN_EFAIL, "%s", msg);
            goto fail;
        }
        if (connect(s, 1) || read_header(s, &app, &version, &tables))
            goto fail;
    }
    if (app != FATTN_APPLICATION_ID && (app != 0 || version != 0 || tables != 0)) {
        fattn_error(FATTN_EFAIL,
                    "database %s is not a fattn-tune database (application id %lld, %lld tables); "
                    "expected a fattn-tune database or a new path",
                    path, app, tables);
        goto fail;
    }
    if (version < 0) {
        fattn_error(FATTN_EFAIL, "database %s has schema version %lld, which no fattn-tune writes; it is damaged", path,
                    version);
        goto fail;
    }
    if (version > fattn_schema_latest()) {
        fattn_error(FATTN_EFAIL,
                    "database %s has schema version %lld, newer than this fattn-tune %s understands "
                    "(%d); use a newer fattn-tune",
                    path, version, FATTN_VERSION, fattn_schema_latest());
        goto fail;
    }
    if (mode == FATTN_DB_READ) {
        if (version == 0) {
            fattn_error(FATTN_EFAIL,
                        "database %s holds no fattn-tune data yet; run fattn-tune compile (or search) "
                        "first",
                        path);
            goto fail;
        }
        if (version < fattn_schema_latest() && !source) {
            fattn_error(FATTN_EFAIL,
                        "database %s has schema version %lld; a writing command (fattn-tune compile) "
                        "upgrades it to %d",
                        path, version, fattn_schema_latest());
            goto fail;
        }
        if (intact(s, !source, source)) /* a damaged one is read, with a warning; not copied from */
            goto fail;
    } else {
        if (sqlite3_db_readonly(s->db, "main") == 1) {
            fattn_error(FATTN_EFAIL, "database %s is read-only; expected a writable file", path);
            goto fail;
        }
        if (intact(s, 0, 0) || migrate(s, version))
            goto fail;
        if (set_wal(s) || fattn_store_exec(s, "PRAGMA synchronous = NORMAL"))
            goto fail;
    }
    if (fattn_store_exec(s, "PRAGMA foreign_keys = ON"))
        goto fail;
    *out = s;
    return FATTN_OK;
fail:
    fattn_store_close(&s);
    return rc;
}

void fattn_store_close(fattn_store **sp)
{
    fattn_store *s = *sp;
    if (!s)
        return;
    if (s->db)
        sqlite3_close_v2(s->db);
    free(s->path);
    free(s);
    *sp = NULL;
}

int fattn_store_prepare(fattn_store *s, const char *sql, sqlite3_stmt **st)
{
    if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
        return fattn_store_fail(s, "cannot prepare a statement");
    return FATTN_OK;
}

int fattn_store_step_done(fattn_store *s, sqlite3_stmt *st, const char *what)
{
    int r = sqlite3_step(st);
    int rc = r == SQLITE_DONE ? FATTN_OK : fattn_store_fail(s, what);
    sqlite3_finalize(st);
    return rc;
}

void fattn_store_bind_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

void fattn_store_bind_shape(sqlite3_stmt *st, int i, const fattn_shape *shape)
{
    sqlite3_bind_int(st, i, shape->batch);
    sqlite3_bind_int(st, i + 1, shape->heads);
    sqlite3_bind_int(st, i + 2, shape->seqlen);
    sqlite3_bind_int(st, i + 3, shape->head_dim);
    sqlite3_bind_int(st, i + 4, shape->causal);
}

int fattn_store_insert_samples(fattn_store *s, const char *sql, long long owner, const double *us, size_t n,
                               const char *what)
{
    sqlite3_stmt *st;
    if (fattn_store_prepare(s, sql, &st))
        return FATTN_EFAIL;
    for (size_t i = 0; i < n; ++i) {
        sqlite3_bind_int64(st, 1, owner);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
        sqlite3_bind_double(st, 3, us[i]);
        if (sqlite3_step(st) != SQLITE_DONE) {
            sqlite3_finalize(st);
            return fattn_store_fail(s, what);
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return FATTN_OK;
}

long long fattn_latest_study(fattn_store *s)
{
    sqlite3_stmt *st;
    long long id = 0;
    if (sqlite3_prepare_v2(fattn_store_db(s), "SELECT max(id) FROM studies", -1, &st, NULL) != SQLITE_OK) {
        fattn_store_fail(s, "cannot read studies");
        return 0;
    }
    if (sqlite3_step(st) == SQLITE_ROW)
        id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (!id)
        fattn_error(FATTN_EFAIL, "database %s holds no study yet; run fattn-tune compile (or search) first",
                    fattn_store_path(s));
    return id;
}

int fattn_study_exists(fattn_store *s, long long id)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(fattn_store_db(s), "SELECT 1 FROM studies WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
        return fattn_store_fail(s, "cannot read studies");
    sqlite3_bind_int64(st, 1, id);
    int found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    if (!found)
        return fattn_error(FATTN_EUSAGE, "--study %lld: no such study in %s; see fattn-tune query studies", id,
                           fattn_store_path(s));
    return FATTN_OK;
}

int fattn_store_study_begin(fattn_store *s, const fattn_study_rec *r, long long *id)
{
    static const char sql[] =
        "INSERT INTO studies (created_at, status, command, strategy, seed, batch, heads, seqlen, head_dim, causal, "
        "arch, device, device_json, tool_version, nvrtc_version, driver_version, sqlite_version, cjson_version, "
        "space_path, space_hash, space_json, kernel_hash, limits_json, argv, evaluator, timing_method, args_json, "
        "runner, family, campaign_uuid, campaign_row) "
        "VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, "
        "?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30)";
    sqlite3_stmt *st;
    char now[32], cjson[32], runner[320];
    if (fattn_store_exec(s, "SAVEPOINT study_begin"))
        return FATTN_EFAIL;
    if (fattn_store_prepare(s, sql, &st)) {
        sqlite3_exec(s->db, "ROLLBACK TO study_begin; RELEASE study_begin", NULL, NULL, NULL);
        return FATTN_EFAIL;
    }
    fattn_utc_now(now);
    snprintf(cjson, sizeof cjson, "%s", fattn_schema_cjson_version());
    fattn_store_bind_text(st, 1, now);
    fattn_store_bind_text(st, 2, r->command);
    fattn_store_bind_text(st, 3, r->strategy);
    if (r->has_seed)
        sqlite3_bind_int64(st, 4, r->seed);
    else
        sqlite3_bind_null(st, 4);
    fattn_store_bind_shape(st, 5, &r->shape);
    fattn_store_bind_text(st, 10, r->arch);
    fattn_store_bind_text(st, 11, r->device);
    fattn_store_bind_text(st, 12, r->device_json);
    fattn_store_bind_text(st, 13, FATTN_VERSION);
    fattn_store_bind_text(st, 14, r->nvrtc_version);
    fattn_store_bind_text(st, 15, r->driver_version);
    fattn_store_bind_text(st, 16, sqlite3_libversion());
    fattn_store_bind_text(st, 17, cjson);
    fattn_store_bind_text(st, 18, r->space_path);
    fattn_store_bind_text(st, 19, r->space_hash);
    fattn_store_bind_text(st, 20, r->space_json);
    fattn_store_bind_text(st, 21, r->kernel_hash);
    fattn_store_bind_text(st, 22, r->limits_json);
    fattn_store_bind_text(st, 23, r->argv);
    fattn_store_bind_text(st, 24, r->evaluator);
    fattn_store_bind_text(st, 25, r->timing_method);
    fattn_store_bind_text(st, 26, r->args_json);
    fattn_store_bind_text(st, 27, fattn_process_tag(0, runner, sizeof runner) ? NULL : runner);
    fattn_store_bind_text(st, 28, r->family ? r->family : fattn_families[0]->name);
    fattn_store_bind_text(st, 29, r->campaign_uuid);
    if (r->campaign_uuid)
        sqlite3_bind_int(st, 30, r->campaign_row);
    else
        sqlite3_bind_null(st, 30);
    int rc = fattn_store_step_done(s, st, "cannot record the study");
    *id = sqlite3_last_insert_rowid(s->db);
    const fattn_study_family one = {r->family ? r->family : fattn_families[0]->name,
                                    r->space_path,
                                    r->space_hash,
                                    r->space_json,
                                    r->kernel_hash,
                                    r->limits_json};
    const fattn_study_family *fams = r->nfamilies ? r->families : &one;
    for (int k = 0; !rc && k < (r->nfamilies ? r->nfamilies : 1); ++k) {
        static const char fsql[] = "INSERT INTO study_families (study_id, position, family, space_path, space_hash, "
                                   "space_json, kernel_hash, limits_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
        if ((rc = fattn_store_prepare(s, fsql, &st)))
            break;
        sqlite3_bind_int64(st, 1, *id);
        sqlite3_bind_int(st, 2, k);
        fattn_store_bind_text(st, 3, fams[k].family);
        fattn_store_bind_text(st, 4, fams[k].space_path);
        fattn_store_bind_text(st, 5, fams[k].space_hash);
        fattn_store_bind_text(st, 6, fams[k].space_json);
        fattn_store_bind_text(st, 7, fams[k].kernel_hash);
        fattn_store_bind_text(st, 8, fams[k].limits_json);
        rc = fattn_store_step_done(s, st, "cannot record the study's families");
    }
    if (rc) {
        sqlite3_exec(s->db, "ROLLBACK TO study_begin; RELEASE study_begin", NULL, NULL, NULL);
        return FATTN_EFAIL;
    }
    return fattn_store_exec(s, "RELEASE study_begin");
}

/* UPDATE studies SET <column> = ?1 WHERE id = ?2, the statement given. */
static int study_real(fattn_store *s, const char *sql, long long id, double v)
{
    sqlite3_stmt *st;
    if (fattn_store_prepare(s, sql, &st))
        return FATTN_EFAIL;
    sqlite3_bind_double(st, 1, v);
    sqlite3_bind_int64(st, 2, id);
    return fattn_store_step_done(s, st, "cannot update the study");
}

int fattn_store_study_time(fattn_store *s, long long id, double search_ms)
{
    return study_real(s, "UPDATE studies SET search_ms = ?1 WHERE id = ?2", id, search_ms);
}

int fattn_store_study_gpu_spread(fattn_store *s, long long study, double pct)
{
    return study_real(s, "UPDATE studies SET gpu_spread_pct = ?1 WHERE id = ?2", study, pct);
}

int fattn_store_study_last_run(fattn_store *s, long long id, const char *json)
{
    sqlite3_stmt *st;
    if (fattn_store_prepare(s, "UPDATE studies SET last_run_json = ?1 WHERE id = ?2", &st))
        return FATTN_EFAIL;
    sqlite3_bind_text(st, 1, json, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, id);
    return fattn_store_step_done(s, st, "cannot update the study");
}

int fattn_store_study_free(fattn_store *s, long long id)
{
    sqlite3_stmt *st;
    char who[400] = "";
    if (fattn_store_prepare(s, "SELECT runner FROM studies WHERE id = ?1 AND runner IS NOT NULL", &st))
        return FATTN_EFAIL;
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const char *tag = (const char *)sqlite3_column_text(st, 0);
        char self[320];
        int alive = fattn_process_tag_alive(tag);
        if (alive && !(fattn_process_tag(0, self, sizeof self) == 0 && !strcmp(self, tag))) {
            /* HOST:PID:START */
            const char *a = strrchr(tag, ':'), *b = a;
            while (b > tag && b[-1] != ':')
                --b;
            snprintf(who, sizeof who, "process %.*s on %.*s%s", (int)(a - b), b, (int)(b > tag ? b - tag - 1 : 0), tag,
                     alive == 2 ? " (another host: whether it still runs cannot be told from here)" : "");
        }
    }
    sqlite3_finalize(st);
    if (*who)
        return fattn_error(FATTN_EFAIL,
                           "--resume %lld: study %lld is being searched by %s; wait for it to end or stop it, then "
                           "resume",
                           id, id, who);
    return FATTN_OK;
}

int fattn_store_study_unfinished(fattn_store *s, const fattn_study_rec *r, long long *id)
{
    sqlite3_stmt *st;
    *id = 0;
    if (fattn_store_prepare(s,
                            "SELECT id, status, runner FROM studies WHERE command = ?1 AND argv = ?2 AND "
                            "space_hash = ?3 AND kernel_hash = ?4 AND limits_json IS ?5 AND arch = ?6 AND "
                            "nvrtc_version IS ?7 AND status IN ('interrupted', 'running') ORDER BY id DESC",
                            &st))
        return FATTN_EFAIL;
    fattn_store_bind_text(st, 1, r->command);
    fattn_store_bind_text(st, 2, r->argv);
    fattn_store_bind_text(st, 3, r->space_hash);
    fattn_store_bind_text(st, 4, r->kernel_hash);
    fattn_store_bind_text(st, 5, r->limits_json);
    fattn_store_bind_text(st, 6, r->arch);
    fattn_store_bind_text(st, 7, r->nvrtc_version);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *status = (const char *)sqlite3_column_text(st, 1),
                   *runner = (const char *)sqlite3_column_text(st, 2);
        if (!strcmp(status, "interrupted") || !runner || !fattn_process_tag_alive(runner)) {
            *id = sqlite3_column_int64(st, 0);
            break;
        }
    }
    sqlite3_finalize(st);
    if (step != SQLITE_ROW && step != SQLITE_DONE)
        return fattn_store_fail(s, "cannot read the studies");
    return FATTN_OK;
}

int fattn_store_each_trial(fattn_store *s, long long id,
                           void (*fn)(void *arg, const char *key, const char *status, const char *reason,
                                      int has_registers),
                           void *arg, long long *next_seq)
{
    sqlite3_stmt *st;
    if (fattn_store_prepare(s,
                            "SELECT config_key, status, reason, registers IS NOT NULL, seq FROM trials "
                            "WHERE study_id = ?1 ORDER BY seq",
                            &st))
        return FATTN_EFAIL;
    sqlite3_bind_int64(st, 1, id);
    int step;
    *next_seq = 0;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        fn(arg, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
           (const char *)sqlite3_column_text(st, 2), sqlite3_column_int(st, 3));
        *next_seq = sqlite3_column_int64(st, 4) + 1;
    }
    sqlite3_finalize(st);
    if (step != SQLITE_DONE)
        return fattn_store_fail(s, "cannot read the study's trials");
    return FATTN_OK;
}

int fattn_store_study_reopen(fattn_store *s, long long id, const char *args_json)
{
    sqlite3_stmt *st;
    char runner[320];
    if (fattn_store_begin(s))
        return FATTN_EFAIL;
    if (fattn_store_study_free(s, id)) {
        fattn_store_rollback(s);
        return FATTN_EFAIL;
    }
    if (fattn_store_prepare(
            s,
            "UPDATE studies SET status = 'running', finished_at = NULL, runs = runs + 1, args_json = ?1, "
            "runner = ?3 WHERE id = ?2",
            &st)) {
        fattn_store_rollback(s);
        return FATTN_EFAIL;
    }
    fattn_store_bind_text(st, 1, args_json);
    sqlite3_bind_int64(st, 2, id);
    fattn_store_bind_text(st, 3, fattn_process_tag(0, runner, sizeof runner) ? NULL : runner);
    if (fattn_store_step_done(s, st, "cannot reopen the study")) {
        fattn_store_rollback(s);
        return FATTN_EFAIL;
    }
    return fattn_store_commit(s);
}

int fattn_store_set_ended(fattn_store *s, const char *sql, long long id, const char *status, const char *what)
{
    sqlite3_stmt *st;
    char now[32];
    if (fattn_store_prepare(s, sql, &st))
        return FATTN_EFAIL;
    fattn_utc_now_ms(now);
    fattn_store_bind_text(st, 1, status);
    fattn_store_bind_text(st, 2, now);
    sqlite3_bind_int64(st, 3, id);
    return fattn_store_step_done(s, st, what);
}

int fattn_store_study_end(fattn_store *s, long long id, const char *status)
{
    return fattn_store_set_ended(s, "UPDATE studies SET status = ?1, finished_at = ?2, runner = NULL WHERE id = ?3", id,
                                 status, "cannot update the study");
}

int fattn_store_trial_add(fattn_store *s, const fattn_trial_rec *r, long long *id)
{
    static const char sql[] =
        "INSERT INTO trials (study_id, seq, config_key, status, reason, detail, created_at, cache_key, "
        "cache_hit, compile_ms, registers, spill_stores, spill_loads, stack_frame, smem_static, smem_dynamic, "
        "smem_model, occupancy, blocks_per_sm, occupancy_limiter, median_us, p10_us, p90_us, tflops, gbps, "
        "max_abs_err, norm_err, n_bad, numerics_seed, run_ms, validation_ms, benchmark_ms, "
        "strategy_ms, rel_l2, numerics_inputs, params_json, family, gpu_uuid, " FATTN_TRIAL_PARAM_COLUMNS ") "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, "
        "?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?44, ?45, ?46, ?47, ?48, ?49, ?50, ?51, ?31, ?32, ?33, ?34, "
        "?35, ?36, ?37, ?38, ?39, ?40, ?41, ?42, ?43)";
    sqlite3_stmt *st;
    char key[FATTN_KEY_MAX], now[32];
    if (fattn_store_prepare(s, sql, &st))
        return FATTN_EFAIL;
    fattn_config_key(r->cfg, key);
    fattn_utc_now_ms(now);
    sqlite3_bind_int64(st, 1, r->study_id);
    sqlite3_bind_int64(st, 2, r->seq);
    fattn_store_bind_text(st, 3, key);
    if (r->cfg->fam == &fattn_family_mma) /* the columns are the mma family's; NULL for another's */
        for (int i = 0; i < FATTN_MMA_NPARAMS; ++i)
            sqlite3_bind_int(st, 31 + i, r->cfg->v[i]); /* FATTN_TRIAL_PARAM_COLUMNS */
    char params[FATTN_PARAMS_JSON_MAX];
    fattn_config_json(r->cfg, params, sizeof params);
    fattn_store_bind_text(st, 49, params);
    fattn_store_bind_text(st, 50, r->cfg->fam->name);
    fattn_store_bind_text(st, 51, r->gpu_uuid);
    fattn_store_bind_text(st, 4, r->status);
    fattn_store_bind_text(st, 5, r->reason);
    fattn_store_bind_text(st, 6, r->detail);
    fattn_store_bind_text(st, 7, now);
    fattn_store_bind_text(st, 8, r->cache_key);
    if (r->cache_key)
        sqlite3_bind_int(st, 9, r->cache_hit);
    if (r->compile_ms >= 0)
        sqlite3_bind_double(st, 10, r->compile_ms);
    if (r->res) {
        sqlite3_bind_int(st, 11, (int)r->res->regs);
        sqlite3_bind_int(st, 12, (int)r->res->spill_stores);
        sqlite3_bind_int(st, 13, (int)r->res->spill_loads);
        sqlite3_bind_int(st, 14, (int)r->res->stack_frame);
        sqlite3_bind_int(st, 15, (int)r->res->smem_static);
        sqlite3_bind_int(st, 16, (int)r->res->smem_dynamic);
    }
    if (r->smem_model)
        sqlite3_bind_int(st, 17, (int)r->smem_model);
    if (r->has_occupancy) {
        sqlite3_bind_double(st, 18, r->occupancy);
        sqlite3_bind_int(st, 19, r->blocks_per_sm);
        fattn_store_bind_text(st, 20, r->occupancy_limiter);
    }
    const fattn_eval_result *e = r->eval;
    if (e && e->has_timing) {
        sqlite3_bind_double(st, 21, e->timing.median_us);
        sqlite3_bind_double(st, 22, e->timing.p10_us);
        sqlite3_bind_double(st, 23, e->timing.p90_us);
        sqlite3_bind_double(st, 24, e->timing.tflops);
        sqlite3_bind_double(st, 25, e->timing.gbps);
    }
    if (e && e->has_numerics) {
        sqlite3_bind_double(st, 26, e->num.max_abs_err);
        sqlite3_bind_double(st, 27, e->num.norm_err);
        sqlite3_bind_int64(st, 28, (sqlite3_int64)e->num.n_bad);
        if (!e->num.n_nonfinite) /* the norm leaves NaN/Inf out: no figure then */
            sqlite3_bind_double(st, 47, e->num.rel_l2);
        fattn_store_bind_text(st, 48, fattn_input_set_name(e->num.set));
    }
    if (e) {
        sqlite3_bind_int64(st, 29, (sqlite3_int64)r->numerics_seed);
        sqlite3_bind_double(st, 30, e->wall_ms);
    }
    if (e && e->has_phase_ms) {
        sqlite3_bind_double(st, 44, e->validation_ms);
        sqlite3_bind_double(st, 45, e->benchmark_ms);
    }
    if (r->has_strategy_ms)
        sqlite3_bind_double(st, 46, r->strategy_ms);
    if (fattn_store_step_done(s, st, "cannot record the trial"))
        return FATTN_EFAIL;
    long long trial = sqlite3_last_insert_rowid(s->db);
    if (id)
        *id = trial;
    if (e && e->nsamples)
        return fattn_store_insert_samples(s, "INSERT INTO samples (trial_id, idx, us) VALUES (?1, ?2, ?3)", trial,
                                          e->samples, e->nsamples, "cannot record the timing samples");
    return FATTN_OK;
}

static char *column_dup(sqlite3_stmt *st, int i)
{
    return fattn_xstrdup(fattn_store_text(st, i));
}

int fattn_store_cache_get(fattn_store *s, const char *key, fattn_cache_entry *e)
{
    static const char sql[] =
        "SELECT kernel_hash, arch, options, nvrtc_version, ok, log, cubin, compile_ms, registers, spill_stores, "
        "spill_loads, stack_frame, smem_static, smem_dynamic, threads, family FROM compile_cache WHERE key = ?1";
    sqlite3_stmt *st;
    if (fattn_store_prepare(s, sql, &st))
        return FATTN_EFAIL;
    fattn_store_bind_text(st, 1, key);
    int r = sqlite3_step(st);
    if (r == SQLITE_DONE) {
        sqlite3_finalize(st);
        return 0;
    }
    if (r != SQLITE_ROW) {
        sqlite3_finalize(st);
        return fattn_store_fail(s, "cannot read the compile cache");
    }
    memset(e, 0, sizeof *e);
    snprintf(e->key, sizeof e->key, "%s", key);
    e->kernel_hash = column_dup(st, 0);
    e->arch = column_dup(st, 1);
    e->options = column_dup(st, 2);
    e->nvrtc_version = column_dup(st, 3);
    e->ok = sqlite3_column_int(st, 4);
    e->log = column_dup(st, 5);
    e->cubin_size = (size_t)sqlite3_column_bytes(st, 6);
    if (e->cubin_size) {
        e->cubin = fattn_xmalloc(e->cubin_size);
        memcpy(e->cubin, sqlite3_column_blob(st, 6), e->cubin_size);
    }
    e->compile_ms = sqlite3_column_double(st, 7);
    e->res.ok = e->ok;
    e->res.log = e->log;
    e->res.regs = (unsigned)sqlite3_column_int(st, 8);
    e->res.spill_stores = (unsigned)sqlite3_column_int(st, 9);
    e->res.spill_loads = (unsigned)sqlite3_column_int(st, 10);
    e->res.stack_frame = (unsigned)sqlite3_column_int(st, 11);
    e->res.smem_static = (unsigned)sqlite3_column_int(st, 12);
    e->res.smem_dynamic = (unsigned)sqlite3_column_int(st, 13);
    e->res.threads = (unsigned)sqlite3_column_int(st, 14);
    e->family = column_dup(st, 15);
    sqlite3_finalize(st);
    return 1;
}

int fattn_store_cache_put(fattn_store *s, const fattn_cache_entry *e)
{
    static const char sql[] =
        "INSERT OR REPLACE INTO compile_cache (key, kernel_hash, arch, options, nvrtc_version, created_at, ok, log, "
        "cubin, compile_ms, registers, spill_stores, spill_loads, stack_frame, smem_static, smem_dynamic, threads, "
        "family) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)";
    sqlite3_stmt *st;
    char now[32];
    if (fattn_store_prepare(s, sql, &st))
        return FATTN_EFAIL;
    fattn_utc_now(now);
    fattn_store_bind_text(st, 1, e->key);
    fattn_store_bind_text(st, 2, e->kernel_hash);
    fattn_store_bind_text(st, 3, e->arch);
    fattn_store_bind_text(st, 4, e->options);
    fattn_store_bind_text(st, 5, e->nvrtc_version);
    fattn_store_bind_text(st, 6, now);
    sqlite3_bind_int(st, 7, e->ok);
    fattn_store_bind_text(st, 8, e->log);
    if (e->cubin)
        sqlite3_bind_blob(st, 9, e->cubin, (int)e->cubin_size, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 9);
    sqlite3_bind_double(st, 10, e->compile_ms);
    fattn_store_bind_text(st, 18, e->family ? e->family : fattn_families[0]->name);
    if (e->ok) {
        sqlite3_bind_int(st, 11, (int)e->res.regs);
        sqlite3_bind_int(st, 12, (int)e->res.spill_stores);
        sqlite3_bind_int(st, 13, (int)e->res.spill_loads);
        sqlite3_bind_int(st, 14, (int)e->res.stack_frame);
        sqlite3_bind_int(st, 15, (int)e->res.smem_static);
        sqlite3_bind_int(st, 16, (int)e->res.smem_dynamic);
        sqlite3_bind_int(st, 17, (int)e->res.threads);
    }
    return fattn_store_step_done(s, st, "cannot store a compile-cache entry");
}

static int cache_get(void *arg, const char *key, fattn_cache_entry *e)
{
    return fattn_store_cache_get(arg, key, e);
}

static int cache_put(void *arg, const fattn_cache_entry *e)
{
    return fattn_store_cache_put(arg, e);
}

fattn_compile_cache fattn_store_compile_cache(fattn_store *s)
{
    return (fattn_compile_cache){.arg = s, .get = cache_get, .put = cache_put};
}
