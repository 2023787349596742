/* SPDX-License-Identifier: BSD-3-Clause */
/* The object pool: pages from mmap, each holding a link to the next page and then objects. */
#include "util/slab.h"

#include <stdlib.h>
#include <sys/mman.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TJ_SLAB_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TJ_SLAB_ASAN 1
#endif

#ifdef TJ_SLAB_ASAN
/* Under AddressSanitizer every object is an allocation of its own, so that a use after free or
 * an overrun of a pooled object is caught as it would be with malloc. */
void *tj_slab_alloc(tj_slab_t *slab)
{
    return malloc(slab->size);
}

void tj_slab_free(tj_slab_t *slab, void *obj)
{
    (void)slab;
    free(obj);
}

void tj_slab_release(tj_slab_t *slab)
{
    slab->free = slab->pages = NULL;
}
#else

#define PAGE_BYTES ((size_t)64 << 10)
#define HEADER     ((size_t)16) /* the page link, padded so that objects stay 16-aligned */

void *tj_slab_alloc(tj_slab_t *slab)
{
    void *obj;

    if (slab->free == NULL) {
        char *page =
            mmap(NULL, PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (page == MAP_FAILED || slab->size > PAGE_BYTES - HEADER) {
            if (page != MAP_FAILED)
                munmap(page, PAGE_BYTES);
            return NULL;
        }
        *(void **)page = slab->pages;
        slab->pages = page;
        /* Thread the page's objects onto the free list, the first one on top. */
        for (size_t at = HEADER + (PAGE_BYTES - HEADER) / slab->size * slab->size;
             at >= HEADER + slab->size;) {
            at -= slab->size;
            *(void **)(page + at) = slab->free;
            slab->free = page + at;
        }
    }
    obj = slab->free;
    slab->free = *(void **)obj;
    return obj;
}

void tj_slab_free(tj_slab_t *slab, void *obj)
{
    if (obj == NULL)
        return;
    *(void **)obj = slab->free;
    slab->free = obj;
}

void tj_slab_release(tj_slab_t *slab)
{
    while (slab->pages != NULL) {
        void *page = slab->pages;
        slab->pages = *(void **)page;
        munmap(page, PAGE_BYTES);
    }
    slab->free = NULL;
}
#endif
