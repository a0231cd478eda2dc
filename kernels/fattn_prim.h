/*
 * fattn_prim.h - every PTX instruction and every memory access of the fattn
 * kernel, as small inline functions.
 *
 * On the GPU (NVRTC, nvcc) they are the inline PTX and the plain pointer
 * accesses the kernel always used; the compiled code is the same. Compiled
 * for the host with FATTN_SIM defined, the same names come from the
 * simulator's implementation (kernels/sim/fattn_sim_prim.h): each call is
 * checked (alignment, bounds, races, cp.async groups, convergence) and
 * executed with the semantics of the PTX below. The kernel uses no inline
 * PTX of its own and touches memory only through these functions, so the
 * simulator sees every instruction it has to model; the simulator's compile
 * step refuses a kernel with an `asm` outside this file.
 *
 * Memory accesses take the pointer and the access type T (4-, 8- and
 * 16-byte vectors included): ld_global<T>(p), st_global(p, v) on the Q, K,
 * V and O buffers; ld_shared<T>(p), st_shared(p, v) on generic pointers into
 * the block's dynamic shared memory.
 */
#ifndef FATTN_KERNELS_FATTN_PRIM_H
#define FATTN_KERNELS_FATTN_PRIM_H

#ifdef FATTN_SIM
#include <fattn_sim_prim.h>
#else

/* The block's dynamic shared memory, as `unsigned char name[]`. */
#define FATTN_DYNAMIC_SMEM(name) extern __shared__ __align__(128) unsigned char name[]

/* A value the compiler must take as changed here, no instruction: what is
 * computed from it afterwards is computed afterwards (addresses the
 * compiler would otherwise hoist out of a loop and keep live). */
__device__ __forceinline__ void fattn_opaque(int &v)
{
    asm volatile("" : "+r"(v));
}

template <class T> __device__ __forceinline__ T ld_global(const void *p)
{
    return *reinterpret_cast<const T *>(p);
}

template <class T> __device__ __forceinline__ void st_global(void *p, T v)
{
    *reinterpret_cast<T *>(p) = v;
}

template <class T> __device__ __forceinline__ T ld_shared(const void *p)
{
    return *reinterpret_cast<const T *>(p);
}

template <class T> __device__ __forceinline__ void st_shared(void *p, T v)
{
    *reinterpret_cast<T *>(p) = v;
}

__device__ __forceinline__ unsigned smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* cp.async of BYTES (16: .cg, 4: .ca) from global src to shared dst; with
 * valid false the source size is 0 and dst is zero-filled. */
template <int BYTES> __device__ __forceinline__ void cp_async(unsigned dst, const void *src, bool valid)
{
    static_assert(BYTES == 16 || BYTES == 4, "cp.async copies 4 or 16 bytes here");
    if (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 4 : 0));
}

__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int N> __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* Thread-block clusters: this block's rank, the cluster-wide barrier (release
 * and acquire: shared-memory writes before it are visible to every block of
 * the cluster after it), and loads from a peer's shared memory. */
__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

/* The shared::cluster address of `addr` (a shared::cta address) in block `rank`. */
__device__ __forceinline__ unsigned cluster_map(unsigned addr, unsigned rank)
{
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}

__device__ __forceinline__ float ld_cluster(unsigned addr)
{
    float x;
    asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(x) : "r"(addr) : "memory");
    return x;
}

__device__ __forceinline__ float4 ld_cluster_v4(unsigned addr)
{
    float4 x;
    asm volatile("ld.shared::cluster.v4.f32 {%0,%1,%2,%3}, [%4];\n"
                 : "=f"(x.x), "=f"(x.y), "=f"(x.z), "=f"(x.w)
                 : "r"(addr)
                 : "memory");
    return x;
}

#endif /* FATTN_SIM */
#endif
