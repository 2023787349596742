/* MPI_Init, MPI_Init_thread and MPI_Finalize: set up and tear down typejit around the system
 * MPI. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "interpose/init.h"
#include "interpose/pairing.h"
#include "interpose/wrappers.h"
#include "kernels/compiler.h"
#include "send/devpack.h"
#include "send/model.h"
#include "send/p2p.h"
#include "send/request.h"
#include "send/rma.h"
#include "typejit.h"
#include "util/log.h"
#include "util/stats.h"

/* initial-exec: the library is loaded at startup (LD_PRELOAD or linked), and each wrapper reads
 * this; the default model calls __tls_get_addr on every access. */
_Thread_local int tj_in_wrapper __attribute__((tls_model("initial-exec")));
static atomic_bool initialised;

bool tj_interpose_active(void)
{
    /* `initialised` is set only when TYPEJIT_DISABLE is not. */
    return atomic_load_explicit(&initialised, memory_order_acquire) && !tj_in_wrapper;
}

/* The constructor only reads the environment (STYLE: never MPI or CUDA here), so that a bad
 * TYPEJIT_* value is reported once, early. */
__attribute__((constructor)) static void typejit_load(void)
{
    (void)tj_config();
}

void tj_interpose_after_init(void)
{
    int rank = -1, level = MPI_THREAD_MULTIPLE;
    if (tj_config()->disable)
        return;
    /* The thread level MPI granted, not the one asked for. */
    if (PMPI_Query_thread(&level) != MPI_SUCCESS)
        level = MPI_THREAD_MULTIPLE;
    tj_table_set_threaded(level == MPI_THREAD_MULTIPLE);
    if (PMPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS)
        tj_log_set_rank(rank);
    /* Only now, in an MPI process whose rank is known, are bad settings worth a word. */
    tj_config_flush_warnings(rank);
    tj_model_check_settings();
    tj_log_info("typejit %s active in front of %s", tj_version(), tj_pairing_mpi_version());
    tj_log_debug("host buffers packed by %s",
                 tj_config()->host == TJ_HOST_ENGINE ? "the engine" : "the system MPI");
    atomic_store_explicit(&initialised, true, memory_order_release);
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

static void print_stats(void)
{
    char counters[2048], line[2200];
    int rank = -1, n;

    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    tj_stats_format(counters, sizeof(counters));
    n = snprintf(line, sizeof(line), "typejit[%d]: stats %s\n", rank, counters);
    if (n > 0) {
        ssize_t rc =
            write(STDERR_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
        (void)rc;
    }
}

TJ_EXPORT int MPI_Finalize(void)
{
    if (atomic_exchange(&initialised, false)) {
        /* First, so that the stats line counts the compiles that finish now. */
        tj_compiler_drain(tj_config()->jit_drain_s);
        if (tj_config()->stats)
            print_stats();
        /* Requests the application freed while active are completed first: their staging and
         * kernels are released below. */
        tj_request_progress(true);
        tj_rma_finalize();
        tj_p2p_finalize();
        tj_model_finalize();
        tj_table_clear();
        tj_devpack_finalize();
    }
    return PMPI_Finalize();
}
