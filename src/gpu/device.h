/*
 * device.h - the GPU's identity and limits, read through the driver.
 *
 * fattn_gpu_probe() is what commands call to learn the arch of the GPU when
 * --arch is absent, and what the GPU engine records in a study. It loads the
 * driver (driver.h); where there is no GPU it says why in one line.
 */
#ifndef FATTN_GPU_DEVICE_H
#define FATTN_GPU_DEVICE_H

#include <stddef.h>

typedef struct fattn_gpu_info {
    int ordinal;
    char name[256];
    char uuid[48]; /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi writes it */
    int cc_major, cc_minor;
    int sm_count;
    size_t total_mem;
    int smem_per_block_optin;
    int smem_per_sm;
    int l2_bytes;
    int clock_khz; /* SM clock */
    int mem_clock_khz;
    int mem_bus_bits;
    int driver_version; /* e.g. 13000 */
} fattn_gpu_info;

/* Probes device `ordinal`. Returns 0, or FATTN_EFAIL with a one-line reason
 * in why (no driver library, no device, driver error), printing nothing. */
int fattn_gpu_probe(int ordinal, fattn_gpu_info *out, char *why, size_t why_size);

/* The properties as a JSON object, for the study record. */
void fattn_gpu_info_json(const fattn_gpu_info *g, char *out, size_t n);

#endif
