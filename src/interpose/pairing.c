/* SPDX-License-Identifier: BSD-3-Clause */
/* Which MPI typejit runs in front of, and whether it was built for it.
 *
 * A libtypejit.so compiled against one MPI family and preloaded in front of a program of
 * another would hand that MPI handles it cannot read (Open MPI's are pointers, MPICH's ints, the
 * standard ABI's its own), so typejit looks before the first MPI call that takes one: at
 * MPI_Init, with the two calls the MPI standard allows before initialisation
 * (MPI_Get_library_version, MPI_Abi_get_version), asked of the library that the process's
 * PMPI_Init comes from. On a wrong pairing it says so in one line and passes every call through:
 * every exported entry point then jumps straight to the system MPI with its arguments untouched. */
#include "interpose/pairing.h"

#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/passthrough.h"
#include "interpose/state.h"
#include "util/config.h"
#include "util/log.h"

/* This module's part of the layer's state. */
static __typeof__(tj_interpose_state.pairing) *const pairing_state = &tj_interpose_state.pairing;

#if defined(MPI_ABI_VERSION)
#define BUILT_FOR TJ_MPI_STANDARD_ABI
#elif defined(OPEN_MPI)
#define BUILT_FOR TJ_MPI_OPEN_MPI
#elif defined(MPICH) || defined(MPICH_VERSION) || defined(I_MPI_VERSION)
#define BUILT_FOR TJ_MPI_MPICH
#else
#error "typejit knows the MPICH family, Open MPI and the MPI 5.0 standard ABI; this mpi.h is none"
#endif

tj_mpi_family_t tj_pairing_built_for(void)
{
    return BUILT_FOR;
}

const char *tj_pairing_family_name(tj_mpi_family_t family)
{
    switch (family) {
    case TJ_MPI_OPEN_MPI:
        return "Open MPI";
    case TJ_MPI_MPICH:
        return "the MPICH family";
    case TJ_MPI_STANDARD_ABI:
        return "the MPI 5.0 standard ABI";
    case TJ_MPI_UNKNOWN:
        break;
    }
    return "an MPI of no family typejit knows";
}

const char *tj_pairing_mpi_version(void)
{
    return pairing_state->version_line;
}

tj_mpi_family_t tj_pairing_classify(const char *version, int abi_major)
{
    /* The standard ABI first: MPICH and Intel MPI build it from the same sources as their own
     * ABI and report the same version text, and answer MPI_Abi_get_version with -1 there. */
    if (abi_major >= 1)
        return TJ_MPI_STANDARD_ABI;
    if (strstr(version, "Open MPI") != NULL)
        return TJ_MPI_OPEN_MPI;
    if (strstr(version, "MPICH") != NULL || strstr(version, "Intel(R) MPI") != NULL ||
        strstr(version, "MVAPICH") != NULL)
        return TJ_MPI_MPICH;
    return TJ_MPI_UNKNOWN;
}

/* The library the process's PMPI functions come from: the one whose PMPI_Init this library's
 * own calls reach (the program's MPI, which the dynamic linker searches before typejit's). */
static void *system_mpi(void)
{
    Dl_info where;
    if (dladdr((void *)PMPI_Init, &where) == 0 || where.dli_fname == NULL)
        return NULL;
    return dlopen(where.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
}

/* Whether this process is the one that speaks for the job: rank 0 of the launcher, or a
 * process no launcher numbered. Before MPI_Init only the launcher's variables tell. */
static bool first_of_job(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID", "PALS_RANKID"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v != NULL && *v != '\0')
            return strcmp(v, "0") == 0;
    }
    return true;
}

static void decide(void)
{
    char version[8192 + 1] = "";
    int len = 0, major = -1, minor = -1;
    void *mpi;
    tj_mpi_family_t found;

    if (tj_config()->disable) {
        pairing_state->paired = false;
        return;
    }
    mpi = system_mpi();
    if (mpi != NULL) {
        int (*get_version)(char *, int *) =
            (int (*)(char *, int *))dlsym(mpi, "PMPI_Get_library_version");
        int (*abi_version)(int *, int *) =
            (int (*)(int *, int *))dlsym(mpi, "PMPI_Abi_get_version");
        if (get_version != NULL && get_version(version, &len) == MPI_SUCCESS && len >= 0 &&
            len < (int)sizeof(version))
            version[len] = '\0';
        if (abi_version == NULL || abi_version(&major, &minor) != MPI_SUCCESS)
            major = -1;
        dlclose(mpi);
    }
    /* The first line, its runs of blanks made one space ("MPICH Version:\t4.0.2"). */
    size_t n = 0;
    for (const char *c = version;
         *c != '\0' && *c != '\n' && n < sizeof(pairing_state->version_line) - 1; c++)
        if ((*c != ' ' && *c != '\t') || (n > 0 && pairing_state->version_line[n - 1] != ' '))
            pairing_state->version_line[n++] = *c == '\t' ? ' ' : *c;
    while (n > 0 &&
           (pairing_state->version_line[n - 1] == ' ' || pairing_state->version_line[n - 1] == ','))
        n--;
    pairing_state->version_line[n] = '\0';

    found = tj_pairing_classify(version, major);
    pairing_state->paired = found == BUILT_FOR;
    if (!pairing_state->paired && first_of_job())
        tj_log_warn(
            "built for %s, running in front of %s (%s): typejit passes every call to "
            "the system MPI and the program runs without it; build typejit against this MPI",
            tj_pairing_family_name(BUILT_FOR),
            pairing_state->version_line[0] != '\0' ? pairing_state->version_line
                                                   : "no MPI_Get_library_version",
            tj_pairing_family_name(found));
}

bool tj_pairing_check(void)
{
    pthread_once(&pairing_state->once, decide);
    if (!pairing_state->paired)
        tj_passthrough_start();
    return pairing_state->paired;
}
