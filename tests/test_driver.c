/*
 * test_driver.c - which driver errors end a worker. The toolkit's cuda.h is
 * read as the specification: every CUresult whose comment says the process
 * "must be terminated and relaunched" or the context "cannot be used
 * anymore" is sticky (the worker exits and a new one takes over); the
 * errors with which the driver refuses a launch as configured (too much
 * shared memory, an invalid cluster, too many resources) are not, so the
 * worker that saw one goes on. And the entry points src/gpu/driver.h
 * resolves are held to cuda.h and cudaTypedefs.h: each asked for at the
 * version of the ABI its prototype declares.
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

static char *read_header(const char *name)
{
    char path[1024], *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/include/%s", fattn_cuda_root(), name);
    if (fattn_read_file(path, name, 1, &text, &len)) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(T_HARNESS);
    }
    return text;
}

static void sticky_per_cuda_h(void)
{
    char *text = read_header("cuda.h");
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

/* The parameter types of the list whose '(' is at p, as "T1,T2,...":
 * whitespace squeezed, parameter names dropped, and the versioned type
 * names (CUdevice_v1, CUdeviceptr_v2) read as the plain ones they are. */
static int param_types(const char *p, char *out, size_t size)
{
    char raw[2048];
    size_t o = 0;
    int depth = 0, space = 0;
    for (const char *q = p; *q; ++q) {
        depth += *q == '(';
        depth -= *q == ')';
        if (depth == 0)
            break;
        if (q == p)
            continue;
        if (isspace((unsigned char)*q)) {
            space = 1;
            continue;
        }
        if (o + 3 >= sizeof raw)
            return -1;
        if (space && o && raw[o - 1] != ',' && raw[o - 1] != '*' && *q != '*' && *q != ',')
            raw[o++] = ' ';
        space = 0;
        raw[o++] = *q;
    }
    if (depth)
        return -1;
    raw[o] = '\0';
    o = 0;
    out[0] = '\0';
    for (char *param = strtok(raw, ","); param; param = strtok(NULL, ",")) {
        char *name = param + strlen(param);
        while (name > param && (isalnum((unsigned char)name[-1]) || name[-1] == '_'))
            --name;
        if (name > param && (name[-1] == ' ' || name[-1] == '*'))
            *name = '\0'; /* a named parameter: the type is what comes before */
        size_t n = strlen(param);
        if (n && param[n - 1] == ' ')
            param[--n] = '\0';
        for (char *v = strstr(param, "_v"); v; v = strstr(v + 1, "_v")) {
            char *e = v + 2;
            while (isdigit((unsigned char)*e))
                ++e;
            if (e > v + 2 && !isalnum((unsigned char)*e) && *e != '_')
                memmove(v, e, strlen(e) + 1);
        }
        o += (size_t)snprintf(out + o, o < size ? size - o : 0, "%s%s", o ? "," : "", param);
    }
    return o < size ? 0 : -1;
}

static void check_entry(const char *cuda_h, const char *typedefs, const char *name, int version)
{
    char pat[160], want[1024], got[1024];
    /* The newest PFN_name_vN not newer than version. */
    int best = -1;
    const char *best_params = NULL;
    snprintf(pat, sizeof pat, "*PFN_%s_v", name);
    for (const char *p = strstr(typedefs, pat); p; p = strstr(p + 1, pat)) {
        char *end;
        long v = strtol(p + strlen(pat), &end, 10);
        if (end == p + strlen(pat) || strncmp(end, ")(", 2))
            continue; /* PFN_name_vN_ptsz and the like */
        if (v <= version && v > best) {
            best = (int)v;
            best_params = end + 1;
        }
    }
    if (best != version) {
        fprintf(stderr, "%s: asked at version %d, cudaTypedefs.h's newest ABI up to it is v%d\n", name, version, best);
        CHECK(best == version);
        return;
    }
    /* cuda.h's prototype: its first declaration of the name, which its
     * "#define cuMemAlloc cuMemAlloc_v2" and the like turn into the ABI
     * that __typeof__ sees (the legacy ones come after, under #undef). */
    snprintf(pat, sizeof pat, "CUresult CUDAAPI %s(", name);
    const char *proto = strstr(cuda_h, pat);
    if (!proto) {
        /* Declared under another name that cuda.h #defines to this one
         * ("#define cuGraphInstantiate cuGraphInstantiateWithFlags"). */
        for (const char *d = strstr(cuda_h, "#define "); d && !proto; d = strstr(d + 1, "#define ")) {
            char alias[128], target[128];
            if (sscanf(d, "#define %127s %127s", alias, target) == 2 && !strcmp(target, name)) {
                snprintf(pat, sizeof pat, "CUresult CUDAAPI %s(", alias);
                proto = strstr(cuda_h, pat);
            }
        }
    }
    if (!proto || param_types(proto + strlen(pat) - 1, want, sizeof want)
        || param_types(best_params, got, sizeof got)) {
        fprintf(stderr, "%s: no prototype, or one not parsed\n", name);
        CHECK(0);
        return;
    }
    if (strcmp(want, got)) {
        fprintf(stderr, "%s: cuda.h's takes (%s), PFN_%s_v%d (%s)\n", name, want, name, best, got);
        CHECK(!strcmp(want, got));
    }
}

/* Each entry point is asked of cuGetProcAddress at the version of the ABI
 * its cuda.h prototype declares: the newest cudaTypedefs.h PFN_name_vN
 * with N at most that version is N itself, and takes the prototype's
 * parameters. (Asked at CUDA_VERSION, cuCtxSynchronize came back as
 * CUDA 13's cuCtxSynchronize_v2(ctx) and failed every call on the GPU.) */
static void entry_point_versions(void)
{
    char *cuda_h = read_header("cuda.h"), *typedefs = read_header("cudaTypedefs.h");
    int n = 0;
#define CHECK_ENTRY(f, v) check_entry(cuda_h, typedefs, #f, v), ++n;
    FATTN_CU_FUNCTIONS(CHECK_ENTRY)
#undef CHECK_ENTRY
    fprintf(stderr, "%d entry points checked against cuda.h and cudaTypedefs.h\n", n);
    CHECK(n >= 30);
    free(cuda_h);
    free(typedefs);
}

int main(void)
{
    T_RUN(entry_point_versions);
    T_RUN(sticky_per_cuda_h);
    T_RUN(launch_refusals);
    return t_exit();
}
