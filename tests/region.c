/* SPDX-License-Identifier: BSD-3-Clause */
/* Typed buffers for the oracle tests (see region.h). */
#include "region.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

#define GUARD 4096

static size_t page(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

void region_open(region_t *r, int64_t lo, int64_t hi)
{
    int64_t ps = (int64_t)page(), len = hi - lo + 2 * GUARD;
    len = (len + ps - 1) / ps * ps;
    r->map_len = (size_t)len;
    r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    REQUIRE(r->map != MAP_FAILED);
    r->origin = r->map + GUARD - lo;
    r->lo = lo;
    r->hi = hi;
    r->dense = hi - lo <= DENSE_LIMIT;
    if (r->dense)
        memset(r->map, POISON, r->map_len);
}

void region_close(region_t *r)
{
    munmap(r->map, r->map_len);
}

bool region_equal(const region_t *a, const region_t *b, int64_t *first_diff)
{
    size_t ps = page(), pages = a->map_len / ps;
    unsigned char *va, *vb;
    bool same = true;

    if (a->dense) {
        for (size_t i = 0; i < a->map_len; i++)
            if (a->map[i] != b->map[i]) {
                *first_diff = (int64_t)i - GUARD + a->lo;
                return false;
            }
        return true;
    }
    va = malloc(pages);
    vb = malloc(pages);
    REQUIRE(va != NULL && vb != NULL);
    REQUIRE(mincore(a->map, a->map_len, va) == 0 && mincore(b->map, b->map_len, vb) == 0);
    for (size_t p = 0; p < pages && same; p++) {
        if (!(va[p] & 1) && !(vb[p] & 1))
            continue; /* untouched in both: zero in both */
        if (memcmp(a->map + p * ps, b->map + p * ps, ps) != 0) {
            *first_diff = (int64_t)(p * ps) - GUARD + a->lo;
            same = false;
        }
    }
    free(va);
    free(vb);
    return same;
}
