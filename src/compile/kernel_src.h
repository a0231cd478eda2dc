/*
 * kernel_src.h - a kernel source file and the local headers it includes,
 * loaded once, handed to NVRTC as named headers, and hashed together.
 *
 * Only quoted includes (#include "name") are local: they are read from the
 * kernel directory, recursively; angle-bracket includes come from the CUDA
 * toolkit. The hash covers the names and bytes of the main file and every
 * local header, so any edit to the kernel changes the compile-cache key.
 */
#ifndef FATTN_COMPILE_KERNEL_SRC_H
#define FATTN_COMPILE_KERNEL_SRC_H

#define FATTN_KERNEL_MAX_HEADERS 16

/* The reference kernel (each family's own kernel: space/family.h). */
#define FATTN_REF_FILE "fattn_ref.cu"
#define FATTN_REF_NAME "fattn_ref"

typedef struct fattn_kernel_src {
    char *dir;
    char *name; /* file name within dir */
    char *text;
    int nheaders;
    char *header_names[FATTN_KERNEL_MAX_HEADERS];
    char *header_texts[FATTN_KERNEL_MAX_HEADERS];
    char hash[65];
} fattn_kernel_src;

/* Loads dir/file and its local headers; dir NULL: the default kernel
 * directory (util/paths.h: $FATTN_KERNEL_DIR, else the built-in kernels/).
 * A missing or unreadable file is an environment failure (FATTN_EFAIL)
 * naming the path. */
int fattn_kernel_src_load(const char *dir, const char *file, fattn_kernel_src *ks);

/* A deep copy of `from` into *to (release it). */
void fattn_kernel_src_copy(const fattn_kernel_src *from, fattn_kernel_src *to);

/* Frees what ks holds and zeroes it; a zeroed source, or one whose load
 * failed, is released as well (nothing to free). */
void fattn_kernel_src_release(fattn_kernel_src *ks);

#endif
