/*
 * nvrtc.h - compiling a kernel configuration with NVRTC.
 *
 * The options are fixed but for the configuration: the architecture, C++17,
 * fast math, the ptxas report (-v), one -D per kernel macro (the nine
 * tunables, HEAD_DIM and CAUSAL, and any test-only override that differs
 * from its default) and the toolkit's include path. The options, less the
 * include path, form part of the compile-cache key (see fattn_cache_key()).
 * NVRTC is thread-safe for distinct programs: jobs run in a thread pool.
 */
#ifndef FATTN_COMPILE_NVRTC_H
#define FATTN_COMPILE_NVRTC_H

#include <stddef.h>

#include "compile/kernel_src.h"
#include "compile/postgates.h"
#include "space/params.h"
#include "target/arch.h"

#define FATTN_MAX_OPTIONS 32

typedef struct fattn_options {
    int n;
    char *argv[FATTN_MAX_OPTIONS];
    char *key; /* the options less the include path, space-separated */
} fattn_options;

/* Options for a configuration of the tunable kernel (cfg non-NULL) or the
 * reference kernel (cfg NULL). */
void fattn_options_build(fattn_options *o, const fattn_config *cfg, int head_dim, int causal, const fattn_arch *a,
                         const char *cuda_include);
void fattn_options_release(fattn_options *o);

/* The nvcc flags that build what NVRTC built with `options_key` (an
 * options key as above, space-separated): --gpu-architecture=sm_XX becomes
 * -gencode=arch=compute_XX,code=sm_XX (for sm_90a, `nvcc -arch=sm_90a -c`
 * adds a compute_90 pass that fails); the ptxas report (it changes no code)
 * and include paths are left out, and the -D options unless `defines` (an
 * exported header carries them as FATTN_<NAME> instead); every other option
 * (-std=c++17, --use_fast_math, any added later) is kept as it is, since
 * nvcc takes NVRTC's spelling of them. Writes "" when the key names no
 * architecture. */
void fattn_nvcc_flags(const char *options_key, int defines, char *out, size_t n);

typedef struct fattn_nvrtc_result {
    int ok;    /* compiled */
    char *log; /* NVRTC's log, ptxas report included ("" if none) */
    void *cubin;
    size_t cubin_size;
    char *ptx; /* only when asked for */
    double ms; /* wall time of the compile */
} fattn_nvrtc_result;

enum {
    FATTN_NVRTC_PTX = 1,         /* keep the PTX as well */
    FATTN_NVRTC_SYNTAX_ONLY = 2, /* the front end only (-fdevice-syntax-only): a log, no cubin */
};

/* Compiles with `flags` (FATTN_NVRTC_*); a compilation error is a result
 * (ok = 0, log), a failure of NVRTC itself returns FATTN_EFAIL with the
 * message recorded. */
int fattn_nvrtc_compile(const fattn_kernel_src *src, const fattn_options *o, int flags, fattn_nvrtc_result *out);

/* The first line of an NVRTC log that reports an error ("file(12): error:
 * ..."), copied into out without its newline; "" when there is none. */
void fattn_nvrtc_first_error(const char *log, char *out, size_t n);
void fattn_nvrtc_result_release(fattn_nvrtc_result *r);

/* "13.0" */
const char *fattn_nvrtc_version(void);

/* The compile-cache key: sha256 over the kernel hash, the arch, the options
 * key and the NVRTC version. */
void fattn_cache_key(const char *kernel_hash, const char *arch, const char *options_key, const char *nvrtc_version,
                     char out[65]);

/* Checks that the toolkit's include folder holds cuda_fp16.h; reports one
 * line (FATTN_EFAIL) otherwise. *include receives <root>/include (free it). */
int fattn_cuda_include(char **include);

/* Reads registers, spills, stack frame and shared memory from the ptxas
 * report and the cubin, and the layout size and block size the kernel
 * exports. Returns 0, or FATTN_EFAIL with a reason in why when the cubin
 * cannot be read. */
int fattn_resources_read(const char *log, const void *cubin, size_t cubin_size, const char *kernel, fattn_compiled *out,
                         char *why, size_t why_size);

/* The registers the kernel's warpgroups hold after setmaxnreg, as the cubin
 * exports them (fattn_setmaxnreg_pool; 0 when it exports none): a part of
 * fattn_resources_read(), also what a compile-cache hit reads again (the
 * cache keeps no column for it). Returns 0, or FATTN_EFAIL with why. */
int fattn_resources_nreg_pool(const void *cubin, size_t cubin_size, unsigned *pool, char *why, size_t why_size);

#endif
