/*
 * paths.c - locating kernels, spaces and the toolkit.
 */
#include "config.h"

#include "util/paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fs.h"

const char *fattn_default_kernel_dir(void)
{
    const char *env = getenv("FATTN_KERNEL_DIR");
    if (env && *env)
        return env;
    return fattn_is_dir(FATTN_SOURCE_ROOT "/kernels") ? FATTN_SOURCE_ROOT "/kernels" : FATTN_INSTALL_ROOT "/kernels";
}

const char *fattn_default_space_path(void)
{
    return fattn_is_dir(FATTN_SOURCE_ROOT "/search") ? FATTN_SOURCE_ROOT "/search/space.json"
                                                     : FATTN_INSTALL_ROOT "/search/space.json";
}

char *fattn_search_file(const char *name)
{
    const char *def = fattn_default_space_path(), *slash = strrchr(def, '/');
    char dir[1024];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - def) : 1, slash ? def : ".");
    return fattn_path_join(dir, name);
}

const char *fattn_cuda_root(void)
{
    const char *env = getenv("FATTN_CUDA_ROOT");
    return env && *env ? env : FATTN_CUDA_ROOT;
}
