/*
 * test_util.c - SHA-256 against the FIPS 180-4 examples, strict number and
 * byte-count parsing, growing strings, the seeded random stream, errors
 * and the quiet flags (a reader that quiets a parser hands the caller's flag
 * back as it found it).
 */
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"

#include "compile/nvrtc.h"
#include "run/landscape.h"
#include "sim/kernel.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/misc.h"
#include "util/proc.h"
#include "util/sha256.h"
#include "util/strbuf.h"

static void sha256_vectors(void)
{
    char hex[65];
    fattn_sha256_hex("abc", 3, hex);
    CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    fattn_sha256_hex("", 0, hex);
    CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    fattn_sha256_hex(two, strlen(two), hex);
    CHECK_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

    /* One million 'a', fed in uneven pieces to exercise the block buffer. */
    fattn_sha256 c;
    unsigned char d[32];
    char chunk[997];
    memset(chunk, 'a', sizeof chunk);
    fattn_sha256_init(&c);
    size_t left = 1000000;
    while (left) {
        size_t n = left < sizeof chunk ? left : sizeof chunk;
        fattn_sha256_update(&c, chunk, n);
        left -= n;
    }
    fattn_sha256_final(&c, d);
    fattn_hex(d, 32, hex);
    CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void numbers(void)
{
    long v;
    double d;
    uint64_t b;
    CHECK(fattn_parse_long("512", 1, 1000, &v) == 0 && v == 512);
    CHECK(fattn_parse_long("0", 1, 1000, &v) != 0);
    CHECK(fattn_parse_long("-3", 1, 1000, &v) != 0);
    CHECK(fattn_parse_long("12x", 1, 1000, &v) != 0);
    CHECK(fattn_parse_long(" 12", 1, 1000, &v) != 0);
    CHECK(fattn_parse_long("", 1, 1000, &v) != 0);
    CHECK(fattn_parse_long("99999999999999999999", 1, 1000, &v) != 0);
    CHECK(fattn_parse_double("0.5", &d) == 0 && d == 0.5);
    CHECK(fattn_parse_double("nan", &d) != 0);
    CHECK(fattn_parse_double("1e999", &d) != 0);
    CHECK(fattn_parse_bytes("49152", &b) == 0 && b == 49152);
    CHECK(fattn_parse_bytes("48K", &b) == 0 && b == 49152);
    CHECK(fattn_parse_bytes("48KiB", &b) == 0 && b == 49152);
    CHECK(fattn_parse_bytes("20000M", &b) == 0 && b == 20000ull << 20);
    CHECK(fattn_parse_bytes("1G", &b) == 0 && b == 1ull << 30);
    CHECK(fattn_parse_bytes("48 K", &b) != 0);
    CHECK(fattn_parse_bytes("K", &b) != 0);
    CHECK(fattn_parse_bytes("-1", &b) != 0);
    CHECK(fattn_parse_bytes("99999999999999999999G", &b) != 0);
    char s[32];
    fattn_format_bytes(49152, s, sizeof s);
    CHECK_STR(s, "48 KiB");
    fattn_format_bytes(20000ull << 20, s, sizeof s);
    CHECK_STR(s, "20000 MiB");
    fattn_format_bytes(1000, s, sizeof s);
    CHECK_STR(s, "1000 B");
}

static void strings(void)
{
    fattn_strbuf sb;
    fattn_sb_init(&sb);
    CHECK_STR(sb.s, "");
    for (int i = 0; i < 1000; ++i)
        fattn_sb_addf(&sb, "%d,", i % 10);
    CHECK_INT(sb.len, 2000);
    CHECK(strncmp(sb.s, "0,1,2,", 6) == 0);
    char *s = fattn_sb_detach(&sb);
    CHECK_INT(strlen(s), 2000);
    CHECK_STR(sb.s, "");
    free(s);
    fattn_sb_release(&sb);
}

static void random_stream(void)
{
    fattn_rng a, b;
    fattn_rng_seed(&a, 42);
    fattn_rng_seed(&b, 42);
    for (int i = 0; i < 100; ++i)
        CHECK(fattn_rng_next(&a) == fattn_rng_next(&b));
    int seen[10] = {0};
    for (int i = 0; i < 10000; ++i)
        seen[fattn_rng_below(&a, 10)]++;
    for (int i = 0; i < 10; ++i)
        CHECK(seen[i] > 800 && seen[i] < 1200);
}

static void errors(void)
{
    fattn_error_set_quiet(1);
    CHECK_INT(fattn_error(FATTN_EUSAGE, "bad %s", "thing"), FATTN_EUSAGE);
    CHECK_STR(fattn_last_error(), "bad thing");
    CHECK_INT(fattn_exit_status(FATTN_OK), 0);
    CHECK_INT(fattn_exit_status(FATTN_EFAIL), 1);
    CHECK_INT(fattn_exit_status(FATTN_EUSAGE), 2);
}

/* A landscape whose shape and key are malformed: the reader quiets the
 * parsers it calls for them and gives its own message, and leaves the
 * calling thread's quiet flag as it found it, on or off. */
static void quiet_kept(void)
{
    static const char *bad[] = {
        "# fattn-tune landscape 1\n# arch: sm_90\n# shape: 2,x,512,64\nkey,status,reason,median_us,p10_us,p90_us\n",
        "# fattn-tune landscape 1\n# arch: sm_90\n# shape: 2,8,512,64\nkey,status,reason,median_us,p10_us,p90_us\n"
        "\n\nbm99-zz1,ok,,1,1,1\n",
    };
    static const char *said[] = {"malformed shape", "line 7: field key is 'bm99-zz1'"}; /* blank lines counted */
    fattn_error_set_quiet(1); /* print nothing whatever the thread's flag */
    char path[] = "/tmp/fattn-test-util-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    for (int i = 0; i < 2; ++i)
        for (int flag = 0; flag <= 1; ++flag) {
            FILE *f = fopen(path, "w");
            CHECK(f != NULL);
            fputs(bad[i], f);
            fclose(f);
            fattn_landscape l;
            fattn_error_set_quiet_thread(flag);
            CHECK_INT(fattn_landscape_load(path, &l), FATTN_EUSAGE);
            CHECK(strstr(fattn_last_error(), said[i]) != NULL);
            CHECK_INT(fattn_error_set_quiet_thread(0), flag);
        }
    close(fd);
    unlink(path);
}

/* Process tags: this process runs; a tag whose start time is another's, or
 * whose pid is gone, does not; another host's cannot be told. */
/* Text files: a NUL byte is refused where it is, a file past the limit at
 * once, and anything but a regular file without reading it. */
static void text_files(void)
{
    fattn_error_set_quiet(1);
    char path[] = "/tmp/fattn-test-util-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(write(fd, "{\"a\": 1}\0rest", 14) == 14);
    close(fd);
    char *text = NULL;
    size_t len = 0;
    CHECK_INT(fattn_read_file(path, "space file", FATTN_EUSAGE, &text, &len), FATTN_EUSAGE);
    CHECK(strstr(fattn_last_error(), "byte 8 is NUL") != NULL);
    CHECK_INT(fattn_read_file("/dev/zero", "space file", FATTN_EUSAGE, &text, &len), FATTN_EUSAGE);
    CHECK_STR(fattn_last_error(),
              "cannot read space file /dev/zero: it is a character device; expected a regular file");
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs("hello\n", f);
    fclose(f);
    CHECK_INT(fattn_read_file(path, "space file", FATTN_EUSAGE, &text, &len), FATTN_OK);
    CHECK(len == 6 && !strcmp(text, "hello\n"));
    free(text);
    CHECK_INT(truncate(path, (off_t)FATTN_TEXT_MAX + 1), 0);
    CHECK_INT(fattn_read_file(path, "space file", FATTN_EUSAGE, &text, &len), FATTN_EUSAGE);
    CHECK(strstr(fattn_last_error(), "over the limit of 16 MiB") != NULL);
    unlink(path);
    /* A pipe (endless: "yes") and a FIFO without a writer (it would block
     * forever): refused at once, before a byte is read. */
    FILE *p = popen("yes 2>/dev/null", "r");
    CHECK(p != NULL);
    char dev[64];
    snprintf(dev, sizeof dev, "/proc/self/fd/%d", fileno(p));
    CHECK_INT(fattn_read_file(dev, "landscape file", FATTN_EUSAGE, &text, &len), FATTN_EUSAGE);
    CHECK(strstr(fattn_last_error(), ": it is a FIFO; expected a regular file") != NULL);
    pclose(p);
    CHECK(mkfifo(path, 0600) == 0);
    double t0 = fattn_now_ms();
    CHECK_INT(fattn_read_file(path, "space file", FATTN_EUSAGE, &text, &len), FATTN_EUSAGE);
    CHECK(fattn_now_ms() - t0 < 5000 * t_slowdown());
    CHECK(strstr(fattn_last_error(), ": it is a FIFO; expected a regular file") != NULL);
    unlink(path);
    fattn_error_set_quiet(0);
}

/* The simulator's cache folder: the variables in order; without HOME a
 * folder named for this user, never a shared one. */
static void sim_cache_dir(void)
{
    const char *names[] = {"FATTN_SIM_CACHE", "XDG_CACHE_HOME", "HOME"};
    char *saved[3];
    for (int i = 0; i < 3; ++i) {
        const char *v = getenv(names[i]);
        saved[i] = v ? strdup(v) : NULL;
    }
    setenv("FATTN_SIM_CACHE", "/x/sim", 1);
    setenv("XDG_CACHE_HOME", "/x/xdg", 1);
    setenv("HOME", "/x/home", 1);
    char *d = fattn_sim_cache_dir();
    CHECK_STR(d, "/x/sim");
    free(d);
    unsetenv("FATTN_SIM_CACHE");
    d = fattn_sim_cache_dir();
    CHECK_STR(d, "/x/xdg/fattn-tune/sim");
    free(d);
    unsetenv("XDG_CACHE_HOME");
    d = fattn_sim_cache_dir();
    CHECK_STR(d, "/x/home/.cache/fattn-tune/sim");
    free(d);
    unsetenv("HOME");
    char want[64];
    snprintf(want, sizeof want, "/tmp/fattn-tune-sim-%u", (unsigned)geteuid());
    d = fattn_sim_cache_dir();
    CHECK_STR(d, want);
    free(d);
    for (int i = 0; i < 3; ++i) {
        if (saved[i])
            setenv(names[i], saved[i], 1);
        free(saved[i]);
    }
}

static void process_tags(void)
{
    char tag[320], other[400], who[400];
    CHECK_INT(fattn_process_tag(0, tag, sizeof tag), 0);
    CHECK_INT(fattn_process_tag_alive(tag), 1);
    const char *start = strrchr(tag, ':');
    snprintf(other, sizeof other, "%.*s:%llu", (int)(start - tag), tag, strtoull(start + 1, NULL, 10) + 1);
    CHECK_INT(fattn_process_tag_alive(other), 0); /* the pid reused by another process */
    CHECK_INT(fattn_process_tag_alive("no-such-host-really:1:1"), 2);
    CHECK_INT(fattn_process_tag_alive("garbage"), 0);
    CHECK_INT(fattn_process_tag(0x7ffffff0, other, sizeof other), -1);
    fattn_process_tag_who("gpu-box:4242:999", who, sizeof who);
    CHECK_STR(who, "process 4242 on gpu-box");
}

/* The nvcc flags of an NVRTC build: the arch as -gencode (sm_90a too),
 * every option kept but the ptxas report and include paths, -D on request. */
static void nvcc_flags(void)
{
    char out[256];
    const char *key = "--gpu-architecture=sm_90a -std=c++17 --use_fast_math --ptxas-options=-v -DBLOCK_M=64 "
                      "-DHEAD_DIM=128 -DCAUSAL=1";
    fattn_nvcc_flags(key, 0, out, sizeof out);
    CHECK_STR(out, "-gencode=arch=compute_90a,code=sm_90a -std=c++17 --use_fast_math");
    fattn_nvcc_flags(key, 1, out, sizeof out);
    CHECK_STR(out, "-gencode=arch=compute_90a,code=sm_90a -std=c++17 --use_fast_math -DBLOCK_M=64 -DHEAD_DIM=128 "
                   "-DCAUSAL=1");
    fattn_nvcc_flags("--gpu-architecture=sm_89  -std=c++17", 1, out, sizeof out);
    CHECK_STR(out, "-gencode=arch=compute_89,code=sm_89 -std=c++17");
    /* An option fattn-tune may add later is kept: it could change the code. */
    fattn_nvcc_flags("--gpu-architecture=sm_90 --extra-device-vectorization -I/usr/local/cuda/include -DX=1", 0, out,
                     sizeof out);
    CHECK_STR(out, "-gencode=arch=compute_90,code=sm_90 --extra-device-vectorization");
    /* No architecture: nothing to build with. */
    fattn_nvcc_flags("-std=c++17 --use_fast_math", 1, out, sizeof out);
    CHECK_STR(out, "");
    fattn_nvcc_flags(NULL, 1, out, sizeof out);
    CHECK_STR(out, "");
    fattn_nvcc_flags("--gpu-architecture=sm_", 1, out, sizeof out);
    CHECK_STR(out, "");
}

int main(void)
{
    T_RUN(sha256_vectors);
    T_RUN(nvcc_flags);
    T_RUN(numbers);
    T_RUN(strings);
    T_RUN(random_stream);
    T_RUN(errors);
    T_RUN(quiet_kept);
    T_RUN(text_files);
    T_RUN(sim_cache_dir);
    T_RUN(process_tags);
    return t_exit();
}
