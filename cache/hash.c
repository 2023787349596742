/* SPDX-License-Identifier: BSD-3-Clause */
/* Cache key hashing with XXH3, compiled inline so that no libxxhash is needed at run time. */
#include "cache/hash.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

tj_hash_t tj_hash_bytes(const void *data, size_t len)
{
    /* XXH3 reads nothing when the length is zero, but a NULL pointer is kept away from it
     * anyway so that the sanitizers have nothing to say. */
    static const char empty = 0;
    XXH128_hash_t h = XXH3_128bits(len > 0 ? data : &empty, len);
    tj_hash_t out = {h.high64, h.low64};
    return out;
}

void tj_hash_hex(tj_hash_t h, char out[33])
{
    static const char digits[] = "0123456789abcdef";

    for (int i = 0; i < 16; i++) {
        out[i] = digits[(h.hi >> (60 - 4 * i)) & 0xf];
        out[16 + i] = digits[(h.lo >> (60 - 4 * i)) & 0xf];
    }
    out[32] = '\0';
}
