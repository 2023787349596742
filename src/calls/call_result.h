/* SPDX-License-Identifier: BSD-3-Clause */
/* What the calls layer did with an MPI call it was handed: the one answer of every function that
 * may take a call (point-to-point begins, collectives, reductions, staged calls, external32,
 * MPI_Pack and MPI_Unpack), and what the wrapper does next. */
#ifndef TJ_CALLS_CALL_RESULT_H
#define TJ_CALLS_CALL_RESULT_H

typedef enum {
    TJ_CALL_PASS,   /* not typejit's: the wrapper passes the call to the system MPI unchanged */
    TJ_CALL_TAKEN,  /* typejit's: done, *rc the call's result, an error already through the
                       error handler; of a staged begin: staged, the wrapper makes the system
                       MPI's call on the staged buffers and finishes */
    TJ_CALL_FAILED, /* typejit's, but it could not do it: *rc the MPI error class the wrapper
                       raises (the first line said why) */
} tj_call_result_t;

#endif /* TJ_CALLS_CALL_RESULT_H */
