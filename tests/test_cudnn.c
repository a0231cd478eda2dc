/*
 * test_cudnn.c - loading cuDNN for the baseline, without a GPU: the
 * toolkit's libcudnn loads and reports a version new enough for the fused
 * SDPA operation; a missing library and a causal shape are refused in one
 * line. (Planning and running need a GPU: the gpu suite and device-check.)
 */
#include "t.h"

#include <unistd.h>

#include "baseline/cudnn.h"
#include "util/err.h"
#include "util/paths.h"

int main(void)
{
    fattn_cudnn *c;
    char why[320], path[512];
    setenv("FATTN_LIBCUDNN", "/nonexistent/libcudnn.so.9", 1);
    CHECK_INT(fattn_cudnn_load(&c, why, sizeof why), -1);
    CHECK_STR(why, "no cuDNN baseline: /nonexistent/libcudnn.so.9 cannot be loaded (cuDNN 9.13 or newer is needed)");
    snprintf(path, sizeof path, "%s/lib64/libcudnn.so.9", fattn_cuda_root());
    if (access(path, R_OK) != 0) {
        printf("SKIP: no %s to load\n", path);
        return t_failures ? t_exit() : T_SKIP;
    }
    setenv("FATTN_LIBCUDNN", path, 1);
    CHECK_INT(fattn_cudnn_load(&c, why, sizeof why), 0);
    if (c) {
        CHECK(fattn_cudnn_version(c) >= FATTN_CUDNN_MIN_VERSION);
        CHECK_CONTAINS(fattn_cudnn_describe(c), "cuDNN 9.");
        /* Refused before any GPU work: the fused operation has no mask. */
        fattn_shape causal = {2, 8, 512, 64, 1};
        CHECK_INT(fattn_cudnn_plan(c, NULL, &causal, NULL, why, sizeof why), -1);
        CHECK_CONTAINS(why, "no cuDNN baseline for causal shapes");
        fattn_cudnn_free(&c, NULL);
        CHECK(c == NULL);
    }
    return t_exit();
}
