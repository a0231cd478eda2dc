/*
 * kernel.c - compiling the kernel for the host, caching and loading it.
 */
#include "sim/kernel.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/err.h"
#include "util/fs.h"
#include "util/misc.h"
#include "util/sha256.h"
#include "util/strbuf.h"

extern char **environ;

/* Flags of every host build; part of the cache key. */
static const char *const cxx_flags[] = {"-std=c++17",           "-O1", "-fPIC",      "-shared",
                                        "-fno-strict-aliasing", "-w",  "-DFATTN_SIM"};

static const char *const sim_headers[] = {"cuda_fp16.h", "fattn_sim_prim.h", "fattn_sim_prim_sm90.h",
                                          "fattn_sim_api.h"};

#define PRIM_HEADER "fattn_prim.h"

/* The headers allowed to hold inline PTX: each has its host side in sim/. */
static int prim_header(const char *name)
{
    return !strcmp(name, PRIM_HEADER) || !strcmp(name, "fattn_prim_sm90.h");
}

char *fattn_sim_cache_dir(void)
{
    const char *e = getenv("FATTN_SIM_CACHE");
    fattn_strbuf sb;
    fattn_sb_init(&sb);
    if (e && *e)
        fattn_sb_adds(&sb, e);
    else if ((e = getenv("XDG_CACHE_HOME")) && *e)
        fattn_sb_addf(&sb, "%s/fattn-tune/sim", e);
    else if ((e = getenv("HOME")) && *e)
        fattn_sb_addf(&sb, "%s/.cache/fattn-tune/sim", e);
    else /* no home: a folder of this user's own, never a shared one */
        fattn_sb_addf(&sb, "/tmp/fattn-tune-sim-%u", (unsigned)geteuid());
    return fattn_sb_detach(&sb);
}

static const char *compiler(void)
{
    const char *c = getenv("CXX");
    return c && *c ? c : "c++";
}

/* Runs argv with stdout and stderr into *out; returns the exit status, or -1
 * when it could not be started (errno kept). */
static int run_capture(char *const argv[], fattn_strbuf *out)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc != 0) {
        close(fd[0]);
        errno = rc;
        return -1;
    }
    char buf[4096];
    ssize_t n;
    while ((n = read(fd[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
            fattn_sb_add(out, buf, (size_t)n);
    close(fd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* The compiler's first --version line, once per process. */
int fattn_sim_compiler_identity(char *out, size_t n)
{
    static char id[256];
    if (!id[0]) {
        char *argv[] = {(char *)compiler(), "--version", NULL};
        fattn_strbuf sb;
        fattn_sb_init(&sb);
        int rc = run_capture(argv, &sb);
        if (rc != 0) {
            fattn_sb_release(&sb);
            return fattn_error(FATTN_EFAIL, "simulator: cannot run the C++ compiler '%s' (%s); install g++ or set CXX",
                               compiler(), rc < 0 ? strerror(errno) : "--version failed");
        }
        const char *s = sb.len ? sb.s : "";
        snprintf(id, sizeof id, "%s: %.*s", compiler(), (int)strcspn(s, "\n"), s);
        fattn_sb_release(&sb);
    }
    snprintf(out, n, "%s", id);
    return FATTN_OK;
}

/* Skips comments, string and character literals; calls back on code. */
int fattn_sim_find_asm(const char *t)
{
    int line = 1;
    for (const char *p = t; *p; ++p) {
        if (*p == '\n') {
            ++line;
        } else if (p[0] == '/' && p[1] == '/') {
            while (p[1] && p[1] != '\n')
                ++p;
        } else if (p[0] == '/' && p[1] == '*') {
            for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); ++p)
                line += *p == '\n';
            if (!*p)
                break;
            ++p;
        } else if (*p == '"' || *p == '\'') {
            const char q = *p;
            for (++p; *p && *p != q; ++p) {
                if (*p == '\\' && p[1])
                    ++p;
                line += *p == '\n';
            }
            if (!*p)
                break;
        } else if ((p == t
                    || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z')
                         || (p[-1] >= '0' && p[-1] <= '9')))
                   && (!strncmp(p, "asm", 3) || !strncmp(p, "__asm__", 7) || !strncmp(p, "__asm", 5))) {
            const char *e = p + (p[0] == 'a' ? 3 : p[5] == '_' ? 7 : 5);
            if (!(*e == '_' || (*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') || (*e >= '0' && *e <= '9')))
                return line;
        }
    }
    return 0;
}

static void key_of(const fattn_kernel_src *src, const char *const *defs, int ndefs, const char *sim_text,
                   const char *id, char out[65])
{
    fattn_sha256 c;
    unsigned char d[32];
    fattn_sha256_init(&c);
    fattn_sha256_update(&c, src->hash, strlen(src->hash));
    fattn_sha256_update(&c, sim_text, strlen(sim_text));
    for (size_t i = 0; i < sizeof cxx_flags / sizeof *cxx_flags; ++i)
        fattn_sha256_update(&c, cxx_flags[i], strlen(cxx_flags[i]) + 1);
    for (int i = 0; i < ndefs; ++i)
        fattn_sha256_update(&c, defs[i], strlen(defs[i]) + 1);
    fattn_sha256_update(&c, id, strlen(id));
    fattn_sha256_final(&c, d);
    for (int i = 0; i < 32; ++i)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* The first error lines of a compiler log, on one line. */
static void first_errors(const char *log, char *out, size_t n)
{
    const char *e = strstr(log, "error");
    const char *start = e ? e : log;
    while (start > log && start[-1] != '\n')
        --start;
    size_t len = strcspn(start, "\n");
    snprintf(out, n, "%.*s", (int)len, start);
}

static int mkdirs(const char *dir)
{
    char *p = strdup(dir);
    if (!p)
        return -1;
    for (char *s = p + 1; *s; ++s)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0700) != 0 && errno != EEXIST) {
                free(p);
                return -1;
            }
            *s = '/';
        }
    int rc = mkdir(p, 0700) != 0 && errno != EEXIST ? -1 : 0;
    free(p);
    return rc;
}

int fattn_sim_cache_private(const char *dir)
{
    struct stat st;
    if (mkdirs(dir) != 0)
        return fattn_error(FATTN_EFAIL, "simulator cache %s: cannot create it: %s", dir, strerror(errno));
    if (lstat(dir, &st) != 0)
        return fattn_error(FATTN_EFAIL, "simulator cache %s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return fattn_error(FATTN_EFAIL, "simulator cache %s: not a folder; expected a folder of yours", dir);
    if (st.st_uid != geteuid())
        return fattn_error(FATTN_EFAIL,
                           "simulator cache %s: belongs to user %u, not to you (%u); its entries would be loaded "
                           "into fattn-tune: set FATTN_SIM_CACHE to a folder of yours",
                           dir, (unsigned)st.st_uid, (unsigned)geteuid());
    if ((st.st_mode & 077) && chmod(dir, 0700) != 0)
        return fattn_error(FATTN_EFAIL, "simulator cache %s: cannot make it private (0700): %s", dir, strerror(errno));
    return FATTN_OK;
}

/* "SIZE SHA256" of a file, into out; -1 when it cannot be read. */
static int digest(const char *path, char *out, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fattn_sha256 c;
    unsigned char buf[65536], d[32];
    char hex[65];
    size_t got, size = 0;
    fattn_sha256_init(&c);
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
        fattn_sha256_update(&c, buf, got);
        size += got;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return -1;
    fattn_sha256_final(&c, d);
    fattn_hex(d, 32, hex);
    snprintf(out, n, "%zu %s", size, hex);
    return 0;
}

/* 1 when the entry `so` is what was built: its size and SHA-256 those its
 * record (so.sum) holds. */
static int entry_intact(const char *so, const char *sum)
{
    char want[128] = "", got[128];
    FILE *f = fopen(sum, "r");
    if (!f)
        return 0;
    int read = fgets(want, sizeof want, f) != NULL;
    fclose(f);
    want[strcspn(want, "\n")] = '\0';
    return read && !digest(so, got, sizeof got) && !strcmp(want, got);
}

/* The record of a new entry, written whole (a temporary renamed). */
static int write_sum(const char *built, const char *sum, const char *tmp)
{
    char d[128];
    if (digest(built, d, sizeof d))
        return -1;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    int bad = fprintf(f, "%s\n", d) < 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, sum) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int load(const char *path, const char *name, fattn_sim_kernel *k, char *why, size_t why_size)
{
    k->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!k->handle)
        return fattn_error(FATTN_EFAIL, "simulator: cannot load %s: %s", path, dlerror());
    const unsigned *smem = dlsym(k->handle, "fattn_smem_bytes");
    const unsigned *threads = dlsym(k->handle, "fattn_threads");
    const unsigned *cluster = dlsym(k->handle, "fattn_sim_cluster_x");
    k->api_slot = dlsym(k->handle, "fattn_sim_api_p");
    k->self_slot = dlsym(k->handle, "fattn_sim_self_p");
    void *entry = dlsym(k->handle, name), *args_entry = dlsym(k->handle, "fattn_sim_entry_args");
    if (!smem || !threads || !cluster || !k->api_slot || !k->self_slot || !entry || !args_entry) {
        snprintf(why, why_size, "the host build of the kernel lacks %s",
                 !entry        ? name
                 : !args_entry ? "fattn_sim_entry_args"
                 : !smem       ? "fattn_smem_bytes"
                 : !threads    ? "fattn_threads"
                               : "its simulator hooks");
        dlclose(k->handle);
        k->handle = NULL;
        return 1;
    }
    /* A kernel using TMA has both; one without, neither. */
    k->tmap_slot = dlsym(k->handle, "fattn_tmaps");
    const unsigned *ntmaps = dlsym(k->handle, "fattn_ntmaps");
    if (!k->tmap_slot != !ntmaps) {
        snprintf(why, why_size, "the host build of the kernel has %s without %s",
                 k->tmap_slot ? "fattn_tmaps" : "fattn_ntmaps", k->tmap_slot ? "fattn_ntmaps" : "fattn_tmaps");
        dlclose(k->handle);
        k->handle = NULL;
        return 1;
    }
    k->tmap_slots = ntmaps ? *ntmaps : 0;
    k->sm90 = dlsym(k->handle, "fattn_sim_sm90") != NULL;
    const unsigned *turns = dlsym(k->handle, "fattn_wgmma_turns");
    k->wgmma_turns = turns && *turns;
    k->smem_bytes = *smem;
    k->threads = *threads;
    k->cluster = *cluster;
    memcpy(&k->entry, &entry, sizeof entry);
    memcpy(&k->args_entry, &args_entry, sizeof args_entry);
    return FATTN_OK;
}

int fattn_sim_kernel_build(const fattn_kernel_src *src, const fattn_config *cfg, int head_dim, int causal,
                           const char *cache_dir, fattn_sim_kernel *k, char *why, size_t why_size)
{
    memset(k, 0, sizeof *k);
    int line = fattn_sim_find_asm(src->text);
    const char *where = src->name;
    for (int i = 0; !line && i < src->nheaders; ++i)
        if (!prim_header(src->header_names[i]) && (line = fattn_sim_find_asm(src->header_texts[i])))
            where = src->header_names[i];
    if (line) {
        snprintf(why, why_size,
                 "inline PTX at %s:%d: the simulator runs only the primitives of kernels/" PRIM_HEADER
                 " and fattn_prim_sm90.h; make it one there, with its host side in kernels/sim/",
                 where, line);
        return 1;
    }

    /* The macros NVRTC gets, and the simulator headers' text. */
    char defs[FATTN_MAX_PARAMS + 2][48];
    const char *defp[FATTN_MAX_PARAMS + 2];
    int ndefs = 0;
    for (int i = 0; i < cfg->fam->nparams; ++i)
        if (fattn_param_shown(cfg, i))
            snprintf(defs[ndefs++], sizeof defs[0], "-D%s=%d", cfg->fam->params[i].name, cfg->v[i]);
    snprintf(defs[ndefs++], sizeof defs[0], "-DHEAD_DIM=%d", head_dim);
    snprintf(defs[ndefs++], sizeof defs[0], "-DCAUSAL=%d", causal ? 1 : 0);
    for (int i = 0; i < ndefs; ++i)
        defp[i] = defs[i];

    int rc = FATTN_EFAIL;
    char *dir = realpath(src->dir, NULL);
    if (!dir)
        return fattn_error(FATTN_EFAIL, "kernel directory %s: %s", src->dir, strerror(errno));
    char *sim_dir = fattn_path_join(dir, "sim"), *kernel_path = fattn_path_join(dir, src->name);
    char *so = NULL, *sum = NULL, *tmp = NULL, *sum_tmp = NULL, *cc = NULL;
    fattn_strbuf text, log;
    fattn_sb_init(&text);
    fattn_sb_init(&log);
    for (size_t i = 0; i < sizeof sim_headers / sizeof *sim_headers; ++i) {
        char *path = fattn_path_join(sim_dir, sim_headers[i]), *t = NULL;
        size_t len;
        int r = fattn_read_file(path, "simulator header", FATTN_EFAIL, &t, &len);
        free(path);
        if (r)
            goto out;
        fattn_sb_addf(&text, "%s\n%s", sim_headers[i], t);
        free(t);
    }
    /* After the kernel, in the same translation unit: the simulator's hooks,
     * the kernel's cluster along x (FATTN_CLUSTER_X where the kernel defines
     * it, else SPLIT_KV, else none) and the family's entry taking its
     * parameters as cuLaunchKernel does. */
    char wrapper[2048];
    snprintf(
        wrapper, sizeof wrapper,
        "#include <cstddef>\n#include <type_traits>\n#include <utility>\n"
        "extern \"C\" const fattn_sim_api *fattn_sim_api_p = 0;\n"
        "extern \"C\" fattn_sim_self *fattn_sim_self_p = 0;\n"
        "#ifndef FATTN_CLUSTER_X\n#ifdef SPLIT_KV\n#define FATTN_CLUSTER_X SPLIT_KV\n#else\n"
        "#define FATTN_CLUSTER_X 1\n#endif\n#endif\n"
        "extern \"C\" const unsigned fattn_sim_cluster_x = FATTN_CLUSTER_X;\n"
        "template <class... A, std::size_t... I>\n"
        "static void fattn_sim_call(void (*f)(A...), void **args, std::index_sequence<I...>)\n"
        "{\n"
        "    (void)args;\n"
        "    f(*static_cast<typename std::remove_cv<typename std::remove_reference<A>::type>::type *>(args[I])...);\n"
        "}\n"
        "template <class... A>\n"
        "static void fattn_sim_call(void (*f)(A...), void **args)\n"
        "{\n"
        "    fattn_sim_call(f, args, std::index_sequence_for<A...>{});\n"
        "}\n"
        "extern \"C\" void fattn_sim_entry_args(void **args)\n"
        "{\n"
        "    fattn_sim_call(&%s, args);\n"
        "}\n",
        cfg->fam->kernel_name);
    fattn_sb_adds(&text, wrapper);
    char id[256];
    if (fattn_sim_compiler_identity(id, sizeof id))
        goto out;
    key_of(src, defp, ndefs, text.s, id, k->key);

    if ((rc = fattn_sim_cache_private(cache_dir)))
        goto out;
    fattn_strbuf p;
    fattn_sb_init(&p);
    fattn_sb_addf(&p, "%s/%s.so", cache_dir, k->key);
    so = fattn_sb_detach(&p);
    fattn_sb_init(&p);
    fattn_sb_addf(&p, "%s/%s.so.sum", cache_dir, k->key);
    sum = fattn_sb_detach(&p);
    if (access(so, F_OK) == 0) {
        /* Loaded only when it is what was built: anything else (cut short,
         * replaced, from an older fattn-tune without records) is built again. */
        if (entry_intact(so, sum)) {
            k->cache_hit = 1;
            rc = load(so, cfg->fam->kernel_name, k, why, why_size);
            goto out;
        }
        k->cache_rebuilt = 1; /* built again below: the rename replaces it (another process may be at it too) */
    }

    /* The translation unit: the kernel, and the simulator's hooks. */
    fattn_sb_init(&p);
    fattn_sb_addf(&p, "%s/%s.%ld.cc", cache_dir, k->key, (long)getpid());
    cc = fattn_sb_detach(&p);
    fattn_sb_init(&p);
    fattn_sb_addf(&p, "%s/%s.%ld.tmp", cache_dir, k->key, (long)getpid());
    tmp = fattn_sb_detach(&p);
    FILE *f = fopen(cc, "w");
    if (!f) {
        rc = fattn_error(FATTN_EFAIL, "simulator cache %s: %s", cc, strerror(errno));
        goto out;
    }
    fprintf(f, "#include \"%s\"\n%s", kernel_path, wrapper);
    if (fclose(f) != 0) {
        rc = fattn_error(FATTN_EFAIL, "simulator cache %s: %s", cc, strerror(errno));
        goto out;
    }
    char *argv[64];
    int argc = 0;
    char isim[4096], ik[4096];
    snprintf(isim, sizeof isim, "-I%s", sim_dir);
    snprintf(ik, sizeof ik, "-I%s", dir);
    argv[argc++] = (char *)compiler();
    for (size_t i = 0; i < sizeof cxx_flags / sizeof *cxx_flags; ++i)
        argv[argc++] = (char *)cxx_flags[i];
    for (int i = 0; i < ndefs; ++i)
        argv[argc++] = defs[i];
    argv[argc++] = isim;
    argv[argc++] = ik;
    argv[argc++] = cc;
    argv[argc++] = "-o";
    argv[argc++] = tmp;
    argv[argc] = NULL;
    const double t0 = fattn_now_ms();
    int status = run_capture(argv, &log);
    k->compile_ms = fattn_now_ms() - t0;
    unlink(cc);
    if (status < 0) {
        rc = fattn_error(FATTN_EFAIL, "simulator: cannot run the C++ compiler '%s': %s; install g++ or set CXX",
                         compiler(), strerror(errno));
        goto out;
    }
    if (status != 0) {
        unlink(tmp);
        char first[400];
        first_errors(log.len ? log.s : "", first, sizeof first);
        snprintf(why, why_size, "the kernel does not build for the simulator: %s", first);
        rc = 1;
        goto out;
    }
    /* The record first, then the entry: an entry never lacks its record. */
    fattn_sb_init(&p);
    fattn_sb_addf(&p, "%s/%s.%ld.sum.tmp", cache_dir, k->key, (long)getpid());
    sum_tmp = fattn_sb_detach(&p);
    if (write_sum(tmp, sum, sum_tmp) != 0 || rename(tmp, so) != 0) {
        rc = fattn_error(FATTN_EFAIL, "simulator cache %s: %s", so, strerror(errno));
        unlink(tmp);
        goto out;
    }
    rc = load(so, cfg->fam->kernel_name, k, why, why_size);
out:
    fattn_sb_release(&text);
    fattn_sb_release(&log);
    free(dir);
    free(sim_dir);
    free(kernel_path);
    free(so);
    free(sum);
    free(sum_tmp);
    free(tmp);
    free(cc);
    return rc;
}

void fattn_sim_kernel_close(fattn_sim_kernel *k)
{
    if (k->handle)
        dlclose(k->handle);
    k->handle = NULL;
}
