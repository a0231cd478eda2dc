/*
 * cubin.h - reading a kernel's resources from a cubin, no GPU needed.
 *
 * A cubin is an ELF64 file. fattn-tune reads:
 *  - e_flags bits 8..15: the SM (0x59 = sm_89, 0x5a = sm_90);
 *  - section .nv.info: records of (format, attribute, size); format 4
 *    carries `size` bytes of (symbol index, value) words. Attribute 0x2f is
 *    the register count, 0x11 the stack frame size;
 *  - section .nv.shared.<kernel>: static shared memory; on sm_90 it also
 *    holds the 1024 bytes the toolchain reserves (flagged by a
 *    .nv.reservedSmem symbol), which are not the kernel's own;
 *  - 4-byte __device__ constants by symbol name (fattn_smem_bytes and
 *    fattn_threads, which the kernel exports from its own macros).
 * Every read is bounds-checked: a malformed cubin is an error, not a crash.
 */
#ifndef FATTN_COMPILE_CUBIN_H
#define FATTN_COMPILE_CUBIN_H

#include <stddef.h>

typedef struct fattn_cubin_info {
    int sm; /* e.g. 90 */
    int have_regs;
    unsigned regs;
    unsigned frame_bytes;
    unsigned smem_section; /* size of .nv.shared.<kernel>, 0 when absent */
    int reserved_smem;     /* the toolchain's reserved block is in that section */
    unsigned smem_static;  /* the kernel's own static shared memory */
} fattn_cubin_info;

/* Reads the resources of `kernel`. Returns 0, or -1 with a reason in why. */
int fattn_cubin_parse(const void *data, size_t size, const char *kernel, fattn_cubin_info *out, char *why,
                      size_t why_size);

/* Reads the 4-byte initialized object named `symbol`. Returns 0; 1 when the
 * cubin has no such symbol (*value untouched); -1 when the cubin or the
 * symbol is malformed; why says which. */
int fattn_cubin_symbol_u32(const void *data, size_t size, const char *symbol, unsigned *value, char *why,
                           size_t why_size);

#endif
