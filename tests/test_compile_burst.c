/* SPDX-License-Identifier: BSD-3-Clause */
/* A start-up's burst of commits: N distinct strided types (vectors of floats, each of its own
 * shape) committed one after another by a process that uses CUDA, with background compiles, then
 * MPI_Finalize. Every kernel the commits ask for is compiled in this run (the background compiler
 * queues them all and MPI_Finalize drains the queue within TYPEJIT_JIT_DRAIN): the test prints
 * the counters it reads before MPI_Finalize, and the run's stats line (TYPEJIT_STATS=1) says what
 * the whole run compiled; a second run on the same cache compiles nothing (the ctest pair checks
 * its stats line).
 *
 *   test_compile_burst [--types N]
 *
 * Needs a CUDA driver with a device (the test driver will do); exit 77 without one. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "counters.h"
#include "cudrv.h"
#include "options.h"

int main(int argc, char **argv)
{
    long types = 1000;
    MPI_Datatype *t;

    MPI_Init(&argc, &argv);
    options_read(argc, argv, (const opt_t[]){{"--types", OPT_LONG, &types}, {NULL}});
    /* A process that uses CUDA: its context current before its first commit. */
    if (!cudrv_open()) {
        MPI_Finalize();
        return 77;
    }
    REQUIRE(types > 0 && (t = calloc((size_t)types, sizeof(*t))) != NULL);
    /* Shapes apart from one another: runs of 1 to 8 floats, strides from 9 floats, counts 2 on. */
    for (long i = 0; i < types; i++) {
        int run = (int)(i % 8) + 1, stride = 9 + (int)(i / 8 % 64), count = 2 + (int)(i / 512);
        REQUIRE(MPI_Type_vector(count, run, stride, MPI_FLOAT, &t[i]) == MPI_SUCCESS);
        REQUIRE(MPI_Type_commit(&t[i]) == MPI_SUCCESS);
    }
    printf("committed %ld types; kernels compiled so far: %ld\n", types,
           tj_counter("jit_compiles"));
    for (long i = 0; i < types; i++)
        MPI_Type_free(&t[i]);
    free(t);
    MPI_Finalize();
    return check_failures == 0 ? 0 : 1;
}
