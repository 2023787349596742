/* SPDX-License-Identifier: BSD-3-Clause */
/* The end of the layer's state (MPI_Finalize): the method model, then the staging buffers. */
#include "move/finalize.h"

#include "move/model.h"
#include "move/staging.h"

void tj_move_finalize(void)
{
    tj_model_finalize();
    tj_staging_finalize();
}
