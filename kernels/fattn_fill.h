/*
 * fattn_fill.h - the seeded values of the inputs, shared by the fill kernel
 * (kernels/fattn_ref.cu) and the host (the CPU fp64 check of the reference).
 *
 * Element i of tensor t (0 Q, 1 K, 2 V) for seed s is a counter-based hash
 * of (s, t, i), mapped to [-1, 1) with 24 bits of resolution: any element can
 * be regenerated anywhere without the others, so the host can recompute a
 * few rows exactly as the device filled them. Plain C as well as CUDA C++.
 *
 * Two input sets come from one seed: uniform (the values as they are) and
 * peaky (Q and K times FATTN_FILL_PEAKY before the rounding to fp16). With
 * uniform values the scores q.k / sqrt(D) have a standard deviation of 1/3
 * (each product's variance is 1/9), so the softmax is nearly flat; times 3
 * each, the scores' is 3, and the running maximum and its rescaling matter.
 */
#ifndef FATTN_KERNELS_FATTN_FILL_H
#define FATTN_KERNELS_FATTN_FILL_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FATTN_FILL_FN static __host__ __device__ __forceinline__
#else
#define FATTN_FILL_FN static inline
#endif

/* The splitmix64 finalizer. */
FATTN_FILL_FN unsigned long long fattn_fill_mix(unsigned long long x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Element i of tensor t for seed s, uniform in [-1, 1). */
FATTN_FILL_FN float fattn_fill_value(unsigned long long seed, unsigned tensor, unsigned long long i)
{
    unsigned long long x = fattn_fill_mix(seed + 0x9e3779b97f4a7c15ull * (1ull + tensor)) ^ i;
    x = fattn_fill_mix(x + 0x9e3779b97f4a7c15ull);
    return (float)(x >> 40) * (1.0f / 8388608.0f) - 1.0f;
}

/* The factor of Q and K in the peaky input set. */
#define FATTN_FILL_PEAKY 3.0f

#endif
