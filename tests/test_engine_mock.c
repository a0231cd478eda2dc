/*
 * test_engine_mock.c - the GPU engine's own code (src/run/engine_gpu.c, in
 * real worker processes) on the mock driver and cuDNN of tests/mock/, so
 * that what a GPU would exercise of the host side runs in CI:
 *  - a healthy kernel is verified and timed through a CUDA graph, the
 *    per-launch time exactly the mock's;
 *  - a launch the driver refuses (invalid cluster, too many resources, too
 *    much shared memory) is a launch_refused verdict and the same worker
 *    goes on; an error that leaves the context intact is an error verdict,
 *    the worker kept;
 *  - a sticky fault (misaligned address) is a runtime fault and a new
 *    worker takes over, as is an error the driver calls harmless after
 *    which the context no longer works;
 *  - the cuDNN baseline: loaded, planned as the inference forward (no stats
 *    output), its slow first plan under the setup timeout, not the kernel
 *    watchdog, interleaved with a candidate by CONFIRM; released before the
 *    context.
 *
 * usage: test_engine_mock PATH-TO-fattn-tune  (with $FATTN_MOCK_CUDA and
 * $FATTN_MOCK_CUDNN naming the mock libraries, as meson sets them)
 */
#include "t.h"

#include <signal.h>
#include <unistd.h>

#include "run/evaluator.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/misc.h"

static const char *tool;
static char log_path[] = "/tmp/fattn-mock-log-XXXXXX";

static fattn_gpu_eval_config config(void)
{
    static const unsigned char ref[] = "the reference module (the mock loads any image)";
    fattn_gpu_eval_config c = {
        .worker_exe = tool,
        .shape = {2, 8, 512, 64, 0},
        .ref_cubin = ref,
        .ref_size = sizeof ref,
        .timing_sets = 2,
        .timing_seed = 1,
        .warmup = 2,
        .reps = 20,
        .samples = 10,
        .tol = {1e-2, 1e-2, FATTN_DEFAULT_MAX_REL_L2},
        .kernel_timeout_ms = t_ms(3000),
        .setup_timeout_ms = t_ms(60000),
    };
    return c;
}

/* Evaluates a kernel whose "cubin" is the mock's directive text. */
static void eval(fattn_evaluator *e, const char *image, unsigned smem, fattn_eval_result *r)
{
    fattn_config cfg;
    const char *key = "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1";
    if (fattn_config_parse(key, "test", &cfg))
        exit(T_HARNESS);
    fattn_eval_request req = {&cfg, key, image, strlen(image) + 1, smem, 128, 7};
    if (fattn_evaluate(e, &req, r) != FATTN_OK)
        exit(T_HARNESS);
}

static void expect(fattn_evaluator *e, const char *image, unsigned smem, int status, const char *detail,
                   int workers_after)
{
    fattn_eval_result r;
    eval(e, image, smem, &r);
    if (r.status != status)
        fprintf(stderr, "%s: status %s, detail: %s\n", image, fattn_eval_status_name(r.status), r.detail);
    CHECK_INT(r.status, status);
    if (detail)
        CHECK_CONTAINS(r.detail, detail);
    fattn_eval_result_release(&r);
    /* The next evaluation shows whether the worker was kept or replaced. */
    eval(e, "healthy", 16384, &r);
    CHECK_INT(r.status, FATTN_EVAL_OK);
    fattn_eval_result_release(&r);
    CHECK_INT(e->workers_started, workers_after);
}

static void verdicts(void)
{
    fattn_evaluator *e;
    fattn_eval_result r;
    fattn_gpu_eval_config c = config();
    CHECK_INT(fattn_evaluator_open_gpu(&c, &e), FATTN_OK);
    if (!e)
        return;
    CHECK_CONTAINS(e->device, "Mock H100");
    /* The GPU's UUID as nvidia-smi writes it, from the mock's bytes 0x10..0x1f. */
    CHECK_STR(e->uuid, "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f");
    /* Healthy: 10 us a launch, 20 launches in a graph per sample. */
    eval(e, "healthy", 16384, &r);
    CHECK_INT(r.status, FATTN_EVAL_OK);
    CHECK_STR(r.timing_kind, "graph");
    CHECK_INT(r.nsamples, 10);
    CHECK_NEAR(r.timing.median_us, 10.0, 1e-3);
    CHECK(r.has_numerics && fattn_numerics_ok(&r.num));
    fattn_eval_result_release(&r);
    eval(e, "MOCK:us=25", 16384, &r);
    CHECK_NEAR(r.timing.median_us, 25.0, 1e-3);
    fattn_eval_result_release(&r);
    CHECK_INT(e->workers_started, 1);

    /* Refused launches: rejected, the same worker goes on. */
    expect(e, "MOCK:launch=912", 16384, FATTN_EVAL_LAUNCH, "candidate launch: CUDA_ERROR_INVALID_CLUSTER_SIZE", 1);
    expect(e, "MOCK:launch=701", 16384, FATTN_EVAL_LAUNCH, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 1);
    /* More dynamic shared memory than the device allows: the attribute is refused. */
    expect(e, "healthy", 240000, FATTN_EVAL_LAUNCH, "shared-memory attribute: CUDA_ERROR_INVALID_VALUE", 1);
    expect(e, "MOCK:attr=1", 65536, FATTN_EVAL_LAUNCH, "shared-memory attribute", 1);
    /* An error that leaves the context intact, after the launch: an error. */
    expect(e, "MOCK:sync=1", 16384, FATTN_EVAL_ERROR, "candidate run: CUDA_ERROR_INVALID_VALUE", 1);
    /* Wrong output: numerics, the worker kept. */
    expect(e, "MOCK:output=none", 16384, FATTN_EVAL_NUMERICS, "not finite", 1);

    /* Sticky: a runtime fault, and a new worker. */
    expect(e, "MOCK:sync=716,sticky", 16384, FATTN_EVAL_FAULT, "candidate run: CUDA_ERROR_MISALIGNED_ADDRESS", 2);
    expect(e, "MOCK:launch=719,sticky", 16384, FATTN_EVAL_FAULT, "CUDA_ERROR_LAUNCH_FAILED", 3);
    /* A launch error the table calls harmless, after which the context is
     * dead all the same: the probe catches it. */
    expect(e, "MOCK:launch=1,ruin=999", 16384, FATTN_EVAL_FAULT, "the context then reported CUDA_ERROR_UNKNOWN", 4);
    fattn_evaluator_close(&e);
}

/* The tmacopy family as it is, with a workspace parameter added (the mock's
 * `ws` kernel takes it sixth). */
static void ws_launch(const fattn_config *c, const fattn_shape *s, int sm_count, fattn_launch *out)
{
    fattn_family_find("tmacopy")->launch(c, s, sm_count, out);
    out->args[out->nargs++] = (fattn_arg){.kind = FATTN_ARG_WORKSPACE};
    out->workspace = 4096;
}

/* Occurrences of `what` in the mock's log. */
static int log_count(const char *what)
{
    char *log = NULL;
    size_t len;
    if (fattn_read_file(log_path, "the mock's log", 1, &log, &len))
        exit(T_HARNESS);
    int n = 0;
    for (const char *p = log; (p = strstr(p, what)); ++p)
        ++n;
    free(log);
    return n;
}

/* A family with tensor maps (tmacopy): the worker encodes V's and O's for
 * the numerics set and each timing set, every launch of the timing graph
 * reads its own set, the family's own reference (O = V) judges the output,
 * and a workspace is zeroed before every launch, graph replays included. */
static void tensor_maps(void)
{
    const fattn_family *tc = fattn_family_find("tmacopy");
    CHECK(tc != NULL);
    if (!tc)
        return;
    FILE *f = fopen(log_path, "w"); /* the log from here */
    if (f)
        fclose(f);
    fattn_evaluator *e;
    fattn_eval_result r;
    fattn_gpu_eval_config c = config();
    CHECK_INT(fattn_evaluator_open_gpu(&c, &e), FATTN_OK);
    if (!e)
        return;
    fattn_config cfg;
    const char *key = "tmacopy-br64";
    CHECK_INT(fattn_config_parse(key, "test", &cfg), FATTN_OK);
    CHECK(cfg.fam == tc);
    fattn_eval_request req = {&cfg, key, "healthy", sizeof "healthy", 64 * 64 * 2 + 256, 32, 7, NULL};
    CHECK_INT(fattn_evaluate(e, &req, &r), FATTN_OK);
    if (r.status != FATTN_EVAL_OK)
        fprintf(stderr, "tmacopy: %s\n", r.detail);
    CHECK_INT(r.status, FATTN_EVAL_OK);
    CHECK_STR(r.timing_kind, "graph");
    CHECK(r.has_numerics && fattn_numerics_ok(&r.num));
    CHECK_NEAR(r.timing.median_us, 10.0, 1e-3);
    fattn_eval_result_release(&r);
    /* Two maps for each of the three input sets; launches on each set's V. */
    CHECK_INT(log_count(" cuTensorMapEncodeTiled\n"), 2 * (c.timing_sets + 1));
    CHECK(log_count(" cuMemsetD8Async\n") == 0);
    char *log = NULL;
    size_t len;
    if (fattn_read_file(log_path, "the mock's log", 1, &log, &len))
        exit(T_HARNESS);
    char seen[4][40] = {{0}};
    int distinct = 0;
    for (const char *p = log; (p = strstr(p, "tmacopy V ")); ++p) {
        char a[40];
        snprintf(a, sizeof a, "%.*s", (int)strcspn(p + 10, "\n"), p + 10);
        int known = 0;
        for (int i = 0; i < distinct; ++i)
            known |= !strcmp(seen[i], a);
        if (!known && distinct < 4)
            snprintf(seen[distinct++], sizeof seen[0], "%s", a);
    }
    free(log);
    CHECK_INT(distinct, c.timing_sets + 1);

    /* Nothing written: the family's reference (V) fails it. */
    req.cubin = "MOCK:output=none", req.cubin_size = sizeof "MOCK:output=none";
    CHECK_INT(fattn_evaluate(e, &req, &r), FATTN_OK);
    CHECK_INT(r.status, FATTN_EVAL_NUMERICS);
    fattn_eval_result_release(&r);

    /* A workspace, dirtied by each launch: zeroed before every one. */
    fattn_family wsf = *tc;
    wsf.launch = ws_launch;
    cfg.fam = &wsf;
    req.cubin = "MOCK:ws", req.cubin_size = sizeof "MOCK:ws";
    CHECK_INT(fattn_evaluate(e, &req, &r), FATTN_OK);
    if (r.status != FATTN_EVAL_OK)
        fprintf(stderr, "tmacopy with a workspace: %s\n", r.detail);
    CHECK_INT(r.status, FATTN_EVAL_OK);
    CHECK_INT(r.nsamples, c.samples);
    fattn_eval_result_release(&r);
    /* Outside the graph: the numerics launches, each after its memset. */
    CHECK(log_count(" cuMemsetD8Async\n") >= 2);
    CHECK_INT(e->workers_started, 1);
    fattn_evaluator_close(&e);
}

/* Lines of the mock's log for process `pid`, in order: 1 when `first`
 * comes before `then` (both present). */
static int before(const char *log, long pid, const char *first, const char *then)
{
    char a[128], b[128];
    snprintf(a, sizeof a, "\n%ld %s\n", pid, first);
    snprintf(b, sizeof b, "\n%ld %s\n", pid, then);
    const char *x = strstr(log, a), *y = strstr(log, b);
    return x && y && x < y;
}

static void cudnn_baseline(void)
{
    fattn_evaluator *e;
    fattn_eval_result r[2];
    const char *lib = getenv("FATTN_MOCK_CUDNN");
    setenv("FATTN_LIBCUDNN", lib, 1);
    /* The first plan takes 1.2 s, over the 0.8 s kernel watchdog: it runs
     * under the setup timeout (both times FATTN_TEST_SLOWDOWN). */
    char setup_ms[16];
    snprintf(setup_ms, sizeof setup_ms, "%d", t_ms(1200));
    setenv("FATTN_MOCK_CUDNN_SETUP_MS", setup_ms, 1);
    fattn_gpu_eval_config c = config();
    c.kernel_timeout_ms = t_ms(800);
    CHECK_INT(fattn_evaluator_open_gpu(&c, &e), FATTN_OK);
    if (!e)
        return;
    fattn_config cfg;
    const char *key = "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1";
    if (fattn_config_parse(key, "test", &cfg))
        exit(T_HARNESS);
    static const char image[] = "MOCK:us=12";
    fattn_eval_request reqs[2] = {{&cfg, key, image, sizeof image, 16384, 128, 5, NULL},
                                  {NULL, "cudnn", NULL, 0, 0, 0, 5, "cudnn"}};
    CHECK_INT(fattn_evaluate_interleaved(e, reqs, 2, 25, r), FATTN_OK);
    for (int i = 0; i < 2; ++i) {
        if (r[i].status != FATTN_EVAL_OK)
            fprintf(stderr, "entry %d: %s\n", i, r[i].detail);
        CHECK_INT(r[i].status, FATTN_EVAL_OK);
        CHECK_INT(r[i].nsamples, 25);
        CHECK(r[i].has_numerics_after);
    }
    CHECK_NEAR(r[0].timing.median_us, 12.0, 1e-3);
    CHECK_NEAR(r[1].timing.median_us, 8.0, 1e-3); /* the mock cuDNN's kernel, in the graph */
    CHECK_CONTAINS(r[1].baseline, "cuDNN 9.14.0");
    CHECK_CONTAINS(r[1].baseline, lib);
    CHECK_CONTAINS(r[1].baseline, "inference forward");
    fattn_eval_result_release(&r[0]);
    fattn_eval_result_release(&r[1]);
    CHECK_INT(e->workers_started, 1);
    fattn_evaluator_close(&e);

    /* A slow plan past the setup timeout is a timeout that says so. */
    c.setup_timeout_ms = t_ms(500);
    char want[96];
    snprintf(want, sizeof want, "no answer from the worker in %.1f s while setting up the cuDNN baseline",
             c.setup_timeout_ms / 1000.0);
    CHECK_INT(fattn_evaluator_open_gpu(&c, &e), FATTN_OK);
    if (e) {
        CHECK_INT(fattn_evaluate(e, &reqs[1], &r[0]), FATTN_OK);
        CHECK_INT(r[0].status, FATTN_EVAL_TIMEOUT);
        CHECK_CONTAINS(r[0].detail, want);
        CHECK_CONTAINS(r[0].detail, "(--setup-timeout); killed");
        fattn_eval_result_release(&r[0]);
        fattn_evaluator_close(&e);
    }
    unsetenv("FATTN_MOCK_CUDNN_SETUP_MS");

    /* An older library that insists on the stats output still plans. */
    setenv("FATTN_MOCK_CUDNN_NEED_STATS", "1", 1);
    c = config();
    CHECK_INT(fattn_evaluator_open_gpu(&c, &e), FATTN_OK);
    if (e) {
        CHECK_INT(fattn_evaluate(e, &reqs[1], &r[0]), FATTN_OK);
        CHECK_INT(r[0].status, FATTN_EVAL_OK);
        CHECK_CONTAINS(r[0].baseline, "with stats output");
        fattn_eval_result_release(&r[0]);
        fattn_evaluator_close(&e);
    }
    unsetenv("FATTN_MOCK_CUDNN_NEED_STATS");

    /* The log: in every worker that planned cuDNN, its handle and buffers
     * went before the context; no call came without a context; the first
     * plan built no stats output. */
    char *log = NULL;
    size_t len;
    if (fattn_read_file(log_path, "the mock's log", 1, &log, &len))
        exit(T_HARNESS);
    CHECK(strstr(log, "without a context") == NULL);
    int workers = 0;
    for (const char *p = log; (p = strstr(p, " cudnnCreate\n")); ++p) {
        const char *line = p;
        while (line > log && line[-1] != '\n')
            --line;
        long pid = strtol(line, NULL, 10);
        char released[64];
        snprintf(released, sizeof released, "\n%ld cuDevicePrimaryCtxRelease\n", pid);
        if (!strstr(log, released))
            continue; /* killed by the setup timeout: it released nothing */
        ++workers;
        CHECK(before(log, pid, "cudnnDestroy", "cuDevicePrimaryCtxRelease"));
    }
    CHECK(workers >= 2);
    /* Stats were asked for only by the worker of the library that needs them. */
    const char *stats = strstr(log, "cudnn SDPA_FWD_STATSDESC");
    const char *need = strstr(log, " cudnnCreate\n");
    for (int i = 0; need && i < 2; ++i)
        need = strstr(need + 1, " cudnnCreate\n");
    CHECK(stats && need && stats > need);
    free(log);
    unsetenv("FATTN_LIBCUDNN");
}

int main(int argc, char **argv)
{
    const char *mock = getenv("FATTN_MOCK_CUDA");
    if (argc != 2 || !mock || !getenv("FATTN_MOCK_CUDNN"))
        return T_HARNESS;
    tool = argv[1];
    signal(SIGPIPE, SIG_IGN);
    int fd = mkstemp(log_path);
    if (fd < 0)
        return T_HARNESS;
    close(fd);
    setenv("FATTN_LIBCUDA", mock, 1);
    setenv("FATTN_MOCK_LOG", log_path, 1);
    unsetenv("FATTN_WORKER_HOOK");
    T_RUN(verdicts);
    T_RUN(cudnn_baseline);
    T_RUN(tensor_maps);
    unlink(log_path);
    return t_exit();
}
