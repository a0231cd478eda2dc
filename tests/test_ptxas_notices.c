/*
 * test_ptxas_notices.c - the post-compile gates that read ptxas's Hopper
 * notices, on kernels that trigger them (tests/data/ptxas/, NVRTC for
 * sm_90a, no GPU):
 *  - setmaxnreg.cu without __launch_bounds__(threads, 1): C7508, and the
 *    gate setmaxnreg_ignored rejects with the notice's text; with the
 *    bounds (-DBOUNDED): no notice, the gate passes;
 *  - wgmma.cu reading an accumulator between commit and wait (-DEARLY):
 *    C7517, the gate wgmma_serialized; read after the wait: no notice;
 *  - --unsafe-skip-gate lets either through, saying so.
 * usage: test_ptxas_notices DIR  (the folder of the test kernels)
 */
#include "t.h"

#include "compile/nvrtc.h"
#include "compile/postgates.h"
#include "gates/layout.h"
#include "util/misc.h"

static const char *dir;
static char *include;

/* NVRTC's log (ptxas report included) of dir/file with `define` (or NULL). */
static char *compile_log(const char *file, const char *define)
{
    fattn_kernel_src src;
    if (fattn_kernel_src_load(dir, file, &src))
        exit(T_HARNESS);
    fattn_options o = {0};
    o.argv[o.n++] = strdup("--gpu-architecture=sm_90a");
    o.argv[o.n++] = strdup("--ptxas-options=-v");
    char inc[4096];
    snprintf(inc, sizeof inc, "-I%s", include);
    o.argv[o.n++] = strdup(inc);
    if (define)
        o.argv[o.n++] = strdup(define);
    o.key = strdup("");
    fattn_nvrtc_result r;
    if (fattn_nvrtc_compile(&src, &o, 0, &r) || !r.ok) {
        fprintf(stderr, "%s %s: %s\n", file, define ? define : "", r.log ? r.log : "NVRTC failed");
        exit(T_HARNESS);
    }
    char *log = strdup(r.log);
    fattn_nvrtc_result_release(&r);
    fattn_options_release(&o);
    fattn_kernel_src_release(&src);
    return log;
}

/* The post-compile gates on a configuration that passes every other one,
 * with `log` as its ptxas report. */
static int gates(const char *log, unsigned skip, fattn_verdict all[FATTN_R_COUNT])
{
    static const fattn_shape shape = {2, 8, 512, 64, 0};
    fattn_config c;
    fattn_config_default(&c, &fattn_family_mma);
    fattn_gate_limits lim;
    fattn_gate_limits_default(&lim);
    lim.skip = skip;
    fattn_layout l;
    fattn_layout_init(&l, &c, shape.head_dim);
    fattn_compiled k = {.ok = 1, .log = log, .regs = 96, .smem_dynamic = l.total_bytes, .threads = l.threads};
    fattn_gate_input in = {&c, &shape, fattn_arch_find("sm_90"), &lim};
    fattn_verdict first;
    return fattn_gates_compiled(&in, &k, NULL, &first, all);
}

static void setmaxnreg(void)
{
    char text[240];
    fattn_verdict all[FATTN_R_COUNT];
    char *log = compile_log("setmaxnreg.cu", NULL);
    CHECK_INT(fattn_ptxas_notice(log, 7507, 7508, text, sizeof text), 7508);
    CHECK(strstr(text, "'setmaxnreg' ignored") != NULL);
    CHECK_INT(gates(log, 0, all), FATTN_R_SETMAXNREG_IGNORED);
    CHECK(strstr(all[FATTN_R_SETMAXNREG_IGNORED].detail, "ptxas C7508: ") == all[FATTN_R_SETMAXNREG_IGNORED].detail);
    CHECK_INT(all[FATTN_R_WGMMA_SERIALIZED].pass, 1);
    CHECK_INT(gates(log, 1u << FATTN_R_SETMAXNREG_IGNORED, all), FATTN_R_NONE);
    CHECK(strstr(all[FATTN_R_SETMAXNREG_IGNORED].detail, "--unsafe-skip-gate setmaxnreg_ignored") != NULL);
    free(log);
    log = compile_log("setmaxnreg.cu", "-DBOUNDED");
    CHECK_INT(fattn_ptxas_notice(log, 7500, 7599, text, sizeof text), 0);
    CHECK_INT(gates(log, 0, all), FATTN_R_NONE);
    free(log);
}

static void wgmma(void)
{
    char text[240];
    fattn_verdict all[FATTN_R_COUNT];
    char *log = compile_log("wgmma.cu", "-DEARLY");
    int code = fattn_ptxas_notice(log, 7510, 7517, text, sizeof text);
    CHECK(code >= 7510 && code <= 7517);
    CHECK_INT(fattn_ptxas_notice(log, 7507, 7508, text, sizeof text), 0);
    CHECK_INT(gates(log, 0, all), FATTN_R_WGMMA_SERIALIZED);
    CHECK_INT(all[FATTN_R_SETMAXNREG_IGNORED].pass, 1);
    CHECK_INT(gates(log, 1u << FATTN_R_WGMMA_SERIALIZED, all), FATTN_R_NONE);
    free(log);
    log = compile_log("wgmma.cu", NULL);
    CHECK_INT(fattn_ptxas_notice(log, 7500, 7599, text, sizeof text), 0);
    CHECK_INT(gates(log, 0, all), FATTN_R_NONE);
    free(log);
}

/* The parser on its own: codes out of range, a code in a longer number. */
static void parser(void)
{
    char text[64];
    CHECK_INT(fattn_ptxas_notice("ptxas info : (C7509) x\n", 7510, 7517, text, sizeof text), 0);
    CHECK_INT(
        fattn_ptxas_notice("(C75100) x\nptxas info    : (C7512) wgmma serialized\nnext", 7510, 7517, text, sizeof text),
        7512);
    CHECK_STR(text, "wgmma serialized");
    CHECK_INT(fattn_ptxas_notice(NULL, 7510, 7517, text, sizeof text), 0);
    CHECK_STR(text, "");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_ptxas_notices DIR\n");
        return T_HARNESS;
    }
    dir = argv[1];
    if (fattn_cuda_include(&include))
        return T_HARNESS;
    T_RUN(parser);
    T_RUN(setmaxnreg);
    T_RUN(wgmma);
    free(include);
    return t_exit();
}
