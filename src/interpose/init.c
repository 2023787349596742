/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Init, MPI_Init_thread and MPI_Finalize: set up and tear down typejit around the system
 * MPI. */
#include <stdatomic.h>

#include "interpose/init.h"
#include "interpose/pairing.h"
#include "interpose/wrappers.h"
#include "calls/core.h"
#include "typejit.h"
#include "util/log.h"

/* The constructor only reads the environment (STYLE: never MPI or CUDA here), so that a bad
 * TYPEJIT_* value is reported once, early. */
__attribute__((constructor)) static void typejit_load(void)
{
    (void)tj_config();
}

void tj_interpose_after_init(void)
{
    if (tj_config()->disable)
        return;
    tj_core_init();
    tj_log_info("typejit %s active in front of %s", tj_version(), tj_pairing_mpi_version());
    tj_log_debug("host buffers packed by %s",
                 tj_config()->host == TJ_HOST_ENGINE ? "the engine" : "the system MPI");
    atomic_store_explicit(&tj_interpose_state.init.initialised, true, memory_order_release);
}

/* Before the system MPI starts, typejit decides whether it takes part (pairing.c): when it
 * does not, these return the system MPI's answer and nothing else. */
TJ_EXPORT int MPI_Init(int *argc, char ***argv)
{
    if (!tj_pairing_check())
        return PMPI_Init(argc, argv);
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        tj_interpose_after_init();
    return rc;
}

TJ_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (!tj_pairing_check())
        return PMPI_Init_thread(argc, argv, required, provided);
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        tj_interpose_after_init();
    return rc;
}

TJ_EXPORT int MPI_Finalize(void)
{
    if (atomic_exchange(&tj_interpose_state.init.initialised, false))
        tj_core_finalize();
    return PMPI_Finalize();
}
