/*
 * device.c - probing a GPU through the driver.
 */
#include "gpu/device.h"

#include <stdio.h>
#include <string.h>

#include "gpu/driver.h"
#include "util/err.h"
#include "util/sha256.h"

int fattn_gpu_probe(int ordinal, fattn_gpu_info *out, char *why, size_t why_size)
{
    fattn_cu cu;
    CUdevice dev;
    CUresult r;
    int count = 0;
    memset(out, 0, sizeof *out);
    if (fattn_cu_load(&cu, why, why_size))
        return FATTN_EFAIL;
    if ((r = cu.cuDeviceGetCount(&count)) != CUDA_SUCCESS || count == 0) {
        snprintf(why, why_size, "no GPU: the driver reports %s", r ? fattn_cu_error_name(&cu, r) : "no devices");
        return FATTN_EFAIL;
    }
    if (ordinal < 0 || ordinal >= count) {
        snprintf(why, why_size, "--device %d: the driver reports %d device%s (0..%d)", ordinal, count,
                 count == 1 ? "" : "s", count - 1);
        return FATTN_EFAIL;
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
        {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, offsetof(fattn_gpu_info, clock_khz)},
        {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, offsetof(fattn_gpu_info, mem_clock_khz)},
        {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, offsetof(fattn_gpu_info, mem_bus_bits)},
    };
    if ((r = cu.cuDeviceGet(&dev, ordinal)) || (r = cu.cuDeviceGetName(out->name, sizeof out->name, dev))
        || (r = cu.cuDeviceTotalMem(&out->total_mem, dev)) || (r = cu.cuDriverGetVersion(&out->driver_version))) {
        snprintf(why, why_size, "device %d: driver query failed: %s", ordinal, fattn_cu_error_name(&cu, r));
        return FATTN_EFAIL;
    }
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; ++i) {
        if ((r = cu.cuDeviceGetAttribute((int *)((char *)out + attrs[i].offset), attrs[i].attr, dev))) {
            snprintf(why, why_size, "device %d: attribute query failed: %s", ordinal, fattn_cu_error_name(&cu, r));
            return FATTN_EFAIL;
        }
    }
    CUuuid u;
    if ((r = cu.cuDeviceGetUuid(&u, dev))) {
        snprintf(why, why_size, "device %d: UUID query failed: %s", ordinal, fattn_cu_error_name(&cu, r));
        return FATTN_EFAIL;
    }
    char text[37];
    fattn_uuid_text((const unsigned char *)u.bytes, text);
    snprintf(out->uuid, sizeof out->uuid, "GPU-%s", text); /* as nvidia-smi writes it */
    out->ordinal = ordinal;
    /* The library stays loaded: unloading an initialized driver is unsafe. */
    return FATTN_OK;
}

void fattn_gpu_info_json(const fattn_gpu_info *g, char *out, size_t n)
{
    snprintf(out, n,
             "{\"ordinal\":%d,\"name\":\"%s\",\"uuid\":\"%s\",\"compute_capability\":\"%d.%d\",\"sm_count\":%d,\"total_"
             "mem\":%zu,"
             "\"smem_per_block_optin\":%d,\"smem_per_sm\":%d,\"l2_bytes\":%d,\"clock_khz\":%d,\"mem_clock_khz\":%d,"
             "\"mem_bus_bits\":%d,\"driver_version\":%d}",
             g->ordinal, g->name, g->uuid, g->cc_major, g->cc_minor, g->sm_count, g->total_mem, g->smem_per_block_optin,
             g->smem_per_sm, g->l2_bytes, g->clock_khz, g->mem_clock_khz, g->mem_bus_bits, g->driver_version);
}
