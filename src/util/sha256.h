/*
 * sha256.h - SHA-256 (FIPS 180-4), used for the compile-cache key and the
 * space and kernel hashes recorded in every study.
 */
#ifndef FATTN_UTIL_SHA256_H
#define FATTN_UTIL_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct fattn_sha256 {
    uint32_t h[8];
    uint64_t bytes;
    unsigned char block[64];
    size_t fill;
} fattn_sha256;

void fattn_sha256_init(fattn_sha256 *c);
void fattn_sha256_update(fattn_sha256 *c, const void *data, size_t n);
void fattn_sha256_final(fattn_sha256 *c, unsigned char out[32]);
/* Hex digest (64 characters + NUL) of one buffer. */
void fattn_sha256_hex(const void *data, size_t n, char out[65]);
void fattn_hex(const unsigned char *bytes, size_t n, char *out);
/* 16 bytes in a UUID's text layout, 8-4-4-4-12 lower-case hex digits (36
 * characters + NUL), as they are (a driver's GPU UUID). */
void fattn_uuid_text(const unsigned char b[16], char out[37]);
/* The name-based UUID of a text (RFC 9562's version 8, from the first 16
 * bytes of its SHA-256), lower case: 36 characters + NUL. */
void fattn_uuid_of(const void *text, size_t n, char out[37]);
/* A random UUID (version 4) from the kernel's random source, lower case:
 * 0, or -1 when /dev/urandom cannot be read. */
int fattn_uuid_random(char out[37]);
/* 1 when `s` is a UUID as fattn-tune writes them (8-4-4-4-12 lower-case hex digits). */
int fattn_uuid_valid(const char *s);

#endif
