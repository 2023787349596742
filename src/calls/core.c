/* SPDX-License-Identifier: BSD-3-Clause */
/* The core's life: set up after MPI_Init, torn down before MPI_Finalize (see core.h). The order
 * of the teardown is the reverse of the layers: what holds device memory (requests, staging,
 * part tables, kernels) goes before the contexts it lives in, and nothing is released while a
 * background compile could still use it. */
#include "calls/core.h"

#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

#include "gpu/cuda.h"
#include "kernels/compiler.h"
#include "kernels/finalize.h"
#include "move/finalize.h"
#include "move/model.h"
#include "calls/p2p.h"
#include "calls/request.h"
#include "calls/rma.h"
#include "calls/send_queue.h"
#include "calls/window.h"
#include "type/finalize.h"
#include "type/table.h"
#include "util/config.h"
#include "util/log.h"
#include "util/stats.h"

int tj_core_init(void)
{
    int rank = -1, level = MPI_THREAD_MULTIPLE;

    /* The thread level MPI granted, not the one asked for. */
    if (PMPI_Query_thread(&level) != MPI_SUCCESS)
        level = MPI_THREAD_MULTIPLE;
    tj_table_set_threaded(level == MPI_THREAD_MULTIPLE);
    if (PMPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS)
        rank = -1;
    if (rank >= 0)
        tj_log_set_rank(rank);
    /* Only now, in an MPI process whose rank is known, are bad settings worth a word. */
    tj_config_flush_warnings(rank);
    tj_model_check_settings();
    tj_send_queue_init();
    return rank;
}

/* The counters line of TYPEJIT_STATS=1, in one write so that the ranks' lines do not mix. */
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

void tj_core_finalize(void)
{
    /* Sends still queued go to the system MPI first, as they would have without typejit: the
     * peers may be waiting for them. */
    tj_send_queue_finalize();
    /* First, so that the stats line counts the compiles that finish now. */
    tj_compiler_drain(tj_config()->jit_drain_s);
    if (tj_config()->stats)
        print_stats();
    /* Requests the application freed while active are completed first: their staging and
     * kernels are released below. */
    tj_request_progress(true);
    tj_rma_finalize();
    tj_window_finalize();
    tj_p2p_finalize();
    tj_move_finalize();
    tj_type_finalize();
    /* Device memory before the contexts it lives in. */
    tj_kernels_finalize();
    tj_gpu_finalize();
}
