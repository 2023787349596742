/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the object pool (src/util/slab.c): objects 16-byte aligned and disjoint across
 * several pages, each holding what was written to it, freed ones handed out again before new
 * pages are mapped, and a pool usable again after tj_slab_release. Under AddressSanitizer the
 * pool is plain malloc, and the same checks hold. No MPI needed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util/slab.h"

#define N 3000 /* objects of 200 bytes: several 64 KiB pages */

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    static void *obj[N], *sorted[N];
    tj_slab_t pool = TJ_SLAB_INIT(200);

    CHECK_EQ_INT((int)pool.size, 208); /* rounded up to a multiple of 16 */
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) {
            REQUIRE((obj[i] = tj_slab_alloc(&pool)) != NULL);
            CHECK((uintptr_t)obj[i] % 16 == 0);
            memset(obj[i], i & 0xff, 200);
        }
        /* Disjoint: sorted, each ends before the next begins. */
        memcpy(sorted, obj, sizeof(obj));
        qsort(sorted, N, sizeof(sorted[0]), cmp_ptr);
        for (int i = 1; i < N; i++)
            CHECK((uintptr_t)sorted[i - 1] + 200 <= (uintptr_t)sorted[i]);
        for (int i = 0; i < N; i++) {
            const unsigned char *b = obj[i];
            for (int k = 0; k < 200; k++)
                if (b[k] != (unsigned char)(i & 0xff)) {
                    CHECK(!"an object's bytes changed");
                    break;
                }
        }
        /* Freed objects come back: the first new one is the last one freed. */
        for (int i = 0; i < N; i++)
            tj_slab_free(&pool, obj[i]);
        tj_slab_free(&pool, NULL);
        void *again = tj_slab_alloc(&pool);
        REQUIRE(again != NULL);
#ifndef __SANITIZE_ADDRESS__
        CHECK(again == obj[N - 1]);
#endif
        tj_slab_free(&pool, again);
        tj_slab_release(&pool);
        CHECK(pool.free == NULL && pool.pages == NULL);
    }
    CHECK_DONE();
}
