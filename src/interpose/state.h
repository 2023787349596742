/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI wrappers' mutable state in one structure, a sub-structure per module. */
#ifndef TJ_INTERPOSE_STATE_H
#define TJ_INTERPOSE_STATE_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "util/common.h"

/* Functions whose refusal on device memory is reported (device.c); beyond this many, each
 * refusal is. */
#define TJ_INTERPOSE_REPORTED_MAX 64
/* The Fortran sentinels (fortran.c): MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE and
 * MPI_STATUSES_IGNORE. */
#define TJ_FORTRAN_NSENTINELS 4

typedef struct {
    /* Nonzero when typejit passed every call through (passthrough.c): every exported entry point
     * then goes straight to the system MPI. Its trampolines (exports.c) read it at the
     * structure's own address, so it comes first. */
    struct {
        unsigned char all;
    } passthrough;
    /* Set once typejit is active (init.c): MPI initialised through it, TYPEJIT_DISABLE not set. */
    struct {
        atomic_bool initialised;
    } init;
    /* Whether typejit takes part, decided once before the system MPI starts, and the first line
     * of the system MPI's version (pairing.c). */
    struct {
        pthread_once_t once;
        bool paired;
        char version_line[256];
    } pairing;
    /* The functions already reported as refused (device.c): a refused call that a program
     * repeats says so once. */
    struct {
        _Alignas(64) pthread_mutex_t reported_lock;
        const char *reported[TJ_INTERPOSE_REPORTED_MAX];
        int nreported;
    } device;
#if !defined(MPI_ABI_VERSION) && defined(OPEN_MPI)
    /* The addresses of the Fortran sentinels under each of their four manglings (fortran.c),
     * looked up at the first Fortran call. */
    struct {
        void *sentinels[TJ_FORTRAN_NSENTINELS][4];
        pthread_once_t sentinels_once;
    } fortran;
#endif
} tj_interpose_state_t;

extern TJ_LOCAL tj_interpose_state_t tj_interpose_state;

/* The layer's state for each thread. Initial-exec: the library is loaded at startup (LD_PRELOAD
 * or linked), and each wrapper reads it; the default model calls __tls_get_addr on every
 * access. */
typedef struct {
    struct {
        /* Set while a wrapper runs, so that an MPI call the system MPI makes from inside one of
         * typejit's PMPI calls goes straight through. */
        int in_wrapper;
    } init;
} tj_interpose_thread_t;

extern _Thread_local TJ_LOCAL tj_interpose_thread_t tj_interpose_thread
    __attribute__((tls_model("initial-exec")));

#endif /* TJ_INTERPOSE_STATE_H */
