/*
 * nvrtc.c - NVRTC compiles, their options, and the resources they yield.
 */
#include "compile/nvrtc.h"

#include <nvrtc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/cubin.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/misc.h"
#include "util/paths.h"
#include "util/sha256.h"
#include "util/strbuf.h"

static void add(fattn_options *o, fattn_strbuf *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void add(fattn_options *o, fattn_strbuf *key, const char *fmt, ...)
{
    fattn_strbuf sb;
    va_list ap;
    fattn_sb_init(&sb);
    va_start(ap, fmt);
    fattn_sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    if (key) {
        if (key->len)
            fattn_sb_adds(key, " ");
        fattn_sb_adds(key, sb.s);
    }
    o->argv[o->n++] = fattn_sb_detach(&sb);
}

void fattn_options_build(fattn_options *o, const fattn_config *cfg, int head_dim, int causal, const fattn_arch *a,
                         const char *cuda_include)
{
    fattn_strbuf key;
    fattn_sb_init(&key);
    o->n = 0;
    add(o, &key, "--gpu-architecture=%s%s", a->name, fattn_family_arch_suffix(cfg ? cfg->fam : NULL, a->name));
    add(o, &key, "-std=c++17");
    add(o, &key, "--use_fast_math");
    add(o, &key, "--ptxas-options=-v");
    if (cfg) {
        for (int i = 0; i < cfg->fam->nparams; ++i)
            if (fattn_param_shown(cfg, i))
                add(o, &key, "-D%s=%d", cfg->fam->params[i].name, cfg->v[i]);
    }
    add(o, &key, "-DHEAD_DIM=%d", head_dim);
    add(o, &key, "-DCAUSAL=%d", causal ? 1 : 0);
    add(o, NULL, "-I%s", cuda_include);
    o->key = fattn_sb_detach(&key);
}

void fattn_options_release(fattn_options *o)
{
    for (int i = 0; i < o->n; ++i)
        free(o->argv[i]);
    free(o->key);
    memset(o, 0, sizeof *o);
}

void fattn_nvcc_flags(const char *options_key, int defines, char *out, size_t n)
{
    static const char arch_opt[] = "--gpu-architecture=sm_";
    fattn_strbuf sb;
    int have_arch = 0;
    fattn_sb_init(&sb);
    for (const char *p = options_key; p && *p;) {
        while (*p == ' ')
            ++p;
        size_t len = strcspn(p, " ");
        if (!len)
            break;
        if (len > sizeof arch_opt - 1 && !strncmp(p, arch_opt, sizeof arch_opt - 1)) {
            int v = (int)(len - (sizeof arch_opt - 1));
            const char *sm = p + sizeof arch_opt - 1;
            fattn_sb_addf(&sb, "%s-gencode=arch=compute_%.*s,code=sm_%.*s", sb.len ? " " : "", v, sm, v, sm);
            have_arch = 1;
        } else if (strncmp(p, "--ptxas-options", 15) && strncmp(p, "-I", 2) && (defines || strncmp(p, "-D", 2))) {
            fattn_sb_addf(&sb, "%s%.*s", sb.len ? " " : "", (int)len, p);
        }
        p += len;
    }
    snprintf(out, n, "%s", have_arch ? sb.s : "");
    fattn_sb_release(&sb);
}

static int nvrtc_fail(const char *what, nvrtcResult r)
{
    return fattn_error(FATTN_EFAIL, "NVRTC %s failed: %s", what, nvrtcGetErrorString(r));
}

int fattn_nvrtc_compile(const fattn_kernel_src *src, const fattn_options *o, int flags, fattn_nvrtc_result *out)
{
    const char *argv[FATTN_MAX_OPTIONS + 1];
    nvrtcProgram prog = NULL;
    nvrtcResult r;
    int rc = FATTN_OK;
    size_t n;
    memset(out, 0, sizeof *out);
    double t0 = fattn_now_ms();

    r = nvrtcCreateProgram(&prog, src->text, src->name, src->nheaders, (const char *const *)src->header_texts,
                           (const char *const *)src->header_names);
    if (r != NVRTC_SUCCESS)
        return nvrtc_fail("program creation", r);
    int argc = o->n;
    memcpy(argv, o->argv, (size_t)o->n * sizeof *argv);
    if (flags & FATTN_NVRTC_SYNTAX_ONLY)
        argv[argc++] = "--fdevice-syntax-only";
    nvrtcResult cr = nvrtcCompileProgram(prog, argc, argv);
    if (cr != NVRTC_SUCCESS && cr != NVRTC_ERROR_COMPILATION) {
        rc = nvrtc_fail("compilation", cr);
        goto out;
    }
    if ((r = nvrtcGetProgramLogSize(prog, &n)) != NVRTC_SUCCESS) {
        rc = nvrtc_fail("log size", r);
        goto out;
    }
    out->log = fattn_xmalloc(n + 1);
    out->log[0] = '\0';
    if (n && (r = nvrtcGetProgramLog(prog, out->log)) != NVRTC_SUCCESS) {
        rc = nvrtc_fail("log", r);
        goto out;
    }
    out->log[n] = '\0';
    if (cr == NVRTC_SUCCESS && (flags & FATTN_NVRTC_SYNTAX_ONLY)) {
        out->ok = 1;
    } else if (cr == NVRTC_SUCCESS) {
        if ((r = nvrtcGetCUBINSize(prog, &out->cubin_size)) != NVRTC_SUCCESS) {
            rc = nvrtc_fail("cubin size", r);
            goto out;
        }
        out->cubin = fattn_xmalloc(out->cubin_size);
        if ((r = nvrtcGetCUBIN(prog, out->cubin)) != NVRTC_SUCCESS) {
            rc = nvrtc_fail("cubin", r);
            goto out;
        }
        if (flags & FATTN_NVRTC_PTX) {
            if ((r = nvrtcGetPTXSize(prog, &n)) != NVRTC_SUCCESS) {
                rc = nvrtc_fail("PTX size", r);
                goto out;
            }
            out->ptx = fattn_xmalloc(n + 1);
            if ((r = nvrtcGetPTX(prog, out->ptx)) != NVRTC_SUCCESS) {
                rc = nvrtc_fail("PTX", r);
                goto out;
            }
            out->ptx[n] = '\0';
        }
        out->ok = 1;
    }
out:
    nvrtcDestroyProgram(&prog);
    out->ms = fattn_now_ms() - t0;
    if (rc)
        fattn_nvrtc_result_release(out);
    return rc;
}

void fattn_nvrtc_first_error(const char *log, char *out, size_t n)
{
    out[0] = '\0';
    for (const char *line = log; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (memmem(line, len, "error:", 6) || memmem(line, len, "error #", 7)) {
            snprintf(out, n, "%.*s", (int)len, line);
            return;
        }
        line = end ? end + 1 : NULL;
    }
}

void fattn_nvrtc_result_release(fattn_nvrtc_result *r)
{
    free(r->log);
    free(r->cubin);
    free(r->ptx);
    memset(r, 0, sizeof *r);
}

const char *fattn_nvrtc_version(void)
{
    static char version[32];
    int major = 0, minor = 0;
    if (!version[0]) {
        nvrtcVersion(&major, &minor);
        snprintf(version, sizeof version, "%d.%d", major, minor);
    }
    return version;
}

void fattn_cache_key(const char *kernel_hash, const char *arch, const char *options_key, const char *nvrtc_version,
                     char out[65])
{
    fattn_strbuf sb;
    fattn_sb_init(&sb);
    fattn_sb_addf(&sb, "kernel %s\narch %s\noptions %s\nnvrtc %s\n", kernel_hash, arch, options_key, nvrtc_version);
    fattn_sha256_hex(sb.s, sb.len, out);
    fattn_sb_release(&sb);
}

int fattn_cuda_include(char **include)
{
    char *inc = fattn_path_join(fattn_cuda_root(), "include");
    char *probe = fattn_path_join(inc, "cuda_fp16.h");
    FILE *f = fopen(probe, "r");
    free(probe);
    if (!f) {
        int rc = fattn_error(FATTN_EFAIL,
                             "CUDA headers not found: %s/cuda_fp16.h is missing; set FATTN_CUDA_ROOT "
                             "to the toolkit root (configured: %s)",
                             inc, fattn_cuda_root());
        free(inc);
        return rc;
    }
    fclose(f);
    *include = inc;
    return FATTN_OK;
}

/* The number before the first `label` of the log, e.g. 24 in "24 bytes spill stores"; 0 if absent. */
static unsigned number_before(const char *log, const char *label)
{
    const char *p = strstr(log, label);
    if (!p)
        return 0;
    const char *q = p;
    while (q > log && q[-1] == ' ')
        --q;
    while (q > log && q[-1] >= '0' && q[-1] <= '9')
        --q;
    return (unsigned)strtoul(q, NULL, 10);
}

int fattn_resources_nreg_pool(const void *cubin, size_t cubin_size, unsigned *pool, char *why, size_t why_size)
{
    *pool = 0; /* optional: a kernel without setmaxnreg exports no pool */
    return fattn_cubin_symbol_u32(cubin, cubin_size, "fattn_setmaxnreg_pool", pool, why, why_size) < 0 ? FATTN_EFAIL
                                                                                                       : FATTN_OK;
}

int fattn_resources_read(const char *log, const void *cubin, size_t cubin_size, const char *kernel, fattn_compiled *out,
                         char *why, size_t why_size)
{
    fattn_cubin_info ci;
    memset(out, 0, sizeof *out);
    out->ok = 1;
    out->log = log;
    if (fattn_cubin_parse(cubin, cubin_size, kernel, &ci, why, why_size))
        return FATTN_EFAIL;
    if (fattn_cubin_symbol_u32(cubin, cubin_size, "fattn_smem_bytes", &out->smem_dynamic, why, why_size)
        || fattn_cubin_symbol_u32(cubin, cubin_size, "fattn_threads", &out->threads, why, why_size))
        return FATTN_EFAIL;
    if (fattn_resources_nreg_pool(cubin, cubin_size, &out->nreg_pool, why, why_size))
        return FATTN_EFAIL;
    out->regs = ci.regs;
    out->stack_frame = ci.frame_bytes;
    out->smem_static = ci.smem_static;
    out->spill_stores = number_before(log, "bytes spill stores");
    out->spill_loads = number_before(log, "bytes spill loads");
    unsigned log_regs = number_before(log, "registers");
    if (log_regs && log_regs != ci.regs) {
        snprintf(why, why_size, "register counts disagree: ptxas reports %u, the cubin %u", log_regs, ci.regs);
        return FATTN_EFAIL;
    }
    unsigned log_smem = number_before(log, "bytes smem");
    if (log_smem != ci.smem_static) {
        snprintf(why, why_size, "static shared memory disagrees: ptxas reports %u B, the cubin %u B", log_smem,
                 ci.smem_static);
        return FATTN_EFAIL;
    }
    return FATTN_OK;
}
