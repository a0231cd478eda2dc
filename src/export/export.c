/*
 * export.c - writing the best configuration of a study.
 */
#include "export/export.h"

#include <stdlib.h>
#include <string.h>

#include "compile/kernel_src.h"
#include "config.h"
#include "export/table.h"
#include "gates/layout.h"
#include "util/err.h"
#include "util/misc.h"

long long fattn_latest_study(fattn_store *s)
{
    sqlite3_stmt *st;
    long long id = 0;
    if (sqlite3_prepare_v2(fattn_store_db(s), "SELECT max(id) FROM studies", -1, &st, NULL) != SQLITE_OK) {
        fattn_store_fail(s, "cannot read studies");
        return 0;
    }
    if (sqlite3_step(st) == SQLITE_ROW)
        id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (!id)
        fattn_error(FATTN_EFAIL, "database %s holds no study yet; run fattn-tune compile (or search) first",
                    fattn_store_path(s));
    return id;
}

int fattn_study_exists(fattn_store *s, long long id)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(fattn_store_db(s), "SELECT 1 FROM studies WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
        return fattn_store_fail(s, "cannot read studies");
    sqlite3_bind_int64(st, 1, id);
    int found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    if (!found)
        return fattn_error(FATTN_EUSAGE, "--study %lld: no such study in %s; see fattn-tune query studies", id,
                           fattn_store_path(s));
    return FATTN_OK;
}

typedef struct best {
    long long study, trial;
    char *created, *command, *strategy, *arch, *device, *kernel_hash, *space_hash, *timing, *key, *cache_key;
    long long seed;
    int has_seed;
    fattn_shape shape;
    fattn_config cfg;
    double median, p10, p90, tflops, gbps;
    int smem, has_smem;
} best;

static char *text(sqlite3_stmt *st, int c)
{
    const unsigned char *t = sqlite3_column_text(st, c);
    return t ? fattn_xstrdup((const char *)t) : NULL;
}

static void best_release(best *b)
{
    free(b->created), free(b->command), free(b->strategy), free(b->arch), free(b->device);
    free(b->kernel_hash), free(b->space_hash), free(b->timing), free(b->key), free(b->cache_key);
}

static int load_best(fattn_store *s, long long study, best *b)
{
    static const char sql[] =
        "SELECT s.created_at, s.command, s.strategy, s.seed, s.batch, s.heads, s.seqlen, s.head_dim, s.causal, "
        "s.arch, s.device, s.kernel_hash, s.space_hash, s.timing_method, t.id, t.config_key, t.block_m, t.block_n, "
        "t.block_k, t.num_warps, t.stages, t.unroll, t.cp_async, t.swizzle, t.half2, t.pad_bytes, t.copy_colmajor, "
        "t.median_us, t.p10_us, t.p90_us, t.tflops, t.gbps, t.smem_dynamic, t.cache_key "
        "FROM studies s JOIN trials t ON t.study_id = s.id "
        "WHERE s.id = ?1 AND t.status = 'ok' AND t.median_us IS NOT NULL ORDER BY t.median_us, t.id LIMIT 1";
    sqlite3_stmt *st;
    memset(b, 0, sizeof *b);
    if (sqlite3_prepare_v2(fattn_store_db(s), sql, -1, &st, NULL) != SQLITE_OK)
        return fattn_store_fail(s, "cannot read trials");
    sqlite3_bind_int64(st, 1, study);
    int r = sqlite3_step(st);
    if (r != SQLITE_ROW) {
        sqlite3_finalize(st);
        if (r != SQLITE_DONE)
            return fattn_store_fail(s, "cannot read trials");
        return fattn_error(FATTN_EFAIL,
                           "study %lld has no timed trial: nothing to export yet (trials are timed by "
                           "fattn-tune search on a GPU; fattn-tune query trials --study %lld lists what it has)",
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
    for (int i = 0; i < FATTN_NPARAMS; ++i)
        b->cfg.v[i] = sqlite3_column_int(st, 16 + i);
    b->median = sqlite3_column_double(st, 27);
    b->p10 = sqlite3_column_double(st, 28);
    b->p90 = sqlite3_column_double(st, 29);
    b->tflops = sqlite3_column_double(st, 30);
    b->gbps = sqlite3_column_double(st, 31);
    b->cache_key = text(st, 33);
    b->has_smem = sqlite3_column_type(st, 32) != SQLITE_NULL;
    b->smem = sqlite3_column_int(st, 32);
    sqlite3_finalize(st);
    if (!b->has_smem) {
        fattn_layout l;
        fattn_layout_init(&l, &b->cfg, b->shape.head_dim);
        b->smem = (int)l.total_bytes;
    }
    return FATTN_OK;
}

static void write_header(const best *b, FILE *out)
{
    char now[32], shape[96];
    fattn_utc_now(now);
    fattn_shape_format(&b->shape, shape, sizeof shape);
    const char *device = b->device ? b->device : "(none recorded)";
    fprintf(out, "/*\n * Tuned fattn forward kernel configuration. Generated by fattn-tune %s on %s; do not edit.\n",
            FATTN_VERSION, now);
    fprintf(out, " *\n * study:   %lld (%s, strategy %s", b->study, b->command, b->strategy);
    if (b->has_seed)
        fprintf(out, ", seed %lld", b->seed);
    fprintf(out, ", created %s)\n", b->created);
    fprintf(out, " * shape:   %s\n * arch:    %s\n * device:  %s\n", shape, b->arch, device);
    fprintf(out, " * metric:  median %.3f us per launch (p10 %.3f, p90 %.3f), %.1f TFLOP/s, %.1f GB/s; trial %lld\n",
            b->median, b->p10, b->p90, b->tflops, b->gbps, b->trial);
    fprintf(out, " * timing:  %s\n", b->timing ? b->timing : "(not recorded)");
    fprintf(out, " * config:  %s\n * kernel:  sha256 %s\n * space:   sha256 %s\n", b->key, b->kernel_hash,
            b->space_hash);
    fprintf(out,
            " *\n * Build the kernel with:  nvcc -arch=%s -include THIS_HEADER kernels/fattn_fwd.cu\n"
            " * Launch: grid (ceil(S / FATTN_BLOCK_M), H, B), FATTN_THREADS threads, FATTN_SMEM_BYTES bytes of\n"
            " * dynamic shared memory (raise the function's limit when it exceeds 48 KiB).\n */\n",
            b->arch);
    fputs("#ifndef FATTN_TUNED_H\n#define FATTN_TUNED_H\n\n", out);
    for (int i = 0; i < FATTN_NPARAMS; ++i)
        if (!fattn_params[i].test_only || b->cfg.v[i] != fattn_params[i].def)
            fprintf(out, "#define FATTN_%s %d\n", fattn_params[i].name, b->cfg.v[i]);
    fprintf(out, "#define FATTN_HEAD_DIM %d\n#define FATTN_CAUSAL %d\n", b->shape.head_dim, b->shape.causal);
    fprintf(out, "#define FATTN_THREADS %d\n#define FATTN_SMEM_BYTES %d\n\n", 32 * b->cfg.v[FATTN_P_NUM_WARPS],
            b->smem);
    fprintf(out, "#define FATTN_TUNED_VERSION \"%s\"\n#define FATTN_TUNED_STUDY %lld\n#define FATTN_TUNED_TRIAL %lld\n",
            FATTN_VERSION, b->study, b->trial);
    fprintf(out, "#define FATTN_TUNED_ARCH \"%s\"\n#define FATTN_TUNED_CONFIG \"%s\"\n", b->arch, b->key);
    fprintf(out, "#define FATTN_TUNED_SHAPE_B %d\n#define FATTN_TUNED_SHAPE_H %d\n#define FATTN_TUNED_SHAPE_S %d\n",
            b->shape.batch, b->shape.heads, b->shape.seqlen);
    fprintf(out, "#define FATTN_TUNED_MEDIAN_US %.6g\n\n#endif /* FATTN_TUNED_H */\n", b->median);
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
    if (b->device)
        fattn_json_string(out, b->device);
    else
        fputs("null", out);
    fprintf(out,
            ",\n  \"metric\": {\"median_us\": %.6g, \"p10_us\": %.6g, \"p90_us\": %.6g, \"tflops\": %.6g, "
            "\"gbps\": %.6g, \"timing\": ",
            b->median, b->p10, b->p90, b->tflops, b->gbps);
    if (b->timing)
        fattn_json_string(out, b->timing);
    else
        fputs("null", out);
    fputs("},\n  \"config_key\": ", out);
    fattn_json_string(out, b->key);
    fputs(",\n  \"config\": {", out);
    int first = 1;
    for (int i = 0; i < FATTN_NPARAMS; ++i)
        if (!fattn_params[i].test_only || b->cfg.v[i] != fattn_params[i].def) {
            fprintf(out, "%s\"%s\": %d", first ? "" : ", ", fattn_params[i].name, b->cfg.v[i]);
            first = 0;
        }
    fprintf(out,
            "},\n  \"threads\": %d,\n  \"smem_bytes\": %d,\n  \"kernel\": {\"entry\": \"%s\", "
            "\"signature\": \"(const half *q, const half *k, const half *v, half *o, int batch, int heads, "
            "int seqlen, float scale)\", \"grid\": [\"ceil(seqlen / BLOCK_M)\", \"heads\", \"batch\"]},\n"
            "  \"kernel_hash\": \"%s\",\n  \"space_hash\": \"%s\",\n  \"cache_key\": ",
            32 * b->cfg.v[FATTN_P_NUM_WARPS], b->smem, FATTN_KERNEL_NAME, b->kernel_hash, b->space_hash);
    if (b->cache_key)
        fattn_json_string(out, b->cache_key);
    else
        fputs("null", out);
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

int fattn_export_best(fattn_store *s, long long study, int format, FILE *out)
{
    best b;
    if (!study && !(study = fattn_latest_study(s)))
        return FATTN_EFAIL;
    if (fattn_study_exists(s, study))
        return FATTN_EUSAGE;
    int rc = load_best(s, study, &b);
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
