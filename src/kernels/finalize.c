/* SPDX-License-Identifier: BSD-3-Clause */
/* The end of the kernel layer's state (MPI_Finalize): its modules' finalizes in the order they
 * depend on. */
#include "kernels/finalize.h"

#include "kernels/compiler.h"
#include "kernels/lookup.h"
#include "kernels/parttable.h"

void tj_kernels_finalize(void)
{
    /* No worker may be inside the kernel lookup while it is torn down. */
    tj_compiler_finalize();
    /* Device memory before the contexts it lives in. */
    tj_parttable_finalize();
    tj_lookup_finalize();
}
