/* SPDX-License-Identifier: BSD-3-Clause */
/* The datatype constructor wrappers: what each new type was made of, learnt at creation. */
#ifndef TJ_INTERPOSE_CONSTRUCTORS_H
#define TJ_INTERPOSE_CONSTRUCTORS_H

#include <mpi.h>

#include "type/translate.h"

/* Record what the constructor call @p args made of @p type, just created. */
void tj_interpose_learn(MPI_Datatype type, const tj_type_args_t *args);

#endif /* TJ_INTERPOSE_CONSTRUCTORS_H */
