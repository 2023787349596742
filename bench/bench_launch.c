/* SPDX-License-Identifier: BSD-3-Clause */
/* A whole MPI program that commits a strided datatype and moves it once between ranks in host
 * memory: what bench/run-launch.sh launches again and again, with and without typejit, to see
 * what typejit costs a program it cannot speed up (no device buffer). Each rank prints the CPU
 * time its process has used, from its start (the loading of the libraries included) to after
 * MPI_Finalize: `cpu_us=N`. Exits 1 if the exchange delivered other bytes. */
#include <mpi.h>
#include <stdio.h>
#include <sys/resource.h>

int main(int argc, char **argv)
{
    double out[64 * 8], in[64 * 8];
    MPI_Datatype column;
    int rank, size, bad = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < 64 * 8; i++) {
        out[i] = rank * 1000.0 + i;
        in[i] = -1.0;
    }
    /* A column of a 64 x 8 array of doubles. */
    MPI_Type_vector(64, 1, 8, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
    MPI_Sendrecv(out, 1, column, (rank + 1) % size, 0, in, 1, column, (rank + size - 1) % size, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 64; i++)
        bad |= in[8 * i] != ((rank + size - 1) % size) * 1000.0 + 8 * i;
    MPI_Type_free(&column);
    MPI_Finalize();
    if (bad)
        fprintf(stderr, "bench_launch: rank %d received other bytes\n", rank);
    {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        printf("cpu_us=%lld\n", (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
                                    ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    }
    return bad;
}
