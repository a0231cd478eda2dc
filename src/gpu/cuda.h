/*
 * cuda.h - the CUDA driver, loaded at run time.
 *
 * libcuda.so.1 exists only where a GPU is, so fattn-tune never links it:
 * fattn_gpu_probe() dlopen()s it ($FATTN_LIBCUDA names another file, for
 * tests) and reads the device's properties. Subcommands that need no GPU
 * never call it; those that need one fail with the reason it gives.
 */
#ifndef FATTN_GPU_CUDA_H
#define FATTN_GPU_CUDA_H

#include <stddef.h>

typedef struct fattn_gpu_info {
    int ordinal;
    char name[256];
    int cc_major, cc_minor;
    int sm_count;
    size_t total_mem;
    int smem_per_block_optin;
    int smem_per_sm;
    int l2_bytes;
    int driver_version; /* e.g. 13000 */
} fattn_gpu_info;

/* Probes device `ordinal`. Returns 0, or FATTN_EFAIL with a one-line reason
 * in why (no driver library, no device, driver error), printing nothing. */
int fattn_gpu_probe(int ordinal, fattn_gpu_info *out, char *why, size_t why_size);

#endif
