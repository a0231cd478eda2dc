/*
 * test_space.c - the parameter registry, config keys, space files (the
 * default space and every kind of bad file, each error naming its JSON
 * path), enumeration order and filters; shapes.
 */
#include "t.h"

#include "space/params.h"
#include "space/space.h"
#include "target/arch.h"
#include "target/shape.h"
#include "util/err.h"
#include "util/paths.h"

static int parse(const char *json, fattn_space *sp)
{
    return fattn_space_parse(json, strlen(json), "space.json", sp);
}

static void default_space(void)
{
    fattn_space sp;
    fattn_config c;
    char key[FATTN_KEY_MAX];
    CHECK_INT(fattn_space_load(fattn_default_space_path(), &sp), FATTN_OK);
    CHECK_INT(sp.count, 3888);
    for (int i = 0; i < FATTN_MMA_NSEED_TUNABLES; ++i)
        CHECK(sp.listed[i]);
    CHECK(!sp.listed[FATTN_P_PAD_BYTES] && !sp.listed[FATTN_P_COPY_COLMAJOR]);
    /* The extension tunables stay off in the seeds' space: its keys are the seeds'. */
    CHECK(!sp.listed[FATTN_P_SPLIT_KV] && !sp.listed[FATTN_P_Q_REGS]);
    /* Stable order: first parameter slowest, values in file order. */
    fattn_space_config(&sp, 0, &c);
    fattn_config_key(&c, key);
    CHECK_STR(key, "bm32-bn32-bk16-w2-s1-u1-cp0-sw0-h0");
    fattn_space_config(&sp, 1, &c);
    fattn_config_key(&c, key);
    CHECK_STR(key, "bm32-bn32-bk16-w2-s1-u1-cp0-sw0-h1");
    fattn_space_config(&sp, 3887, &c);
    fattn_config_key(&c, key);
    CHECK_STR(key, "bm128-bn128-bk64-w8-s3-u2-cp1-sw1-h1");
    CHECK_INT(c.v[FATTN_P_PAD_BYTES], 16);
    /* Every configuration distinct. */
    int distinct = 1;
    for (size_t i = 1; i < sp.count && distinct; ++i) {
        fattn_config a, b;
        fattn_space_config(&sp, i - 1, &a);
        fattn_space_config(&sp, i, &b);
        distinct = !fattn_config_equal(&a, &b);
    }
    CHECK(distinct);
    CHECK_INT(strlen(sp.hash), 64);
    fattn_space_release(&sp);
}

static void keys(void)
{
    fattn_config c, d;
    char key[FATTN_KEY_MAX];
    fattn_config_default(&c, &fattn_family_mma);
    fattn_config_key(&c, key);
    CHECK_STR(key, "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1");
    CHECK_INT(fattn_config_parse(key, "test", &d), FATTN_OK);
    CHECK(fattn_config_equal(&c, &d));
    CHECK_INT(fattn_config_parse("BLOCK_M=128, NUM_WARPS=8,PAD_BYTES=2", "test", &d), FATTN_OK);
    CHECK_INT(d.v[FATTN_P_BLOCK_M], 128);
    CHECK_INT(d.v[FATTN_P_NUM_WARPS], 8);
    CHECK_INT(d.v[FATTN_P_BLOCK_N], 64);
    fattn_config_key(&d, key);
    CHECK_STR(key, "bm128-bn64-bk32-w8-s2-u1-cp1-sw1-h1-pad2");
    CHECK_INT(fattn_config_parse(key, "test", &c), FATTN_OK);
    CHECK(fattn_config_equal(&c, &d));
    char desc[256];
    fattn_config_describe(&d, desc, sizeof desc);
    CHECK_STR(desc, "BLOCK_M=128 BLOCK_N=64 BLOCK_K=32 NUM_WARPS=8 STAGES=2 UNROLL=1 CP_ASYNC=1 SWIZZLE=1 HALF2=1 "
                    "PAD_BYTES=2");
    /* Extension tunables: in the key only when set, in registry order, and
     * read back from it. */
    CHECK_INT(fattn_config_parse("Q_REGS=1,SPLIT_KV=4", "test", &d), FATTN_OK);
    fattn_config_key(&d, key);
    CHECK_STR(key, "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-kv4-qr1");
    CHECK_INT(fattn_config_parse(key, "test", &c), FATTN_OK);
    CHECK(fattn_config_equal(&c, &d));
    CHECK_INT(c.v[FATTN_P_SPLIT_KV], 4);
    CHECK_INT(c.v[FATTN_P_Q_REGS], 1);
    fattn_config_describe(&c, desc, sizeof desc);
    CHECK_CONTAINS(desc, "HALF2=1 SPLIT_KV=4 Q_REGS=1");
    CHECK_INT(fattn_config_parse("bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-kv1", "test", &c), FATTN_OK);
    fattn_config_key(&c, key);
    CHECK_STR(key, "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1");

    fattn_error_set_quiet(1);
    CHECK_INT(fattn_config_parse("bm64-zz3", "--explain", &d), FATTN_EUSAGE);
    CHECK_CONTAINS(fattn_last_error(), "cannot read 'zz3'");
    CHECK_INT(fattn_config_parse("BLOCK_Q=3", "--explain", &d), FATTN_EUSAGE);
    CHECK_CONTAINS(fattn_last_error(), "unknown parameter 'BLOCK_Q'");
    CHECK_INT(fattn_config_parse("bm64-bm32", "--explain", &d), FATTN_EUSAGE);
    CHECK_CONTAINS(fattn_last_error(), "BLOCK_M given twice");
    CHECK_INT(fattn_config_parse("CP_ASYNC=2", "--explain", &d), FATTN_EUSAGE);
    CHECK_CONTAINS(fattn_last_error(), "expected an integer from 0 to 1");
    CHECK_INT(fattn_config_parse("", "--explain", &d), FATTN_EUSAGE);
    fattn_error_set_quiet(0);
}

static void bad_files(void)
{
    static const struct {
        const char *json, *message;
    } cases[] = {
        {"{\"parameters\": {\"BLOCK_M\": [64, 1.5]}}", "$.parameters.BLOCK_M[1]: expected an integer, got 1.5"},
        {"{\"parameters\": {\"BLOCK_M\": [64, \"128\"]}}",
         "$.parameters.BLOCK_M[1]: expected an integer, got a string"},
        {"{\"parameters\": {\"BLOCK_Q\": [64]}}", "$.parameters.BLOCK_Q: unknown parameter"},
        {"{\"parameters\": {\"BLOCK_M\": []}}", "$.parameters.BLOCK_M: empty value set"},
        {"{\"parameters\": {\"BLOCK_M\": 64}}", "$.parameters.BLOCK_M: expected an array of integers, got a number"},
        {"{\"parameters\": {\"BLOCK_M\": [64], \"BLOCK_M\": [128]}}", "$.parameters: key \"BLOCK_M\" appears twice"},
        {"{\"parameters\": {\"BLOCK_M\": [64]}, \"parameters\": {}}", "$: key \"parameters\" appears twice"},
        {"{\"parameters\": {\"BLOCK_M\": [64, 64]}}", "$.parameters.BLOCK_M[1]: value 64 is listed twice"},
        {"{\"parameters\": {\"CP_ASYNC\": [0, 2]}}", "$.parameters.CP_ASYNC[1]: 2 is out of range; expected 0 to 1"},
        {"{\"parameters\": {\"STAGES\": [0]}}", "$.parameters.STAGES[0]: 0 is out of range"},
        {"{\"parameter\": {\"BLOCK_M\": [64]}}", "$.parameter: unknown key"},
        {"{\"description\": \"x\"}", "$: missing \"parameters\""},
        {"{\"parameters\": [1]}", "$.parameters: expected an object, got an array"},
        {"[1, 2]", "$: expected an object with a \"parameters\" member, got an array"},
        {"{\"description\": 5, \"parameters\": {}}", "$.description: expected a string, got a number"},
        {"{\n  \"parameters\": {\n    \"BLOCK_M\": [64,]\n  }\n}", "line 3, column"},
        {"{\"parameters\": {\"BLOCK_M\": [64]}} x", "text after the JSON object"},
        {"", "not valid JSON"},
    };
    fattn_error_set_quiet(1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        fattn_space sp;
        CHECK_INT(parse(cases[i].json, &sp), FATTN_EUSAGE);
        CHECK_CONTAINS(fattn_last_error(), "space.json: ");
        CHECK_CONTAINS(fattn_last_error(), cases[i].message);
    }
    fattn_space sp;
    CHECK_INT(fattn_space_load("/nonexistent/space.json", &sp), FATTN_EUSAGE);
    CHECK_CONTAINS(fattn_last_error(), "cannot read space file /nonexistent/space.json");
    fattn_error_set_quiet(0);
}

static void small_space(void)
{
    fattn_space sp;
    fattn_config c;
    CHECK_INT(parse("{\"parameters\": {\"BLOCK_M\": [128, 64], \"PAD_BYTES\": [2]}}", &sp), FATTN_OK);
    CHECK_INT(sp.count, 2);
    fattn_space_config(&sp, 0, &c);
    CHECK_INT(c.v[FATTN_P_BLOCK_M], 128);
    CHECK_INT(c.v[FATTN_P_PAD_BYTES], 2);
    CHECK_INT(c.v[FATTN_P_BLOCK_N], fattn_mma_params[FATTN_P_BLOCK_N].def);
    fattn_space_config(&sp, 1, &c);
    CHECK_INT(c.v[FATTN_P_BLOCK_M], 64);
    fattn_space_release(&sp);
}

static void filters(void)
{
    fattn_space sp;
    fattn_filter f;
    CHECK_INT(fattn_space_load(fattn_default_space_path(), &sp), FATTN_OK);
    CHECK_INT(fattn_filter_parse("BLOCK_M>=64, CP_ASYNC = 1,STAGES!=3", &fattn_family_mma, &f), FATTN_OK);
    CHECK_INT(f.n, 3);
    size_t n = 0;
    for (size_t i = 0; i < sp.count; ++i) {
        fattn_config c;
        fattn_space_config(&sp, i, &c);
        n += fattn_filter_match(&f, &c);
    }
    CHECK_INT(n, 864); /* 3888 x 2/3 (BLOCK_M) x 1/2 (CP_ASYNC) x 2/3 (STAGES) */
    fattn_error_set_quiet(1);
    CHECK_INT(fattn_filter_parse("BLOCK_Q=1", &fattn_family_mma, &f), FATTN_EUSAGE);
    CHECK_CONTAINS(fattn_last_error(), "unknown parameter 'BLOCK_Q'");
    CHECK_INT(fattn_filter_parse("BLOCK_M~1", &fattn_family_mma, &f), FATTN_EUSAGE);
    CHECK_INT(fattn_filter_parse("BLOCK_M=", &fattn_family_mma, &f), FATTN_EUSAGE);
    CHECK_INT(fattn_filter_parse(",", &fattn_family_mma, &f), FATTN_EUSAGE);
    fattn_error_set_quiet(0);
    fattn_space_release(&sp);
}

static void families(void)
{
    fattn_space sp;
    fattn_config c, d;
    char text[FATTN_PARAMS_JSON_MAX];
    /* The table: mma first, found by name. */
    CHECK(fattn_families[0] == &fattn_family_mma);
    CHECK(fattn_family_find("mma") == &fattn_family_mma);
    CHECK(fattn_family_find("MMA") == NULL && fattn_family_find("") == NULL);
    CHECK_CONTAINS(fattn_family_names(), "mma");
    CHECK_STR(fattn_param_names(&fattn_family_mma, text, sizeof text),
              "BLOCK_M, BLOCK_N, BLOCK_K, NUM_WARPS, STAGES, UNROLL, CP_ASYNC, SWIZZLE, HALF2, SPLIT_KV, Q_REGS (test "
              "only: PAD_BYTES, COPY_COLMAJOR)");
    for (int i = 0; fattn_families[i]; ++i) {
        const fattn_family *f = fattn_families[i];
        t_case = f->name;
        CHECK(f->nparams > 0 && f->nparams <= FATTN_MAX_PARAMS);
        CHECK(f->kernel_file && f->kernel_name && f->summary);
        for (int p = 0; p < f->nparams; ++p) {
            CHECK(f->params[p].min <= f->params[p].def && f->params[p].def <= f->params[p].max);
            CHECK_INT(fattn_param_find(f, f->params[p].name), p);
        }
    }
    t_case = "families";
    fattn_error_set_quiet(1);
    /* A space file names its family, or is mma's. */
    CHECK_INT(parse("{\"parameters\": {\"BLOCK_M\": [64]}}", &sp), FATTN_OK);
    CHECK(sp.fam == &fattn_family_mma && !sp.family_named);
    fattn_space_release(&sp);
    CHECK_INT(parse("{\"family\": \"mma\", \"parameters\": {\"BLOCK_M\": [64, 128]}}", &sp), FATTN_OK);
    CHECK(sp.fam == &fattn_family_mma && sp.family_named);
    CHECK_INT(sp.count, 2);
    fattn_space_config(&sp, 1, &c);
    CHECK(c.fam == &fattn_family_mma);
    CHECK_INT(c.v[FATTN_P_BLOCK_M], 128);
    fattn_space_release(&sp);
    CHECK_INT(parse("{\"family\": \"nosuch\", \"parameters\": {}}", &sp), FATTN_EUSAGE);
    char want[512]; /* the families' names as the table lists them: a new family changes no test */
    snprintf(want, sizeof want, "$.family: unknown kernel family \"nosuch\"; expected one of %s", fattn_family_names());
    CHECK_CONTAINS(fattn_last_error(), want);
    CHECK_CONTAINS(fattn_family_names(), "mma, tmacopy");
    CHECK_INT(parse("{\"family\": \"mma\", \"parameters\": {\"TILE\": [1]}}", &sp), FATTN_EUSAGE);
    CHECK_CONTAINS(fattn_last_error(), "$.parameters.TILE: unknown parameter; expected one of BLOCK_M, BLOCK_N,");
    CHECK_CONTAINS(fattn_last_error(), "(test only: PAD_BYTES, COPY_COLMAJOR) of family mma");
    CHECK_INT(parse("{\"family\": 3, \"parameters\": {}}", &sp), FATTN_EUSAGE);
    snprintf(want, sizeof want, "$.family: expected a family name (one of %s), got a number", fattn_family_names());
    CHECK_CONTAINS(fattn_last_error(), want);
    /* Keys and lists may name their family; mma's keys need not. */
    CHECK_INT(fattn_config_parse("mma-bm128-bn32-bk16-w8-s3-u2-cp0-sw0-h0", "test", &c), FATTN_OK);
    CHECK_INT(fattn_config_parse("bm128-bn32-bk16-w8-s3-u2-cp0-sw0-h0", "test", &d), FATTN_OK);
    CHECK(fattn_config_equal(&c, &d));
    CHECK_INT(fattn_config_parse("family=mma,BLOCK_M=128,STAGES=3", "test", &c), FATTN_OK);
    CHECK_INT(c.v[FATTN_P_BLOCK_M] * 10 + c.v[FATTN_P_STAGES], 1283);
    CHECK_INT(fattn_config_parse("family=zz,BLOCK_M=128", "--explain", &c), FATTN_EUSAGE);
    CHECK_CONTAINS(fattn_last_error(),
                   "--explain 'family=zz,BLOCK_M=128': unknown family 'zz'; expected one of mma, tmacopy");
    /* The second family: its keys start with its name, and round-trip. */
    CHECK_INT(parse("{\"family\": \"tmacopy\", \"parameters\": {\"BOX_ROWS\": [16, 128]}}", &sp), FATTN_OK);
    CHECK(sp.fam == fattn_family_find("tmacopy") && sp.count == 2);
    fattn_space_config(&sp, 1, &c);
    char tkey[FATTN_KEY_MAX];
    fattn_config_key(&c, tkey);
    CHECK_STR(tkey, "tmacopy-br128");
    CHECK_INT(fattn_config_parse(tkey, "test", &d), FATTN_OK);
    CHECK(fattn_config_equal(&c, &d));
    fattn_space_release(&sp);
    CHECK_INT(fattn_config_parse("family=tmacopy,BOX_ROWS=128", "test", &d), FATTN_OK);
    CHECK(fattn_config_equal(&c, &d));
    CHECK_INT(fattn_config_parse("family=tmacopy,BLOCK_M=128", "test", &d), FATTN_EUSAGE);
    CHECK_INT(fattn_config_parse("BLOCK_M=64,TILE=3", "--explain", &c), FATTN_EUSAGE);
    CHECK_CONTAINS(fattn_last_error(), "unknown parameter 'TILE'; expected one of BLOCK_M, BLOCK_N,");
    /* params_json: every parameter, in table order. */
    CHECK_INT(fattn_config_parse("bm128-bn32-bk16-w8-s3-u2-cp0-sw0-h0-kv4-pad48", "test", &c), FATTN_OK);
    fattn_config_json(&c, text, sizeof text);
    CHECK_STR(text, "{\"BLOCK_M\":128,\"BLOCK_N\":32,\"BLOCK_K\":16,\"NUM_WARPS\":8,\"STAGES\":3,\"UNROLL\":2,"
                    "\"CP_ASYNC\":0,\"SWIZZLE\":0,\"HALF2\":0,\"SPLIT_KV\":4,\"Q_REGS\":0,\"PAD_BYTES\":48,"
                    "\"COPY_COLMAJOR\":0}");
    /* A filter reads the family's names. */
    fattn_filter f;
    CHECK_INT(fattn_filter_parse("SPLIT_KV>1", &fattn_family_mma, &f), FATTN_OK);
    CHECK(fattn_filter_match(&f, &c));
    fattn_error_set_quiet(0);
}

static void shapes(void)
{
    fattn_shape s = {0};
    CHECK_INT(fattn_shape_parse("2,8,512,64", &s), FATTN_OK);
    CHECK(s.batch == 2 && s.heads == 8 && s.seqlen == 512 && s.head_dim == 64);
    CHECK_NEAR(fattn_shape_flops(&s), 4.0 * 2 * 8 * 512 * 512 * 64, 0);
    CHECK_NEAR(fattn_shape_min_bytes(&s), 4.0 * 2 * 8 * 512 * 64 * 2, 0);
    s.causal = 1;
    CHECK_NEAR(fattn_shape_flops(&s), 2.0 * 2 * 8 * 512 * 512 * 64, 0);
    uint64_t need;
    CHECK_INT(fattn_shape_device_bytes(&s, 1, &need), 0);
    CHECK_INT(need, 6ull * 2 * 8 * 512 * 64 * 2);
    /* Each field at its maximum: B*H*S*D (under 2^63) fits, the bytes do not. */
    fattn_shape top = {65535, 65535, FATTN_MAX_SEQLEN, 128, 0};
    CHECK(fattn_shape_elems(&top) == 65535ull * 65535 * (1ull << 24) * 128);
    CHECK_INT(fattn_shape_device_bytes(&top, 1, &need), -1);
    CHECK(need == UINT64_MAX);
    CHECK_NEAR(fattn_shape_device_bytes_approx(&top, 1), 12.0 * 65535 * 65535 * (1 << 24) * 128, 1e6);
    /* The case: 1.84e19 bytes, just past 2^64, once wrapped to 2 GiB. */
    fattn_shape near = {45761, 62571, 8388608, 64, 0};
    CHECK_INT(fattn_shape_device_bytes(&near, 1, &need), -1);
    CHECK(fattn_shape_device_bytes_approx(&near, 1) > 1.8e19);
    /* 16 timing sets: 51 tensors, the largest count the engine plans. */
    fattn_shape wide = {65535, 65535, 1, 64, 0};
    CHECK_INT(fattn_shape_device_bytes(&wide, 17, &need), 0);
    CHECK(need == 54ull * 65535 * 65535 * 64 * 2);
    CHECK_INT(fattn_shape_device_bytes(&wide, INT32_MAX, &need), -1);
    static const struct {
        const char *text, *message;
    } bad[] = {
        {"2,8,0,64", "S (sequence length) is '0'"},
        {"2,8,512,96", "D (head dimension) is 96; expected 64 or 128"},
        {"2,8,512,256", "D (head dimension) is '256'"},
        {"-2,8,512,64", "B (batch) is '-2'"},
        {"2,x,512,64", "H (heads) is 'x'"},
        {"2,8,512", "3 fields; expected 4"},
        {"2,8,512,64,1", "more than 4 fields"},
        {"2,8,,64", "S (sequence length) is ''"},
        {"", "empty"},
        {"70000,8,512,64", "expected an integer from 1 to 65535"},
    };
    fattn_error_set_quiet(1);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        CHECK_INT(fattn_shape_parse(bad[i].text, &s), FATTN_EUSAGE);
        CHECK_CONTAINS(fattn_last_error(), bad[i].message);
    }
    fattn_error_set_quiet(0);
}

static void archs(void)
{
    CHECK(fattn_arch_find("sm_90") && fattn_arch_find("sm_90")->sm == 90);
    CHECK(fattn_arch_find("sm_75") == NULL);
    CHECK(fattn_arch_from_cc(8, 9) == fattn_arch_find("sm_89"));
    CHECK(fattn_arch_from_cc(8, 7) == NULL);
    /* sm_90a: sm_90's limits under its own name; a 9.0 GPU is sm_90. */
    const fattn_arch *a = fattn_arch_find("sm_90a"), *b = fattn_arch_find("sm_90");
    CHECK(a && b && a != b);
    if (a && b) {
        CHECK_STR(a->name, "sm_90a");
        CHECK_INT(a->sm, 90);
        CHECK_INT(a->smem_per_block_optin, b->smem_per_block_optin);
        CHECK_INT(a->max_cluster_size, b->max_cluster_size);
    }
    CHECK(fattn_arch_from_cc(9, 0) == b);
    int n = 0;
    for (int i = 0; fattn_archs[i]; ++i, ++n)
        CHECK_INT(fattn_archs[i]->smem_per_block, 49152);
    CHECK_INT(n, 5);
}

int main(void)
{
    T_RUN(default_space);
    T_RUN(keys);
    T_RUN(bad_files);
    T_RUN(small_space);
    T_RUN(filters);
    T_RUN(families);
    T_RUN(shapes);
    T_RUN(archs);
    return t_exit();
}
