/*
 * shape.h - an attention problem: B, H, S, D and the causal flag.
 */
#ifndef FATTN_TARGET_SHAPE_H
#define FATTN_TARGET_SHAPE_H

#include <stdint.h>

typedef struct fattn_shape {
    int batch;    /* B, 1..65535 (grid z) */
    int heads;    /* H, 1..65535 (grid y) */
    int seqlen;   /* S, 1..FATTN_MAX_SEQLEN */
    int head_dim; /* D, 64 or 128 */
    int causal;   /* 0 or 1 */
} fattn_shape;

#define FATTN_MAX_BATCH  65535
#define FATTN_MAX_HEADS  65535
#define FATTN_MAX_SEQLEN (1 << 24)

/* 1 when every field is one fattn_shape_parse would give (a shape read
 * back from a database is checked so), 0 otherwise. */
int fattn_shape_valid(const fattn_shape *s);

/* Parses "B,H,S,D". On a malformed or out-of-range value reports one line
 * naming the input and what is expected and returns FATTN_EUSAGE. The causal
 * flag is left as it is in *out. */
int fattn_shape_parse(const char *text, fattn_shape *out);

/* "B=2 H=8 S=512 D=64 non-causal" */
void fattn_shape_format(const fattn_shape *s, char *out, int n);

/* Elements of one [B, H, S, D] tensor. */
uint64_t fattn_shape_elems(const fattn_shape *s);

/* Floating-point operations of one forward pass: 4*B*H*S*S*D, halved when
 * causal (only the lower triangle is computed). */
double fattn_shape_flops(const fattn_shape *s);

/* Bytes one forward pass must move at the least: Q, K, V read and O written
 * once, fp16. */
double fattn_shape_min_bytes(const fattn_shape *s);

/* Device memory the GPU engine allocates for the shape: `input_sets` copies of
 * Q, K and V, one fp16 O and one fp32 reference O. Sets *bytes and returns 0;
 * when the count passes 2^64 - 1, sets *bytes to UINT64_MAX and returns -1
 * (fattn_shape_device_bytes_approx then gives its size). */
int fattn_shape_device_bytes(const fattn_shape *s, int input_sets, uint64_t *bytes);

/* The same count in double precision, for a size past 64 bits. */
double fattn_shape_device_bytes_approx(const fattn_shape *s, int input_sets);

#endif
