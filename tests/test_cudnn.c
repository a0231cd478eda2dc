/*
 * test_cudnn.c - finding and loading cuDNN for the baseline, without a GPU:
 * the places looked in and their order ($FATTN_LIBCUDNN alone; else the
 * system's library path, the CUDA toolkit, python3's nvidia-cudnn package);
 * a library older than 9.13.1 passed over for a newer one, each place tried
 * named when none will do; the library this machine has (found the way the
 * worker finds it) loads and names its file and version; a causal shape is
 * refused in one line. (Planning and running: test_engine_mock on the mock
 * cuDNN, and the gpu suite on a real one.)
 */
#include "t.h"

#include <sys/stat.h>
#include <unistd.h>

#include "baseline/cudnn.h"
#include "util/err.h"
#include "util/paths.h"

static int copy_file(const char *from, const char *to)
{
    char cmd[2200];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    return system(cmd);
}

static void places(void)
{
    fattn_cudnn_candidate c[8];
    char dir[] = "/tmp/fattn-cudnn-XXXXXX", path[1200], old_path[4096];
    const char *mock = getenv("FATTN_MOCK_CUDNN");
    if (!mkdtemp(dir) || !mock)
        exit(T_HARNESS);
    /* $FATTN_LIBCUDNN: that file alone. */
    setenv("FATTN_LIBCUDNN", "/x/libcudnn.so.9", 1);
    CHECK_INT(fattn_cudnn_candidates(c, 8, 1), 1);
    CHECK_STR(c[0].path, "/x/libcudnn.so.9");
    CHECK_STR(c[0].origin, "$FATTN_LIBCUDNN");
    unsetenv("FATTN_LIBCUDNN");

    /* A python3 whose nvidia.cudnn lives in a site-packages of its own. */
    snprintf(path, sizeof path, "%s/site/nvidia/cudnn/lib", dir);
    char cmd[6000];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' '%s/bin'", path, dir);
    if (system(cmd))
        exit(T_HARNESS);
    snprintf(path, sizeof path, "%s/site/nvidia/cudnn/lib/libcudnn.so.9", dir);
    if (copy_file(mock, path))
        exit(T_HARNESS);
    snprintf(cmd, sizeof cmd, "%s/bin/python3", dir);
    FILE *f = fopen(cmd, "w");
    if (!f)
        exit(T_HARNESS);
    fprintf(f, "#!/bin/sh\n# answers fattn-tune's question only\necho '%s/site/nvidia/cudnn/lib/libcudnn.so.9'\n", dir);
    fclose(f);
    chmod(cmd, 0755);
    snprintf(old_path, sizeof old_path, "%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    snprintf(cmd, sizeof cmd, "%s/bin:%s", dir, old_path);
    setenv("PATH", cmd, 1);

    size_t n = fattn_cudnn_candidates(c, 8, 0);
    CHECK(n >= 1);
    CHECK_STR(c[0].path, "libcudnn.so.9");
    CHECK_STR(c[0].origin, "system library path");
    for (size_t i = 1; i < n; ++i)
        CHECK_STR(c[i].origin, "CUDA toolkit");
    size_t m = fattn_cudnn_candidates(c, 8, 1);
    CHECK_INT(m, n + 1);
    CHECK_STR(c[n].path, path);
    CHECK_STR(c[n].origin, "python3's nvidia-cudnn package");
    /* PyTorch's library loads by its path and says where it came from. */
    fattn_cudnn *lib;
    char why[1200];
    CHECK_INT(fattn_cudnn_load_from(&c[n], 1, &lib, why, sizeof why), 0);
    if (lib) {
        CHECK_CONTAINS(fattn_cudnn_describe(lib), "cuDNN 9.14.0 (");
        CHECK_CONTAINS(fattn_cudnn_describe(lib), "python3's nvidia-cudnn package)");
        fattn_cudnn_free(&lib, NULL);
    }
    setenv("PATH", old_path, 1);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd))
        exit(T_HARNESS);
}

static void versions(void)
{
    fattn_cudnn_candidate c[3] = {
        {"/nonexistent/libcudnn.so.9", "nowhere"},
        {"", "old"},
        {"", "new"},
    };
    snprintf(c[1].path, sizeof c[1].path, "%s", getenv("FATTN_MOCK_CUDNN_OLD"));
    snprintf(c[2].path, sizeof c[2].path, "%s", getenv("FATTN_MOCK_CUDNN"));
    fattn_cudnn *lib = NULL;
    char why[1200];
    /* 9.13.0 is passed over for 9.14.0. */
    CHECK_INT(fattn_cudnn_load_from(c, 3, &lib, why, sizeof why), 0);
    if (lib) {
        CHECK_INT(fattn_cudnn_version(lib), 91400);
        CHECK_CONTAINS(fattn_cudnn_describe(lib), c[2].path);
        fattn_cudnn_free(&lib, NULL);
    }
    /* None will do: one line naming each place and what it held. */
    CHECK_INT(fattn_cudnn_load_from(c, 2, &lib, why, sizeof why), -1);
    CHECK(lib == NULL);
    CHECK_CONTAINS(why, "no cuDNN baseline: cuDNN 9.13.1 or newer is needed");
    CHECK_CONTAINS(why, "/nonexistent/libcudnn.so.9 (nowhere) cannot be loaded");
    CHECK_CONTAINS(why, "(old) is cuDNN 9.13.0");
    CHECK(strchr(why, '\n') == NULL);
    setenv("FATTN_LIBCUDNN", "/nonexistent/libcudnn.so.9", 1);
    CHECK_INT(fattn_cudnn_load(&lib, why, sizeof why), -1);
    CHECK_CONTAINS(why, "/nonexistent/libcudnn.so.9 ($FATTN_LIBCUDNN) cannot be loaded");
    unsetenv("FATTN_LIBCUDNN");
}

/* This machine's cuDNN, found as the worker finds it. */
static int this_machine(void)
{
    fattn_cudnn *c;
    char why[1200];
    unsetenv("FATTN_LIBCUDNN");
    if (fattn_cudnn_load(&c, why, sizeof why)) {
        printf("SKIP: %s\n", why);
        return T_SKIP;
    }
    fprintf(stderr, "found: %s\n", fattn_cudnn_describe(c));
    CHECK(fattn_cudnn_version(c) >= FATTN_CUDNN_MIN_VERSION);
    CHECK_CONTAINS(fattn_cudnn_describe(c), "cuDNN 9.");
    CHECK_CONTAINS(fattn_cudnn_describe(c), "libcudnn.so.9");
    /* Refused before any GPU work: the fused operation has no mask. */
    fattn_shape causal = {2, 8, 512, 64, 1};
    CHECK_INT(fattn_cudnn_plan(c, NULL, &causal, NULL, why, sizeof why), -1);
    CHECK_CONTAINS(why, "no cuDNN baseline for causal shapes");
    fattn_cudnn_free(&c, NULL);
    CHECK(c == NULL);
    return 0;
}

int main(void)
{
    /* The mock libraries (meson sets these) for the lookup's own cases; on
     * the device, run alone, only this machine's cuDNN is checked. */
    if (getenv("FATTN_MOCK_CUDNN") && getenv("FATTN_MOCK_CUDNN_OLD")) {
        T_RUN(places);
        T_RUN(versions);
    }
    int skip = this_machine();
    return t_failures || !skip ? t_exit() : skip;
}
