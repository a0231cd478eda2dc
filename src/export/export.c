/*
 * export.c - writing the best configuration of a study.
 */
#include "export/export.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compile/kernel_src.h"
#include "compile/nvrtc.h"
#include "config.h"
#include "export/table.h"
#include "space/hardware.h"
#include "store/read.h"
#include "util/err.h"
#include "util/escape.h"
#include "util/misc.h"

typedef struct best {
    long long study, trial;
    char *created, *command, *strategy, *arch, *device, *kernel_hash, *space_hash, *timing, *key, *cache_key;
    char *evaluator;     /* "gpu", "replay" (the times a landscape's), or NULL (not recorded) */
    char *options;       /* the NVRTC options of the measured build (its compile-cache entry's) */
    char nvcc[512];      /* the nvcc flags that build the same: fattn_nvcc_flags(), without -D */
    char nvcc_full[768]; /* the same with the -D options */
    long long seed;
    int has_seed;
    fattn_shape shape;
    fattn_config cfg;
    double median, p10, p90, tflops, gbps;
    int smem, has_smem;
    /* The latest confirmation of this configuration in the study, if any. */
    long long conf_id;
    char *conf_created, *conf_baseline, *conf_base_desc, *conf_verdict;
    int conf_n;
    double conf_median, conf_lo, conf_hi, conf_p90, conf_base_median, conf_speedup, conf_speedup_lo, conf_speedup_hi;
} best;

static char *text(sqlite3_stmt *st, int c)
{
    const unsigned char *t = sqlite3_column_text(st, c);
    return t ? fattn_xstrdup((const char *)t) : NULL;
}

static void best_release(best *b)
{
    free(b->created), free(b->command), free(b->strategy), free(b->arch), free(b->device);
    free(b->kernel_hash), free(b->space_hash), free(b->timing), free(b->key), free(b->cache_key), free(b->options);
    free(b->evaluator);
    free(b->conf_created), free(b->conf_baseline), free(b->conf_base_desc), free(b->conf_verdict);
    memset(b, 0, sizeof *b);
}

/* The configuration a study's confirmations found fastest: among the latest
 * measured confirmation of each configuration, the lowest median. Returns 1
 * with its key (the caller frees it), 0 when the study has none, FATTN_EFAIL
 * on error. */
static int confirmed_key(fattn_store *s, long long study, char **key)
{
    sqlite3_stmt *st;
    if (fattn_store_read(s, FATTN_READ_CONFIRMED_KEY, &(fattn_read_args){.id = study}, &st))
        return FATTN_EFAIL;
    int r = sqlite3_step(st), found = r == SQLITE_ROW;
    if (found)
        *key = text(st, 0);
    sqlite3_finalize(st);
    if (!found && r != SQLITE_DONE)
        return fattn_store_fail(s, "cannot read confirmations");
    return found;
}

/* The latest measured confirmation of b's configuration in its study. */
static int load_confirmation(fattn_store *s, best *b)
{
    sqlite3_stmt *st;
    if (fattn_store_read(s, FATTN_READ_CONFIRMATION_OF, &(fattn_read_args){.id = b->study, .text = b->key}, &st))
        return FATTN_EFAIL;
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        b->conf_id = sqlite3_column_int64(st, 0);
        b->conf_created = text(st, 1);
        b->conf_baseline = text(st, 2);
        b->conf_base_desc = text(st, 3);
        b->conf_verdict = text(st, 4);
        b->conf_n = sqlite3_column_int(st, 5);
        b->conf_median = sqlite3_column_double(st, 6);
        b->conf_lo = sqlite3_column_double(st, 7);
        b->conf_hi = sqlite3_column_double(st, 8);
        b->conf_p90 = sqlite3_column_double(st, 9);
        b->conf_base_median = sqlite3_column_double(st, 10);
        b->conf_speedup = sqlite3_column_double(st, 11);
        b->conf_speedup_lo = sqlite3_column_double(st, 12);
        b->conf_speedup_hi = sqlite3_column_double(st, 13);
    }
    sqlite3_finalize(st);
    return r == SQLITE_ROW || r == SQLITE_DONE ? FATTN_OK : fattn_store_fail(s, "cannot read confirmations");
}

/* Study `study`'s best configuration into b; with `want` (a canonical key),
 * that configuration's fastest timed trial instead. */
static int load_best(fattn_store *s, long long study, const char *want, best *b)
{
    sqlite3_stmt *st;
    char *key = NULL;
    memset(b, 0, sizeof *b);
    int confirmed = want ? 0 : confirmed_key(s, study, &key);
    if (confirmed < 0)
        return confirmed;
    if (fattn_store_read(s, FATTN_READ_BEST, &(fattn_read_args){.id = study, .text = want ? want : key}, &st)) {
        free(key);
        return FATTN_EFAIL;
    }
    int r = sqlite3_step(st);
    free(key);
    if (r != SQLITE_ROW) {
        sqlite3_finalize(st);
        if (r != SQLITE_DONE)
            return fattn_store_fail(s, "cannot read trials");
        if (want)
            return fattn_error(FATTN_EFAIL,
                               "study %lld has no timed trial of %s (fattn-tune query trials --study %lld lists "
                               "what it has)",
                               study, want, study);
        return fattn_error(FATTN_EFAIL,
                           "study %lld has no timed trial: nothing to export yet (trials are timed by "
                           "fattn-tune search on a GPU, or without one by search --evaluator replay:FILE from a "
                           "measured landscape such as tests/data/landscape-h100-2-8-512-64.csv; fattn-tune query "
                           "trials --study %lld lists what it has)",
                           study, study);
    }
    b->study = study;
    b->created = text(st, 0);
    b->command = text(st, 1);
    b->strategy = text(st, 2);
    b->has_seed = sqlite3_column_type(st, 3) != SQLITE_NULL;
    b->seed = sqlite3_column_int64(st, 3);
    b->shape.batch = sqlite3_column_int(st, 4);
    b->shape.heads = sqlite3_column_int(st, 5);
    b->shape.seqlen = sqlite3_column_int(st, 6);
    b->shape.head_dim = sqlite3_column_int(st, 7);
    b->shape.causal = sqlite3_column_int(st, 8);
    b->arch = text(st, 9);
    b->device = text(st, 10);
    b->kernel_hash = text(st, 11);
    b->space_hash = text(st, 12);
    b->timing = text(st, 13);
    b->trial = sqlite3_column_int64(st, 14);
    b->key = text(st, 15);
    const int m = 16 + FATTN_MMA_NPARAMS; /* the columns after the parameters */
    char *family = text(st, m + 8);
    /* The parameter columns are the mma family's, NULL in another family's
     * trials (the key, any text a user's database may hold, is not parsed). */
    if (sqlite3_column_type(st, 16) == SQLITE_NULL) {
        /* Another family's trial: its key names the family and every
         * parameter, each held to the family's table by the parser. */
        const fattn_family *fam = family ? fattn_family_find(family) : NULL;
        if (!fam || fam == &fattn_family_mma || fattn_config_parse(b->key, "the best trial's key", &b->cfg)
            || b->cfg.fam != fam) {
            sqlite3_finalize(st);
            best_release(b);
            free(family);
            return fattn_error(FATTN_EFAIL,
                               "study %lld: its best trial (%lld) holds no configuration of a known "
                               "kernel family",
                               study, (long long)b->trial);
        }
    } else {
        b->cfg.fam = &fattn_family_mma;
        for (int i = 0; i < FATTN_MMA_NPARAMS; ++i)
            b->cfg.v[i] = sqlite3_column_int(st, 16 + i);
    }
    free(family);
    b->median = sqlite3_column_double(st, m);
    b->p10 = sqlite3_column_double(st, m + 1);
    b->p90 = sqlite3_column_double(st, m + 2);
    b->tflops = sqlite3_column_double(st, m + 3);
    b->gbps = sqlite3_column_double(st, m + 4);
    b->has_smem = sqlite3_column_type(st, m + 5) != SQLITE_NULL;
    b->smem = sqlite3_column_int(st, m + 5);
    b->cache_key = text(st, m + 6);
    b->options = text(st, m + 7);
    b->evaluator = text(st, m + 9);
    sqlite3_finalize(st);
    const fattn_arch *a = fattn_arch_find(b->arch);
    if (!b->options && a) {
        /* Not in the cache (a fixture, a pruned cache): the options fattn-tune
         * builds for this configuration, as it built the measured one. */
        fattn_options o;
        fattn_options_build(&o, &b->cfg, b->shape.head_dim, b->shape.causal, a, "");
        b->options = fattn_xstrdup(o.key);
        fattn_options_release(&o);
    }
    fattn_nvcc_flags(b->options, 0, b->nvcc, sizeof b->nvcc);
    fattn_nvcc_flags(b->options, 1, b->nvcc_full, sizeof b->nvcc_full);
    if (!b->has_smem) {
        fattn_launch l; /* the family's model */
        b->cfg.fam->launch(&b->cfg, &b->shape, 0, &l);
        b->smem = (int)l.smem;
    }
    return load_confirmation(s, b);
}

/* The kernel's parameter list, "(const half *q, ..., float scale)". */
static void signature(const fattn_launch *l, char *out, size_t n)
{
    size_t k = (size_t)snprintf(out, n, "(");
    for (int i = 0; i < l->nargs && k < n; ++i) {
        const fattn_arg *a = &l->args[i];
        const char *name = fattn_arg_kind_name(a->kind), *sep = i ? ", " : "";
        if (a->kind <= FATTN_ARG_O)
            k += (size_t)snprintf(out + k, n - k, "%s%shalf *%s", sep, a->kind == FATTN_ARG_O ? "" : "const ", name);
        else if (a->kind == FATTN_ARG_SCALE)
            k += (size_t)snprintf(out + k, n - k, "%sfloat scale", sep);
        else if (a->kind == FATTN_ARG_TMAP)
            k += (size_t)snprintf(out + k, n - k, "%sconst __grid_constant__ CUtensorMap tmap_%s", sep,
                                  fattn_arg_kind_name(a->tensor));
        else if (a->kind == FATTN_ARG_WORKSPACE)
            k += (size_t)snprintf(out + k, n - k, "%svoid *workspace", sep);
        else
            k += (size_t)snprintf(out + k, n - k, "%sint %s", sep, name);
    }
    if (k < n)
        snprintf(out + k, n - k, ")");
}

/* 1 when the launch needs host setup: tensor maps or a workspace. */
static int needs_host_setup(const fattn_launch *l)
{
    int setup = l->workspace > 0;
    for (int i = 0; i < l->nargs; ++i)
        setup |= l->args[i].kind == FATTN_ARG_TMAP || l->args[i].kind == FATTN_ARG_WORKSPACE;
    return setup;
}

/* The parameter list as JSON, for a launcher built elsewhere
 * (scripts/compare_sdpa.py): each parameter's kind, a tensor map's tensor,
 * box (columns, rows) and swizzle bytes; the workspace's bytes. */
static void json_args(const fattn_launch *l, FILE *out)
{
    fputs(", \"args\": [", out);
    for (int i = 0; i < l->nargs; ++i) {
        const fattn_arg *a = &l->args[i];
        fprintf(out, "%s{\"kind\": \"%s\"", i ? ", " : "", fattn_arg_kind_name(a->kind));
        if (a->kind == FATTN_ARG_TMAP)
            fprintf(out, ", \"tensor\": \"%s\", \"box\": [%u, %u], \"swizzle\": %u", fattn_arg_kind_name(a->tensor),
                    a->box_cols, a->box_rows, a->swizzle);
        fputc('}', out);
    }
    fprintf(out, "], \"workspace\": %llu", l->workspace);
}

/* A family whose launch needs host setup (tensor maps, a workspace) gets a
 * launcher at the tuned shape, written from its parameter list: compiled
 * where FATTN_TUNED_HOST is defined (the CUDA driver API, cuda.h). */
static void write_host_launcher(const fattn_launch *l, int head_dim, FILE *out)
{
    if (!needs_host_setup(l))
        return;
    int maps = 0;
    for (int i = 0; i < l->nargs; ++i)
        maps += l->args[i].kind == FATTN_ARG_TMAP;
    fputs("\n/* The host side (CUDA driver API; link with -lcuda), where FATTN_TUNED_HOST is defined:\n"
          " * fattn_tuned_launch() launches function fn (the kernel of this configuration) at the tuned\n"
          " * shape on contiguous fp16 tensors (B, H, S, D). It refuses a tensor whose address is not\n"
          " * 16-byte aligned (CUDA_ERROR_INVALID_VALUE, where TMA would fault), raises fn's\n"
          " * dynamic shared-memory limit to FATTN_SMEM_BYTES once, and encodes the kernel's tensor maps\n"
          " * once per set of buffers (the last set is kept: one host thread at a time)",
          out);
    if (l->workspace)
        fputs("; it zeroes the\n * workspace (FATTN_TUNED_WORKSPACE_BYTES of device memory) before every launch", out);
    fputs(". */\n#ifdef FATTN_TUNED_HOST\n#include <cuda.h>\n", out);
    if (l->workspace)
        fprintf(out, "#define FATTN_TUNED_WORKSPACE_BYTES %lluull\n", l->workspace);
    fputs("static inline CUresult fattn_tuned_tmap(CUtensorMap *m, CUdeviceptr t, cuuint32_t box_rows, cuuint32_t "
          "box_cols,\n                                        CUtensorMapSwizzle swizzle)\n{\n"
          "    const cuuint64_t dim[3] = {FATTN_HEAD_DIM, FATTN_TUNED_SHAPE_S, (cuuint64_t)FATTN_TUNED_SHAPE_B * "
          "FATTN_TUNED_SHAPE_H};\n"
          "    const cuuint64_t stride[2] = {FATTN_HEAD_DIM * 2, (cuuint64_t)FATTN_TUNED_SHAPE_S * FATTN_HEAD_DIM * "
          "2};\n"
          "    const cuuint32_t box[3] = {box_cols, box_rows, 1}, ones[3] = {1, 1, 1};\n"
          "    return cuTensorMapEncodeTiled(m, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, (void *)(size_t)t, dim, stride, "
          "box, ones,\n"
          "                                  CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, "
          "CU_TENSOR_MAP_L2_PROMOTION_L2_128B,\n"
          "                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);\n}\n\n",
          out);
    fprintf(out,
            "static inline CUresult fattn_tuned_launch(CUfunction fn, CUdeviceptr q, CUdeviceptr k, CUdeviceptr v, "
            "CUdeviceptr o,%s\n                                          CUstream stream)\n{\n",
            l->workspace ? " CUdeviceptr workspace," : "");
    fprintf(out,
            "    static CUfunction sized;\n"
            "    static unsigned grid_x = %u;\n"
            "    static CUdeviceptr cached[4];\n"
            "    static CUtensorMap map[%d];\n"
            "    int batch = FATTN_TUNED_SHAPE_B, heads = FATTN_TUNED_SHAPE_H, seqlen = FATTN_TUNED_SHAPE_S;\n"
            "    float scale = %.9gf;\n    CUdeviceptr tensor[4] = {q, k, v, o};\n"
            "    CUresult r;\n"
            "    (void)batch, (void)heads, (void)seqlen, (void)scale;\n"
            "    for (int i = 0; i < 4; ++i)\n"
            "        if (tensor[i] %% 16)\n"
            "            return CUDA_ERROR_INVALID_VALUE;\n"
            "    if (fn != sized) {\n"
            "        if ((r = cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "
            "FATTN_SMEM_BYTES)) !=\n            CUDA_SUCCESS)\n"
            "            return r;\n"
            "%s"
            "        sized = fn;\n"
            "    }\n"
            "    if (cached[0] != q || cached[1] != k || cached[2] != v || cached[3] != o) {\n"
            "        cached[0] = 0; /* the maps are whole again only once all encode */\n",
            l->grid[0], maps ? maps : 1, 1.0 / sqrt((double)head_dim),
            /* A persistent grid: a block an SM of the current device, at most a tile each. */
            l->sm_bound ? "        CUdevice dev;\n"
                          "        int sms;\n"
                          "        if ((r = cuCtxGetDevice(&dev)) != CUDA_SUCCESS ||\n"
                          "            (r = cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)) "
                          "!= CUDA_SUCCESS)\n"
                          "            return r;\n"
                          "        if ((unsigned)sms < grid_x)\n"
                          "            grid_x = (unsigned)sms;\n"
                        : "");
    for (int i = 0, m = 0; i < l->nargs; ++i) {
        const fattn_arg *a = &l->args[i];
        if (a->kind != FATTN_ARG_TMAP)
            continue;
        fprintf(out,
                "        if ((r = fattn_tuned_tmap(&map[%d], tensor[%d], %u, %u, CU_TENSOR_MAP_SWIZZLE_%s)) != "
                "CUDA_SUCCESS)\n            return r;\n",
                m++, a->tensor, a->box_rows, a->box_cols,
                a->swizzle == 32    ? "32B"
                : a->swizzle == 64  ? "64B"
                : a->swizzle == 128 ? "128B"
                                    : "NONE");
    }
    fputs("        for (int i = 0; i < 4; ++i)\n            cached[i] = tensor[i];\n    }\n", out);
    if (l->workspace)
        fputs("    if ((r = cuMemsetD8Async(workspace, 0, FATTN_TUNED_WORKSPACE_BYTES, stream)) != CUDA_SUCCESS)\n"
              "        return r;\n",
              out);
    fputs("    void *args[] = {", out);
    for (int i = 0, m = 0; i < l->nargs; ++i) {
        const int kind = l->args[i].kind;
        if (i)
            fputs(", ", out);
        if (kind <= FATTN_ARG_O)
            fprintf(out, "&tensor[%d]", kind);
        else if (kind == FATTN_ARG_TMAP)
            fprintf(out, "&map[%d]", m++);
        else if (kind == FATTN_ARG_WORKSPACE)
            fputs("&workspace", out);
        else
            fprintf(out, "&%s", fattn_arg_kind_name(kind));
    }
    fprintf(out,
            "};\n    return cuLaunchKernel(fn, grid_x, %u, %u, FATTN_THREADS, 1, 1, FATTN_SMEM_BYTES, stream, args, "
            "NULL);\n}\n#endif /* FATTN_TUNED_HOST */\n",
            l->grid[1], l->grid[2]);
}

/* The grid's rule as the family states it for this launch (a persistent
 * one's on the device's SM count). */
static const char *const *grid_rule_of(const fattn_family *fam, const fattn_launch *l)
{
    return l->sm_bound && fam->grid_rule_sm_bound[0] ? fam->grid_rule_sm_bound : fam->grid_rule;
}

/* Text from the database goes into the header's comment through
 * fattn_c_comment and into its string literals through fattn_c_string: a
 * row holding a quote, a newline, a comment end or a trigraph cannot change
 * what the header defines. */
static void write_header(const best *b, FILE *out)
{
    const fattn_family *fam = b->cfg.fam;
    fattn_launch l; /* the family's launch at the study's shape */
    fam->launch(&b->cfg, &b->shape, 0, &l);
    char now[32], shape[96];
    fattn_utc_now(now);
    fattn_shape_format(&b->shape, shape, sizeof shape);
    fprintf(out, "/*\n * Tuned fattn forward kernel configuration. Generated by fattn-tune %s on %s; do not edit.\n",
            FATTN_VERSION, now);
    fprintf(out, " *\n * study:   %lld (", b->study);
    fattn_c_comment(out, b->command);
    fputs(", strategy ", out);
    fattn_c_comment(out, b->strategy);
    if (b->has_seed)
        fprintf(out, ", seed %lld", b->seed);
    fputs(", created ", out);
    fattn_c_comment(out, b->created);
    fprintf(out, ")\n * shape:   %s\n * arch:    ", shape);
    fattn_c_comment(out, b->arch);
    /* A family built for the architecture-specific target names it: its cubin runs on that arch's GPUs only. */
    if (*fattn_family_arch_suffix(fam, b->arch))
        fputs("a (an sm_90 GPU only: the kernel is built for the architecture-specific target)", out);
    fputs("\n * device:  ", out);
    fattn_c_comment(out, b->device ? b->device : "(none recorded)");
    fprintf(out, "\n * metric:  median %.3f us per launch (p10 %.3f, p90 %.3f), %.1f TFLOP/s, %.1f GB/s; trial %lld\n",
            b->median, b->p10, b->p90, b->tflops, b->gbps, b->trial);
    if (b->conf_id) {
        fprintf(out,
                " * confirmed: median %.3f us, 95%% CI %.3f-%.3f, p90 %.3f (%d interleaved samples; confirmation "
                "%lld, ",
                b->conf_median, b->conf_lo, b->conf_hi, b->conf_p90, b->conf_n, b->conf_id);
        fattn_c_comment(out, b->conf_created);
        fputs(")\n *            against ", out);
        fattn_c_comment(out, b->conf_baseline);
        fputs(" (", out);
        fattn_c_comment(out, b->conf_base_desc);
        fprintf(out, "): median %.3f us; speedup %.3f, 95%% CI %.3f-%.3f: ", b->conf_base_median, b->conf_speedup,
                b->conf_speedup_lo, b->conf_speedup_hi);
        fattn_c_comment(out, b->conf_verdict);
        fputs("\n", out);
    } else {
        fprintf(out, " * confirmed: not yet (fattn-tune confirm --study %lld measures it against a baseline)\n",
                b->study);
    }
    fputs(" * timing:  ", out);
    fattn_c_comment(out, b->timing ? b->timing : "(not recorded)");
    /* Where the times came from: this study's GPU, or a landscape replayed (another run's, or invented). */
    const int replayed = b->evaluator && !strcmp(b->evaluator, "replay");
    if (replayed)
        fputs("\n * times:   REPLAYED from a landscape file (the timing line names it), not measured by this "
              "study:\n *          only as good as that file; measure before trusting them (fattn-tune confirm)",
              out);
    else if (b->evaluator && !strcmp(b->evaluator, "gpu"))
        fputs("\n * times:   measured by this study on the device above", out);
    char hw[FATTN_HW_LINE_MAX];
    fattn_hw_status st;
    fattn_hw_lookup(NULL, fam->name, b->kernel_hash, &st);
    fattn_hw_describe(&st, hw, sizeof hw);
    fputs("\n * hardware: ", out);
    fattn_c_comment(out, hw);
    fputs("\n * config:  ", out);
    fattn_c_comment(out, b->key);
    fputs("\n * kernel:  sha256 ", out);
    fattn_c_comment(out, b->kernel_hash);
    fputs("\n * space:   sha256 ", out);
    fattn_c_comment(out, b->space_hash);
    fputs(replayed ? "\n *\n * Build the kernel as fattn-tune compiled it (NVRTC options "
                   : "\n *\n * Build the kernel as fattn-tune measured it (NVRTC options ",
          out);
    fattn_c_comment(out, b->options ? b->options : "(not recorded)");
    fputs(",\n * the -D options given as the FATTN_ definitions below):\n *   nvcc ", out);
    fattn_c_comment(out, b->nvcc[0] ? b->nvcc : "-arch=ARCH -std=c++17 --use_fast_math");
    fprintf(out,
            " -c -include THIS_HEADER kernels/%s\n"
            " * (nvcc's front end is not NVRTC's: the registers can differ by a few; the measured binary itself\n"
            " * is fattn-tune export --format cubin.)\n",
            fam->kernel_file);
    fputs(fam->launch_doc, out);
    fputs("#ifndef FATTN_TUNED_H\n#define FATTN_TUNED_H\n\n", out);
    for (int i = 0; i < fam->nparams; ++i)
        if (fattn_param_exported(&b->cfg, i))
            fprintf(out, "#define FATTN_%s %d\n", fam->params[i].name, b->cfg.v[i]);
    fprintf(out, "#define FATTN_HEAD_DIM %d\n#define FATTN_CAUSAL %d\n", b->shape.head_dim, b->shape.causal);
    fprintf(out, "#define FATTN_THREADS %u\n#define FATTN_SMEM_BYTES %d\n\n", l.threads, b->smem);
    fprintf(out, "#define FATTN_TUNED_VERSION \"%s\"\n#define FATTN_TUNED_STUDY %lld\n#define FATTN_TUNED_TRIAL %lld\n",
            FATTN_VERSION, b->study, b->trial);
    fputs("#define FATTN_TUNED_ARCH ", out);
    fattn_c_string(out, b->arch);
    fputs("\n#define FATTN_TUNED_CONFIG ", out);
    fattn_c_string(out, b->key);
    fputs("\n#define FATTN_TUNED_NVRTC_OPTIONS ", out);
    fattn_c_string(out, b->options ? b->options : "");
    fputs("\n#define FATTN_TUNED_NVCC_FLAGS ", out);
    fattn_c_string(out, b->nvcc);
    fprintf(out, "\n#define FATTN_TUNED_SHAPE_B %d\n#define FATTN_TUNED_SHAPE_H %d\n#define FATTN_TUNED_SHAPE_S %d\n",
            b->shape.batch, b->shape.heads, b->shape.seqlen);
    fprintf(out, "#define FATTN_TUNED_MEDIAN_US %.6g\n", b->median);
    fprintf(out, "#define FATTN_TUNED_CONFIRMED %d\n", b->conf_id ? 1 : 0);
    if (b->conf_id) {
        fprintf(out, "#define FATTN_TUNED_CONFIRMED_MEDIAN_US %.6g\n", b->conf_median);
        fprintf(out, "#define FATTN_TUNED_CONFIRMED_CI_LO_US %.6g\n#define FATTN_TUNED_CONFIRMED_CI_HI_US %.6g\n",
                b->conf_lo, b->conf_hi);
        fputs("#define FATTN_TUNED_BASELINE ", out);
        fattn_c_string(out, b->conf_baseline);
        fprintf(out, "\n#define FATTN_TUNED_SPEEDUP %.6g\n#define FATTN_TUNED_VERDICT ", b->conf_speedup);
        fattn_c_string(out, b->conf_verdict);
        fputs("\n", out);
    }
    write_host_launcher(&l, b->shape.head_dim, out);
    fputs("\n#endif /* FATTN_TUNED_H */\n", out);
}

/* A JSON string, or null for a column the study did not record. */
static void json_string_or_null(FILE *out, const char *s)
{
    if (s)
        fattn_json_string(out, s);
    else
        fputs("null", out);
}

static void write_json(const best *b, FILE *out)
{
    char now[32];
    fattn_utc_now(now);
    fprintf(out, "{\n  \"tool\": \"fattn-tune\",\n  \"version\": \"%s\",\n  \"generated_at\": \"%s\",\n", FATTN_VERSION,
            now);
    fprintf(out, "  \"study\": %lld,\n  \"trial\": %lld,\n  \"command\": ", b->study, b->trial);
    fattn_json_string(out, b->command);
    fputs(",\n  \"strategy\": ", out);
    fattn_json_string(out, b->strategy);
    fprintf(out, ",\n  \"shape\": {\"batch\": %d, \"heads\": %d, \"seqlen\": %d, \"head_dim\": %d, \"causal\": %s},\n",
            b->shape.batch, b->shape.heads, b->shape.seqlen, b->shape.head_dim, b->shape.causal ? "true" : "false");
    fputs("  \"arch\": ", out);
    fattn_json_string(out, b->arch);
    fputs(",\n  \"device\": ", out);
    json_string_or_null(out, b->device);
    fprintf(out,
            ",\n  \"metric\": {\"median_us\": %.6g, \"p10_us\": %.6g, \"p90_us\": %.6g, \"tflops\": %.6g, "
            "\"gbps\": %.6g, \"timing\": ",
            b->median, b->p10, b->p90, b->tflops, b->gbps);
    json_string_or_null(out, b->timing);
    fputs("},\n  \"confirmation\": ", out);
    if (b->conf_id) {
        fprintf(out,
                "{\"id\": %lld, \"n\": %d, \"median_us\": %.6g, \"ci_us\": [%.6g, %.6g], \"p90_us\": %.6g, "
                "\"baseline\": ",
                b->conf_id, b->conf_n, b->conf_median, b->conf_lo, b->conf_hi, b->conf_p90);
        fattn_json_string(out, b->conf_baseline);
        fprintf(out, ", \"base_median_us\": %.6g, \"speedup\": %.6g, \"speedup_ci\": [%.6g, %.6g], \"verdict\": ",
                b->conf_base_median, b->conf_speedup, b->conf_speedup_lo, b->conf_speedup_hi);
        fattn_json_string(out, b->conf_verdict ? b->conf_verdict : "");
        fputc('}', out);
    } else {
        fputs("null", out);
    }
    fputs(",\n  \"config_key\": ", out);
    fattn_json_string(out, b->key);
    fputs(",\n  \"config\": {", out);
    int first = 1;
    const fattn_family *fam = b->cfg.fam;
    fattn_launch l;
    fam->launch(&b->cfg, &b->shape, 0, &l);
    char sig[600];
    signature(&l, sig, sizeof sig);
    const char *const *rule = grid_rule_of(fam, &l);
    for (int i = 0; i < fam->nparams; ++i)
        if (fattn_param_exported(&b->cfg, i)) {
            fprintf(out, "%s\"%s\": %d", first ? "" : ", ", fam->params[i].name, b->cfg.v[i]);
            first = 0;
        }
    fprintf(out,
            "},\n  \"threads\": %u,\n  \"smem_bytes\": %d,\n  \"kernel\": {\"entry\": \"%s\", "
            "\"signature\": \"%s\", \"grid\": [\"%s\", \"%s\", \"%s\"], "
            "\"cluster\": [%u, 1, 1]",
            l.threads, b->smem, fam->kernel_name, sig, rule[0], rule[1], rule[2], l.cluster);
    if (needs_host_setup(&l))
        json_args(&l, out);
    fputs("},\n  \"kernel_hash\": ", out);
    fattn_json_string(out, b->kernel_hash);
    fputs(",\n  \"space_hash\": ", out);
    fattn_json_string(out, b->space_hash);
    fputs(",\n  \"nvrtc_options\": ", out);
    json_string_or_null(out, b->options);
    fputs(",\n  \"nvcc_flags\": ", out);
    fattn_json_string(out, b->nvcc_full);
    fputs(",\n  \"cache_key\": ", out);
    json_string_or_null(out, b->cache_key);
    fputs("\n}\n", out);
}

/* The cubin the best trial was measured with. */
static int write_cubin(fattn_store *s, const best *b, FILE *out)
{
    fattn_cache_entry e;
    int found = b->cache_key ? fattn_store_cache_get(s, b->cache_key, &e) : 0;
    if (found < 0)
        return FATTN_EFAIL;
    if (!found || !e.cubin) {
        if (found)
            fattn_cache_entry_release(&e);
        return fattn_error(FATTN_EFAIL, "trial %lld of study %lld: its cubin is not in the compile cache of %s",
                           b->trial, b->study, fattn_store_path(s));
    }
    int rc = fwrite(e.cubin, 1, e.cubin_size, out) == e.cubin_size ? FATTN_OK
                                                                   : fattn_error(FATTN_EFAIL, "cannot write the cubin");
    fattn_cache_entry_release(&e);
    return rc;
}

/* The best configuration of study `study` (0: the latest), which must
 * exist, or its configuration `key` (NULL: the best). */
static int load_study_best(fattn_store *s, long long study, const char *key, best *b)
{
    if (!study && !(study = fattn_latest_study(s)))
        return FATTN_EFAIL;
    if (fattn_study_exists(s, study))
        return FATTN_EUSAGE;
    return load_best(s, study, key, b);
}

int fattn_export_best(fattn_store *s, long long study, const char *key, int format, FILE *out)
{
    best b;
    int rc = load_study_best(s, study, key, &b);
    if (rc)
        return rc;
    if (format == FATTN_EXPORT_CUBIN)
        rc = write_cubin(s, &b, out);
    else if (format == FATTN_EXPORT_JSON)
        write_json(&b, out);
    else
        write_header(&b, out);
    best_release(&b);
    return rc;
}

/* Writes the kernel source with its local headers inlined: one file that
 * nvcc builds without -I. */
static int inline_source(const fattn_kernel_src *src, const char *text, int depth, unsigned *done, FILE *out)
{
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p + 1) : strlen(p);
        const char *q = p;
        while (*q == ' ' || *q == '\t')
            ++q;
        int handled = 0;
        if (!strncmp(q, "#include \"", 10)) {
            const char *name = q + 10, *end = strchr(name, '"');
            for (int h = 0; end && end < p + len && h < src->nheaders; ++h) {
                if (strlen(src->header_names[h]) != (size_t)(end - name)
                    || strncmp(src->header_names[h], name, (size_t)(end - name)) != 0)
                    continue;
                handled = 1;
                if (*done & (1u << h))
                    break; /* included once already */
                if (depth > 8)
                    return fattn_error(FATTN_EFAIL, "%s: local includes nest too deep", src->name);
                *done |= 1u << h;
                fprintf(out, "/* ---- %s (inlined) ---- */\n", src->header_names[h]);
                if (inline_source(src, src->header_texts[h], depth + 1, done, out))
                    return FATTN_EFAIL;
                fprintf(out, "/* ---- end of %s ---- */\n", src->header_names[h]);
                break;
            }
        }
        if (!handled)
            fwrite(p, 1, len, out);
        p += len;
    }
    return FATTN_OK;
}

int fattn_export_best_key(fattn_store *s, long long study, char *key)
{
    best b;
    int rc = load_best(s, study, NULL, &b);
    if (!rc)
        snprintf(key, FATTN_KEY_MAX, "%s", b.key);
    best_release(&b);
    return rc;
}

int fattn_export_best_family(fattn_store *s, long long study, const fattn_family **fam)
{
    best b;
    int rc = load_study_best(s, study, NULL, &b);
    if (!rc)
        *fam = b.cfg.fam;
    best_release(&b);
    return rc;
}

int fattn_export_kernel(fattn_store *s, long long study, const fattn_kernel_src *src, FILE *out)
{
    best b;
    unsigned done = 0;
    int rc = load_study_best(s, study, NULL, &b);
    if (rc)
        return rc;
    int changed = strcmp(src->hash, b.kernel_hash) != 0;
    write_header(&b, out);
    /* The kernel defines these two itself, from the same parameters. */
    fprintf(out, "\n#undef FATTN_THREADS\n#undef FATTN_SMEM_BYTES\n");
    fprintf(out, "\n/* ---- %s, sha256 %s, specialized by the definitions above ---- */\n", src->name, src->hash);
    if (changed) {
        fputs("/* NOT the kernel the study measured (sha256 ", out);
        fattn_c_comment(out, b.kernel_hash);
        fputs("): exported with --allow-kernel-change; the times above are the other kernel's. */\n", out);
    }
    rc = inline_source(src, src->text, 0, &done, out);
    best_release(&b);
    return rc;
}

int fattn_export_dispatch(fattn_store *s, const long long *studies, int n, FILE *out)
{
    best *b = fattn_xcalloc((size_t)n, sizeof *b);
    int rc = FATTN_OK, loaded = 0;
    for (; loaded < n && !rc; ++loaded) {
        for (int j = 0; !rc && j < loaded; ++j)
            if (studies[j] == studies[loaded])
                rc = fattn_error(FATTN_EUSAGE, "--study %lld is given twice; expected each study once", studies[j]);
        if (rc || (rc = fattn_study_exists(s, studies[loaded])))
            break;
        rc = load_best(s, studies[loaded], NULL, &b[loaded]);
        char gj[256], gl[256];
        for (int j = 0; !rc && j < loaded; ++j) {
            fattn_device_gpu_model(b[j].device, gj, sizeof gj);
            fattn_device_gpu_model(b[loaded].device, gl, sizeof gl);
            if (!memcmp(&b[j].shape, &b[loaded].shape, sizeof b[j].shape) && !strcmp(b[j].arch, b[loaded].arch)
                && !strcmp(gj, gl)) {
                char shape[96];
                fattn_shape_format(&b[j].shape, shape, sizeof shape);
                rc = fattn_error(FATTN_EUSAGE, "studies %lld and %lld are both for %s on %s%s%s; export one of them",
                                 b[j].study, b[loaded].study, shape, b[j].arch, *gj ? ", " : "", gj);
            }
        }
    }
    if (rc) {
        for (int i = 0; i < loaded; ++i)
            best_release(&b[i]);
        free(b);
        return rc;
    }
    char now[32];
    fattn_utc_now(now);
    fprintf(out,
            "/*\n * Tuned fattn forward kernel configurations, one per shape, with a lookup. Generated by "
            "fattn-tune %s on %s; do not edit.\n *\n",
            FATTN_VERSION, now);
    for (int i = 0; i < n; ++i) {
        char shape[96];
        fattn_shape_format(&b[i].shape, shape, sizeof shape);
        fprintf(out, " * [%d] %s on ", i, shape);
        fattn_c_comment(out, b[i].arch);
        fputs(" (", out);
        fattn_c_comment(out, b[i].device ? b[i].device : "no device recorded");
        fputs("): ", out);
        fattn_c_comment(out, b[i].key);
        fprintf(out, ", median %.3f us (study %lld, trial %lld)", b[i].median, b[i].study, b[i].trial);
        if (b[i].conf_id) {
            fprintf(out, "; confirmed %.3f us, 95%% CI %.3f-%.3f, speedup %.3f vs ", b[i].conf_median, b[i].conf_lo,
                    b[i].conf_hi, b[i].conf_speedup);
            fattn_c_comment(out, b[i].conf_baseline);
            fputs(": ", out);
            fattn_c_comment(out, b[i].conf_verdict);
        }
        fputs("\n", out);
    }
    fputs(" *\n * Each configuration is a separate build of its family's kernel (entry.kernel, in kernels/), as\n"
          " * fattn-tune measured it (entry.nvcc_flags: the arch, the NVRTC options and the -D options of its\n"
          " * measured build):\n"
          " *   nvcc <entry.nvcc_flags> -c kernels/<entry.kernel>\n"
          " * and launch its function entry.entry with grid entry.grid (each dimension's rule in the shape's\n"
          " * seqlen, heads and batch and the entry's parameters), entry.threads threads, entry.smem_bytes\n"
          " * bytes of dynamic shared memory and clusters of entry.cluster blocks. An entry with\n"
          " * host_setup = 1 takes tensor maps or a workspace: its parameters and their encoding are\n"
          " * those of fattn_tuned_launch() in its study's own export (fattn-tune export --study N).\n"
          " * The parameter fields block_m ... q_regs are the mma family's, 0 in another family's entry\n"
          " * (its parameters are in config and in the flags' -D options). fattn_tuned_lookup() finds the\n"
          " * entry of a shape: the exact shape, else the same head_dim, causality and arch with the\n"
          " * nearest sequence length; fattn_tuned_lookup_gpu() the same among a GPU model's entries first\n"
          " * (entry.gpu: tables of several GPUs of one arch, fattn-tune export --campaign of merged runs).\n */\n",
          out);
    fputs("#ifndef FATTN_TUNED_DISPATCH_H\n#define FATTN_TUNED_DISPATCH_H\n\n#include <stddef.h>\n#include "
          "<string.h>\n\n",
          out);
    fputs("typedef struct fattn_tuned_entry {\n    int batch, heads, seqlen, head_dim, causal;\n    const char *arch;\n"
          "    const char *gpu; /* the GPU model measured (cuDeviceGetName), \"\" when not recorded */\n"
          "    int block_m, block_n, block_k, num_warps, stages, unroll, cp_async, swizzle, half2, split_kv, q_regs;\n"
          "    int threads, smem_bytes;\n    double median_us;           /* as searched */\n"
          "    double confirmed_median_us; /* 0 when not confirmed */\n    const char *config;\n"
          "    const char *nvcc_flags;\n    long long study, trial;\n"
          "    const char *family, *kernel, *entry; /* the kernel family, its file and function */\n"
          "    const char *grid[3];                  /* the grid's rule, x, y, z */\n"
          "    int cluster, host_setup;\n} fattn_tuned_entry;\n\n",
          out);
    fprintf(out, "#define FATTN_TUNED_COUNT %d\n\nstatic const fattn_tuned_entry fattn_tuned_table[] = {\n", n);
    for (int i = 0; i < n; ++i) {
        const best *e = &b[i];
        const fattn_family *fam = e->cfg.fam;
        const int zero[FATTN_MMA_NPARAMS] = {0}, *v = fam == &fattn_family_mma ? e->cfg.v : zero;
        fattn_launch l;
        fam->launch(&e->cfg, &e->shape, 0, &l);
        const char *const *rule = grid_rule_of(fam, &l);
        fprintf(out, "    {%d, %d, %d, %d, %d, ", e->shape.batch, e->shape.heads, e->shape.seqlen, e->shape.head_dim,
                e->shape.causal);
        fattn_c_string(out, e->arch);
        char gpu[256];
        fattn_device_gpu_model(e->device, gpu, sizeof gpu);
        fputs(", ", out);
        fattn_c_string(out, gpu);
        fprintf(out, ", %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %u, %d, %.6g, %.6g, ", v[FATTN_P_BLOCK_M],
                v[FATTN_P_BLOCK_N], v[FATTN_P_BLOCK_K], v[FATTN_P_NUM_WARPS], v[FATTN_P_STAGES], v[FATTN_P_UNROLL],
                v[FATTN_P_CP_ASYNC], v[FATTN_P_SWIZZLE], v[FATTN_P_HALF2], v[FATTN_P_SPLIT_KV], v[FATTN_P_Q_REGS],
                l.threads, e->smem, e->median, e->conf_id ? e->conf_median : 0.0);
        fattn_c_string(out, e->key);
        fputs(",\n     ", out);
        fattn_c_string(out, e->nvcc_full);
        fprintf(out, ", %lld, %lld,\n     \"%s\", \"%s\", \"%s\", {\"%s\", \"%s\", \"%s\"}, %u, %d},\n", e->study,
                e->trial, fam->name, fam->kernel_file, fam->kernel_name, rule[0], rule[1], rule[2], l.cluster,
                needs_host_setup(&l));
    }
    fputs("};\n\n", out);
    fputs(
        "/* The entry for a shape on `arch` (\"sm_90\"): the exact shape, else the nearest sequence length\n"
        " * with the same head_dim and causality; NULL when there is none. */\n"
        "static inline const fattn_tuned_entry *fattn_tuned_lookup(const char *arch, int batch, int heads, int "
        "seqlen,\n                                                         int head_dim, int causal)\n{\n"
        "    const fattn_tuned_entry *best = NULL;\n    long best_gap = -1;\n"
        "    for (size_t i = 0; i < sizeof fattn_tuned_table / sizeof fattn_tuned_table[0]; ++i) {\n"
        "        const fattn_tuned_entry *e = &fattn_tuned_table[i];\n"
        "        if (strcmp(e->arch, arch) != 0 || e->head_dim != head_dim || e->causal != causal)\n"
        "            continue;\n"
        "        if (e->batch == batch && e->heads == heads && e->seqlen == seqlen)\n            return e;\n"
        "        long gap = e->seqlen > seqlen ? (long)e->seqlen - seqlen : (long)seqlen - e->seqlen;\n"
        "        if (best_gap < 0 || gap < best_gap)\n            best = e, best_gap = gap;\n    }\n"
        "    return best;\n}\n\n"
        "/* The same on a GPU model (cuDeviceGetName, e.g. \"NVIDIA H100 80GB HBM3\"): its entries first (an\n"
        " * H100's and an H200's are both sm_90), else fattn_tuned_lookup()'s. */\n"
        "static inline const fattn_tuned_entry *fattn_tuned_lookup_gpu(const char *gpu, const char *arch, int batch,\n"
        "                                                             int heads, int seqlen, int head_dim, int "
        "causal)\n"
        "{\n    const fattn_tuned_entry *best = NULL;\n    long best_gap = -1;\n"
        "    for (size_t i = 0; i < sizeof fattn_tuned_table / sizeof fattn_tuned_table[0]; ++i) {\n"
        "        const fattn_tuned_entry *e = &fattn_tuned_table[i];\n"
        "        if (strcmp(e->gpu, gpu) != 0 || strcmp(e->arch, arch) != 0 || e->head_dim != head_dim ||\n"
        "            e->causal != causal)\n            continue;\n"
        "        if (e->batch == batch && e->heads == heads && e->seqlen == seqlen)\n            return e;\n"
        "        long gap = e->seqlen > seqlen ? (long)e->seqlen - seqlen : (long)seqlen - e->seqlen;\n"
        "        if (best_gap < 0 || gap < best_gap)\n            best = e, best_gap = gap;\n    }\n"
        "    return best ? best : fattn_tuned_lookup(arch, batch, heads, seqlen, head_dim, causal);\n}\n\n"
        "#endif /* FATTN_TUNED_DISPATCH_H */\n",
        out);
    for (int i = 0; i < n; ++i)
        best_release(&b[i]);
    free(b);
    return FATTN_OK;
}

int fattn_export_write(fattn_store *s, const long long *studies, int n, int format, FILE *out)
{
    long long study = n ? studies[0] : 0;
    if (format == FATTN_EXPORT_T4)
        return fattn_export_t4(s, study, out);
    if (n > 1 && format == FATTN_EXPORT_HEADER)
        return fattn_export_dispatch(s, studies, n, out);
    return fattn_export_best(s, study, NULL, format, out);
}
