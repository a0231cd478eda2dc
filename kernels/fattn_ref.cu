/*
 * fattn_ref.cu - the reference attention kernel the GPU engine checks every
 * candidate against.
 *
 * Deliberately plain: one thread per query row, fp32 throughout, an exact
 * two-pass softmax (row maximum first, then exponentials and the weighted sum),
 * no shared memory, no tensor cores, no tiling. Same launch signature as
 * fattn_fwd (checkasm's call_ref/call_new): fp16 Q, K, V in [B, H, S, D], but
 * the output is fp32 [B, H, S, D] so that the comparison sees the candidate's
 * rounding, not the reference's. HEAD_DIM and CAUSAL are macros as in
 * fattn_fwd.cu. Launch: grid (ceil(S / 128), H, B), 128 threads.
 *
 * fattn_fill, in the same module, writes seeded inputs (fattn_fill.h) so that
 * every check runs on fresh inputs the host can regenerate.
 */
#include <cuda_fp16.h>

#include "fattn_fill.h"

#ifndef HEAD_DIM
#define HEAD_DIM 64
#endif
#ifndef CAUSAL
#define CAUSAL 0
#endif

#define FATTN_REF_THREADS 128

extern "C" __device__ const unsigned int fattn_ref_threads = FATTN_REF_THREADS;

extern "C" __global__ void __launch_bounds__(FATTN_REF_THREADS)
fattn_ref(const half *__restrict__ q, const half *__restrict__ k, const half *__restrict__ v,
          void *out, int batch, int heads, int seqlen, float scale)
{
    (void)batch;
    const int row = blockIdx.x * FATTN_REF_THREADS + threadIdx.x;
    if (row >= seqlen)
        return;
    const size_t head = ((size_t)blockIdx.z * heads + blockIdx.y) * (size_t)seqlen * HEAD_DIM;
    const half *qr = q + head + (size_t)row * HEAD_DIM;
    const half *kh = k + head;
    const half *vh = v + head;
    float *o = (float *)out + head + (size_t)row * HEAD_DIM;
    const int n_keys = CAUSAL ? row + 1 : seqlen;

    float qf[HEAD_DIM];
    for (int d = 0; d < HEAD_DIM; ++d)
        qf[d] = __half2float(qr[d]);

    float mx = -__int_as_float(0x7f800000);
    for (int j = 0; j < n_keys; ++j) {
        float s = 0.f;
        for (int d = 0; d < HEAD_DIM; ++d)
            s += qf[d] * __half2float(kh[(size_t)j * HEAD_DIM + d]);
        mx = fmaxf(mx, s * scale);
    }

    float acc[HEAD_DIM];
    for (int d = 0; d < HEAD_DIM; ++d)
        acc[d] = 0.f;
    float sum = 0.f;
    for (int j = 0; j < n_keys; ++j) {
        float s = 0.f;
        for (int d = 0; d < HEAD_DIM; ++d)
            s += qf[d] * __half2float(kh[(size_t)j * HEAD_DIM + d]);
        const float p = expf(s * scale - mx);
        sum += p;
        for (int d = 0; d < HEAD_DIM; ++d)
            acc[d] += p * __half2float(vh[(size_t)j * HEAD_DIM + d]);
    }
    for (int d = 0; d < HEAD_DIM; ++d)
        o[d] = acc[d] / sum;
}

/* dst[i] = fp16(mul * fattn_fill_value(seed, tensor, i)) for i < n; any grid
 * (mul: 1, or FATTN_FILL_PEAKY for Q and K of the peaky input set). */
extern "C" __global__ void fattn_fill(half *dst, unsigned long long n, unsigned long long seed, unsigned tensor,
                                      float mul)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        dst[i] = __float2half_rn(mul * fattn_fill_value(seed, tensor, i));
}
