/*
 * driver.c - resolving the driver API through dlopen and cuGetProcAddress.
 */
#include "gpu/driver.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

typedef CUresult (*get_proc_fn)(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                CUdriverProcAddressQueryResult *status);

int fattn_cu_load(fattn_cu *cu, char *why, size_t why_size)
{
    const char *path = getenv("FATTN_LIBCUDA");
    if (!path || !*path)
        path = "libcuda.so.1";
    memset(cu, 0, sizeof *cu);
    cu->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!cu->lib) {
        snprintf(why, why_size, "no GPU: the CUDA driver (%s) cannot be loaded", path);
        return FATTN_EFAIL;
    }
    get_proc_fn get_proc = (get_proc_fn)dlsym(cu->lib, "cuGetProcAddress_v2");
    CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(cu->lib, "cuInit");
    if (!get_proc || !init) {
        snprintf(why, why_size, "no GPU: %s is not a CUDA driver of version 12 or later", path);
        return FATTN_EFAIL;
    }
    CUresult r = init(0);
    if (r != CUDA_SUCCESS) {
        snprintf(why, why_size, "no GPU: cuInit failed: %s", fattn_cu_error_name(NULL, r));
        return FATTN_EFAIL;
    }
#define FATTN_CU_RESOLVE(f, v)                                                                                         \
    {                                                                                                                  \
        CUdriverProcAddressQueryResult st;                                                                             \
        void *p = NULL;                                                                                                \
        if ((r = get_proc(#f, &p, v, CU_GET_PROC_ADDRESS_DEFAULT, &st)) != CUDA_SUCCESS || !p) {                       \
            snprintf(why, why_size, "the CUDA driver (%s) lacks %s (version %d): %s; a newer driver is needed", path,  \
                     #f, v, r ? fattn_cu_error_name(NULL, r) : "not found");                                           \
            return FATTN_EFAIL;                                                                                        \
        }                                                                                                              \
        memcpy(&cu->f, &p, sizeof p);                                                                                  \
    }
    FATTN_CU_FUNCTIONS(FATTN_CU_RESOLVE)
#undef FATTN_CU_RESOLVE
    return FATTN_OK;
}

static const struct {
    CUresult code;
    const char *name;
} names[] = {
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED"},
    {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY"},
    {CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    {CUDA_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT"},
    {CUDA_ERROR_ASSERT, "CUDA_ERROR_ASSERT"},
    {CUDA_ERROR_HARDWARE_STACK_ERROR, "CUDA_ERROR_HARDWARE_STACK_ERROR"},
    {CUDA_ERROR_ILLEGAL_INSTRUCTION, "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
    {CUDA_ERROR_MISALIGNED_ADDRESS, "CUDA_ERROR_MISALIGNED_ADDRESS"},
    {CUDA_ERROR_INVALID_ADDRESS_SPACE, "CUDA_ERROR_INVALID_ADDRESS_SPACE"},
    {CUDA_ERROR_INVALID_PC, "CUDA_ERROR_INVALID_PC"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED"},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"},
    {CUDA_ERROR_CONTAINED, "CUDA_ERROR_CONTAINED"},
    {CUDA_ERROR_TENSOR_MEMORY_LEAK, "CUDA_ERROR_TENSOR_MEMORY_LEAK"},
    {CUDA_ERROR_INVALID_CLUSTER_SIZE, "CUDA_ERROR_INVALID_CLUSTER_SIZE"},
    {CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN"},
};

const char *fattn_cu_error_name(const fattn_cu *cu, CUresult r)
{
    static _Thread_local char buf[32];
    const char *s = NULL;
    if (cu && cu->cuGetErrorName && cu->cuGetErrorName(r, &s) == CUDA_SUCCESS && s)
        return s;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (names[i].code == r)
            return names[i].name;
    snprintf(buf, sizeof buf, "CUDA error %d", (int)r);
    return buf;
}

int fattn_cu_error_is_sticky(CUresult r)
{
    switch (r) {
    /* cuda.h (CUDA 13.0): "This leaves the process in an inconsistent state
     * and any further CUDA work will return the same error. To continue
     * using CUDA, the process must be terminated and relaunched." */
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case CUDA_ERROR_MPS_CLIENT_TERMINATED:
    case CUDA_ERROR_EXTERNAL_DEVICE:
    /* "The context cannot be used anymore, and must be destroyed." */
    case CUDA_ERROR_ASSERT:
    /* The context or the driver is gone, the hardware failed, or the
     * driver cannot say what happened: a fresh process is the only safe
     * answer. */
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_NVLINK_UNCORRECTABLE:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_MPS_CONNECTION_FAILED:
    case CUDA_ERROR_MPS_RPC_FAILURE:
    case CUDA_ERROR_SYSTEM_NOT_READY:
    case CUDA_ERROR_UNKNOWN: return 1;
    default: return 0;
    }
}

int fattn_cu_error_is_launch_refusal(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_INVALID_CLUSTER_SIZE:
    case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
    case CUDA_ERROR_NOT_SUPPORTED:
    case CUDA_ERROR_NOT_PERMITTED:
    case CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY:
    case CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION:
    case CUDA_ERROR_OUT_OF_MEMORY: return 1;
    default: return 0;
    }
}
