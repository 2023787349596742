/* SPDX-License-Identifier: BSD-3-Clause */
/* Typed buffers for the oracle tests: a mapping around an object's footprint, poisoned and
 * compared whole when small, sparse (MAP_NORESERVE, untouched pages read as zero) when strides
 * beyond 2^31 make it huge. */
#ifndef TJ_TESTS_REGION_H
#define TJ_TESTS_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POISON 0xA5
#define DENSE_LIMIT                                                                                \
    ((int64_t)16 << 20) /* footprints up to this are poisoned and compared whole                   \
                         */

typedef struct {
    char *map;
    size_t map_len;
    char *origin; /* the buffer argument: footprint byte `lo` is origin + lo */
    int64_t lo, hi;
    bool dense;
} region_t;

/* Map the footprint [lo, hi) with guard pages on both sides. */
void region_open(region_t *r, int64_t lo, int64_t hi);
void region_close(region_t *r);

/* True when both regions hold the same bytes; sparse regions compare the pages either touched
 * (mincore). The first differing byte, relative to origin, goes to @p first_diff. */
bool region_equal(const region_t *a, const region_t *b, int64_t *first_diff);

#endif /* TJ_TESTS_REGION_H */
