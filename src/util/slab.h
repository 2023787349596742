/* SPDX-License-Identifier: BSD-3-Clause */
/* A pool of fixed-size objects carved from pages of their own, outside the malloc heap. */
#ifndef TJ_UTIL_SLAB_H
#define TJ_UTIL_SLAB_H

#include <stddef.h>

/* Objects are handed out from 64 KiB pages mapped for the pool and come back to the pool's free
 * list, never to malloc: a program that creates and frees thousands of datatypes in a batch
 * then costs no malloc call per type, and typejit's records do not sit between the system MPI's
 * own allocations in the heap (kept there, they fragmented it and slowed the MPI's malloc).
 * The pages are kept until tj_slab_release, so a pool holds as much as it ever held at once.
 * Not thread-safe: the owner serialises its calls. */
typedef struct {
    size_t size; /* of one object, a multiple of 16 */
    void *free;  /* free objects, linked through their first word */
    void *pages; /* every page, linked through its first word */
} tj_slab_t;

#define TJ_SLAB_INIT(_size)                                                                        \
    {                                                                                              \
        .size = ((_size) + 15) & ~(size_t)15                                                       \
    }

/* An object of the pool's size (its contents undefined), or NULL when out of memory. */
void *tj_slab_alloc(tj_slab_t *slab);

/* Return @p obj, from tj_slab_alloc on the same pool, to the pool. NULL is ignored. */
void tj_slab_free(tj_slab_t *slab, void *obj);

/* Unmap every page: every object of the pool is gone. */
void tj_slab_release(tj_slab_t *slab);

#endif /* TJ_UTIL_SLAB_H */
