/*
 * cuda_fp16.h (simulator) - the part of CUDA C++ the fattn kernel uses, for
 * the host compiler.
 *
 * The simulator compiles kernels/fattn_fwd.cu with the system C++ compiler,
 * -DFATTN_SIM and this directory first on the include path, so the kernel's
 * `#include <cuda_fp16.h>` lands here: execution-space keywords that mean
 * nothing on the host, the vector types, fp16 with the rounding of the
 * hardware conversions, the math functions, the built-in variables (the
 * running fiber's) and __syncthreads / __shfl_xor_sync as simulator calls.
 * What the kernel uses and this file lacks fails the host compile with the
 * compiler's "was not declared" naming it: never a silent guess.
 */
#ifndef FATTN_KERNELS_SIM_CUDA_FP16_H
#define FATTN_KERNELS_SIM_CUDA_FP16_H

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fattn_sim_api.h"

extern "C" const fattn_sim_api *fattn_sim_api_p;
extern "C" fattn_sim_self *fattn_sim_self_p;

#define __device__
#define __host__
#define __global__
#define __constant__
#define __grid_constant__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __cluster_dims__(...)
#define __align__(n) alignas(n)

#define threadIdx (fattn_sim_self_p->thread_idx)
#define blockIdx  (fattn_sim_self_p->block_idx)
#define blockDim  (fattn_sim_self_p->block_dim)
#define gridDim   (fattn_sim_self_p->grid_dim)

/* Where a primitive was called from: default arguments, evaluated at the
 * call (each builtin must be a default argument of its own for that). */
#define FATTN_SIM_HERE const char *site_file = __builtin_FILE(), int site_line = __builtin_LINE()
#define FATTN_SIM_SITE (fattn_sim_site{site_file, site_line})

struct alignas(8) uint2 {
    unsigned x, y;
};
struct alignas(16) uint4 {
    unsigned x, y, z, w;
};
struct alignas(8) float2 {
    float x, y;
};
struct alignas(16) float4 {
    float x, y, z, w;
};
static inline float2 make_float2(float x, float y)
{
    return float2{x, y};
}
static inline float4 make_float4(float x, float y, float z, float w)
{
    return float4{x, y, z, w};
}

/* IEEE binary16, kept as its bits. */
struct alignas(2) __half {
    unsigned short x;
};
struct alignas(4) __half2 {
    __half x, y;
};
typedef __half half;
typedef __half2 half2;

/* float -> binary16, round to nearest even (cvt.rn.f16.f32). */
static inline __half __float2half_rn(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, 4);
    const uint32_t sign = (u >> 16) & 0x8000u;
    const uint32_t abs = u & 0x7fffffffu;
    __half h;
    if (abs >= 0x7f800000u) { /* Inf, NaN (quiet, payload kept on top) */
        h.x = (unsigned short)(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0u));
        return h;
    }
    if (abs >= 0x477ff000u) { /* rounds to 65520 or more: Inf */
        h.x = (unsigned short)(sign | 0x7c00u);
        return h;
    }
    if (abs < 0x38800000u) {     /* below 2^-14: a subnormal result, or zero */
        if (abs < 0x33000000u) { /* below half the smallest subnormal (2^-25): zero */
            h.x = (unsigned short)sign;
            return h;
        }
        const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
        const int shift = 126 - (int)(abs >> 23); /* 14..24 */
        uint32_t q = mant >> shift;
        const uint32_t rem = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (q & 1u)))
            ++q;
        h.x = (unsigned short)(sign | q);
        return h;
    }
    uint32_t q = ((abs - 0x38000000u) >> 13); /* rebias 127 -> 15 */
    const uint32_t rem = abs & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u)))
        ++q;
    h.x = (unsigned short)(sign | q);
    return h;
}

static inline float __half2float(__half h)
{
    const uint32_t sign = (uint32_t)(h.x & 0x8000u) << 16;
    const uint32_t e = (h.x >> 10) & 0x1fu, m = h.x & 0x3ffu;
    uint32_t u;
    if (e == 0x1fu)
        u = sign | 0x7f800000u | (m << 13);
    else if (e)
        u = sign | ((e + 112u) << 23) | (m << 13);
    else if (!m)
        u = sign;
    else {
        int k = 0;
        uint32_t mm = m;
        while (!(mm & 0x400u)) {
            mm <<= 1;
            ++k;
        }
        u = sign | ((uint32_t)(113 - k) << 23) | ((mm & 0x3ffu) << 13);
    }
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

static inline __half2 __halves2half2(__half lo, __half hi)
{
    return __half2{lo, hi};
}

static inline __half2 __floats2half2_rn(float lo, float hi)
{
    return __half2{__float2half_rn(lo), __float2half_rn(hi)};
}

static inline float __int_as_float(int i)
{
    float f;
    std::memcpy(&f, &i, 4);
    return f;
}

using std::exp2f;
using std::fmaxf;

static inline int min(int a, int b)
{
    return a < b ? a : b;
}

static inline int max(int a, int b)
{
    return a > b ? a : b;
}

static inline void __syncthreads(FATTN_SIM_HERE)
{
    fattn_sim_api_p->syncthreads(FATTN_SIM_SITE);
}

static inline float __shfl_xor_sync(unsigned mask, float v, int lanemask, FATTN_SIM_HERE)
{
    unsigned u;
    std::memcpy(&u, &v, 4);
    u = fattn_sim_api_p->shfl_xor(FATTN_SIM_SITE, mask, u, lanemask);
    std::memcpy(&v, &u, 4);
    return v;
}

static inline unsigned __shfl_xor_sync(unsigned mask, unsigned v, int lanemask, FATTN_SIM_HERE)
{
    return fattn_sim_api_p->shfl_xor(FATTN_SIM_SITE, mask, v, lanemask);
}

static inline int __shfl_xor_sync(unsigned mask, int v, int lanemask, FATTN_SIM_HERE)
{
    return (int)fattn_sim_api_p->shfl_xor(FATTN_SIM_SITE, mask, (unsigned)v, lanemask);
}

/* shfl.sync.idx with every lane reading lane `src`, as the five butterfly
 * exchanges that carry src's value to every lane: after step k a lane holds
 * the value of the lane that agrees with src in bits 0..k and with itself
 * above. Every lane takes part in each (membermask checked by each). */
static inline unsigned __shfl_sync(unsigned mask, unsigned v, int src, FATTN_SIM_HERE)
{
    const unsigned lane =
        (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32u; /* the warp's lane */
    for (int k = 0; k < 5; ++k) {
        const unsigned other = fattn_sim_api_p->shfl_xor(FATTN_SIM_SITE, mask, v, 1 << k);
        if (((lane ^ (unsigned)src) >> k) & 1u)
            v = other;
    }
    return v;
}

static inline int __shfl_sync(unsigned mask, int v, int src, FATTN_SIM_HERE)
{
    return (int)__shfl_sync(mask, (unsigned)v, src, site_file, site_line);
}

#endif
