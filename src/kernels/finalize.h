/* SPDX-License-Identifier: BSD-3-Clause */
/* The end of the kernel layer's state (MPI_Finalize). */
#ifndef TJ_KERNELS_FINALIZE_H
#define TJ_KERNELS_FINALIZE_H

/* Stop the background compiles, free the part tables and drop every kernel and module, in the
 * order they depend on; before the driver layer's finalize (tj_gpu_finalize), whose contexts
 * hold the part tables and modules. */
void tj_kernels_finalize(void);

#endif /* TJ_KERNELS_FINALIZE_H */
