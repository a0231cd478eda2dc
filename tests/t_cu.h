/*
 * t_cu.h - for the tests that call the driver themselves: CK(call) runs a
 * driver call through `cu` (a fattn_cu in scope) and ends the test as a
 * harness failure, naming the call and its error, when it fails.
 */
#ifndef FATTN_TESTS_T_CU_H
#define FATTN_TESTS_T_CU_H

#include <stdio.h>
#include <stdlib.h>

#include "gpu/driver.h"
#include "t.h"

#define CK(call)                                                                                                       \
    do {                                                                                                               \
        CUresult r_ = (call);                                                                                          \
        if (r_ != CUDA_SUCCESS) {                                                                                      \
            fprintf(stderr, "%s: %s\n", #call, fattn_cu_error_name(&cu, r_));                                          \
            exit(T_HARNESS);                                                                                           \
        }                                                                                                              \
    } while (0)

#endif
