/*
 * test_procedures.c - the library's procedures in-process, without the CLI,
 * on the fake engine ($FATTN_WORKER_HOOK=fake; this program is its own
 * worker, `__worker FD`).
 *
 * confirm (confirm/run.h): a study built here with three
 * timed trials is confirmed with its two fastest against the default
 * baseline (cuDNN, non-causal): the candidates in order, every sample and
 * statistic stored in one confirmation each, the report filled as the CLI
 * prints it; then --against previous finds them; a study that measured
 * another kernel source is refused naming both, nothing stored; a trial of
 * another shape as the baseline is a usage error; a study's stored limits
 * are taken up and said in a note.
 *
 * bench (bench/bench.h): a configuration beside cuDNN on the shape given,
 * in canonical key; a stored trial on its study's shape with its notes; a
 * configuration the gates reject, and cuDNN on a causal shape, refused.
 *
 * search and compile run over tests/data/space-procedures.json, 24
 * configurations of which the tiling gate rejects 12: gating the default
 * space and compiling ahead in it took most of this program's time.
 *
 * the search loop over two families (tune/tune.h): the mma family's 12
 * survivors and four wgmma configurations, each family replayed from its own
 * landscape: every candidate tried once in one study, the best the wgmma
 * one; both families' turns from the first trials on; resumed, nothing
 * proposed again; strategies that wait for each outcome on a cold cache:
 * compiled ahead on either family's hints, each candidate compiled once.
 *
 * search (tune/search.h): a replay of the H100's 2,8,512,64 landscape for 4
 * trials: the study begun with its arch and shape from the landscape, the
 * static rejections and every trial tried stored, the best one of them; a signal as
 * the study begins: the study ends "interrupted" with no trial run.
 *
 * The outcome table of search's and compile's summaries (report/outcomes.h):
 * reasons in order, the static counts up to the cut each gives, the error
 * row.
 *
 * compile (study/compile.h): a sample of 3 survivors compiled, each a trial
 * beside the static rejections, shared memory as modelled; the same again
 * from the compile cache in a new study; a signal as the study begins: the
 * study interrupted, then taken up by the same command line and finished.
 *
 * settings (job.h): a target's and a measurement's options set by name.
 *
 * check (study/check.h): the plans (covering: the sampler's cases; the
 * survivors' sample; given configurations, a gate's rejection told and not
 * applied), and a run of a tmacopy configuration at a tail shape in the
 * simulator: its verdict stored in a sim run, reported, passed; two
 * families in one run refused.
 *
 *   test_procedures SOURCE_ROOT
 */
#include "t.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "compile/batch.h"
#include "compile/nvrtc.h"
#include "confirm/run.h"
#include "report/outcomes.h"
#include "report/report.h"
#include "study/check.h"
#include "study/compile.h"
#include "tune/search.h"
#include "run/engine.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/paths.h"

static char db_path[64];

/* A study of `shape` with three timed trials (their medians typed in) and
 * one rejected; returns its id. */
static long long study(fattn_store *s, const fattn_shape *shape, const char *kernel_hash, const char *limits)
{
    static const struct {
        const char *key;
        double median;
    } rows[] = {
        {"bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", 7.4},
        {"bm128-bn64-bk32-w8-s2-u1-cp1-sw1-h1", 6.1},
        {"bm64-bn128-bk64-w4-s2-u1-cp1-sw1-h1", 8.9},
        {"bm32-bn32-bk16-w4-s1-u1-cp0-sw0-h0", 0},
    };
    long long id = 0;
    fattn_study_rec sr = {.command = "search",
                          .strategy = "exhaustive",
                          .shape = *shape,
                          .arch = "sm_90",
                          .nvrtc_version = "13.0",
                          .space_path = "search/space.json",
                          .space_hash = "test",
                          .kernel_hash = kernel_hash,
                          .limits_json = limits,
                          .argv = "test_confirm_run"};
    CHECK_INT(fattn_store_study_begin(s, &sr, &id), FATTN_OK);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        fattn_config c;
        long long tid;
        char sql[256];
        CHECK_INT(fattn_config_parse(rows[i].key, "test", &c), FATTN_OK);
        fattn_trial_rec tr = {.study_id = id,
                              .seq = (long long)i,
                              .cfg = &c,
                              .status = rows[i].median > 0 ? "ok" : "rejected",
                              .reason = rows[i].median > 0 ? NULL : "tiling",
                              .detail = "test",
                              .compile_ms = -1};
        CHECK_INT(fattn_store_trial_add(s, &tr, &tid), FATTN_OK);
        snprintf(sql, sizeof sql, "UPDATE trials SET median_us = %g WHERE id = %lld AND %g > 0", rows[i].median, tid,
                 rows[i].median);
        CHECK_INT(fattn_store_exec(s, sql), FATTN_OK);
    }
    CHECK_INT(fattn_store_study_end(s, id, "done"), FATTN_OK);
    return id;
}

static long long count(fattn_store *s, const char *sql)
{
    sqlite3_stmt *st;
    long long n = -1;
    if (sqlite3_prepare_v2(fattn_store_db(s), sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* confirm of `id` with the options a plain `confirm --top 2 --n 20` has. */
static int run(fattn_store *s, long long id, int against, const char *baseline, FILE *log, fattn_confirm_report *r)
{
    fattn_confirm_opts o = {.study = id, .n = 20, .top = 2, .resamples = 10000, .threshold = 3.0, .target = 1.1};
    fattn_target t;
    fattn_gpu gpu;
    fattn_measure_init(&o.measure);
    o.against = against;
    o.baseline_arg = baseline;
    int rc = fattn_confirm_baseline_parse(baseline, &o.baseline);
    fattn_target_init(&t);
    if (!rc)
        rc = fattn_gpu_arch(&t, &gpu, "confirm", NULL);
    if (!rc)
        rc = fattn_confirm_run(&o, &t, &gpu, s, log, r);
    fattn_target_release(&t);
    return rc;
}

static void confirm_study(void)
{
    fattn_store *s;
    fattn_kernel_src src;
    fattn_confirm_report *r = calloc(1, sizeof *r);
    CHECK_INT(fattn_kernel_src_load(fattn_default_kernel_dir(), "fattn_fwd.cu", &src), FATTN_OK);
    CHECK_INT(fattn_store_open(db_path, FATTN_DB_WRITE, &s), FATTN_OK);
    fattn_shape shape = {2, 8, 512, 64, 0};
    long long id = study(s, &shape, src.hash, "{\"smem_limit\": 232448}");

    char *logbuf = NULL;
    size_t loglen = 0;
    FILE *log = open_memstream(&logbuf, &loglen);
    CHECK_INT(run(s, id, 0, NULL, log, r), FATTN_OK);
    fclose(log);
    CHECK_INT(r->k, 2);
    CHECK_STR(r->cands[0].key, "bm128-bn64-bk32-w8-s2-u1-cp1-sw1-h1"); /* the fastest first */
    CHECK_STR(r->cands[1].key, "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1");
    CHECK(r->baseline.is_cudnn);
    CHECK_STR(r->baseline.given, "cudnn");
    CHECK_CONTAINS(r->baseline.why, "default for non-causal");
    CHECK(r->base_ok);
    CHECK_STR(r->arch, "sm_90");
    CHECK(!r->failed && !r->regressions);
    for (int i = 0; i < 2; ++i) {
        CHECK(r->oc[i].compared && r->oc[i].id > 0 && r->oc[i].verdict);
        CHECK_INT((long long)r->oc[i].cmp.n_cand, 20);
        char sql[160];
        snprintf(sql, sizeof sql,
                 "SELECT count(*) FROM confirmations WHERE id = %lld AND abs(median_us - %.17g) < 1e-9", r->oc[i].id,
                 r->oc[i].cmp.cand_median);
        CHECK_INT(count(s, sql), 1); /* the record holds what the report says */
    }
    CHECK_INT(count(s, "SELECT count(*) FROM confirmations"), 2);
    CHECK_INT(count(s, "SELECT count(*) FROM confirmation_samples"), 2 * 2 * 20);
    CHECK_INT(count(s, "SELECT count(*) FROM confirmations WHERE as_searched = 1 AND baseline = 'cudnn'"), 2);
    /* The study's stored limit (--smem-limit max on sm_90) said, then the progress line. */
    CHECK_CONTAINS(logbuf, "fattn-tune: note: confirm re-gates on sm_90 under the gate limits study");
    CHECK_CONTAINS(logbuf, "shared memory <= 232448 B");
    CHECK_CONTAINS(logbuf, "confirm: 2 candidates and the baseline, 20 rounds interleaved on ");
    CHECK(strstr(logbuf, "note:") < strstr(logbuf, "confirm: 2 candidates")); /* the notes first */
    free(logbuf);

    /* Again, against the previous confirmations. */
    CHECK_INT(run(s, id, 1, NULL, NULL, r), FATTN_OK);
    for (int i = 0; i < 2; ++i)
        CHECK(r->oc[i].has_prev && r->oc[i].prev.id == i + 1);
    CHECK_INT(count(s, "SELECT count(*) FROM confirmations WHERE previous_id IS NOT NULL"), 2);

    /* A trial of another shape as the baseline: refused before measuring. */
    fattn_shape other = {1, 4, 256, 64, 0};
    long long id2 = study(s, &other, src.hash, "{}");
    char arg[64];
    char sql2[96];
    snprintf(sql2, sizeof sql2, "SELECT min(id) FROM trials WHERE study_id = %lld", id2);
    snprintf(arg, sizeof arg, "trial:%lld", count(s, sql2));
    fattn_error_set_quiet(1);
    CHECK_INT(run(s, id, 0, arg, NULL, r), FATTN_EUSAGE);
    CHECK_CONTAINS(fattn_last_error(), "the trial is for B=1 H=4 S=256 D=64");

    /* A study that measured another kernel source: refused, nothing stored. */
    long long id3 = study(s, &shape, "0123456789abcdef", "{}");
    CHECK_INT(run(s, id3, 0, NULL, NULL, r), FATTN_EFAIL);
    CHECK_CONTAINS(fattn_last_error(), "changed since study");
    CHECK_CONTAINS(fattn_last_error(), "--allow-kernel-change");
    fattn_error_set_quiet(0);
    CHECK_INT(count(s, "SELECT count(*) FROM confirmations"), 4);

    fattn_store_close(&s);
    fattn_kernel_src_release(&src);
    free(r);
}

static int bench(fattn_store *s, const char *config, long long trial, const char *shape, int causal, FILE *log,
                 fattn_bench_report *r)
{
    fattn_bench_opts o = {.config = config, .trial = trial, .baseline_cudnn = 1};
    fattn_target t;
    fattn_measure_init(&o.measure);
    fattn_target_init(&t);
    t.shape_text = shape;
    t.arch_name = trial ? NULL : "sm_90"; /* bench --arch sm_90; a trial takes its study's */
    t.causal = causal;
    int rc = fattn_bench_run(&o, &t, s, log, r);
    fattn_target_release(&t);
    return rc;
}

static void bench_config(void)
{
    fattn_bench_report r;
    CHECK_INT(bench(NULL, "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,NUM_WARPS=4", 0, "1,4,256,64", 0, NULL, &r), FATTN_OK);
    CHECK_STR(r.key, "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1");
    CHECK_INT(r.shape.seqlen, 256);
    CHECK_STR(r.arch, "sm_90");
    CHECK_INT(r.res.status, FATTN_EVAL_OK);
    CHECK(r.res.has_timing && r.res.timing.median_us > 0 && r.res.has_numerics);
    CHECK_INT(r.base.status, FATTN_EVAL_OK);
    CHECK(r.base.has_timing && r.base.baseline[0]);
    fattn_bench_report_release(&r);

    fattn_error_set_quiet(1);
    CHECK_INT(bench(NULL, "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", 0, "1,4,256,64", 1, NULL, &r), FATTN_EUSAGE);
    CHECK_CONTAINS(fattn_last_error(), "takes no causal mask");
    fattn_bench_report_release(&r);
    CHECK_INT(bench(NULL, "bm128-bn128-bk128-w4-s4-u1-cp1-sw1-h1", 0, "1,4,256,128", 0, NULL, &r), FATTN_EFAIL);
    CHECK_CONTAINS(fattn_last_error(), "bm128-bn128-bk128-w4-s4-u1-cp1-sw1-h1 is rejected by the smem_overflow gate");
    fattn_bench_report_release(&r);
    fattn_error_set_quiet(0);
}

static void bench_trial(void)
{
    fattn_store *s;
    fattn_bench_report r;
    char *logbuf = NULL;
    size_t loglen = 0;
    CHECK_INT(fattn_store_open(db_path, FATTN_DB_READ, &s), FATTN_OK);
    FILE *log = open_memstream(&logbuf, &loglen);
    CHECK_INT(bench(s, NULL, 2, NULL, 0, log, &r), FATTN_OK); /* trial 2 of study 1, 2,8,512,64 */
    fclose(log);
    CHECK_STR(r.key, "bm128-bn64-bk32-w8-s2-u1-cp1-sw1-h1");
    CHECK_INT(r.shape.batch, 2);
    CHECK_INT(r.shape.seqlen, 512);
    CHECK_INT(r.res.status, FATTN_EVAL_OK);
    CHECK_CONTAINS(logbuf, "bench --trial re-gates on sm_90 under the gate limits study 1");
    fattn_bench_report_release(&r);
    free(logbuf);
    fattn_store_close(&s);
}

static const char *source_root;
static volatile sig_atomic_t flag;
static char *summary; /* the last search's or compile's report, as the CLI prints it */
static size_t summary_len;

static FILE *summary_open(void)
{
    free(summary);
    summary = NULL;
    return open_memstream(&summary, &summary_len);
}

static void signal_at_start(int on)
{
    if (on)
        flag = 1; /* as if SIGINT came the moment the study began */
}

static int search(fattn_store **s, long trials, void (*guard)(int), fattn_search_report *r)
{
    char land[512], space[512];
    snprintf(land, sizeof land, "%s/tests/data/landscape-h100-2-8-512-64.csv", source_root);
    snprintf(space, sizeof space, "%s/tests/data/space-procedures.json", source_root);
    fattn_search_opts o = {.strategy = fattn_strategies[0],
                           .trials = trials,
                           .jobs = 2,
                           .started_ms = fattn_now_ms(),
                           .replay = {land},
                           .nreplay = 1,
                           .db_path = db_path,
                           .argv_text = "test_procedures",
                           .args_json = "[]",
                           .interrupted = &flag,
                           .guard = guard};
    fattn_target t;
    fattn_measure_init(&o.measure);
    fattn_target_init(&t);
    fattn_target_set(&t, "space", space);
    flag = 0;
    int rc = fattn_search_run(&o, &t, s, r);
    if (!rc) {
        FILE *f = summary_open();
        fattn_report_search(r, o.strategy->name, &t, trials, NULL, 0, 0, f);
        fclose(f);
    }
    fattn_target_release(&t);
    return rc;
}

static void search_replay(void)
{
    fattn_store *s = NULL;
    fattn_search_report r;
    char sql[256];
    CHECK_INT(search(&s, 4, NULL, &r), FATTN_OK);
    CHECK(r.study > 0);
    CHECK_INT(r.stop, FATTN_TUNE_TRIALS);
    CHECK_INT((long long)r.p.evaluated, 4);
    CHECK(r.p.ok > 0 && r.p.best_us > 0);
    CHECK_STR(r.land_arch, "sm_90");
    CHECK_STR(r.land_shape, "2,8,512,64");
    snprintf(sql, sizeof sql, "SELECT count(*) FROM trials WHERE study_id = %lld", r.study);
    CHECK_INT(count(s, sql), (long long)(r.sv[0].considered - r.sv[0].nsurvivors + r.p.tried)); /* static + tried */
    CHECK(r.p.tried >= 4);
    CHECK_INT((long long)r.sv[0].considered, 24); /* the space given, not the default */
    CHECK_INT((long long)r.sv[0].nsurvivors, 12);
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM studies WHERE id = %lld AND status = 'done' AND arch = 'sm_90' AND seqlen = 512",
             r.study);
    CHECK_INT(count(s, sql), 1);
    snprintf(sql, sizeof sql, "SELECT min(median_us) FROM trials WHERE study_id = %lld", r.study);
    sqlite3_stmt *st;
    CHECK_INT(sqlite3_prepare_v2(fattn_store_db(s), sql, -1, &st, NULL), SQLITE_OK);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    CHECK_NEAR(sqlite3_column_double(st, 0), r.p.best_us, 1e-9);
    sqlite3_finalize(st);
    /* The summary: the static rejections beside the trials' outcomes. */
    snprintf(sql, sizeof sql, "rejected  tiling     12\nok                    %zu\n", r.p.ok);
    CHECK_CONTAINS(summary, sql);
    CHECK_CONTAINS(summary, "24 configurations: 12 rejected by the static gates, 12 survive; 4 tried");
    CHECK(summary && !strstr(summary, "error "));
    CHECK_CONTAINS(summary, "stopped: --trials 4 reached");
    fattn_search_report_release(&r);

    CHECK_INT(search(&s, 4, signal_at_start, &r), FATTN_OK);
    CHECK_INT(r.stop, FATTN_TUNE_INTERRUPTED);
    CHECK_INT((long long)r.p.evaluated, 0);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM studies WHERE id = %lld AND status = 'interrupted'", r.study);
    CHECK_INT(count(s, sql), 1);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM trials WHERE study_id = %lld", r.study);
    CHECK_INT(count(s, sql), 0); /* not even the static rejections */
    fattn_search_report_release(&r);
    fattn_store_close(&s);
}

/* One family of the two-family loop below: its space, gates, kernel,
 * compile settings and landscape. */
typedef struct loop_family {
    fattn_space space;
    fattn_space_verdicts sv;
    fattn_gate_limits lim;
    fattn_kernel_src src;
    fattn_compile_ctx cc;
    fattn_evaluator *ev;
} loop_family;

static int loop_family_open(const char *space, const char *land, int optin, const fattn_shape *shape,
                            const fattn_arch *arch, const char *include, fattn_store *s, loop_family *f)
{
    memset(f, 0, sizeof *f);
    if (fattn_space_load(space, &f->space))
        return FATTN_EFAIL;
    fattn_gate_limits_default(&f->lim);
    if (optin)
        f->lim.smem_limit = (unsigned)arch->smem_per_block_optin;
    fattn_gates_space(&f->space, NULL, shape, arch, &f->lim, &f->sv);
    if (fattn_kernel_src_load(NULL, f->space.fam->kernel_file, &f->src))
        return FATTN_EFAIL;
    f->cc = (fattn_compile_ctx){.src = &f->src,
                                .cuda_include = include,
                                .arch = arch,
                                .shape = shape,
                                .lim = &f->lim,
                                .cache = fattn_store_compile_cache(s),
                                .jobs = 2};
    return fattn_evaluator_open_replay(land, shape, f->space.fam, &f->ev);
}

static void loop_family_close(loop_family *f)
{
    fattn_evaluator_close(&f->ev);
    fattn_kernel_src_release(&f->src);
    fattn_space_verdicts_release(&f->sv);
    fattn_space_release(&f->space);
}

/* A strategy that proposes its candidates in order, one at a time (it
 * waits for each outcome), and hints the next ones: the loop's wait and
 * compile-ahead paths, whichever family waits. */
typedef struct stub {
    fattn_strategy base;
    size_t n, next;
    int out;
} stub;

static size_t stub_hints_small; /* hints given by a stub over at most 4 candidates (the wgmma family here) */

static fattn_strategy *stub_create(const fattn_config *c, size_t n, uint64_t seed);

static long stub_next(fattn_strategy *s)
{
    stub *t = (stub *)s;
    if (t->out)
        return FATTN_STRATEGY_WAIT;
    if (t->next >= t->n)
        return -1;
    t->out = 1;
    return (long)t->next++;
}

static void stub_observe(fattn_strategy *s, size_t i, int ok, double median_us)
{
    (void)ok, (void)median_us;
    stub *t = (stub *)s;
    if (i + 1 == t->next)
        t->out = 0;
}

static void stub_destroy(fattn_strategy *s)
{
    free(s);
}

static size_t stub_hint(fattn_strategy *s, size_t *out, size_t k)
{
    stub *t = (stub *)s;
    size_t m = 0;
    for (size_t i = t->next; i < t->n && m < k; ++i)
        out[m++] = i;
    stub_hints_small += t->n <= 4 ? m : 0;
    return m;
}

static const fattn_strategy_ops stub_ops = {
    "stub", "in order, one at a time", stub_create, stub_next, stub_observe, stub_destroy, stub_hint,
};

static fattn_strategy *stub_create(const fattn_config *c, size_t n, uint64_t seed)
{
    (void)c, (void)seed;
    stub *t = fattn_xcalloc(1, sizeof *t);
    t->base.ops = &stub_ops;
    t->n = n;
    return &t->base;
}

/* A study begun for the two-family loop, its context over fams[2] with
 * `strategy` (seed 5) into *tc; *seq its trial counter. */
static long long loop_study(fattn_store *s, const char *space_mma, const loop_family *lf, const fattn_shape *shape,
                            const fattn_tune_family *fams, const fattn_strategy_ops *strategy, long long *seq,
                            fattn_tune_ctx *tc)
{
    fattn_study_rec sr = {.command = "search",
                          .strategy = strategy->name,
                          .seed = 5,
                          .has_seed = 1,
                          .shape = *shape,
                          .arch = "sm_90",
                          .nvrtc_version = fattn_nvrtc_version(),
                          .space_path = space_mma,
                          .space_hash = lf[0].space.hash,
                          .space_json = lf[0].space.json,
                          .kernel_hash = lf[0].src.hash,
                          .limits_json = "{}",
                          .argv = "test_procedures",
                          .evaluator = "replay",
                          .args_json = "[]"};
    long long id = 0;
    CHECK_INT(fattn_store_study_begin(s, &sr, &id), FATTN_OK);
    *seq = 0;
    *tc = (fattn_tune_ctx){.fams = fams,
                           .nfam = 2,
                           .store = s,
                           .study = id,
                           .seq = seq,
                           .strategy = strategy,
                           .seed = 5,
                           .t0_ms = fattn_now_ms(),
                           .ahead = 4};
    return id;
}

/* The search loop over two families (tune/tune.h): the mma family's 12
 * survivors of space-procedures.json replayed from the H100's landscape
 * beside four wgmma configurations replayed from a landscape written here
 * (faster than any mma one). Run out: every candidate of both tried once, in
 * one study, the best the wgmma one; under a trial limit both families get
 * their turns from the first trials on (the scheduler's seeds), and a
 * resumed loop told the first trials proposes none of them again. */
static void search_two_families(void)
{
    char space_mma[512], land_mma[512], dir[] = "/tmp/fattn-two-families.XXXXXX", path[256], land_wg[256];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(space_mma, sizeof space_mma, "%s/tests/data/space-procedures.json", source_root);
    snprintf(land_mma, sizeof land_mma, "%s/tests/data/landscape-h100-2-8-512-64.csv", source_root);
    snprintf(path, sizeof path, "%s/space.json", dir);
    snprintf(land_wg, sizeof land_wg, "%s/land.csv", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"family\": \"wgmma\", \"parameters\": {\"BLOCK_M\": [128], \"BLOCK_N\": [64, 128], \"STAGES\": [2, 3], "
          "\"PV_RS\": [1], \"OVERLAP\": [1], \"PINGPONG\": [1]}}\n",
          f);
    fclose(f);
    f = fopen(land_wg, "w");
    fputs("# fattn-tune landscape 1\n# device: made up by test_procedures\n# arch: sm_90\n# family: wgmma\n"
          "# shape: 2,8,512,64\n# causal: 0\nkey,status,reason,median_us,p10_us,p90_us\n"
          "wgmma-bm128-bn64-s2-rs1-ov1-pp1,ok,,6.0,5.9,6.1\nwgmma-bm128-bn64-s3-rs1-ov1-pp1,ok,,6.5,6.4,6.6\n"
          "wgmma-bm128-bn128-s2-rs1-ov1-pp1,ok,,5.0,4.9,5.1\nwgmma-bm128-bn128-s3-rs1-ov1-pp1,ok,,5.5,5.4,5.6\n",
          f);
    fclose(f);
    fattn_shape shape = {.batch = 2, .heads = 8, .seqlen = 512, .head_dim = 64};
    const fattn_arch *arch = fattn_arch_find("sm_90");
    fattn_store *s = NULL;
    char *include = NULL;
    loop_family lf[2];
    CHECK_INT(fattn_store_open(db_path, FATTN_DB_WRITE, &s), FATTN_OK);
    CHECK_INT(fattn_cuda_include(&include), FATTN_OK);
    CHECK_INT(loop_family_open(space_mma, land_mma, 0, &shape, arch, include, s, &lf[0]), FATTN_OK);
    CHECK_INT(loop_family_open(path, land_wg, 1, &shape, arch, include, s, &lf[1]), FATTN_OK);
    CHECK_INT((long long)lf[0].sv.nsurvivors, 12);
    CHECK_INT((long long)lf[1].sv.nsurvivors, 4);
    fattn_tune_family fams[2];
    for (int k = 0; k < 2; ++k)
        fams[k] = (fattn_tune_family){.space = &lf[k].space, .sv = &lf[k].sv, .cc = &lf[k].cc, .ev = lf[k].ev};
    /* Waiting strategies, the wgmma kernels not yet compiled: each family
     * waits for its outcome in turn, the loop compiles ahead on the waiting
     * family's hints (the wgmma family's among them), and every candidate
     * is compiled once, from its own family's kernel, and tried once. */
    {
        long long seq;
        fattn_tune_ctx tc;
        char sql[512];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM compile_cache WHERE kernel_hash = '%s'", lf[1].src.hash);
        CHECK_INT(count(s, sql), 0);
        const long long id = loop_study(s, space_mma, lf, &shape, fams, &stub_ops, &seq, &tc);
        fattn_tune_progress p;
        int stop;
        stub_hints_small = 0;
        CHECK_INT(fattn_tune_run(&tc, &p, &stop), FATTN_OK);
        CHECK_INT(stop, FATTN_TUNE_EXHAUSTED);
        CHECK_INT((long long)p.tried, 16);
        CHECK(stub_hints_small > 0);
        CHECK_INT(count(s, sql), 4); /* a hint sent to another family's compiler would add one */
        snprintf(sql, sizeof sql,
                 "SELECT count(*) FROM trials t JOIN compile_cache k ON k.key = t.cache_key WHERE t.study_id = %lld "
                 "AND k.kernel_hash = CASE WHEN t.config_key LIKE 'wgmma-%%' THEN '%s' ELSE '%s' END",
                 id, lf[1].src.hash, lf[0].src.hash);
        CHECK_INT(count(s, sql), 16);
        CHECK_STR(p.best_key, "wgmma-bm128-bn128-s2-rs1-ov1-pp1");
    }
    for (int limited = 0; limited < 2; ++limited) {
        long long seq;
        fattn_tune_ctx tc;
        const long long id = loop_study(s, space_mma, lf, &shape, fams, fattn_strategies[0], &seq, &tc);
        tc.max_trials = limited ? 2 : 0;
        fattn_tune_progress p;
        int stop;
        CHECK_INT(fattn_tune_run(&tc, &p, &stop), FATTN_OK);
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM trials WHERE study_id = %lld AND config_key LIKE 'wgmma-%%'",
                 id);
        const long long wg = count(s, sql);
        snprintf(sql, sizeof sql, "SELECT count(DISTINCT config_key) - count(*) FROM trials WHERE study_id = %lld", id);
        CHECK_INT(count(s, sql), 0); /* nothing twice */
        if (!limited) {
            CHECK_INT(stop, FATTN_TUNE_EXHAUSTED);
            CHECK_INT((long long)p.candidates, 16);
            CHECK_INT((long long)p.tried, 16);
            CHECK_INT(wg, 4);
            CHECK_STR(p.best_key, "wgmma-bm128-bn128-s2-rs1-ov1-pp1");
            CHECK_NEAR(p.best_us, 5.0, 1e-9);
            continue;
        }
        /* Two trials: the wgmma family's seeds are its first proposals, and
         * the time is shared while both seed: it has one of them at least. */
        CHECK_INT(stop, FATTN_TUNE_TRIALS);
        CHECK_INT((long long)p.evaluated, 2);
        CHECK(wg >= 1);
        /* Resumed with what the study holds: nothing proposed again; a
         * trial it had running (an mma candidate not tried) comes first. */
        fattn_resume res = {0};
        CHECK_INT(fattn_resume_load(s, id, &res), FATTN_OK);
        CHECK(res.nprior >= 2);
        char rerun[FATTN_KEY_MAX] = "", *reruns[1] = {rerun};
        for (size_t k = lf[0].sv.nsurvivors; k-- > 0 && !rerun[0];) {
            fattn_config cfg;
            fattn_space_config(&lf[0].space, lf[0].sv.survivors[k], &cfg);
            fattn_config_key(&cfg, rerun);
            if (fattn_resume_has(&res, rerun))
                rerun[0] = '\0';
        }
        CHECK(rerun[0] != '\0');
        const long long next = seq;
        tc.prior = res.prior, tc.nprior = res.nprior, tc.max_trials = 0;
        tc.rerun = (const char *const *)reruns, tc.nrerun = 1;
        CHECK_INT(fattn_tune_run(&tc, &p, &stop), FATTN_OK);
        char first[256];
        snprintf(first, sizeof first,
                 "SELECT count(*) FROM trials WHERE study_id = %lld AND seq = (SELECT min(seq) FROM trials WHERE "
                 "study_id = %lld AND seq >= %lld) AND config_key = '%s'",
                 id, id, next, rerun);
        CHECK_INT(count(s, first), 1);
        tc.rerun = NULL, tc.nrerun = 0;
        CHECK_INT(stop, FATTN_TUNE_EXHAUSTED);
        CHECK_INT((long long)p.tried, 16);
        CHECK_INT((long long)p.resumed, (long long)res.nprior);
        CHECK_INT(count(s, sql), 0);
        snprintf(sql, sizeof sql, "SELECT count(*) FROM trials WHERE study_id = %lld", id);
        CHECK_INT(count(s, sql), 16);
        CHECK_STR(p.best_key, "wgmma-bm128-bn128-s2-rs1-ov1-pp1");
        fattn_resume_release(&res);
    }
    for (int k = 0; k < 2; ++k)
        loop_family_close(&lf[k]);
    free(include);
    fattn_store_close(&s);
    unlink(path);
    unlink(land_wg);
    rmdir(dir);
}

/* The outcome table of both summaries: reasons in order, the static
 * counts only up to the cut given, the passed row, the error row. */
static void outcome_table(void)
{
    int statics[FATTN_R_COUNT] = {0}, trials[FATTN_R_COUNT] = {0};
    statics[FATTN_R_TILING] = 2;
    statics[FATTN_R_SIMULATOR] = 5;
    trials[FATTN_R_TILING] = 1;
    trials[FATTN_R_SPILLS] = 4;
    FILE *f = summary_open();
    fattn_report_outcomes(statics, FATTN_R_LAST_STATIC, trials, "compiled", 3, 1, f);
    fclose(f);
    CHECK_STR(summary, "status    reason  count\n"
                       "--------  ------  -----\n"
                       "rejected  tiling      3\n"
                       "rejected  spills      4\n"
                       "compiled              3\n"
                       "error                 1\n");
    f = summary_open();
    fattn_report_outcomes(statics, FATTN_R_COUNT - 1, trials, "ok", 3, 0, f);
    fclose(f);
    CHECK_CONTAINS(summary, "rejected  spills         4\nrejected  simulator      5\nok                       3\n");
    CHECK(summary && !strstr(summary, "error"));
}

static int compile(fattn_store **s, void (*guard)(int), fattn_compile_study_report *r)
{
    char space[512];
    snprintf(space, sizeof space, "%s/tests/data/space-procedures.json", source_root);
    fattn_compile_study_opts o = {.jobs = 2,
                                  .sample = 3,
                                  .seed = 5,
                                  .db_path = db_path,
                                  .argv_text = "test_procedures compile",
                                  .interrupted = &flag,
                                  .guard = guard};
    fattn_target t;
    fattn_target_init(&t);
    t.space_path = space;
    t.shape_text = "1,2,130,64";
    t.arch_name = "sm_90";
    flag = 0;
    int rc = fattn_target_finish(&t, FATTN_NEED_SHAPE | FATTN_NEED_ARCH | FATTN_NEED_SPACE, "compile");
    if (!rc)
        rc = fattn_compile_study(&o, &t, s, r);
    if (!rc) {
        FILE *f = summary_open();
        fattn_report_compile(r, &t, f);
        fclose(f);
    }
    fattn_target_release(&t);
    return rc;
}

static void compile_sample(void)
{
    fattn_store *s = NULL;
    fattn_compile_study_report r;
    char sql[256];
    CHECK_INT(compile(&s, NULL, &r), FATTN_OK);
    CHECK_INT(r.total, 3);
    CHECK_INT(r.done, 3);
    CHECK(!r.interrupted && !r.env_errors && !r.mismatches);
    CHECK_INT(r.bs.compiled + r.bs.cache_hits, 3);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM trials WHERE study_id = %lld", r.study);
    CHECK_INT(count(s, sql), (long long)(r.sv.considered - r.sv.nsurvivors) + 3);
    CHECK_INT((long long)r.sv.considered, 24);
    CHECK_INT((long long)r.sv.nsurvivors, 12);
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM trials WHERE study_id = %lld AND cache_key IS NOT NULL AND smem_dynamic = "
             "smem_model",
             r.study);
    CHECK_INT(count(s, sql), (long long)r.compiled_ok);
    /* The summary: the static rejections beside what compiled (the
     * compiled counted once, not again as a reason). */
    CHECK_CONTAINS(summary, "\nrejected  tiling     12\ncompiled              3\n\nlayout check:");
    snprintf(sql, sizeof sql, "12 survive, a sample of 3 compiled\ncompiled 3 (%d by NVRTC, %d from the cache)",
             r.bs.compiled, r.bs.cache_hits);
    CHECK_CONTAINS(summary, sql);
    long long first = r.study;
    fattn_compile_study_report_release(&r);
    fattn_store_close(&s);

    CHECK_INT(compile(&s, NULL, &r), FATTN_OK); /* a new study, every cubin from the cache */
    CHECK(r.study > first);
    CHECK_INT(r.bs.cache_hits, 3);
    CHECK_INT(r.bs.compiled, 0);
    fattn_compile_study_report_release(&r);
    fattn_store_close(&s);

    CHECK_INT(compile(&s, signal_at_start, &r), FATTN_OK);
    CHECK(r.interrupted);
    long long stopped = r.study;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM studies WHERE id = %lld AND status = 'interrupted'", stopped);
    CHECK_INT(count(s, sql), 1);
    fattn_compile_study_report_release(&r);
    fattn_store_close(&s);
    /* As if the stopped run had compiled one of the sample: taken up, it is
     * not compiled again. */
    CHECK_INT(fattn_store_open(db_path, FATTN_DB_WRITE, &s), FATTN_OK);
    fattn_config one;
    char key[FATTN_KEY_MAX];
    snprintf(sql, sizeof sql, "SELECT config_key FROM trials WHERE study_id = %lld AND status = 'compiled' LIMIT 1",
             first);
    sqlite3_stmt *st;
    CHECK_INT(sqlite3_prepare_v2(fattn_store_db(s), sql, -1, &st, NULL), SQLITE_OK);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    snprintf(key, sizeof key, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    CHECK_INT(fattn_config_parse(key, "test", &one), FATTN_OK);
    fattn_trial_rec tr = {
        .study_id = stopped, .seq = 0, .cfg = &one, .status = "compiled", .detail = "test", .compile_ms = 1};
    CHECK_INT(fattn_store_trial_add(s, &tr, NULL), FATTN_OK);
    fattn_store_close(&s);
    CHECK_INT(compile(&s, NULL, &r), FATTN_OK); /* the same command takes it up */
    CHECK_INT(r.study, stopped);
    CHECK(!r.interrupted && r.nprior == 1 && r.done0 == 1 && r.done == 3);
    CHECK_INT(r.bs.compiled + r.bs.cache_hits, 2);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM studies WHERE id = %lld AND status = 'done'", stopped);
    CHECK_INT(count(s, sql), 1);
    fattn_compile_study_report_release(&r);
    fattn_store_close(&s);
}

static void check_plans(void)
{
    char space[512], *logbuf = NULL;
    size_t loglen = 0;
    fattn_check_opts o = {.seed = 1, .jobs = 2, .timeout_s = 600, .db_path = db_path, .argv_text = "test_procedures"};
    fattn_check_plan p;
    fattn_target t;
    snprintf(space, sizeof space, "%s/search/space.json", source_root);

    /* Covering: the sampler's cases, every one a shape of its own. */
    fattn_target_init(&t);
    t.space_path = space;
    t.arch_name = "sm_90";
    o.covering = 1;
    CHECK_INT(fattn_target_finish(&t, FATTN_NEED_ARCH | FATTN_NEED_SPACE, "check"), FATTN_OK);
    CHECK_INT(fattn_check_plan_make(&o, &t, &p), FATTN_OK);
    CHECK(p.njobs > 10 && !strcmp(p.mode, "covering"));
    CHECK_CONTAINS(p.what, "covering check of");
    int seqlens = 0, dims = 0, causal = 0;
    for (size_t i = 0; i < p.njobs; ++i) {
        const fattn_shape *js = &p.jobs[i].shape;
        CHECK(js->seqlen == 1 || js->seqlen == 33 || js->seqlen == 130 || js->seqlen == 257
              || js->seqlen == p.jobs[i].cfg.v[FATTN_P_BLOCK_M] - 1
              || js->seqlen == p.jobs[i].cfg.v[FATTN_P_BLOCK_M] + 1);
        CHECK(js->head_dim == 64 || js->head_dim == 128);
        seqlens |= js->seqlen == 1 ? 1 : js->seqlen == 257 ? 2 : 0;
        dims |= js->head_dim == 64 ? 1 : 2;
        causal |= js->causal ? 1 : 2;
    }
    CHECK_INT(seqlens, 3); /* every S, head dimension and mask met */
    CHECK_INT(dims, 3);
    CHECK_INT(causal, 3);
    fattn_check_plan_release(&p);
    o.covering = 0;

    /* A sample of 5 survivors at a tail shape. */
    t.shape_text = "1,2,130,64";
    o.sample = 5;
    CHECK_INT(fattn_target_finish(&t, FATTN_NEED_SHAPE, "check"), FATTN_OK);
    CHECK_INT(fattn_check_plan_make(&o, &t, &p), FATTN_OK);
    CHECK_INT((long long)p.njobs, 5);
    CHECK(!strcmp(p.mode, "sample") && p.jobs[4].shape.seqlen == 130);
    fattn_check_plan_release(&p);
    o.sample = 0;

    /* Given configurations: the gates' rejection told, the check planned. */
    o.nconfigs = 1;
    o.configs[0] = "bm128-bn128-bk128-w4-s4-u1-cp1-sw1-h1";
    FILE *log = open_memstream(&logbuf, &loglen);
    o.log = log;
    CHECK_INT(fattn_check_plan_make(&o, &t, &p), FATTN_OK);
    fclose(log);
    CHECK_INT((long long)p.njobs, 1);
    CHECK_CONTAINS(logbuf, "bm128-bn128-bk128-w4-s4-u1-cp1-sw1-h1 is rejected by the tiling gate on sm_90");
    CHECK_CONTAINS(logbuf, "checking it anyway");
    free(logbuf);
    fattn_check_plan_release(&p);
    fattn_target_release(&t);
}

static void check_run(void)
{
    fattn_check_opts o = {.seed = 1, .jobs = 2, .timeout_s = 600, .db_path = db_path, .argv_text = "test_procedures"};
    fattn_check_plan p;
    fattn_check_report r;
    fattn_store *s = NULL;
    fattn_target t;
    fattn_target_init(&t);
    t.shape_text = "1,2,33,64";
    CHECK_INT(fattn_target_finish(&t, FATTN_NEED_SHAPE, "check"), FATTN_OK);
    o.nconfigs = 1;
    o.configs[0] = "tmacopy-br16";
    CHECK_INT(fattn_check_plan_make(&o, &t, &p), FATTN_OK);
    CHECK_INT(fattn_check_run(&o, &t, &p, &s, &r), FATTN_OK);
    CHECK(r.run > 0 && r.done == 1 && r.failed == 0 && !r.interrupted);
    CHECK(r.out[0].done);
    CHECK_STR(r.out[0].verdict, FATTN_SIMV_OK);
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM sim_checks WHERE run_id = %lld AND config_key = 'tmacopy-br16' AND verdict = 'ok'",
             r.run);
    CHECK_INT(count(s, sql), 1);
    fattn_check_report_release(&r);
    fattn_check_plan_release(&p);
    fattn_store_close(&s);

    /* Two families in one run: refused before anything is written. */
    o.nconfigs = 2;
    o.configs[1] = "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1";
    CHECK_INT(fattn_check_plan_make(&o, &t, &p), FATTN_OK);
    fattn_error_set_quiet(1);
    CHECK_INT(fattn_check_run(&o, &t, &p, &s, &r), FATTN_EUSAGE);
    fattn_error_set_quiet(0);
    CHECK_CONTAINS(fattn_last_error(), "tmacopy and mma configurations in one run");
    CHECK(s == NULL);
    fattn_check_report_release(&r);
    fattn_check_plan_release(&p);
    fattn_target_release(&t);
}

/* A target's and a measurement's settings by option name (job.h): each
 * limit marked given, values held to their ranges, a name of neither not
 * taken, an abbreviation not a name. */
static void settings(void)
{
    fattn_target t;
    fattn_measure m;
    fattn_target_init(&t);
    fattn_measure_init(&m);
    fattn_error_set_quiet(1);
    CHECK_INT(fattn_target_set(&t, "shape", "2,8,512,64"), 1);
    CHECK(t.shape_text && !strcmp(t.shape_text, "2,8,512,64"));
    CHECK_INT(fattn_target_set(&t, "causal", NULL), 1);
    CHECK_INT(t.causal, 1);
    CHECK_INT(fattn_target_set(&t, "max-bank-ways", "4"), 1);
    CHECK_INT(t.lim.max_bank_ways, 4);
    CHECK_INT(fattn_target_set(&t, "min-occupancy", "0.25"), 1);
    CHECK(t.lim.min_occupancy == 0.25);
    CHECK_INT(fattn_target_set(&t, "strict-occupancy", NULL), 1);
    CHECK_INT(t.lim.occupancy_cp_async_exempt, 0);
    CHECK_INT(t.given, FATTN_GIVEN_MAX_BANK_WAYS | FATTN_GIVEN_MIN_OCCUPANCY | FATTN_GIVEN_STRICT_OCCUPANCY);
    CHECK_INT(fattn_target_set(&t, "max-bank-ways", "33"), FATTN_EUSAGE);
    CHECK_INT(fattn_target_set(&t, "min-coalescing", "1.5"), FATTN_EUSAGE);
    CHECK_INT(fattn_target_set(&t, "mem-budget", "0"), FATTN_EUSAGE);
    CHECK_INT(fattn_target_set(&t, "device", "64"), FATTN_EUSAGE);
    CHECK_INT(fattn_target_set(&t, "device", "3"), 1);
    CHECK_INT(t.device, 3);
    CHECK_INT(fattn_target_set(&t, "reps", "3"), 0);
    CHECK_INT(fattn_target_set(&t, "max-bank", "2"), 0);
    CHECK_INT(fattn_measure_set(&m, "reps", "7"), 1);
    CHECK_INT(m.reps, 7);
    CHECK_INT(fattn_measure_set(&m, "seed", "0"), 1);
    CHECK_INT(m.seed, 0);
    CHECK_INT(fattn_measure_set(&m, "samples", "0"), FATTN_EUSAGE);
    CHECK_INT(fattn_measure_set(&m, "flush-l2", NULL), 1);
    CHECK_INT(m.flush_l2, 1);
    CHECK_INT(fattn_measure_set(&m, "max-rel-l2", "0"), FATTN_EUSAGE);
    CHECK_INT(fattn_measure_set(&m, "kernel-timeout", "2m"), 1);
    CHECK(m.timeout_ms == 120000);
    CHECK_INT(fattn_measure_set(&m, "setup-timeout", "5s"), 1);
    CHECK(m.setup_ms == 5000);
    CHECK_INT(fattn_measure_set(&m, "setup-timeout", "2h"), FATTN_EUSAGE);
    CHECK_INT(fattn_measure_set(&m, "shape", "1,1,64,64"), 0);
    fattn_error_set_quiet(0);
    fattn_target_release(&t);
}

int main(int argc, char **argv)
{
    /* The evaluator starts this program again as its worker. */
    if (argc == 3 && !strcmp(argv[1], "__worker"))
        return fattn_worker_main(atoi(argv[2])) ? 1 : 0;
    if (argc != 2)
        return T_HARNESS;
    source_root = argv[1];
    signal(SIGPIPE, SIG_IGN);
    setenv("FATTN_WORKER_HOOK", "fake", 1);
    snprintf(db_path, sizeof db_path, "/tmp/fattn-procedures.%d.db", (int)getpid());
    T_RUN(settings);
    T_RUN(confirm_study);
    T_RUN(bench_config);
    T_RUN(bench_trial);
    T_RUN(search_replay);
    T_RUN(search_two_families);
    T_RUN(compile_sample);
    T_RUN(outcome_table);
    T_RUN(check_plans);
    T_RUN(check_run);
    free(summary);
    fattn_compiles_wait_abandoned(); /* a search's compiles given up at its end: NVRTC's, not yet done */
    unlink(db_path);
    char side[96];
    snprintf(side, sizeof side, "%s-wal", db_path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", db_path);
    unlink(side);
    return t_exit();
}
