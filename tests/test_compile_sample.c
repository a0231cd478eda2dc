/*
 * test_compile_sample.c - a fixed, seeded sample of 80 gate survivors of the
 * default space (shape 2,8,512,64) per arch, sm_89 and sm_90, compiled by
 * `fattn-tune compile` into a fresh database; then, from the database:
 *  - every sampled survivor compiled (no compile_error, no error),
 *  - registers, spills, stack frame and shared memory are stored for each,
 *  - the shared memory the cubin exports equals the layout model for each;
 * and a second identical run hits the compile cache for every configuration
 * and compiles nothing. (lab/compile-all/compile-all.sh does the same for every
 * survivor; too long for CI.) The sanitizer build samples fewer (32: NVRTC,
 * whose allocations ASan intercepts, is most of the time there, and what
 * the sanitizers watch, our code per compiled item, is the same for each).
 *
 * usage: test_compile_sample PATH-TO-fattn-tune [SAMPLE]
 */
#include "t.h"

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

static int SAMPLE = 80; /* 120 until issue 50, whose tests its 40 fewer compiles pay for */
static char dir[64];
static const char *tool;

static int run(const char *arch, const char *db, char *out, size_t n)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s compile --arch %s --shape 2,8,512,64 --family mma --sample %d --seed 1 --db %s 2>&1",
             tool, arch, SAMPLE, db);
    FILE *p = popen(cmd, "r");
    if (!p)
        exit(T_HARNESS);
    size_t len = fread(out, 1, n - 1, p);
    out[len] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static long long one(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    long long v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
        exit(T_HARNESS);
    }
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void sample(const char *arch)
{
    char db_path[128], out[8192], sql[512];
    snprintf(db_path, sizeof db_path, "%s/%s.db", dir, arch);
    t_case = arch;
    int rc = run(arch, db_path, out, sizeof out);
    if (rc != 0)
        fprintf(stderr, "%s", out);
    CHECK_INT(rc, 0);
    char want[160];
    snprintf(want, sizeof want, "a sample of %d compiled", SAMPLE);
    CHECK_CONTAINS(out, want);
    snprintf(want, sizeof want, "compiled %d (%d by NVRTC, 0 from the cache)", SAMPLE, SAMPLE);
    CHECK_CONTAINS(out, want);
    snprintf(want, sizeof want, "layout check: compiled shared memory equals the layout model for %d of %d", SAMPLE,
             SAMPLE);
    CHECK_CONTAINS(out, want);

    sqlite3 *db;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        exit(T_HARNESS);
    CHECK_INT(one(db, "SELECT count(*) FROM trials WHERE study_id = 1 AND cache_key IS NOT NULL"), SAMPLE);
    CHECK_INT(one(db, "SELECT count(*) FROM trials WHERE study_id = 1 AND (reason = 'compile_error' OR status = "
                      "'error')"),
              0);
    CHECK_INT(one(db, "SELECT count(*) FROM trials WHERE study_id = 1 AND cache_key IS NOT NULL AND registers BETWEEN "
                      "1 AND 255 AND spill_stores IS NOT NULL AND spill_loads IS NOT NULL AND stack_frame IS NOT "
                      "NULL AND smem_dynamic > 0 AND occupancy > 0"),
              SAMPLE);
    CHECK_INT(one(db, "SELECT count(*) FROM trials WHERE study_id = 1 AND cache_key IS NOT NULL AND smem_dynamic = "
                      "smem_model AND smem_static = 0"),
              SAMPLE);
    /* The static rejections are trials too, as many as the summary says. */
    int rejected = -1, survive = -1;
    const char *line = strstr(out, "3888 configurations: ");
    CHECK(line
          && sscanf(line, "3888 configurations: %d rejected by the static gates, %d survive", &rejected, &survive)
                 == 2);
    CHECK_INT(rejected + survive, 3888);
    CHECK_INT(one(db, "SELECT count(*) FROM trials WHERE study_id = 1 AND cache_key IS NULL AND status = 'rejected'"),
              rejected);
    CHECK_INT(one(db, "SELECT count(*) FROM compile_cache WHERE ok = 1 AND cubin IS NOT NULL"), SAMPLE);
    /* The kernel compiles clean: no NVRTC or ptxas warning in any log. */
    CHECK_INT(one(db, "SELECT count(*) FROM compile_cache WHERE log LIKE '%warning%'"), 0);
    /* The sample covers every value of every parameter. */
    static const char *const cols[] = {"block_m", "block_n",  "block_k", "num_warps", "stages",
                                       "unroll",  "cp_async", "swizzle", "half2"};
    static const int values[] = {3, 3, 3, 3, 3, 2, 2, 2, 2};
    for (int i = 0; i < 9; ++i) {
        snprintf(sql, sizeof sql, "SELECT count(DISTINCT %s) FROM trials WHERE study_id = 1 AND cache_key IS NOT NULL",
                 cols[i]);
        /* (BLOCK_M, NUM_WARPS) survivors keep all three values of each. */
        CHECK_INT(one(db, sql), values[i]);
    }
    sqlite3_close(db);

    /* A second identical run compiles nothing. */
    rc = run(arch, db_path, out, sizeof out);
    CHECK_INT(rc, 0);
    snprintf(want, sizeof want, "compiled %d (0 by NVRTC, %d from the cache)", SAMPLE, SAMPLE);
    CHECK_CONTAINS(out, want);
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        exit(T_HARNESS);
    CHECK_INT(one(db, "SELECT count(*) FROM trials WHERE study_id = 2 AND cache_key IS NOT NULL AND cache_hit = 1 "
                      "AND compile_ms = 0"),
              SAMPLE);
    CHECK_INT(one(db, "SELECT count(*) FROM trials WHERE study_id = 2 AND cache_key IS NOT NULL"), SAMPLE);
    /* Same resources the second time. */
    CHECK_INT(one(db, "SELECT count(*) FROM trials a JOIN trials b ON a.config_key = b.config_key WHERE a.study_id = "
                      "1 AND b.study_id = 2 AND a.cache_key = b.cache_key AND a.registers = b.registers AND "
                      "a.smem_dynamic = b.smem_dynamic AND coalesce(a.reason, '') = coalesce(b.reason, '')"),
              SAMPLE);
    CHECK_INT(one(db, "SELECT count(*) FROM compile_cache"), SAMPLE);
    sqlite3_close(db);
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3)
        return T_HARNESS;
    tool = argv[1];
    if (argc > 2 && (SAMPLE = atoi(argv[2])) < 1)
        return T_HARNESS;
    snprintf(dir, sizeof dir, "/tmp/fattn-sample-XXXXXX");
    if (!mkdtemp(dir))
        return T_HARNESS;
    T_RUN_ARG(sample, "sm_89");
    T_RUN_ARG(sample, "sm_90");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return t_exit();
}
