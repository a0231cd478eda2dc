/*
 * test_driver.c - which driver errors end a worker. The toolkit's cuda.h is
 * read as the specification: every CUresult whose comment says the process
 * "must be terminated and relaunched" or the context "cannot be used
 * anymore" is sticky (the worker exits and a new one takes over); the
 * errors with which the driver refuses a launch as configured (too much
 * shared memory, an invalid cluster, too many resources) are not, so the
 * worker that saw one goes on.
 */
#include "t.h"

#include <ctype.h>

#include "gpu/driver.h"
#include "util/fs.h"
#include "util/paths.h"

/* Collapses runs of whitespace and comment stars into one space. */
static void squeeze(const char *in, size_t n, char *out, size_t size)
{
    size_t o = 0;
    int space = 0;
    for (size_t i = 0; i < n && o + 1 < size; ++i) {
        char c = in[i];
        if (isspace((unsigned char)c) || c == '*' || c == '/') {
            space = 1;
            continue;
        }
        if (space && o)
            out[o++] = ' ';
        space = 0;
        out[o++] = c;
    }
    out[o] = '\0';
}

static void sticky_per_cuda_h(void)
{
    char path[1024], *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/include/cuda.h", fattn_cuda_root());
    if (fattn_read_file(path, "cuda.h", 1, &text, &len)) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(T_HARNESS);
    }
    const char *begin = strstr(text, "typedef enum cudaError_enum");
    const char *end = begin ? strstr(begin, "} CUresult;") : NULL;
    CHECK(begin && end);
    if (!begin || !end) {
        free(text);
        return;
    }
    int codes = 0, sticky = 0;
    const char *comment = begin;
    for (const char *p = begin; p < end;) {
        const char *name = strstr(p, "CUDA_ERROR_");
        if (!name || name >= end)
            break;
        const char *eq = strchr(name, '=');
        const char *nl = strchr(name, '\n');
        if (!eq || !nl || eq > nl) { /* a mention inside a comment */
            p = name + 11;
            continue;
        }
        char doc[4096], code_name[64];
        squeeze(comment, (size_t)(name - comment), doc, sizeof doc);
        snprintf(code_name, sizeof code_name, "%.*s", (int)strcspn(name, " \t="), name);
        long code = strtol(eq + 1, NULL, 10);
        int must = strstr(doc, "must be terminated and relaunched") || strstr(doc, "cannot be used anymore");
        ++codes;
        if (must) {
            ++sticky;
            if (!fattn_cu_error_is_sticky((CUresult)code))
                fprintf(stderr, "%s (%ld): cuda.h says the process cannot go on; not sticky\n", code_name, code);
            CHECK(fattn_cu_error_is_sticky((CUresult)code));
        }
        /* A launch refusal leaves the context usable: never both. */
        CHECK(!(fattn_cu_error_is_sticky((CUresult)code) && fattn_cu_error_is_launch_refusal((CUresult)code)));
        comment = nl;
        p = nl;
    }
    fprintf(stderr, "cuda.h: %d error codes, %d of them end the process\n", codes, sticky);
    CHECK(codes > 90);   /* CUDA 13.0 has 101 */
    CHECK(sticky >= 12); /* and 13 of them say so */
    free(text);
}

static void launch_refusals(void)
{
    static const CUresult refused[] = {CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                                       CUDA_ERROR_INVALID_CLUSTER_SIZE, CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
        CHECK(!fattn_cu_error_is_sticky(refused[i]));
        CHECK(fattn_cu_error_is_launch_refusal(refused[i]));
    }
    /* What the worker must not outlive, including the driver's "I don't know". */
    static const CUresult ruined[] = {CUDA_ERROR_ILLEGAL_ADDRESS,     CUDA_ERROR_MISALIGNED_ADDRESS,
                                      CUDA_ERROR_ILLEGAL_INSTRUCTION, CUDA_ERROR_LAUNCH_FAILED,
                                      CUDA_ERROR_CONTAINED,           CUDA_ERROR_UNKNOWN};
    for (size_t i = 0; i < sizeof ruined / sizeof ruined[0]; ++i)
        CHECK(fattn_cu_error_is_sticky(ruined[i]));
    CHECK(!fattn_cu_error_is_sticky(CUDA_SUCCESS));
    CHECK(!fattn_cu_error_is_launch_refusal(CUDA_SUCCESS));
    /* Named without a driver, for the messages of a dead context. */
    CHECK_STR(fattn_cu_error_name(NULL, CUDA_ERROR_INVALID_CLUSTER_SIZE), "CUDA_ERROR_INVALID_CLUSTER_SIZE");
    CHECK_STR(fattn_cu_error_name(NULL, CUDA_ERROR_CONTAINED), "CUDA_ERROR_CONTAINED");
}

int main(void)
{
    T_RUN(sticky_per_cuda_h);
    T_RUN(launch_refusals);
    return t_exit();
}
