/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI the tests run on, for the few checks whose answer depends on it: where an MPI's own
 * bug or latitude makes its answer differ from the one a check expects (docs/mpis.md lists
 * each, with the MPI's behaviour shown without typejit). */
#ifndef TJ_TESTS_SYSMPI_H
#define TJ_TESTS_SYSMPI_H

#include <mpi.h>
#include <stdbool.h>
#include <string.h>

/* MPI_Get_library_version's text (callable before MPI_Init). */
static inline const char *sysmpi_version(void)
{
    static char text[8192 + 1];
    int len = 0;
    if (text[0] == '\0' && MPI_Get_library_version(text, &len) == MPI_SUCCESS && len >= 0 &&
        len < (int)sizeof(text))
        text[len] = '\0';
    return text;
}

static inline bool sysmpi_is_open_mpi(void)
{
    return strstr(sysmpi_version(), "Open MPI") != NULL;
}

/* MPICH, Intel MPI and the other members of the MPICH family, whatever ABI they are used by. */
static inline bool sysmpi_is_mpich_family(void)
{
    return !sysmpi_is_open_mpi();
}

/* The version text contains @p s (e.g. "MPICH Version: 4.0" after blanks are made one space). */
static inline bool sysmpi_version_has(const char *s)
{
    char flat[256];
    size_t n = 0;
    for (const char *c = sysmpi_version(); *c != '\0' && n < sizeof(flat) - 1; c++)
        if ((*c != ' ' && *c != '\t') || (n > 0 && flat[n - 1] != ' '))
            flat[n++] = *c == '\t' ? ' ' : *c;
    flat[n] = '\0';
    return strstr(flat, s) != NULL;
}

#endif /* TJ_TESTS_SYSMPI_H */
