/* SPDX-License-Identifier: BSD-3-Clause */
/* Random nested MPI datatypes for the oracle tests, each with its description in the type
 * description syntax of `typejit inspect`, so a failure can be reproduced by hand. */
#ifndef TJ_TESTS_RANDTYPE_H
#define TJ_TESTS_RANDTYPE_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t state;
} rt_rng_t;

void rt_seed(rt_rng_t *rng, uint64_t seed);
uint64_t rt_next(rt_rng_t *rng);
/* Uniform integer in [lo, hi]. */
int64_t rt_range(rt_rng_t *rng, int64_t lo, int64_t hi);

typedef struct {
    int max_depth;     /* constructor levels above the named leaf (the issue asks up to 4) */
    int64_t max_size;  /* largest packed size of one object, bytes */
    int64_t max_span;  /* largest true extent of one object, bytes (huge strides need more) */
    int huge_percent;  /* chance that a level uses a stride or displacement beyond 2^31 */
    int large_percent; /* chance that a level is made by its MPI-4 `_c` constructor (0 where the
                          MPI has none) */
} rt_options_t;

/* A committed random datatype; its description goes to @p desc. Returns MPI_DATATYPE_NULL if
 * the type drawn exceeded the limits (the caller draws again). */
MPI_Datatype rt_random_type(rt_rng_t *rng, const rt_options_t *opt, char *desc, size_t len);

/* A committed random datatype of one of @p families layouts, for volume tests that need many
 * types but a bounded number of kernels: family f's layout is the type rt_random_type draws
 * from a generator seeded with (@p seed, f), wrapped in 0 to 3 random constructions that change
 * neither its typemap nor its extent (dup, contiguous of one, a one-member struct at 0, vector
 * and hvector of one, indexed_block and hindexed of one at 0, resized to its own bounds). Every
 * construction of a family must give the same canonical block, and so the same kernels. */
MPI_Datatype rt_family_type(rt_rng_t *rng, const rt_options_t *opt, int families, uint64_t seed,
                            char *desc, size_t len);

/* rt_random_type drawn again until a type fits the limits. */
MPI_Datatype rt_draw_type(rt_rng_t *rng, const rt_options_t *opt, char *desc, size_t len);

/* Whether @p opt asks for large-count constructors that this MPI lacks (MPI 3): the test then
 * skips, and this says so. */
bool rt_large_unavailable(const rt_options_t *opt);

#endif /* TJ_TESTS_RANDTYPE_H */
