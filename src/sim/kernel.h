/*
 * kernel.h - the kernel built for the host: compiled with the system C++
 * compiler into a shared object, cached, and loaded for the simulator.
 *
 * The same kernel source NVRTC compiles (kernels/fattn_fwd.cu and its local
 * headers) is compiled with -DFATTN_SIM, the configuration's -D macros (the
 * ones NVRTC gets) and <kernel dir>/sim first on the include path, where the
 * host side of CUDA C++ and of the PTX primitives lives. The compiler is
 * $CXX, else c++. Objects are cached under a key over the kernel source hash,
 * the simulator headers, the macros, the flags and the compiler's identity:
 * a second build of the same configuration compiles nothing.
 *
 * Before compiling, the sources are searched for inline PTX outside
 * fattn_prim.h: the simulator cannot know what it does, so such a kernel is
 * refused with the file and line, never guessed at.
 */
#ifndef FATTN_SIM_KERNEL_H
#define FATTN_SIM_KERNEL_H

#include <stddef.h>

#include "compile/kernel_src.h"
#include "sim/launch.h"
#include "space/params.h"

typedef struct fattn_sim_kernel {
    void *handle;
    fattn_sim_entry_fn entry;     /* the family's kernel_name (the attention signature) */
    fattn_sim_args_fn args_entry; /* the same, taking its parameters as cuLaunchKernel does */
    const void **api_slot;
    void **self_slot;
    unsigned smem_bytes; /* the kernel's fattn_smem_bytes */
    unsigned threads;    /* fattn_threads */
    unsigned cluster;    /* blocks per cluster along x (the kernel's FATTN_CLUSTER_X, else SPLIT_KV) */
    void *tmap_slot;     /* the kernel's fattn_tmaps (TMA tensor maps), or NULL */
    unsigned tmap_slots; /* its fattn_ntmaps */
    int sm90;            /* it uses kernels/fattn_prim_sm90.h (fattn_sim_sm90) */
    int wgmma_turns;     /* its fattn_wgmma_turns (0 when it has none) */
    char key[65];
    int cache_hit;
    int cache_rebuilt; /* the cached entry was not what was built: built again */
    double compile_ms; /* 0 on a cache hit */
} fattn_sim_kernel;

/* The cache folder: $FATTN_SIM_CACHE, else $XDG_CACHE_HOME/fattn-tune/sim,
 * else ~/.cache/fattn-tune/sim, else (no HOME) /tmp/fattn-tune-sim-UID. The
 * caller frees it. The build below makes it private (0700) and refuses one
 * another user owns; each entry (KEY.so) is loaded only when its size and
 * SHA-256 are those recorded when it was built (KEY.so.sum), and is built
 * again otherwise (cache_rebuilt: the caller says so). */
char *fattn_sim_cache_dir(void);

/* Makes the cache folder private to this user: created 0700 (a folder of
 * theirs made 0700), and refused when another user owns it or it is not a
 * folder (its entries are loaded into this process): FATTN_EFAIL, reported. */
int fattn_sim_cache_private(const char *dir);

/* Builds (or finds cached) and loads the host kernel of configuration cfg.
 * Returns 0; 1 when the kernel cannot be built for the host (inline PTX the
 * simulator does not know, or a compile error): `why` says where, from the
 * compiler's own first errors; FATTN_EFAIL (reported) when the compiler
 * cannot be run or the cache not written. */
int fattn_sim_kernel_build(const fattn_kernel_src *src, const fattn_config *cfg, int head_dim, int causal,
                           const char *cache_dir, fattn_sim_kernel *k, char *why, size_t why_size);

void fattn_sim_kernel_close(fattn_sim_kernel *k);

/* The host compiler and the first line of its --version ("c++: c++ (Debian
 * 14.2.0-19) 14.2.0"), part of every cache key. Returns 0, or FATTN_EFAIL
 * (reported: install g++ or set CXX) when it cannot be run. */
int fattn_sim_compiler_identity(char *out, size_t n);

/* Finds inline PTX (asm statements) in `text` outside comments: returns the
 * 1-based line of the first, or 0. */
int fattn_sim_find_asm(const char *text);

#endif
