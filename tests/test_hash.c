/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the cache key hash: XXH3-128 vectors for lengths that take each of XXH3's code
 * paths (computed independently with the python xxhash package), the hex form, and that
 * different inputs give different hashes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/hash.h"
#include "check.h"

typedef struct {
    size_t len;
    const char *hex;
} vector_t;

/* Input of length n: bytes 0, 1, 2, ... modulo 256. */
static const vector_t counting[] = {
    {0, "99aa06d3014798d86001c324468d497f"},   {100, "da95ef16fd9566f329b20ba5f03ec01e"},
    {200, "cb0395310643ba0edd97e9af3609d9f5"}, {240, "65b5be86da5540e7c92b68e16f83bbb6"},
    {241, "1da1cb61bcb8a2a102e8cd95421c6d02"}, {1024, "83885e853bb6640ca870f92984398d22"},
};

static void check_hex(const void *data, size_t len, const char *want)
{
    char hex[33];

    memset(hex, 'x', sizeof(hex));
    tj_hash_hex(tj_hash_bytes(data, len), hex);
    if (strcmp(hex, want) != 0) {
        fprintf(stderr, "hash of %zu bytes: got %s, want %s\n", len, hex, want);
        check_failures++;
    }
}

int main(void)
{
    unsigned char buf[1024];
    char *big;
    char hex[33];

    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (unsigned char)i;
    for (size_t i = 0; i < sizeof(counting) / sizeof(counting[0]); i++)
        check_hex(buf, counting[i].len, counting[i].hex);

    /* Short texts: 1-3, 4-8 and 9-16 bytes. */
    check_hex("a", 1, "a96faf705af16834e6c632b61e964e1f");
    check_hex("abc", 3, "06b05ab6733a618578af5f94892f3950");
    check_hex("typejit", 7, "0d9f6b13831911e5a4f21ee24841608b");
    check_hex("0123456789abcdef", 16, "ccba8085a0434e9e0befb4873dbe58f8");
    check_hex(NULL, 0, "99aa06d3014798d86001c324468d497f");

    /* A long input that goes through several XXH3 stripes and blocks. */
    big = malloc(100000);
    REQUIRE(big != NULL);
    memset(big, 'x', 100000);
    check_hex(big, 100000, "0fe996a84987456bd8b99a30e426ac41");

    /* Hex formatting: fixed width, lowercase, hi first, zero padding kept. */
    {
        tj_hash_t h = {0x0123456789abcdefULL, 0x00000000000000f0ULL};
        memset(hex, 'x', sizeof(hex));
        tj_hash_hex(h, hex);
        CHECK(strcmp(hex, "0123456789abcdef00000000000000f0") == 0);
        CHECK(hex[32] == '\0');
        h.hi = UINT64_MAX;
        h.lo = 0;
        tj_hash_hex(h, hex);
        CHECK(strcmp(hex, "ffffffffffffffff0000000000000000") == 0);
    }

    /* Different inputs differ: every single-byte change and every length of one buffer. */
    {
        tj_hash_t base = tj_hash_bytes(big, 1000);
        for (size_t i = 0; i < 1000; i += 7) {
            tj_hash_t h;
            big[i] ^= 1;
            h = tj_hash_bytes(big, 1000);
            big[i] ^= 1;
            CHECK(h.hi != base.hi || h.lo != base.lo);
        }
        for (size_t n = 0; n < 300; n++) {
            tj_hash_t a = tj_hash_bytes(buf, n), b = tj_hash_bytes(buf, n + 1);
            CHECK(a.hi != b.hi || a.lo != b.lo);
        }
        /* Same bytes at a different address hash the same. */
        memcpy(big + 1, buf, 500);
        tj_hash_t x = tj_hash_bytes(big + 1, 500), y = tj_hash_bytes(buf, 500);
        CHECK(x.hi == y.hi && x.lo == y.lo);
    }
    free(big);
    CHECK_DONE();
}
