/* SPDX-License-Identifier: BSD-3-Clause */
/* Preloaded in front of the MPI library by test_tool.sh: a command that must not start MPI (the
 * cache maintenance of `typejit`) fails loudly if it does. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

static int refuse(void)
{
    static const char msg[] = "nompi_shim: MPI was initialised\n";
    ssize_t rc = write(STDERR_FILENO, msg, sizeof(msg) - 1);
    (void)rc;
    _exit(3);
}

int PMPI_Init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return refuse();
}

int MPI_Init(int *argc, char ***argv)
{
    return PMPI_Init(argc, argv);
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)argc;
    (void)argv;
    (void)required;
    (void)provided;
    return refuse();
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    return PMPI_Init_thread(argc, argv, required, provided);
}
