/* One wgmma m64n8k16 (tests/test_ptxas_notices.c). With -DEARLY the kernel
 * reads an accumulator between commit_group and wait_group: ptxas injects a
 * warpgroup.wait (notice C7517), the gate wgmma_serialized. Without it the
 * accumulators are read after the wait and ptxas says nothing. */
__device__ __forceinline__ void mma(float (&d)[4], unsigned long long a, unsigned long long b)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, 1, 1, 1, 0, 0;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "l"(a), "l"(b));
}

extern "C" __global__ void __launch_bounds__(128, 1) fattn_fwd(float *o, unsigned long long a, unsigned long long b)
{
    float d[4] = {0, 0, 0, 0};
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    mma(d, a, b);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#ifdef EARLY
    o[512 + threadIdx.x] = d[0];
#endif
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    for (int i = 0; i < 4; ++i)
        o[threadIdx.x * 4 + i] = d[i];
}
