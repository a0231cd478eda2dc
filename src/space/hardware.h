/*
 * hardware.h - each kernel family's hardware record: the device checks
 * that passed for it, kept in the source tree beside the kernels
 * (kernels/hardware-records.tsv, one line a check, appended by the device
 * stages that check a family on a GPU) and keyed by the kernel source's
 * hash, so that a kernel edited since its last check reads as unproven.
 *
 * The file: lines of family, date, GPU, kernel SHA-256 and the check, tab
 * separated; '#' starts a comment.
 */
#ifndef FATTN_SPACE_HARDWARE_H
#define FATTN_SPACE_HARDWARE_H

#include <stddef.h>

#define FATTN_HW_RECORDS "hardware-records.tsv"

typedef struct fattn_hw_record {
    char date[16];
    char gpu[128];
    char hash[65];
    char check[256];
} fattn_hw_record;

typedef struct fattn_hw_status {
    int any;              /* a device check of the family ever passed */
    int proven;           /* one passed for this very kernel source */
    fattn_hw_record last; /* the latest (of this source when proven) */
} fattn_hw_status;

/* The family's record for the kernel source of hash kernel_hash, read from
 * the default kernel directory's records and kernel_dir's (NULL: none
 * more). A missing file is no record; malformed lines are skipped. */
void fattn_hw_lookup(const char *kernel_dir, const char *family, const char *kernel_hash, fattn_hw_status *out);

/* Room for fattn_hw_describe's line. */
#define FATTN_HW_LINE_MAX 640

/* One line for the user: "proven on hardware: DATE, GPU (CHECK)", or
 * "unproven on hardware: ... last passed ... with kernel HASH12 ..." or
 * "unproven on hardware: never run on a GPU". */
void fattn_hw_describe(const fattn_hw_status *st, char *out, size_t n);

#endif
