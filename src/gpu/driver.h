/*
 * driver.h - the CUDA driver API, loaded at run time.
 *
 * libcuda.so.1 exists only where a GPU is, so fattn-tune never links it.
 * fattn_cu_load() dlopen()s it ($FATTN_LIBCUDA names another file, for
 * tests) and resolves every entry point below through cuGetProcAddress for
 * the CUDA version of the headers fattn-tune was built with, so each pointer
 * has the ABI its cuda.h prototype (the __typeof__ below) declares.
 * Subcommands that need no GPU never load it.
 */
#ifndef FATTN_GPU_DRIVER_H
#define FATTN_GPU_DRIVER_H

#include <cuda.h>
#include <stddef.h>

#define FATTN_CU_FUNCTIONS(X)                                                                                          \
    X(cuInit)                                                                                                          \
    X(cuDriverGetVersion)                                                                                              \
    X(cuDeviceGet)                                                                                                     \
    X(cuDeviceGetCount)                                                                                                \
    X(cuDeviceGetName)                                                                                                 \
    X(cuDeviceGetAttribute)                                                                                            \
    X(cuDeviceTotalMem)                                                                                                \
    X(cuDevicePrimaryCtxRetain)                                                                                        \
    X(cuDevicePrimaryCtxRelease)                                                                                       \
    X(cuCtxSetCurrent)                                                                                                 \
    X(cuCtxSynchronize)                                                                                                \
    X(cuModuleLoadData)                                                                                                \
    X(cuModuleUnload)                                                                                                  \
    X(cuModuleGetFunction)                                                                                             \
    X(cuFuncSetAttribute)                                                                                              \
    X(cuMemAlloc)                                                                                                      \
    X(cuMemFree)                                                                                                       \
    X(cuMemcpyHtoD)                                                                                                    \
    X(cuMemcpyDtoH)                                                                                                    \
    X(cuMemsetD16)                                                                                                     \
    X(cuMemsetD32)                                                                                                     \
    X(cuMemsetD32Async)                                                                                                \
    X(cuMemGetInfo)                                                                                                    \
    X(cuLaunchKernel)                                                                                                  \
    X(cuStreamCreate)                                                                                                  \
    X(cuStreamDestroy)                                                                                                 \
    X(cuStreamSynchronize)                                                                                             \
    X(cuEventCreate)                                                                                                   \
    X(cuEventDestroy)                                                                                                  \
    X(cuEventRecord)                                                                                                   \
    X(cuEventSynchronize)                                                                                              \
    X(cuEventElapsedTime)                                                                                              \
    X(cuStreamBeginCapture)                                                                                            \
    X(cuStreamEndCapture)                                                                                              \
    X(cuGraphInstantiateWithFlags)                                                                                     \
    X(cuGraphLaunch)                                                                                                   \
    X(cuGraphExecDestroy)                                                                                              \
    X(cuGraphDestroy)                                                                                                  \
    X(cuGetErrorName)

typedef struct fattn_cu {
    void *lib;
#define FATTN_CU_MEMBER(f) __typeof__(f) *f;
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
