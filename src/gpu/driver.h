/*
 * driver.h - the CUDA driver API, loaded at run time.
 *
 * libcuda.so.1 exists only where a GPU is, so fattn-tune never links it.
 * fattn_cu_load() dlopen()s it ($FATTN_LIBCUDA names another file, for
 * tests) and resolves every entry point below through cuGetProcAddress.
 * Each is asked for at the version beside it: the version (cudaTypedefs.h's
 * PFN_name_vN) of the ABI its cuda.h prototype (the __typeof__ below)
 * declares. Asking at the headers' CUDA_VERSION instead hands back the
 * newest ABI of that name, which need not be cuda.h's: under CUDA 13,
 * cuGetProcAddress("cuCtxSynchronize", 13000) is cuCtxSynchronize_v2(ctx),
 * while cuda.h's cuCtxSynchronize takes no argument (the first GPU session
 * saw CUDA_ERROR_CONTEXT_IS_DESTROYED from every synchronize).
 * tests/test_driver.c holds each version to the two headers.
 * Subcommands that need no GPU never load it.
 */
#ifndef FATTN_GPU_DRIVER_H
#define FATTN_GPU_DRIVER_H

#include <cuda.h>
#include <stddef.h>

#define FATTN_CU_FUNCTIONS(X)                                                                                          \
    X(cuInit, 2000)                                                                                                    \
    X(cuDriverGetVersion, 2020)                                                                                        \
    X(cuDeviceGet, 2000)                                                                                               \
    X(cuDeviceGetCount, 2000)                                                                                          \
    X(cuDeviceGetName, 2000)                                                                                           \
    X(cuDeviceGetAttribute, 2000)                                                                                      \
    X(cuDeviceTotalMem, 3020)                                                                                          \
    X(cuDeviceGetUuid, 11040)                                                                                          \
    X(cuDevicePrimaryCtxRetain, 7000)                                                                                  \
    X(cuDevicePrimaryCtxRelease, 11000)                                                                                \
    X(cuCtxSetCurrent, 4000)                                                                                           \
    X(cuCtxSynchronize, 2000)                                                                                          \
    X(cuModuleLoadData, 2000)                                                                                          \
    X(cuModuleUnload, 2000)                                                                                            \
    X(cuModuleGetFunction, 2000)                                                                                       \
    X(cuModuleGetGlobal, 3020)                                                                                         \
    X(cuFuncSetAttribute, 9000)                                                                                        \
    X(cuMemAlloc, 3020)                                                                                                \
    X(cuMemFree, 3020)                                                                                                 \
    X(cuMemcpyHtoD, 3020)                                                                                              \
    X(cuMemcpyDtoH, 3020)                                                                                              \
    X(cuMemsetD16, 3020)                                                                                               \
    X(cuMemsetD32, 3020)                                                                                               \
    X(cuMemsetD32Async, 3020)                                                                                          \
    X(cuMemsetD8Async, 3020)                                                                                           \
    X(cuMemGetInfo, 3020)                                                                                              \
    X(cuLaunchKernel, 4000)                                                                                            \
    X(cuLaunchKernelEx, 11060)                                                                                         \
    X(cuStreamCreate, 2000)                                                                                            \
    X(cuStreamDestroy, 4000)                                                                                           \
    X(cuStreamSynchronize, 2000)                                                                                       \
    X(cuEventCreate, 2000)                                                                                             \
    X(cuEventDestroy, 4000)                                                                                            \
    X(cuEventRecord, 2000)                                                                                             \
    X(cuEventSynchronize, 2000)                                                                                        \
    X(cuEventElapsedTime, 12080)                                                                                       \
    X(cuStreamBeginCapture, 10010)                                                                                     \
    X(cuStreamEndCapture, 10000)                                                                                       \
    X(cuGraphInstantiateWithFlags, 11040)                                                                              \
    X(cuGraphLaunch, 10000)                                                                                            \
    X(cuGraphExecDestroy, 10000)                                                                                       \
    X(cuGraphDestroy, 10000)                                                                                           \
    X(cuTensorMapEncodeTiled, 12000)                                                                                   \
    X(cuGetErrorName, 6000)

typedef struct fattn_cu {
    void *lib;
#define FATTN_CU_MEMBER(f, v) __typeof__(f) *f;
    FATTN_CU_FUNCTIONS(FATTN_CU_MEMBER)
#undef FATTN_CU_MEMBER
} fattn_cu;

/* Loads the driver and calls cuInit(0). Returns 0, or FATTN_EFAIL with a
 * one-line reason in why ("no GPU: ..."), printing nothing. */
int fattn_cu_load(fattn_cu *cu, char *why, size_t why_size);

/* The name of a driver error ("CUDA_ERROR_MISALIGNED_ADDRESS"): the
 * driver's own when it can say, else fattn-tune's table, else "CUDA error N".
 * cu may be NULL. */
const char *fattn_cu_error_name(const fattn_cu *cu, CUresult r);

/* 1 for the errors after which the process cannot go on using CUDA (the
 * kernel faulted and ruined the context, the hardware failed, the driver
 * does not know): the worker that saw one must exit. Every error whose
 * cuda.h comment says the process "must be terminated and relaunched" or
 * the context "cannot be used anymore" is one (tests/test_driver.c reads
 * cuda.h to hold it so). */
int fattn_cu_error_is_sticky(CUresult r);

/* 1 for the errors with which the driver refuses a launch (or a function
 * attribute) as asked, the context left intact: too much shared memory, too
 * many threads or registers, an invalid cluster. */
int fattn_cu_error_is_launch_refusal(CUresult r);

#endif
