/* SPDX-License-Identifier: BSD-3-Clause */
/* Cache key hashing: 128-bit XXH3 of the full key text, and its hex form for file names. */
#ifndef TJ_CACHE_HASH_H
#define TJ_CACHE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* A 128-bit hash; `hi` is printed first, as xxhsum prints XXH128. */
typedef struct {
    uint64_t hi, lo;
} tj_hash_t;

/* XXH3 128-bit hash (seed 0) of @p len bytes at @p data; @p data may be NULL when @p len is 0. */
tj_hash_t tj_hash_bytes(const void *data, size_t len);

/* Write @p h as 32 lowercase hex digits and a terminating NUL into @p out. */
void tj_hash_hex(tj_hash_t h, char out[33]);

#endif /* TJ_CACHE_HASH_H */
