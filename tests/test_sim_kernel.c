/*
 * test_sim_kernel.c - the kernel itself through the simulator (issue 13):
 * clean configurations pass; the seeds' 2-byte pad is named misaligned at
 * its ldmatrix and cp.async lines; bugs planted in a copy of the kernel are
 * each caught with their own verdict at their own line, while the same
 * configuration and shape on the unplanted kernel is ok (the control): a
 * positive and a clean case for every fault and hazard class (race_raw and
 * race_war from the removed ring barrier, race_waw from two writers).
 *
 * Each planted bug is an exact text edit of kernels/fattn_fwd.cu that must
 * match once, so a change of the kernel that moves the text fails here
 * instead of silently planting nothing. Lines are found in the kernel text,
 * never written down.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile/kernel_src.h"
#include "sim/check.h"
#include "sim/kernel.h"
#include "t.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/paths.h"

static char *cache;
static char tmp_root[] = "/tmp/fattn-sim-XXXXXX";

static int read_all(const char *path, char **out)
{
    size_t len;
    return fattn_read_file(path, "file", FATTN_EFAIL, out, &len);
}

static int write_all(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

/* The 1-based line of the first occurrence of `needle` in the kernel, or 0. */
static int kernel_line(const char *needle)
{
    char *text;
    char *path = fattn_path_join(fattn_default_kernel_dir(), "fattn_fwd.cu");
    int line = 0;
    if (!read_all(path, &text)) {
        const char *at = strstr(text, needle);
        if (at) {
            line = 1;
            for (const char *p = text; p < at; ++p)
                line += *p == '\n';
        }
        free(text);
    }
    free(path);
    return line;
}

/* One exact edit of DIR/fattn_fwd.cu (from must occur exactly once).
 * Returns 0, or -1 (said). */
static int edit(const char *dir, const char *name, const char *from, const char *to)
{
    char *text = NULL, *path = fattn_path_join(dir, "fattn_fwd.cu");
    if (read_all(path, &text)) {
        free(path);
        return -1;
    }
    char *at = strstr(text, from);
    if (!at || strstr(at + 1, from)) {
        fprintf(stderr, "planted %s: the kernel holds \"%s\" %s\n", name, from, at ? "more than once" : "nowhere");
        free(text), free(path);
        return -1;
    }
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    int rc = write_all(path, out);
    free(out), free(text), free(path);
    return rc ? -1 : 0;
}

/* Copies the kernel directory to a fresh folder with one exact edit of
 * fattn_fwd.cu (from must occur exactly once), and a second where from2 is
 * not NULL. Returns the folder, or NULL. */
static char *planted2(const char *name, const char *from, const char *to, const char *from2, const char *to2)
{
    static char dir[512];
    char cmd[2048];
    snprintf(dir, sizeof dir, "%s/%s", tmp_root, name);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", dir, fattn_default_kernel_dir(), dir);
    if (system(cmd) != 0 || edit(dir, name, from, to) || (from2 && edit(dir, name, from2, to2)))
        return NULL;
    return dir;
}

static char *planted(const char *name, const char *from, const char *to)
{
    return planted2(name, from, to, NULL, NULL);
}

/* Runs cfg (a key or NAME=V list) from kernel dir `dir` at B,H,S,D. */
static int run(const char *dir, const char *cfg, const char *shape, int causal, fattn_sim_check *r)
{
    fattn_kernel_src ks;
    fattn_config c;
    fattn_shape s = {0};
    if (fattn_kernel_src_load(dir, fattn_family_mma.kernel_file, &ks) || fattn_config_parse(cfg, "config", &c)
        || fattn_shape_parse(shape, &s))
        return -1;
    s.causal = causal;
    const fattn_sim_inputs in = {.seed = 7};
    int rc = fattn_sim_check_config(&ks, &c, &s, &in, cache, r);
    fattn_kernel_src_release(&ks);
    if (rc == 0 && getenv("FATTN_TEST_VERBOSE"))
        fprintf(stderr, "%s %s %s: %s: %s\n", cfg, shape, causal ? "causal" : "", r->verdict, r->detail);
    return rc;
}

/* The finding of `kind` in r, or NULL. */
static const fattn_sim_finding *found(const fattn_sim_check *r, int kind)
{
    for (int i = 0; i < r->rep.nfindings; ++i)
        if (r->rep.findings[i].kind == kind)
            return &r->rep.findings[i];
    return NULL;
}

static int found_at(const fattn_sim_check *r, int kind, int line)
{
    for (int i = 0; i < r->rep.nfindings; ++i)
        if (r->rep.findings[i].kind == kind && r->rep.findings[i].line == line)
            return 1;
    return 0;
}

static int is_race(const char *verdict)
{
    return !strcmp(verdict, "race_raw") || !strcmp(verdict, "race_war") || !strcmp(verdict, "race_waw");
}

static void clean_configs(void)
{
    static const struct {
        const char *cfg, *shape;
        int causal;
    } cases[] = {
        {"bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "1,2,130,64", 0},
        {"bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "2,1,33,64", 1},
        {"bm128-bn32-bk16-w8-s3-u2-cp0-sw0-h0", "1,2,130,128", 1},
        {"bm32-bn128-bk64-w2-s1-u1-cp1-sw0-h1", "2,1,1,64", 0},
        {"bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-kv2-qr1", "1,2,130,64", 0},
        {"bm128-bn64-bk64-w4-s3-u1-cp1-sw1-h0-kv8", "1,2,33,128", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        fattn_sim_check r;
        CHECK_INT(run(fattn_default_kernel_dir(), cases[i].cfg, cases[i].shape, cases[i].causal, &r), 0);
        CHECK_STR(r.verdict, "ok");
        CHECK_INT(r.rep.nfindings, 0);
        CHECK_INT(r.rep.stopped, 0);
        CHECK(r.num.n > 0 && r.num.n_bad == 0);
    }
}

/* Acceptance 2: the seeds' layout, misaligned at the ldmatrix and cp.async
 * lines; the same configuration with the default pad is clean. */
static void seeds_pad(void)
{
    fattn_sim_check r;
    const int ldm = kernel_line("ldmatrix_x4(a[mt]"), cpa = kernel_line("cp_async<kLoadBytes>(");
    CHECK(ldm > 0 && cpa > 0);
    CHECK_INT(run(fattn_default_kernel_dir(), "bm64-bn64-bk32-w4-s2-u1-cp1-sw0-h1-pad2", "1,2,130,64", 0, &r), 0);
    CHECK_STR(r.verdict, "misaligned");
    CHECK(r.rep.stopped);
    CHECK(found_at(&r, FATTN_SIMK_MISALIGNED, ldm));
    CHECK(found_at(&r, FATTN_SIMK_MISALIGNED, cpa));
    const fattn_sim_finding *f = NULL;
    for (int i = 0; i < r.rep.nfindings; ++i)
        if (r.rep.findings[i].line == ldm)
            f = &r.rep.findings[i];
    if (f) { /* lane 1 holds row 1 of the first matrix: 130 bytes in */
        CHECK_INT(f->addr, 0x82);
        CHECK_INT(f->thread, 1);
        CHECK_STR(f->insn, "ldmatrix.x4");
        CHECK_CONTAINS(f->detail, "fattn_fwd.cu:");
    }
    CHECK_INT(run(fattn_default_kernel_dir(), "bm64-bn64-bk32-w4-s2-u1-cp1-sw0-h1", "1,2,130,64", 0, &r), 0);
    CHECK_STR(r.verdict, "ok");
    /* The register path faults at its own store. */
    CHECK_INT(run(fattn_default_kernel_dir(), "bm64-bn64-bk32-w4-s2-u1-cp0-sw0-h1-pad2", "1,2,130,64", 0, &r), 0);
    CHECK_STR(r.verdict, "misaligned");
    CHECK(found_at(&r, FATTN_SIMK_MISALIGNED, kernel_line("st_shared(tile + tile_off(row, byte, CHUNKS)")));
}

typedef struct plant {
    const char *name, *from, *to, *cfg, *shape;
    const char *verdict; /* "race" for any race kind */
    const char *line_of; /* kernel text at the reported line (in the original), or NULL */
} plant;

static const plant plants[] = {
    {"no-ring-sync", "cp_async_wait<STAGES - 2>();\n            __syncthreads();", "cp_async_wait<STAGES - 2>();",
     "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "1,2,130,64", "race", NULL},
    {"no-ring-sync-regs", "#else\n            __syncthreads();\n            Staged", "#else\n            Staged",
     "bm64-bn64-bk32-w4-s2-u1-cp0-sw1-h1", "1,2,130,64", "race", NULL},
    {"wait-short", "cp_async_wait<STAGES - 2>();", "cp_async_wait<STAGES - 1>();", "bm64-bn64-bk32-w4-s3-u1-cp1-sw1-h1",
     "1,2,130,64", "cp_async_unwaited", NULL},
    {"v-without-trans", "ldmatrix_x4_trans(b, slot", "ldmatrix_x4(b, slot", "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1",
     "1,2,130,64", "numerics", NULL},
    {"no-tail-guard", "u < Out::kUnits) && row < valid)", "u < Out::kUnits))", "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1",
     "1,2,130,64", "global_out_of_bounds", "st_global(oh + (size_t)row * HEAD_DIM + byte / 2"},
    {"smem-row-short", "#define FATTN_LOOP_BYTES (FATTN_Q_TILE_BYTES + STAGES * FATTN_KV_SLOT_BYTES)",
     "#define FATTN_LOOP_BYTES (FATTN_Q_TILE_BYTES + STAGES * FATTN_KV_SLOT_BYTES - FATTN_KV_SLOT_BYTES / BLOCK_N)",
     "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "1,2,130,64", "shared_out_of_bounds", NULL},
    {"no-cluster-barrier", "    cluster_sync();\n    {", "    {", "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-kv2",
     "1,2,130,64", "race", NULL},
    {"writes-q", "    half *oh = o + head + (size_t)m0 * HEAD_DIM;\n    const int valid",
     "    half *oh = (half *)q + head + (size_t)m0 * HEAD_DIM;\n    const int valid",
     "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "1,2,130,64", "input_written", NULL},
    {"divergent-shfl", "mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));",
     "if (lane != 3) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));", "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1",
     "1,2,130,64", "divergent", NULL},
    {"thread-exits", "    const int lane = threadIdx.x % 32;\n",
     "    const int lane = threadIdx.x % 32;\n    if (threadIdx.x == 37) return;\n",
     "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "1,2,130,64", "deadlock", NULL},
    {"two-writers", "st_shared(q_tile + tile_off(row, byte, FATTN_Q_CHUNKS), pack_half2(lo, hi));",
     "st_shared(q_tile + tile_off(row & ~1, byte, FATTN_Q_CHUNKS), pack_half2(lo, hi));",
     "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "1,2,130,64", "race_waw", NULL},
    {"q-rows-unwritten", "copy_tile<BLOCK_M, FATTN_Q_CHUNKS>(q_tile,",
     "copy_tile<BLOCK_M - 16, FATTN_Q_CHUNKS>(q_tile,", "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "1,2,130,64",
     "uninitialized_read", NULL},
};

/* Acceptance 3 and 4: every planted bug caught with its verdict. */
static void planted_bugs(void)
{
    for (size_t i = 0; i < sizeof plants / sizeof *plants; ++i) {
        const plant *p = &plants[i];
        t_case = p->name;
        char *dir = planted(p->name, p->from, p->to);
        CHECK(dir != NULL);
        if (!dir)
            continue;
        fattn_sim_check r;
        /* The control: the same configuration and shape, unplanted, is ok. */
        CHECK_INT(run(fattn_default_kernel_dir(), p->cfg, p->shape, 0, &r), 0);
        CHECK_STR(r.verdict, "ok");
        CHECK_INT(r.rep.nfindings, 0);
        CHECK_INT(run(dir, p->cfg, p->shape, 0, &r), 0);
        if (!strcmp(p->verdict, "race"))
            CHECK(is_race(r.verdict));
        else
            CHECK_STR(r.verdict, p->verdict);
        if (is_race(r.verdict)) { /* a race names both parties */
            int kind = 0;
            while (kind < FATTN_SIMK_KINDS && strcmp(fattn_sim_kind_name(kind), r.verdict))
                ++kind;
            const fattn_sim_finding *f = found(&r, kind);
            CHECK(f && f->other_thread >= 0 && f->other_line > 0
                  && (f->other_thread != f->thread || f->other_block_x != (int)f->block[0]));
        }
        /* Each race kind has its positive: without the ring barrier the
         * next tile's copy lands under the reads of this one (write after
         * read) and its reads see copies in flight (read after write);
         * two-writers gives write after write. */
        if (!strcmp(p->name, "no-ring-sync")) {
            CHECK(found(&r, FATTN_SIMK_RACE_RAW) != NULL);
            CHECK(found(&r, FATTN_SIMK_RACE_WAR) != NULL);
        }
        CHECK(r.fix[0] != 0);
        if (strcmp(p->verdict, "numerics")) {
            const fattn_sim_finding *f = fattn_sim_report_worst(&r.rep);
            CHECK(f != NULL);
            if (f) {
                CHECK(f->line > 0);
                CHECK(f->thread >= 0);
                CHECK_CONTAINS(f->file, p->name);
            }
        }
        if (p->line_of) {
            /* the edit keeps the line count above it: lines of the original hold */
            CHECK(found_at(&r, fattn_sim_report_worst(&r.rep)->kind, kernel_line(p->line_of)));
        }
        if (getenv("FATTN_TEST_VERBOSE"))
            fprintf(stderr, "  %s -> %s: %s\n", p->name, r.verdict, r.detail);
    }
    t_case = "planted_bugs";
}

/* Issue 33: bugs that move every row by about 1/S pass the elementwise gate
 * on uniform inputs and fail the norm-wise one; a causal diagonal off by
 * one fails at the first rows. S = 2048 (2049 for the tail: a partial last
 * key tile); one row block of 64 is simulated, in full. */
static void norm_gate_plants(void)
{
    static const struct {
        const char *name, *from, *to, *from2, *to2, *shape;
        int causal, elementwise; /* the elementwise gate catches it too */
    } bugs[] = {
        {"drop-last-key", "const bool need_mask = n0 + BLOCK_N > seqlen ||",
         "const bool need_mask = n0 + BLOCK_N >= seqlen ||", "if (col >= seqlen || (CAUSAL && col > row))",
         "if (col >= seqlen - 1 || (CAUSAL && col > row))", "1,1,2048,64", 0, 0},
        {"unmasked-tail", "if (col >= seqlen || (CAUSAL && col > row))", "if (CAUSAL && col > row)", NULL, NULL,
         "1,1,2049,64", 0, 0},
        {"causal-diagonal", "if (col >= seqlen || (CAUSAL && col > row))",
         "if (col >= seqlen || (CAUSAL && col > row + 1))", NULL, NULL, "1,1,2048,64", 1, 1},
    };
    static const unsigned last[] = {31}, first[] = {0};
    const char *cfg = "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1";
    fattn_kernel_src ks;
    fattn_config c;
    CHECK_INT(fattn_config_parse(cfg, "config", &c), 0);
    for (size_t i = 0; i < sizeof bugs / sizeof *bugs; ++i) {
        t_case = bugs[i].name;
        fattn_shape s = {0};
        CHECK_INT(fattn_shape_parse(bugs[i].shape, &s), 0);
        s.causal = bugs[i].causal;
        /* One row block: the first rows where the mask is causal (the
         * kernel runs them last), else the last; uniform inputs, where the
         * elementwise gate is blind to a 1/S shift (peaky ones are the
         * covering sample's and the fake engine's). */
        const fattn_sim_inputs in = {.seed = 7,
                                     .sets = 1u << FATTN_INPUTS_UNIFORM,
                                     .row_blocks = bugs[i].causal ? first : last,
                                     .nrow_blocks = 1};
        const char *dirs[2] = {fattn_default_kernel_dir(),
                               planted2(bugs[i].name, bugs[i].from, bugs[i].to, bugs[i].from2, bugs[i].to2)};
        CHECK(dirs[1] != NULL);
        for (int planted_bug = 0; planted_bug < 2 && dirs[planted_bug]; ++planted_bug) {
            fattn_sim_check r;
            CHECK_INT(fattn_kernel_src_load(dirs[planted_bug], fattn_family_mma.kernel_file, &ks), 0);
            CHECK_INT(fattn_sim_check_config(&ks, &c, &s, &in, cache, &r), 0);
            fattn_kernel_src_release(&ks);
            CHECK_INT(r.rep.nfindings, 0);
            CHECK_INT(r.num.n, 64 * 64); /* the row block's rows */
            fprintf(stderr, "  %s%s %s: %s: %s\n", planted_bug ? "" : "control of ", bugs[i].name, bugs[i].shape,
                    r.verdict, r.detail);
            if (!planted_bug) { /* the control: well inside the bound */
                CHECK_STR(r.verdict, "ok");
                CHECK(r.num.rel_l2 < FATTN_DEFAULT_MAX_REL_L2 / 5);
                continue;
            }
            CHECK_STR(r.verdict, "numerics");
            CHECK_INT(r.num.set, FATTN_INPUTS_UNIFORM); /* caught on the first set */
            CHECK(r.num.l2_bad);
            if (bugs[i].elementwise) {
                /* which gate and where: both, at the first rows */
                CHECK(r.num.n_bad > 0);
                CHECK_CONTAINS(r.detail, "both gates failed");
                CHECK(r.num.worst / 64 < 8);
            } else {
                CHECK_INT(r.num.n_bad, 0);
                CHECK_INT(r.num.n_nonfinite, 0);
                CHECK_CONTAINS(r.detail, "norm-wise gate failed on uniform inputs");
            }
        }
    }
    t_case = "norm_gate_plants";
}

/* A kernel with inline PTX of its own is refused, with the line. */
static void foreign_ptx(void)
{
    char *dir = planted("foreign-ptx", "    const int lane = threadIdx.x % 32;\n",
                        "    const int lane = threadIdx.x % 32;\n    asm volatile(\"membar.gl;\");\n");
    CHECK(dir != NULL);
    if (!dir)
        return;
    fattn_sim_check r;
    CHECK_INT(run(dir, "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "1,1,16,64", 0, &r), 0);
    CHECK_STR(r.verdict, "host_compile");
    CHECK_CONTAINS(r.detail, "inline PTX at fattn_fwd.cu:");
    char want[64];
    snprintf(want, sizeof want, "fattn_fwd.cu:%d", kernel_line("const int lane = threadIdx.x % 32;") + 1);
    CHECK_CONTAINS(r.detail, want);
    CHECK_INT(fattn_sim_find_asm("int x; // asm(\"x\")\n/* asm volatile */ const char *s = \"asm(\";\n"), 0);
    CHECK_INT(fattn_sim_find_asm("int plasma(int);\nint y = plasma(1);\n"), 0);
    CHECK_INT(fattn_sim_find_asm("\n\n  __asm__ __volatile__(\"nop\");"), 3);
}

/* A second build of the same configuration comes from the cache. */
static void cached(void)
{
    fattn_sim_check r;
    CHECK_INT(run(fattn_default_kernel_dir(), "bm64-bn32-bk16-w4-s2-u1-cp1-sw1-h1", "1,1,16,64", 0, &r), 0);
    CHECK_INT(run(fattn_default_kernel_dir(), "bm64-bn32-bk16-w4-s2-u1-cp1-sw1-h1", "1,1,16,64", 0, &r), 0);
    CHECK_INT(r.cache_hit, 1);
    CHECK_STR(r.verdict, "ok");
}

int main(void)
{
    fattn_error_set_quiet(1);
    if (!mkdtemp(tmp_root)) {
        perror("mkdtemp");
        return T_HARNESS;
    }
    cache = fattn_sim_cache_dir();
    T_RUN(clean_configs);
    T_RUN(seeds_pad);
    T_RUN(planted_bugs);
    T_RUN(norm_gate_plants);
    T_RUN(foreign_ptx);
    T_RUN(cached);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", tmp_root);
    free(cache);
    return t_exit();
}
