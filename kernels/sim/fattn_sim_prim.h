/*
 * fattn_sim_prim.h - the simulator's implementation of kernels/fattn_prim.h:
 * the same names, each one call into the simulator with the kernel source
 * line it was called from. The PTX each stands for is quoted in
 * fattn_prim.h; the semantics are the simulator's (src/sim/).
 */
#ifndef FATTN_KERNELS_SIM_FATTN_SIM_PRIM_H
#define FATTN_KERNELS_SIM_FATTN_SIM_PRIM_H

#include <cuda_fp16.h>

#define FATTN_DYNAMIC_SMEM(name) unsigned char *const name = fattn_sim_self_p->smem

template <class T> inline T ld_global(const void *p, FATTN_SIM_HERE)
{
    T v;
    fattn_sim_api_p->load(FATTN_SIM_SITE, FATTN_SIM_GLOBAL, p, &v, sizeof(T));
    return v;
}

template <class T> inline void st_global(void *p, T v, FATTN_SIM_HERE)
{
    fattn_sim_api_p->store(FATTN_SIM_SITE, FATTN_SIM_GLOBAL, p, &v, sizeof(T));
}

template <class T> inline T ld_shared(const void *p, FATTN_SIM_HERE)
{
    T v;
    fattn_sim_api_p->load(FATTN_SIM_SITE, FATTN_SIM_SHARED, p, &v, sizeof(T));
    return v;
}

template <class T> inline void st_shared(void *p, T v, FATTN_SIM_HERE)
{
    fattn_sim_api_p->store(FATTN_SIM_SITE, FATTN_SIM_SHARED, p, &v, sizeof(T));
}

/* No instruction: the simulator computes what the kernel computes. */
inline void fattn_opaque(int &)
{
}

inline unsigned smem_addr(const void *p, FATTN_SIM_HERE)
{
    return fattn_sim_api_p->smem_addr(FATTN_SIM_SITE, p);
}

inline void ldmatrix_x4(unsigned (&r)[4], unsigned addr, FATTN_SIM_HERE)
{
    fattn_sim_api_p->ldmatrix_x4(FATTN_SIM_SITE, r, addr, 0);
}

inline void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr, FATTN_SIM_HERE)
{
    fattn_sim_api_p->ldmatrix_x4(FATTN_SIM_SITE, r, addr, 1);
}

inline void mma_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1, FATTN_SIM_HERE)
{
    fattn_sim_api_p->mma_16816(FATTN_SIM_SITE, d, a, b0, b1);
}

template <int BYTES> inline void cp_async(unsigned dst, const void *src, bool valid, FATTN_SIM_HERE)
{
    static_assert(BYTES == 16 || BYTES == 4, "cp.async copies 4 or 16 bytes here");
    fattn_sim_api_p->cp_async(FATTN_SIM_SITE, dst, src, BYTES, valid ? BYTES : 0);
}

inline void cp_async_commit(FATTN_SIM_HERE)
{
    fattn_sim_api_p->cp_async_commit(FATTN_SIM_SITE);
}

template <int N> inline void cp_async_wait(FATTN_SIM_HERE)
{
    fattn_sim_api_p->cp_async_wait(FATTN_SIM_SITE, N);
}

inline unsigned cluster_rank(FATTN_SIM_HERE)
{
    return fattn_sim_api_p->cluster_rank(FATTN_SIM_SITE);
}

inline void cluster_sync(FATTN_SIM_HERE)
{
    fattn_sim_api_p->cluster_sync(FATTN_SIM_SITE);
}

inline unsigned cluster_map(unsigned addr, unsigned rank, FATTN_SIM_HERE)
{
    return fattn_sim_api_p->cluster_map(FATTN_SIM_SITE, addr, rank);
}

inline float ld_cluster(unsigned addr, FATTN_SIM_HERE)
{
    float x;
    fattn_sim_api_p->ld_cluster(FATTN_SIM_SITE, addr, &x, 4);
    return x;
}

inline float4 ld_cluster_v4(unsigned addr, FATTN_SIM_HERE)
{
    float4 x;
    fattn_sim_api_p->ld_cluster(FATTN_SIM_SITE, addr, &x, 16);
    return x;
}

#endif
