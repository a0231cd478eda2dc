/*
 * probe.h - telling a broken kernel source from configurations that fail.
 *
 * A configuration may fail to compile on its own (a static_assert of the
 * kernel, say): that is a rejection, compile_error. A source that fails for
 * every configuration (a syntax error, a missing header) is broken, and a
 * study over it would record every survivor as rejected and measure nothing.
 * Before a study is written, the front end alone (NVRTC's
 * -fdevice-syntax-only: a fraction of a full compile) checks configurations
 * far apart in the space (the first, the last and the middle survivor); the
 * same first error for all means the source is broken.
 */
#ifndef FATTN_COMPILE_PROBE_H
#define FATTN_COMPILE_PROBE_H

#include "compile/kernel_src.h"
#include "space/params.h"
#include "target/arch.h"
#include "target/shape.h"

/* Checks cfgs[0], then each of cfgs[1..n) while they fail with cfgs[0]'s
 * first error. Returns FATTN_OK when one passes the front end, when two
 * errors differ, when the error is a static assertion (a rejection by
 * design), when n < 2 or two configurations are the same (one cannot tell
 * a broken source), or when NVRTC itself fails (the compile that follows
 * reports it); FATTN_EFAIL with one line naming the kernel file and NVRTC's
 * first error when all n fail alike. */
int fattn_kernel_probe(const fattn_kernel_src *src, const char *cuda_include, const fattn_arch *arch,
                       const fattn_shape *shape, const fattn_config *cfgs, int n);

#endif
