/*
 * test_gpu.c - the driver probe on a real GPU: the device's arch is one
 * fattn-tune targets and its limits are those of the arch table. Skips (77)
 * where no GPU is present. Also, on every machine: a driver library that
 * cannot be loaded, and the toolkit's stub driver, are reported as "no GPU"
 * in one line.
 */
#include "t.h"

#include <unistd.h>

#include "gpu/device.h"
#include "target/arch.h"
#include "util/err.h"
#include "util/paths.h"

int main(void)
{
    fattn_gpu_info g, real;
    char why[320], real_why[320];
    /* The real driver first: the stub below has the same SONAME and, once
     * loaded, would answer for libcuda.so.1 in this process. */
    int no_gpu = fattn_gpu_probe(0, &real, real_why, sizeof real_why);
    setenv("FATTN_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    CHECK_INT(fattn_gpu_probe(0, &g, why, sizeof why), FATTN_EFAIL);
    CHECK_STR(why, "no GPU: the CUDA driver (/nonexistent/libcuda.so.1) cannot be loaded");
    /* The toolkit's stub driver loads, then refuses cuInit. */
    char stub[512];
    snprintf(stub, sizeof stub, "%s/lib64/stubs/libcuda.so", fattn_cuda_root());
    if (access(stub, R_OK) == 0) {
        setenv("FATTN_LIBCUDA", stub, 1);
        CHECK_INT(fattn_gpu_probe(0, &g, why, sizeof why), FATTN_EFAIL);
        CHECK_STR(why, "no GPU: cuInit failed: CUDA_ERROR_STUB_LIBRARY");
    }
    unsetenv("FATTN_LIBCUDA");
    if (t_failures)
        return t_exit();

    if (no_gpu) {
        printf("SKIP: %s\n", real_why);
        return T_SKIP;
    }
    g = real;
    const fattn_arch *a = fattn_arch_from_cc(g.cc_major, g.cc_minor);
    fprintf(stderr, "GPU 0: %s, compute capability %d.%d, %d SMs, %zu bytes, smem opt-in %d, driver %d\n", g.name,
            g.cc_major, g.cc_minor, g.sm_count, g.total_mem, g.smem_per_block_optin, g.driver_version);
    CHECK(a != NULL);
    CHECK(g.name[0] != '\0');
    CHECK(g.sm_count > 0);
    if (a) {
        CHECK_INT(g.smem_per_block_optin, a->smem_per_block_optin);
        CHECK_INT(g.smem_per_sm, a->smem_per_sm);
    }
    CHECK(fattn_gpu_probe(1000, &g, why, sizeof why) == FATTN_EFAIL);
    CHECK_CONTAINS(why, "--device 1000");
    return t_exit();
}
