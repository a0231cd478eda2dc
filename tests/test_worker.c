/*
 * test_worker.c - process isolation without a GPU. The wire format on a
 * socket pair; then real worker processes (`fattn-tune __worker`) running
 * the fake engine ($FATTN_WORKER_HOOK), which crashes, hangs, sends garbage
 * or faults on request: each ends only the worker, the evaluator says what
 * happened, and the next evaluation starts a new worker. The replay
 * evaluator over a landscape file.
 *
 * usage: test_worker PATH-TO-fattn-tune
 */
#include "t.h"

#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "run/evaluator.h"
#include "run/landscape.h"
#include "run/wire.h"
#include "run/worker.h"
#include "util/err.h"
#include "util/misc.h"

static const char *tool;

static void wire(void)
{
    int sv[2];
    char why[256];
    fattn_msg m;
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
        exit(T_HARNESS);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "key", "bm64");
    unsigned char payload[5000];
    for (size_t i = 0; i < sizeof payload; ++i)
        payload[i] = (unsigned char)(i * 7);
    CHECK_INT(fattn_wire_send(sv[0], FATTN_MSG_EVAL, j, payload, sizeof payload), FATTN_WIRE_OK);
    CHECK_INT(fattn_wire_recv(sv[1], 1000, &m, why, sizeof why), FATTN_WIRE_OK);
    CHECK_INT(m.type, FATTN_MSG_EVAL);
    CHECK_STR(cJSON_GetObjectItemCaseSensitive(m.json, "key")->valuestring, "bm64");
    CHECK_INT(m.payload_len, sizeof payload);
    CHECK(memcmp(m.payload, payload, sizeof payload) == 0);
    fattn_msg_release(&m);
    cJSON_Delete(j);
    /* No JSON, no payload. */
    CHECK_INT(fattn_wire_send(sv[0], FATTN_MSG_QUIT, NULL, NULL, 0), FATTN_WIRE_OK);
    CHECK_INT(fattn_wire_recv(sv[1], 1000, &m, why, sizeof why), FATTN_WIRE_OK);
    CHECK(m.type == FATTN_MSG_QUIT && cJSON_IsObject(m.json) && !m.payload);
    fattn_msg_release(&m);
    /* Nothing to read: a timeout, on time. */
    double t0 = fattn_now_ms();
    CHECK_INT(fattn_wire_recv(sv[1], 200, &m, why, sizeof why), FATTN_WIRE_TIMEOUT);
    CHECK(fattn_now_ms() - t0 >= 190 && fattn_now_ms() - t0 < t_ms(2000));
    /* Garbage: a wrong magic, then a header announcing too much. */
    CHECK(write(sv[0], "GARBAGE!GARBAGE!", 16) == 16);
    CHECK_INT(fattn_wire_recv(sv[1], 1000, &m, why, sizeof why), FATTN_WIRE_GARBAGE);
    CHECK_CONTAINS(why, "garbage instead of a message");
    unsigned char head[16] = {'F', 'T', 'W', '1', 2, 0, 0, 0, 0, 0, 0, 0x7f, 0, 0, 0, 0};
    CHECK(write(sv[0], head, 16) == 16);
    CHECK_INT(fattn_wire_recv(sv[1], 1000, &m, why, sizeof why), FATTN_WIRE_GARBAGE);
    /* A header that is not JSON. */
    unsigned char bad[20] = {'F', 'T', 'W', '1', 2, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, '[', '1', ']', 0};
    CHECK(write(sv[0], bad, 20) == 20);
    CHECK_INT(fattn_wire_recv(sv[1], 1000, &m, why, sizeof why), FATTN_WIRE_GARBAGE);
    /* A frame cut short by the end of the stream, then the end itself. */
    unsigned char cut[16] = {'F', 'T', 'W', '1', 2, 0, 0, 0, 50, 0, 0, 0, 0, 0, 0, 0};
    CHECK(write(sv[0], cut, 16) == 16 && write(sv[0], "{\"a\":", 5) == 5);
    close(sv[0]);
    CHECK_INT(fattn_wire_recv(sv[1], 1000, &m, why, sizeof why), FATTN_WIRE_GARBAGE);
    CHECK_INT(fattn_wire_recv(sv[1], 1000, &m, why, sizeof why), FATTN_WIRE_EOF);
    close(sv[1]);
}

static fattn_gpu_eval_config gpu_config(void)
{
    static const unsigned char ref[] = "not a cubin: the fake engine does not load it";
    fattn_gpu_eval_config c = {
        .worker_exe = tool,
        .shape = {2, 8, 512, 64, 0},
        .ref_cubin = ref,
        .ref_size = sizeof ref,
        .timing_sets = 4,
        .timing_seed = 1,
        .warmup = 2,
        .reps = 20,
        .samples = 12,
        .tol = {1e-2, 1e-2, FATTN_DEFAULT_MAX_REL_L2},
        .kernel_timeout_ms = t_ms(1500),
    };
    return c;
}

static int eval(fattn_evaluator *e, const char *key, fattn_eval_result *r)
{
    fattn_config cfg;
    if (fattn_config_parse(key, "test", &cfg))
        exit(T_HARNESS);
    static const unsigned char cubin[] = "a cubin";
    fattn_eval_request req = {&cfg, key, cubin, sizeof cubin, 16384, 128, 99};
    return fattn_evaluate(e, &req, r);
}

static void isolation(void)
{
    fattn_evaluator *e;
    fattn_eval_result r;
    setenv("FATTN_WORKER_HOOK", "fake,crash=bn128-bk16,hang=bn32-bk64,garbage=bm128-bn64,numerics=bk16-w2,fault=s3-u2",
           1);
    fattn_gpu_eval_config c = gpu_config();
    CHECK_INT(fattn_evaluator_open_gpu(&c, &e), FATTN_OK);
    CHECK_INT(e->workers_started, 1);
    CHECK_CONTAINS(e->device, "fake engine");
    CHECK_CONTAINS(e->method, "CUDA graph of 20 back-to-back launches rotating 4 input sets");

    /* A good configuration: verified, timed, the same worker. */
    CHECK_INT(eval(e, "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", &r), FATTN_OK);
    CHECK_INT(r.status, FATTN_EVAL_OK);
    CHECK_INT(r.nsamples, 12);
    CHECK(r.has_timing && r.timing.median_us >= 4 && r.timing.median_us < 12.2);
    CHECK(r.timing.p10_us <= r.timing.median_us && r.timing.median_us <= r.timing.p90_us);
    CHECK(r.has_numerics && fattn_numerics_ok(&r.num) && r.num.rel_l2 > 0);
    double first = r.timing.median_us;
    fattn_eval_result_release(&r);
    CHECK_INT(eval(e, "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", &r), FATTN_OK);
    CHECK_NEAR(r.timing.median_us, first, first * 0.02);
    fattn_eval_result_release(&r);
    CHECK_INT(e->workers_started, 1);

    /* The worker crashes: a runtime fault, and a new worker next time. */
    CHECK_INT(eval(e, "bm64-bn128-bk16-w4-s2-u1-cp1-sw1-h1", &r), FATTN_OK);
    CHECK_INT(r.status, FATTN_EVAL_FAULT);
    CHECK_CONTAINS(r.detail, "the worker was killed by");
    CHECK_CONTAINS(r.detail, "(signal 9) while running it");
    CHECK_INT(eval(e, "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", &r), FATTN_OK);
    CHECK_INT(r.status, FATTN_EVAL_OK);
    fattn_eval_result_release(&r);
    CHECK_INT(e->workers_started, 2);

    /* The worker hangs: killed when the watchdog fires (1.5 s here, times
     * FATTN_TEST_SLOWDOWN). */
    double t0 = fattn_now_ms();
    CHECK_INT(eval(e, "bm64-bn32-bk64-w4-s2-u1-cp1-sw1-h1", &r), FATTN_OK);
    double waited = fattn_now_ms() - t0;
    CHECK_INT(r.status, FATTN_EVAL_TIMEOUT);
    char want[64];
    snprintf(want, sizeof want, "no answer from the worker in %.1f s; killed", t_ms(1500) / 1000.0);
    CHECK_CONTAINS(r.detail, want);
    CHECK(waited >= t_ms(1500) - 100 && waited < t_ms(10000));

    /* The worker sends garbage: a protocol error, the worker killed. */
    CHECK_INT(eval(e, "bm128-bn64-bk32-w4-s2-u1-cp1-sw1-h1", &r), FATTN_OK);
    CHECK_INT(r.status, FATTN_EVAL_ERROR);
    CHECK_CONTAINS(r.detail, "worker protocol error: the worker sent garbage instead of a message");
    /* Workers so far: the first, its replacement after the crash (killed by
     * the watchdog), the third that sent garbage. */
    CHECK_INT(e->workers_started, 3);

    /* Wrong output. */
    CHECK_INT(eval(e, "bm32-bn64-bk16-w2-s2-u1-cp1-sw1-h1", &r), FATTN_OK);
    CHECK_INT(r.status, FATTN_EVAL_NUMERICS);
    CHECK(r.has_numerics && r.num.n_bad == 17 && !r.has_timing);
    CHECK_CONTAINS(r.detail, "17 of 1000 out of tolerance");

    /* A sticky fault reported by the engine; the seeds' pad faults too. */
    CHECK_INT(eval(e, "bm64-bn64-bk32-w4-s3-u2-cp1-sw1-h1", &r), FATTN_OK);
    CHECK_INT(r.status, FATTN_EVAL_FAULT);
    CHECK_CONTAINS(r.detail, "CUDA_ERROR_ILLEGAL_ADDRESS");
    CHECK_INT(eval(e, "bm64-bn64-bk32-w4-s1-u1-cp1-sw0-h1-pad2", &r), FATTN_OK);
    CHECK_INT(r.status, FATTN_EVAL_FAULT);
    CHECK_CONTAINS(r.detail, "CUDA_ERROR_MISALIGNED_ADDRESS");
    CHECK_INT(eval(e, "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", &r), FATTN_OK);
    CHECK_INT(r.status, FATTN_EVAL_OK);
    fattn_eval_result_release(&r);
    /* Three more: for the numerics check, after each of the two faults. */
    CHECK_INT(e->workers_started, 6);
    fattn_evaluator_close(&e);
    CHECK(e == NULL);

    /* A worker that cannot initialize (no GPU) fails the open, in one line. */
    setenv("FATTN_WORKER_HOOK", "init-error", 1);
    c = gpu_config();
    fattn_error_set_quiet(1);
    CHECK_INT(fattn_evaluator_open_gpu(&c, &e), FATTN_EFAIL);
    CHECK_CONTAINS(fattn_last_error(), "no GPU: the fake engine was told to fail");
    fattn_error_set_quiet(0);
    unsetenv("FATTN_WORKER_HOOK");
}

static void replay(void)
{
    char path[] = "/tmp/fattn-landscape-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fattn_shape s = {2, 8, 512, 64, 0};
    fattn_landscape_write_header(f, "NVIDIA H100 80GB HBM3", "sm_90", "mma", &s, "test");
    fputs("bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1,ok,,6.1,6.0,6.3\n"
          "bm64-bn64-bk32-w4-s1-u1-cp1-sw0-h1-pad2,rejected,runtime_fault,,,\n"
          "bm128-bn64-bk32-w8-s2-u1-cp1-sw1-h1,rejected,numerics,,,\n"
          "bm128-bn128-bk64-w8-s3-u2-cp1-sw1-h1,rejected,timeout,,,\n",
          f);
    fclose(f);
    fattn_evaluator *e;
    fattn_eval_result r;
    CHECK_INT(fattn_evaluator_open_replay(path, &s, &fattn_family_mma, &e), FATTN_OK);
    CHECK_CONTAINS(e->device, "NVIDIA H100 80GB HBM3");
    CHECK_INT(eval(e, "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", &r), FATTN_OK);
    CHECK_INT(r.status, FATTN_EVAL_OK);
    CHECK_NEAR(r.timing.median_us, 6.1, 0);
    CHECK_NEAR(r.timing.p90_us, 6.3, 0);
    CHECK_NEAR(r.timing.tflops, 1073741824.0 / 6.1e-6 / 1e12, 1e-9);
    fattn_eval_result_release(&r);
    CHECK_INT(eval(e, "bm64-bn64-bk32-w4-s1-u1-cp1-sw0-h1-pad2", &r), FATTN_OK);
    CHECK_INT(r.status, FATTN_EVAL_FAULT);
    CHECK_INT(eval(e, "bm128-bn64-bk32-w8-s2-u1-cp1-sw1-h1", &r), FATTN_OK);
    CHECK_INT(r.status, FATTN_EVAL_NUMERICS);
    CHECK_INT(eval(e, "bm128-bn128-bk64-w8-s3-u2-cp1-sw1-h1", &r), FATTN_OK);
    CHECK_INT(r.status, FATTN_EVAL_TIMEOUT);
    CHECK_INT(eval(e, "bm32-bn32-bk16-w2-s1-u1-cp1-sw1-h1", &r), FATTN_OK);
    CHECK_INT(r.status, FATTN_EVAL_ERROR);
    CHECK_CONTAINS(r.detail, "not in the landscape");
    fattn_evaluator_close(&e);

    /* The landscape must be for the same shape. */
    fattn_shape other = {4, 8, 512, 64, 0};
    fattn_error_set_quiet(1);
    CHECK_INT(fattn_evaluator_open_replay(path, &other, &fattn_family_mma, &e), FATTN_EUSAGE);
    CHECK_CONTAINS(fattn_last_error(), "the landscape is for B=2 H=8 S=512 D=64 non-causal, not B=4");
    /* A malformed line is named. */
    f = fopen(path, "a");
    fputs("bm64-bn64,ok,,fast,1,2\n", f);
    fclose(f);
    CHECK_INT(fattn_evaluator_open_replay(path, &s, &fattn_family_mma, &e), FATTN_EUSAGE);
    CHECK_CONTAINS(fattn_last_error(), "line 13: field median_us is 'fast'; expected a time in microseconds");
    /* Each implausible line named by its line and field (the file's first 12
     * lines are good: line 13 is the one added). */
    static const struct {
        const char *line, *said;
    } bad[] = {
        {"bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1,compiled,,,,", "line 13: field status is 'compiled'; expected ok, "
                                                            "rejected or error"},
        {"bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1,ok,,6.1,6.0,6.3", "line 13: field key bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1 "
                                                               "is given on line 9 as well"},
        {"bm32-bn32-bk16-w2-s1-u1-cp1-sw1-h1,ok,,6.1,6.5,6.9", "line 13: field p10_us is 6.5, above the median 6.1"},
        {"bm32-bn32-bk16-w2-s1-u1-cp1-sw1-h1,ok,,6.1,6.0,6.05", "line 13: field p90_us is 6.05, below the median 6.1"},
        {"bm32-bn32-bk16-w2-s1-u1-cp1-sw1-h1,ok,,1e308,1e308,1e308", "line 13: field median_us is '1e308'"},
        {"bm32-bn32-bk16-w2-s1-u1-cp1-sw1-h1,ok,,1e-300,1e-300,1e-300", "line 13: field median_us is '1e-300'"},
        {"bm32-bn32-bk16-w2-s1-u1-cp1-sw1-h1,ok,,inf,inf,inf", "line 13: field median_us is 'inf'"},
        {"bm32-bn32-bk16-w2-s1-u1-cp1-sw1-h1,ok,,-6,-7,-5", "line 13: field median_us is '-6'"},
        {"bm32-bn32-bk16-w2-s1-u1-cp1-sw1-h1,ok,,0,0,0", "line 13: field median_us is '0'"},
        {"bm32-bn32-bk16-w2-s1-u1-cp1-sw1-h1,ok,,6.1,6.0,", "line 13: field p90_us is empty"},
        {"bm32-bn32-bk16-w2-s1-u1-cp1-sw1-h1,rejected,timeout,nan,,", "line 13: field median_us is 'nan'"},
        {"bm32-bn32-bk16-w2-s1-u1-cp1-sw1-h1,ok,,6", "line 13: 4 fields; expected 6"},
        {"bm32-bn32-bk16-w2-s1-u1-cp1-sw1-h1,rejected,a_reason_of_more_than_thirty_one,,,",
         "line 13: field reason is 32 characters"},
    };
    char *good = NULL;
    size_t good_len = 0;
    {
        FILE *g = fopen(path, "r");
        CHECK(g != NULL);
        char buf[4096];
        size_t n = fread(buf, 1, sizeof buf, g);
        fclose(g);
        good = fattn_xstrndup(buf, n);
        good_len = strlen(good) - strlen("bm64-bn64,ok,,fast,1,2\n");
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        f = fopen(path, "w");
        fprintf(f, "%.*s%s\n", (int)good_len, good, bad[i].line);
        fclose(f);
        CHECK_INT(fattn_evaluator_open_replay(path, &s, &fattn_family_mma, &e), FATTN_EUSAGE);
        CHECK_CONTAINS(fattn_last_error(), bad[i].said);
    }
    free(good);
    /* The causal line is 0 or 1. */
    f = fopen(path, "w");
    fputs("# fattn-tune landscape 1\n# arch: sm_90\n# causal: 99999999999\n# shape: 2,8,512,64\n", f);
    fclose(f);
    CHECK_INT(fattn_evaluator_open_replay(path, &s, &fattn_family_mma, &e), FATTN_EUSAGE);
    CHECK_CONTAINS(fattn_last_error(), "line 3: field causal is '99999999999'; expected 0 or 1");
    /* The family line names a known family. */
    f = fopen(path, "w");
    fputs("# fattn-tune landscape 1\n# arch: sm_90\n# family: nosuch\n# shape: 2,8,512,64\n", f);
    fclose(f);
    CHECK_INT(fattn_evaluator_open_replay(path, &s, &fattn_family_mma, &e), FATTN_EUSAGE);
    char want[512];
    snprintf(want, sizeof want, "line 3: unknown kernel family 'nosuch'; expected one of %s", fattn_family_names());
    CHECK_CONTAINS(fattn_last_error(), want);
    fattn_error_set_quiet(0);
    unlink(path);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return T_HARNESS;
    tool = argv[1];
    signal(SIGPIPE, SIG_IGN);
    T_RUN(wire);
    T_RUN(isolation);
    T_RUN(replay);
    return t_exit();
}
