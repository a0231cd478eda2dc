/*
 * fattn_sim_prim_sm90.h - the simulator's implementation of
 * kernels/fattn_prim_sm90.h: the same names, each one call into the
 * simulator with the kernel source line it was called from. The PTX each
 * stands for is quoted in fattn_prim_sm90.h; the semantics are the
 * simulator's (src/sim/launch.c).
 */
#ifndef FATTN_KERNELS_SIM_FATTN_SIM_PRIM_SM90_H
#define FATTN_KERNELS_SIM_FATTN_SIM_PRIM_SM90_H

/* The kernel uses these: the simulator keeps clock columns for the
 * asynchronous agents (TMA, wgmma) of its launches (src/sim/kernel.c). */
extern "C" const unsigned fattn_sim_sm90 = 1;

/* Register fences order nothing on the host: the simulator's calls are the
 * order. Kept so that a kernel may call them. */
template <int K> inline void fattn_fence_regs(float (&)[K])
{
}

template <int K> inline void fattn_fence_regs(unsigned (&)[K])
{
}

template <int N, int TRANS_A = 0, int TRANS_B = 0>
inline void wgmma_ss(float (&d)[N / 2], unsigned long long desc_a, unsigned long long desc_b, int scale_d,
                     FATTN_SIM_HERE)
{
    static_assert(N % 16 == 0 && N >= 64 && N <= 256 && N != 208 && N != 224 && N != 240,
                  "wgmma N here: 64 to 192 in steps of 16, or 256 (fattn_prim_sm90.h)");
    fattn_sim_api_p->wgmma(FATTN_SIM_SITE, d, N, nullptr, desc_a, desc_b, TRANS_A, TRANS_B, scale_d);
}

template <int N, int TRANS_B = 0>
inline void wgmma_rs(float (&d)[N / 2], unsigned (&a)[4], unsigned long long desc_b, int scale_d, FATTN_SIM_HERE)
{
    static_assert(N % 16 == 0 && N >= 64 && N <= 256 && N != 208 && N != 224 && N != 240,
                  "wgmma N here: 64 to 192 in steps of 16, or 256 (fattn_prim_sm90.h)");
    fattn_sim_api_p->wgmma(FATTN_SIM_SITE, d, N, a, 0, desc_b, 0, TRANS_B, scale_d);
}

inline void wgmma_fence(FATTN_SIM_HERE)
{
    fattn_sim_api_p->wgmma_fence(FATTN_SIM_SITE);
}

inline void wgmma_commit(FATTN_SIM_HERE)
{
    fattn_sim_api_p->wgmma_commit(FATTN_SIM_SITE);
}

template <int N, int K1> inline void wgmma_wait(float (&a1)[K1], FATTN_SIM_HERE)
{
    float *const acc[1] = {a1};
    const unsigned size[1] = {K1};
    fattn_sim_api_p->wgmma_wait(FATTN_SIM_SITE, N, acc, size, 1);
}

template <int N, int K1, int K2> inline void wgmma_wait(float (&a1)[K1], float (&a2)[K2], FATTN_SIM_HERE)
{
    float *const acc[2] = {a1, a2};
    const unsigned size[2] = {K1, K2};
    fattn_sim_api_p->wgmma_wait(FATTN_SIM_SITE, N, acc, size, 2);
}

inline void mbar_init(unsigned addr, unsigned count, FATTN_SIM_HERE)
{
    fattn_sim_api_p->mbar_init(FATTN_SIM_SITE, addr, count);
}

inline void mbar_arrive(unsigned addr, FATTN_SIM_HERE)
{
    fattn_sim_api_p->mbar_arrive(FATTN_SIM_SITE, addr, 0);
}

inline void mbar_arrive_expect_tx(unsigned addr, unsigned tx, FATTN_SIM_HERE)
{
    fattn_sim_api_p->mbar_arrive(FATTN_SIM_SITE, addr, tx);
}

inline int mbar_try_wait(unsigned addr, unsigned parity, FATTN_SIM_HERE)
{
    return fattn_sim_api_p->mbar_try_wait(FATTN_SIM_SITE, addr, parity);
}

inline void fence_mbarrier_init(FATTN_SIM_HERE)
{
    fattn_sim_api_p->fence_mbarrier_init(FATTN_SIM_SITE);
}

inline void fence_proxy_async(FATTN_SIM_HERE)
{
    fattn_sim_api_p->fence_proxy_async(FATTN_SIM_SITE);
}

inline void tma_load_2d(unsigned dst, const fattn_tensormap *map, unsigned mbar, int c0, int c1, FATTN_SIM_HERE)
{
    const int c[2] = {c0, c1};
    fattn_sim_api_p->tma_load(FATTN_SIM_SITE, dst, map, c, 2, mbar);
}

inline void tma_load_3d(unsigned dst, const fattn_tensormap *map, unsigned mbar, int c0, int c1, int c2, FATTN_SIM_HERE)
{
    const int c[3] = {c0, c1, c2};
    fattn_sim_api_p->tma_load(FATTN_SIM_SITE, dst, map, c, 3, mbar);
}

inline void tma_load_4d(unsigned dst, const fattn_tensormap *map, unsigned mbar, int c0, int c1, int c2, int c3,
                        FATTN_SIM_HERE)
{
    const int c[4] = {c0, c1, c2, c3};
    fattn_sim_api_p->tma_load(FATTN_SIM_SITE, dst, map, c, 4, mbar);
}

inline void tma_load_3d_hint(unsigned dst, const fattn_tensormap *map, unsigned mbar, int c0, int c1, int c2,
                             unsigned long long policy, FATTN_SIM_HERE)
{
    const int c[3] = {c0, c1, c2};
    fattn_sim_api_p->tma_load_ex(FATTN_SIM_SITE, dst, map, c, 3, mbar, 0, 0, policy);
}

inline void tma_load_3d_multicast(unsigned dst, const fattn_tensormap *map, unsigned mbar, int c0, int c1, int c2,
                                  unsigned short mask, unsigned long long policy, FATTN_SIM_HERE)
{
    const int c[3] = {c0, c1, c2};
    fattn_sim_api_p->tma_load_ex(FATTN_SIM_SITE, dst, map, c, 3, mbar, 1, mask, policy);
}

inline void mbar_arrive_cluster(unsigned addr, FATTN_SIM_HERE)
{
    fattn_sim_api_p->mbar_arrive_cluster(FATTN_SIM_SITE, addr);
}

inline void tma_store_2d(const fattn_tensormap *map, unsigned src, int c0, int c1, FATTN_SIM_HERE)
{
    const int c[2] = {c0, c1};
    fattn_sim_api_p->tma_store(FATTN_SIM_SITE, map, c, 2, src);
}

inline void tma_store_3d(const fattn_tensormap *map, unsigned src, int c0, int c1, int c2, FATTN_SIM_HERE)
{
    const int c[3] = {c0, c1, c2};
    fattn_sim_api_p->tma_store(FATTN_SIM_SITE, map, c, 3, src);
}

inline void tma_store_4d(const fattn_tensormap *map, unsigned src, int c0, int c1, int c2, int c3, FATTN_SIM_HERE)
{
    const int c[4] = {c0, c1, c2, c3};
    fattn_sim_api_p->tma_store(FATTN_SIM_SITE, map, c, 4, src);
}

inline void bulk_commit(FATTN_SIM_HERE)
{
    fattn_sim_api_p->bulk_commit(FATTN_SIM_SITE);
}

template <int N> inline void bulk_wait_read(FATTN_SIM_HERE)
{
    fattn_sim_api_p->bulk_wait_read(FATTN_SIM_SITE, N);
}

inline void bar_sync(unsigned id, unsigned count, FATTN_SIM_HERE)
{
    fattn_sim_api_p->bar_named(FATTN_SIM_SITE, id, count, 1);
}

inline void bar_arrive(unsigned id, unsigned count, FATTN_SIM_HERE)
{
    fattn_sim_api_p->bar_named(FATTN_SIM_SITE, id, count, 0);
}

template <unsigned COUNT> inline void setmaxnreg_inc(FATTN_SIM_HERE)
{
    static_assert(COUNT >= 24 && COUNT <= 256 && COUNT % 8 == 0, "setmaxnreg takes 24-256, a multiple of 8");
    fattn_sim_api_p->setmaxnreg(FATTN_SIM_SITE, COUNT, 1);
}

template <unsigned COUNT> inline void setmaxnreg_dec(FATTN_SIM_HERE)
{
    static_assert(COUNT >= 24 && COUNT <= 256 && COUNT % 8 == 0, "setmaxnreg takes 24-256, a multiple of 8");
    fattn_sim_api_p->setmaxnreg(FATTN_SIM_SITE, COUNT, 0);
}

#endif
