/*
 * cuda.c - the driver API through dlopen.
 */
#include "gpu/cuda.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

typedef CUresult (*init_fn)(unsigned);
typedef CUresult (*int_fn)(int *);
typedef CUresult (*get_fn)(CUdevice *, int);
typedef CUresult (*name_fn)(char *, int, CUdevice);
typedef CUresult (*attr_fn)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*mem_fn)(size_t *, CUdevice);
typedef CUresult (*errname_fn)(CUresult, const char **);

static const char *err_name(void *lib, CUresult r)
{
    errname_fn f = (errname_fn)dlsym(lib, "cuGetErrorName");
    const char *s = NULL;
    if (f && f(r, &s) == CUDA_SUCCESS && s)
        return s;
    return "unknown CUDA error";
}

int fattn_gpu_probe(int ordinal, fattn_gpu_info *out, char *why, size_t why_size)
{
    const char *path = getenv("FATTN_LIBCUDA");
    if (!path || !*path)
        path = "libcuda.so.1";
    memset(out, 0, sizeof *out);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, why_size, "no GPU: the CUDA driver (%s) cannot be loaded", path);
        return FATTN_EFAIL;
    }
    init_fn cu_init = (init_fn)dlsym(lib, "cuInit");
    int_fn cu_version = (int_fn)dlsym(lib, "cuDriverGetVersion");
    int_fn cu_count = (int_fn)dlsym(lib, "cuDeviceGetCount");
    get_fn cu_get = (get_fn)dlsym(lib, "cuDeviceGet");
    name_fn cu_name = (name_fn)dlsym(lib, "cuDeviceGetName");
    attr_fn cu_attr = (attr_fn)dlsym(lib, "cuDeviceGetAttribute");
    mem_fn cu_mem = (mem_fn)dlsym(lib, "cuDeviceTotalMem_v2");
    int rc = FATTN_EFAIL, count = 0;
    CUdevice dev;
    CUresult r;
    if (!cu_init || !cu_version || !cu_count || !cu_get || !cu_name || !cu_attr || !cu_mem) {
        snprintf(why, why_size, "no GPU: %s lacks the driver API entry points fattn-tune needs", path);
        goto out;
    }
    if ((r = cu_init(0)) != CUDA_SUCCESS) {
        snprintf(why, why_size, "no GPU: cuInit failed: %s", err_name(lib, r));
        goto out;
    }
    if ((r = cu_count(&count)) != CUDA_SUCCESS || count == 0) {
        snprintf(why, why_size, "no GPU: the driver reports %s", r ? err_name(lib, r) : "no devices");
        goto out;
    }
    if (ordinal < 0 || ordinal >= count) {
        snprintf(why, why_size, "--device %d: the driver reports %d device%s (0..%d)", ordinal, count,
                 count == 1 ? "" : "s", count - 1);
        goto out;
    }
    static const struct {
        CUdevice_attribute attr;
        size_t offset;
    } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, offsetof(fattn_gpu_info, cc_major)},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, offsetof(fattn_gpu_info, cc_minor)},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, offsetof(fattn_gpu_info, sm_count)},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, offsetof(fattn_gpu_info, smem_per_block_optin)},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, offsetof(fattn_gpu_info, smem_per_sm)},
        {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, offsetof(fattn_gpu_info, l2_bytes)},
    };
    if ((r = cu_get(&dev, ordinal)) != CUDA_SUCCESS || (r = cu_name(out->name, sizeof out->name, dev))
        || (r = cu_mem(&out->total_mem, dev)) || (r = cu_version(&out->driver_version))) {
        snprintf(why, why_size, "device %d: driver query failed: %s", ordinal, err_name(lib, r));
        goto out;
    }
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; ++i) {
        if ((r = cu_attr((int *)((char *)out + attrs[i].offset), attrs[i].attr, dev)) != CUDA_SUCCESS) {
            snprintf(why, why_size, "device %d: attribute query failed: %s", ordinal, err_name(lib, r));
            goto out;
        }
    }
    out->ordinal = ordinal;
    rc = FATTN_OK;
out:
    /* The library stays loaded: unloading an initialized driver is unsafe. */
    return rc;
}
