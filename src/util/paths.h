/*
 * paths.h - where fattn-tune finds its kernels, default space and toolkit.
 *
 * Kernels: --kernel-dir, else $FATTN_KERNEL_DIR, else the source tree's
 * kernels/ when it exists (an uninstalled build), else the installed
 * <datadir>/fattn-tune/kernels. The default space follows the same roots
 * (search/space.json). The CUDA toolkit: $FATTN_CUDA_ROOT, else the root
 * given at configure time (-Dcuda_root).
 */
#ifndef FATTN_UTIL_PATHS_H
#define FATTN_UTIL_PATHS_H

/* The kernel directory to use when --kernel-dir is not given. */
const char *fattn_default_kernel_dir(void);

/* The default space file. */
const char *fattn_default_space_path(void);

/* The file `name` of the folder the default space is in (search/, beside
 * search/space.json: the other spaces); free it. */
char *fattn_search_file(const char *name);

/* The CUDA toolkit root (NVRTC's include path is <root>/include). */
const char *fattn_cuda_root(void);

#endif
