/*
 * test_gpu_reference.c - on a GPU: the inputs the fill kernel writes are
 * exactly the host's fp16 values, and the reference kernel agrees with an
 * fp64 CPU computation on sampled rows, for S in {500, 1000}, D in {64,
 * 128}, causal and not. Skips (77) without a GPU.
 */
#include "t.h"
#include "t_cu.h"

#include "compile/kernel_src.h"
#include "compile/nvrtc.h"
#include "gpu/device.h"
#include "gpu/driver.h"
#include "../kernels/fattn_fill.h"
#include "run/numerics.h"
#include "util/err.h"
#include "util/paths.h"

int main(void)
{
    fattn_gpu_info info;
    fattn_cu cu;
    char why[320], *include;
    fattn_kernel_src src;
    if (fattn_gpu_probe(0, &info, why, sizeof why)) {
        printf("SKIP: %s\n", why);
        return T_SKIP;
    }
    const fattn_arch *arch = fattn_arch_from_cc(info.cc_major, info.cc_minor);
    if (!arch || fattn_cu_load(&cu, why, sizeof why) || fattn_cuda_include(&include)
        || fattn_kernel_src_load(fattn_default_kernel_dir(), FATTN_REF_FILE, &src))
        return T_HARNESS;
    CUdevice dev;
    CUcontext ctx;
    CK(cu.cuDeviceGet(&dev, 0));
    CK(cu.cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cu.cuCtxSetCurrent(ctx));

    static const fattn_shape shapes[] = {
        {2, 3, 500, 64, 0},
        {2, 3, 500, 64, 1},
        {1, 2, 1000, 128, 0},
        {1, 2, 1000, 128, 1},
    };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; ++k) {
        const fattn_shape *s = &shapes[k];
        fattn_options o;
        fattn_nvrtc_result r;
        CUmodule mod;
        CUfunction ref, fill;
        fattn_options_build(&o, NULL, s->head_dim, s->causal, arch, include);
        if (fattn_nvrtc_compile(&src, &o, 0, &r) || !r.ok)
            return T_HARNESS;
        CK(cu.cuModuleLoadData(&mod, r.cubin));
        CK(cu.cuModuleGetFunction(&ref, mod, "fattn_ref"));
        CK(cu.cuModuleGetFunction(&fill, mod, "fattn_fill"));
        unsigned long long n = fattn_shape_elems(s), seed = 1234 + k;
        CUdeviceptr qkv[3], out;
        for (unsigned t = 0; t < 3; ++t) {
            CK(cu.cuMemAlloc(&qkv[t], n * 2));
            float mul = 1.0f;
            void *args[] = {&qkv[t], &n, &seed, &t, &mul};
            CK(cu.cuLaunchKernel(fill, 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
        }
        CK(cu.cuMemAlloc(&out, n * 4));
        int b = s->batch, h = s->heads, sq = s->seqlen;
        float scale = (float)(1.0 / sqrt((double)s->head_dim));
        void *args[] = {&qkv[0], &qkv[1], &qkv[2], &out, &b, &h, &sq, &scale};
        CK(cu.cuLaunchKernel(ref, (unsigned)(sq + 127) / 128, (unsigned)h, (unsigned)b, 128, 1, 1, 0, NULL, args,
                             NULL));
        CK(cu.cuCtxSynchronize());

        /* The fill: every element equals the host's fp16 value. */
        uint16_t *host_in = malloc(n * 2);
        size_t differ = 0;
        for (unsigned t = 0; t < 3; ++t) {
            CK(cu.cuMemcpyDtoH(host_in, qkv[t], n * 2));
            for (unsigned long long i = 0; i < n; ++i)
                differ += fattn_half_to_float(host_in[i]) != fattn_input_value(seed, FATTN_INPUTS_UNIFORM, t, i);
        }
        t_case = "fill";
        CHECK_INT(differ, 0);
        /* The peaky set's Q and K: times FATTN_FILL_PEAKY before the rounding. */
        for (unsigned t = 0; t < 2; ++t) {
            CUdeviceptr peaky;
            float mul = FATTN_FILL_PEAKY;
            CK(cu.cuMemAlloc(&peaky, n * 2));
            void *pargs[] = {&peaky, &n, &seed, &t, &mul};
            CK(cu.cuLaunchKernel(fill, 256, 1, 1, 256, 1, 1, 0, NULL, pargs, NULL));
            CK(cu.cuMemcpyDtoH(host_in, peaky, n * 2));
            CK(cu.cuMemFree(peaky));
            for (unsigned long long i = 0; i < n; ++i)
                differ += fattn_half_to_float(host_in[i]) != fattn_input_value(seed, FATTN_INPUTS_PEAKY, t, i);
        }
        t_case = "fill peaky";
        CHECK_INT(differ, 0);

        /* The reference: 16 sampled rows against fp64. */
        float *gpu = malloc(n * 4);
        CK(cu.cuMemcpyDtoH(gpu, out, n * 4));
        double worst = 0, want[128];
        for (int i = 0; i < 16; ++i) {
            int bb = i % b, hh = (i / 2) % h, row = (int)((i * 7919u + 13u) % (unsigned)sq);
            if (i == 0)
                row = 0;
            if (i == 1)
                row = sq - 1;
            fattn_cpu_attention_row(s, seed, FATTN_INPUTS_UNIFORM, bb, hh, row, want);
            size_t base = (((size_t)bb * (size_t)h + (size_t)hh) * (size_t)sq + (size_t)row) * (size_t)s->head_dim;
            for (int d = 0; d < s->head_dim; ++d) {
                double err = fabs(gpu[base + d] - want[d]) / (1e-3 + fabs(want[d]));
                worst = err > worst ? err : worst;
            }
        }
        char name[64];
        snprintf(name, sizeof name, "reference S=%d D=%d causal=%d", s->seqlen, s->head_dim, s->causal);
        t_case = name;
        fprintf(stderr, "%s: worst relative error %.3g against fp64\n", name, worst);
        CHECK(worst < 1e-4);
        free(gpu);
        free(host_in);
        for (unsigned t = 0; t < 3; ++t)
            cu.cuMemFree(qkv[t]);
        cu.cuMemFree(out);
        cu.cuModuleUnload(mod);
        fattn_nvrtc_result_release(&r);
        fattn_options_release(&o);
    }
    cu.cuDevicePrimaryCtxRelease(dev);
    fattn_kernel_src_release(&src);
    free(include);
    return t_exit();
}
