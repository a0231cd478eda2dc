/*
 * test_hostile.c - hostile text in the database comes out escaped: in the
 * exported C header and dispatch header (comments and string literals), the
 * HTML report, JSON and T4 exports, and query's tables on a terminal.
 *
 * Each hostile string goes into every text column in turn (rotations), and
 * the outputs are compared with those made from benign stand-ins
 * (tests/hostile.h). The checkers themselves are shown to catch the
 * injections they exist for, and the escapers' exact output is pinned.
 */
#include "t.h"

#include <unistd.h>

#include "hostile.h"

static const char *const hostile[] = {
    "*/ #define FATTN_BLOCK_M 1 /*",
    "\"\n#define FATTN_TUNED_ARCH \"pwned",
    "</td><script>alert(1)</script>",
    "\" onmouseover=\"alert(1)",
    "' onclick='x",
    "ends in a trigraph ?\?/",
    "ends in a backslash \\",
    "/* opens a comment",
    "&amp; &#60; &lt; & &; &#;",
    "\x1b[31mred\x1b[0m\r\t\x7f bell\a",
    "\xff\xfe \xc0\xaf overlong \xed\xa0\x80 surrogate \xe2\x82",
    "line\xe2\x80\xa8separator, C1 \xc2\x9b"
    "31m",
    "h\xc3\xa9llo \xe2\x80\x93 \xe6\x97\xa5\xe6\x9c\xac",
    "%s%n%x%%",
    "",
    "-DFATTN_X=1 \\\n#error injected",
    "?\?=define X ?\?( ?\?) ?\?< ?\?> ?\?! ?\?' ?\?- ?\?/",
};
#define NHOSTILE ((int)(sizeof hostile / sizeof hostile[0]))

static char db_path[64];

static fattn_store *fresh_db(char **columns)
{
    fattn_store *s = NULL;
    snprintf(db_path, sizeof db_path, "/tmp/fattn-hostile-%d.db", (int)getpid());
    unlink(db_path);
    if (fattn_store_open(db_path, FATTN_DB_WRITE, &s) || hostile_build(s)) {
        fprintf(stderr, "cannot build %s\n", db_path);
        exit(T_HARNESS);
    }
    *columns = hostile_columns(fattn_store_db(s));
    return s;
}

static void done_db(fattn_store **s, char *columns)
{
    fattn_store_close(s);
    free(columns);
    unlink(db_path);
}

/* Every hostile string reaches every column that holds text. */
static void every_string_every_column(void)
{
    char *columns;
    fattn_store *s = fresh_db(&columns);
    int ncols = 0;
    for (const char *p = columns; *p; ++p)
        ncols += *p == '\n';
    CHECK(ncols >= 40); /* studies, trials, confirmations, compile_cache... */
    CHECK(strstr(columns, "studies\tcommand\n") != NULL);
    CHECK(strstr(columns, "trials\tconfig_key\n") != NULL);
    CHECK(strstr(columns, "trials\tregisters\n") != NULL);
    CHECK(strstr(columns, "confirmations\tverdict\n") != NULL);
    CHECK(strstr(columns, "trials\tstatus\n") == NULL);
    const char *rot[NHOSTILE];
    char why[256];
    for (int r = 0; r < NHOSTILE; ++r) {
        for (int i = 0; i < NHOSTILE; ++i)
            rot[i] = hostile[(i + r) % NHOSTILE];
        const char *bad = hostile_check(s, columns, rot, NHOSTILE, why, sizeof why);
        if (bad)
            fprintf(stderr, "rotation %d: %s\n", r, bad);
        CHECK(bad == NULL);
    }
    /* One string everywhere: equal strings stay equal (joins, groups). */
    for (int i = 0; i < NHOSTILE; ++i) {
        const char *bad = hostile_check(s, columns, &hostile[i], 1, why, sizeof why);
        if (bad)
            fprintf(stderr, "string %d alone: %s\n", i, bad);
        CHECK(bad == NULL);
    }
    done_db(&s, columns);
}

/* What the hostile text looks like once written, and that the report says
 * what the database holds (escaped, not dropped). */
static void outputs_carry_the_text(void)
{
    char *columns, why[256];
    fattn_store *s = fresh_db(&columns);
    const char *one[1] = {"<b>\"x\" & 'y' */ ?\?/"};
    CHECK(hostile_check(s, columns, one, 1, why, sizeof why) == NULL);
    hostile_outputs o = {{0}};
    hostile_render(s, &o);
    CHECK_CONTAINS(o.text[HOSTILE_REPORT], "<td>&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39; */ ?\?/</td>");
    CHECK_CONTAINS(o.text[HOSTILE_HEADER], " * device:  <b>\"x\" & 'y' *\\x2f ?\\x3f/\n");
    CHECK_CONTAINS(o.text[HOSTILE_HEADER], "#define FATTN_TUNED_ARCH \"<b>\\\"x\\\" & 'y' */ \\?\\?/\"\n");
    CHECK_CONTAINS(o.text[HOSTILE_DISPATCH], "\"<b>\\\"x\\\" & 'y' */ \\?\\?/\", 128,");
    CHECK_CONTAINS(o.text[HOSTILE_JSON], "\"command\": \"<b>\\\"x\\\" & 'y' */ ?\?/\"");
    CHECK(strstr(o.text[HOSTILE_REPORT], "class=\"verdict-other\"") != NULL);
    hostile_outputs_release(&o);
    done_db(&s, columns);
}

static char *with(void (*fn)(FILE *, const char *), const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fn(f, s);
    fclose(f);
    return buf;
}

#define CHECK_ESC(fn, in, out)                                                                                         \
    do {                                                                                                               \
        char *t_e_ = with(fn, in);                                                                                     \
        CHECK_STR(t_e_, out);                                                                                          \
        free(t_e_);                                                                                                    \
    } while (0)

static void escapers(void)
{
    CHECK_ESC(fattn_c_comment, "a*/b/*c?\?/d\\", "a*\\x2fb/\\x2ac?\\x3f/d\\x5c");
    CHECK_ESC(fattn_c_comment, "tab\there\n\xff\xc3\xa9", "tab\\x09here\\x0a\\xff\xc3\xa9");
    CHECK_ESC(fattn_c_comment, "a\\b ***/ /**", "a\\b ***\\x2f /\\x2a*");
    CHECK_ESC(fattn_c_string, "q\"b\\?\n\xc3\xa9", "\"q\\\"b\\\\\\?\\012\\303\\251\"");
    CHECK_ESC(fattn_c_string, NULL, "\"\"");
    CHECK_ESC(fattn_html_escape, "<a href='x'>&\"\x01\xff\xc3\xa9",
              "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&#xfffd;&#xfffd;\xc3\xa9");
    CHECK_ESC(fattn_json_string, "a\"\\\n\x01\xff\xe2\x80\xa8\xc3\xa9",
              "\"a\\\"\\\\\\n\\u0001\\ufffd\\u2028\xc3\xa9\"");
    CHECK_ESC(fattn_json_string, NULL, "null");
    char *t = fattn_terminal_safe("a\x1b[1m\xc2\x9b\xff\xc3\xa9\n");
    CHECK_STR(t, "a?[1m?\??\xc3\xa9?");
    free(t);
    unsigned cp = 0;
    CHECK_INT(fattn_utf8_len((const unsigned char *)"\xf4\x8f\xbf\xbf", &cp), 4);
    CHECK_INT(cp, 0x10ffff);
    CHECK_INT(fattn_utf8_len((const unsigned char *)"\xf4\x90\x80\x80", &cp), 0); /* past U+10FFFF */
    CHECK_INT(fattn_utf8_len((const unsigned char *)"\xe0\x80\xaf", &cp), 0);     /* overlong */
    CHECK_INT(fattn_utf8_len((const unsigned char *)"\xed\xbf\xbf", &cp), 0);     /* surrogate */
    CHECK_INT(fattn_utf8_len((const unsigned char *)"\xe2\x82", &cp), 0);         /* truncated */
}

/* The checkers catch what they are for: each bad text below is what an
 * unescaped writer would produce. */
static void checkers_catch_injection(void)
{
    char *good = c_skeleton("/* a */\n#define A \"x\"\n");
    CHECK_STR(good, "/**/\n#define A \"\"\n");
    const char *c_bad[] = {
        "/* a */ b */\n#define A \"x\"\n",       /* a comment ended early */
        "/* a /* b */\n#define A \"x\"\n",       /* a nested comment opener */
        "/* a ?\?/\n*/\n#define A \"x\"\n",      /* fine: the splice stays in the comment */
        "/* a */\n#define A \"x\" \"y\"\n",      /* a literal ended early */
        "/* a */\n#define A \"x\ny\"\n",         /* a newline in a literal */
        "/* a */\n#define A \"x\\q\"\n",         /* an escape C does not have */
        "/* a */\n#define A \"x?\?/\"\n",        /* a trigraph escaping the quote */
        "/* a *?\?/\n/ b */\n#define A \"x\"\n", /* a comment ended by a spliced trigraph */
    };
    for (size_t i = 0; i < sizeof c_bad / sizeof c_bad[0]; ++i) {
        char *k = c_skeleton(c_bad[i]);
        int same = k && good && !strcmp(k, good);
        CHECK(i == 2 ? same : !same);
        free(k);
    }
    free(good);
    char *v = c_define_string("x\n#define A \"a\\\"b\\101\\x42\\n\\?\"\n", "A");
    CHECK_STR(v, "a\"bAB\n?");
    free(v);

    char *h = html_skeleton("<!DOCTYPE html>\n<p class=\"a\">x &amp; y</p><br/>");
    CHECK_STR(h, "<!><p class></p><br>");
    free(h);
    const char *h_bad[] = {
        "<p class=\"a\">x <script>y</script></p>",
        "<p class=\"a\" onclick=\"y\">x</p>",
        "<p class=\"a\"\">x</p>",
        "<p class=\"a\">x & y</p>",
        "<p class=\"a\">x > y</p>",
        "<p class=a>x</p>",
        "<p class=\"a\">x \x1b y</p>",
        "<p class=\"a\">x \xff y</p>",
    };
    for (size_t i = 0; i < sizeof h_bad / sizeof h_bad[0]; ++i) {
        char *k = html_skeleton(h_bad[i]);
        CHECK(!k || strcmp(k, "<p class></p>") != 0);
        free(k);
    }
}

int main(void)
{
    fattn_error_set_quiet_thread(1);
    T_RUN(escapers);
    T_RUN(checkers_catch_injection);
    T_RUN(every_string_every_column);
    T_RUN(outputs_carry_the_text);
    return t_exit();
}
