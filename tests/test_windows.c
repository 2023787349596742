/* SPDX-License-Identifier: BSD-3-Clause */
/* Windows in device memory on an MPI that is not CUDA-aware (docs/device-calls.md, "Windows in
 * device memory"): each step runs twice, on a window MPI_Win_create made on device (or managed,
 * or page-locked host) memory through typejit's wrappers (MPI_*), and on a window in host memory
 * through the system MPI alone (PMPI_*); at the points where a step's bytes are due, every byte
 * of each process's window allocation (the bytes around the window included) and of its origin
 * buffer is kept, and the two runs must agree. Every synchronisation mode: fence with and
 * without assertions, post/start/complete/wait and a Win_test loop, lock and unlock shared and
 * exclusive with the target's lock of its own window, lock_all with flush, flush_all,
 * flush_local, flush_local_all, request-based operations and Win_sync at the target, a target
 * polling its window with Win_sync while a flag is put, and Win_free after an unsynchronised
 * update; Put, Get, Accumulate, Get_accumulate, Fetch_and_op and Compare_and_swap with derived
 * datatypes on both sides, origin buffers in host and device memory. Then the window's
 * attributes, the bytes each synchronisation moves (counters window_dtoh_bytes and
 * window_htod_bytes), and a window that reaches past its allocation (MPI_ERR_BUFFER).
 *
 *   mpirun -np N test_windows [--cudaaware] [--verbose]      (N >= 2)
 *
 * --cudaaware: the system MPI takes device memory (tests/cudaaware_shim.c): the window must be
 * the MPI's own.
 * Exits 77 without a CUDA device. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "counters.h"
#include "cudrv.h"
#include "devbuf.h"
#include "mpicheck.h"

static int rank, nranks, next, prev;
static long failures, checked;
static bool verbose, cudaaware;

#define FAIL(...) mpicheck_fail(&failures, 30, rank, __VA_ARGS__)

/* Each process's window: WSIZE bytes WOFF bytes into an allocation of ALLOC (neither a multiple
 * of typejit's block of comparison), in doubles (the displacement unit). The regions each kind of
 * operation targets, in doubles. (The base is 16-byte aligned: MPICH 4.0.2 writes a put or an
 * accumulate of a derived datatype 8 bytes early into a window whose base is not.) */
#define ALLOC 4096
#define WOFF  48
#define WSIZE 4000
#define NDBL  (WSIZE / 8)
enum {
    R_PUT = 0,
    R_GET = 64,
    R_ACC = 128,
    R_GACC = 192,
    R_FOP = 256,
    R_CAS = 260,
    R_FLAG = 264,
    R_STORE = 300
};
/* The origin buffer (doubles): the source of puts and accumulates, the gets' destination, the
 * results of Get_accumulate, Fetch_and_op and Compare_and_swap. */
#define OBYTES 4096
enum {
    O_SRC = 0,
    O_GET = 64,
    O_GACC = 128,
    O_FOP_IN = 192,
    O_FOP_OUT = 193,
    O_CAS_IN = 194,
    O_CAS_CMP = 195,
    O_CAS_OUT = 196,
    O_STORE = 256
};

/* ---- datatypes: pairs of origin and target types of one signature (doubles) ------------------ */

static MPI_Datatype t_vec, t_idx, t_contig;
typedef struct {
    MPI_Datatype *otype, *ttype;
    int ocount, tcount;
    const char *name;
} pair_t;
static const pair_t pairs[] = {
    {&t_vec, &t_contig, 2, 2, "vector -> contiguous"},
    {&t_contig, &t_vec, 2, 2, "contiguous -> vector"},
    {&t_idx, &t_idx, 2, 2, "indexed -> indexed"},
};
#define NPAIRS ((int)(sizeof(pairs) / sizeof(pairs[0])))

static void make_types(void)
{
    int bl[3] = {2, 1, 3}, dl[3] = {0, 3, 7};
    MPI_Type_vector(8, 1, 3, MPI_DOUBLE, &t_vec);
    MPI_Type_contiguous(8, MPI_DOUBLE, &t_contig);
    MPI_Type_indexed(3, bl, dl, MPI_DOUBLE, &t_idx);
    MPI_Type_commit(&t_vec);
    MPI_Type_commit(&t_contig);
    MPI_Type_commit(&t_idx);
}

/* ---- the two runs -----------------------------------------------------------------------------
 */

#define MAXSNAP 16
typedef struct {
    bool dev;    /* typejit's wrappers, the window in `kind`; else PMPI_* on host memory */
    kind_t kind; /* the window allocation's memory */
    kind_t okind;
    buf_t alloc, org;
    char *base; /* the window's first byte */
    MPI_Win win;
    int nsnap;
    unsigned char snap[MAXSNAP][ALLOC + OBYTES];
    char label[MAXSNAP][64];
} run_t;

/* The call of MPI function _fn in run _r: typejit's wrapper or the system MPI's. */
#define CALL(_r, _fn) ((_r)->dev ? MPI_##_fn : PMPI_##_fn)

static void mem_put(kind_t kind, char *at, const void *src, size_t len)
{
    if (on_device(kind))
        CUDRV(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)at, src, len));
    else
        memcpy(at, src, len);
}

static void mem_get(kind_t kind, const char *at, void *dst, size_t len)
{
    if (on_device(kind))
        CUDRV(cuMemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)at, len));
    else
        memcpy(dst, at, len);
}

static double value(int salt, int i, int who)
{
    return (double)((i * 7 + salt * 13 + who * 5) % 97);
}

/* Local stores: doubles [from, to) of this process's window. The Compare_and_swap target holds
 * a value its origin compares with, so that the swap happens. */
static void store_window(run_t *r, int salt, int from, int to)
{
    double v[NDBL];
    for (int i = from; i < to; i++)
        v[i] = value(salt, i, rank);
    if (from <= R_CAS && R_CAS < to) {
        int64_t c = 1000 + salt;
        memcpy(&v[R_CAS], &c, 8);
    }
    if (from <= R_FLAG && R_FLAG < to)
        v[R_FLAG] = 0;
    mem_put(r->kind, r->base + 8 * from, &v[from], (size_t)(to - from) * 8);
}

static void fill_origin(run_t *r, int salt)
{
    double v[OBYTES / 8];
    int64_t in = 3, cmp = 1000 + salt, out = -1;
    for (int i = 0; i < OBYTES / 8; i++)
        v[i] = value(salt + 50, i, rank) - 1000;
    memcpy(&v[O_CAS_IN], &in, 8);
    memcpy(&v[O_CAS_CMP], &cmp, 8);
    memcpy(&v[O_CAS_OUT], &out, 8);
    mem_put(r->okind, r->org.ptr, v, OBYTES);
}

/* Keep the window allocation and the origin buffer (their bytes are due now). */
static void snap(run_t *r, const char *what)
{
    REQUIRE(r->nsnap < MAXSNAP);
    mem_get(r->kind, r->alloc.ptr, r->snap[r->nsnap], ALLOC);
    mem_get(r->okind, r->org.ptr, r->snap[r->nsnap] + ALLOC, OBYTES);
    snprintf(r->label[r->nsnap], sizeof(r->label[0]), "%s", what);
    r->nsnap++;
}

/* Keep the origin buffer only (the window's own bytes are not due: other processes may be
 * updating it); the window part of the snapshot is zero in both runs. */
static void snap_origin(run_t *r, const char *what)
{
    REQUIRE(r->nsnap < MAXSNAP);
    memset(r->snap[r->nsnap], 0, ALLOC);
    mem_get(r->okind, r->org.ptr, r->snap[r->nsnap] + ALLOC, OBYTES);
    snprintf(r->label[r->nsnap], sizeof(r->label[0]), "%s", what);
    r->nsnap++;
}

static void compare(run_t *d, run_t *h, const char *step)
{
    checked++;
    if (d->nsnap != h->nsnap) {
        FAIL("%s: %d checkpoints, the system MPI's run %d", step, d->nsnap, h->nsnap);
        return;
    }
    for (int s = 0; s < d->nsnap; s++)
        for (int i = 0; i < ALLOC + OBYTES; i++)
            if (d->snap[s][i] != h->snap[s][i]) {
                if (i < ALLOC)
                    FAIL("%s, %s: byte %d of the window allocation is %d, system MPI %d", step,
                         d->label[s], i, d->snap[s][i], h->snap[s][i]);
                else
                    FAIL("%s, %s: byte %d of the origin buffer is %d, system MPI %d", step,
                         d->label[s], i - ALLOC, d->snap[s][i], h->snap[s][i]);
                break;
            }
    d->nsnap = h->nsnap = 0;
}

static void check_rc(const char *what, int rc)
{
    if (rc != MPI_SUCCESS)
        FAIL("%s returned %d", what, rc);
}

/* ---- operations ---------------------------------------------------------------------------- */

enum { OP_PUT = 1, OP_GET = 2, OP_ACC = 4, OP_GACC = 8, OP_ATOMIC = 16, OP_ALL = 31 };

/* The operations @p ops of one epoch towards @p target with the type pair @p p; with @p req the
 * request-based forms, each completed by MPI_Wait. */
static void issue(run_t *r, int target, int p, int ops, bool req)
{
    const pair_t *pr = &pairs[p];
    MPI_Datatype ot = *pr->otype, tt = *pr->ttype;
    int oc = pr->ocount, tc = pr->tcount;
    double *o = (double *)(void *)r->org.ptr;
    MPI_Request q;

    if (ops & OP_PUT) {
        if (req) {
            check_rc("rput", CALL(r, Rput)(o + O_SRC, oc, ot, target, R_PUT, tc, tt, r->win, &q));
            check_rc("wait", CALL(r, Wait)(&q, MPI_STATUS_IGNORE));
        } else {
            check_rc("put", CALL(r, Put)(o + O_SRC, oc, ot, target, R_PUT, tc, tt, r->win));
        }
    }
    if (ops & OP_GET) {
        if (req) {
            check_rc("rget", CALL(r, Rget)(o + O_GET, oc, ot, target, R_GET, tc, tt, r->win, &q));
            check_rc("wait", CALL(r, Wait)(&q, MPI_STATUS_IGNORE));
        } else {
            check_rc("get", CALL(r, Get)(o + O_GET, oc, ot, target, R_GET, tc, tt, r->win));
        }
    }
    if (ops & OP_ACC) {
        if (req) {
            check_rc("raccumulate", CALL(r, Raccumulate)(o + O_SRC, oc, ot, target, R_ACC, tc, tt,
                                                         MPI_SUM, r->win, &q));
            check_rc("wait", CALL(r, Wait)(&q, MPI_STATUS_IGNORE));
        } else {
            check_rc("accumulate", CALL(r, Accumulate)(o + O_SRC, oc, ot, target, R_ACC, tc, tt,
                                                       MPI_SUM, r->win));
        }
    }
    if (ops & OP_GACC) {
        if (req) {
            check_rc("rget_accumulate",
                     CALL(r, Rget_accumulate)(o + O_SRC, oc, ot, o + O_GACC, oc, ot, target, R_GACC,
                                              tc, tt, MPI_SUM, r->win, &q));
            check_rc("wait", CALL(r, Wait)(&q, MPI_STATUS_IGNORE));
        } else {
            check_rc("get_accumulate",
                     CALL(r, Get_accumulate)(o + O_SRC, oc, ot, o + O_GACC, oc, ot, target, R_GACC,
                                             tc, tt, MPI_SUM, r->win));
        }
    }
    if (ops & OP_ATOMIC) {
        check_rc("fetch_and_op", CALL(r, Fetch_and_op)(o + O_FOP_IN, o + O_FOP_OUT, MPI_DOUBLE,
                                                       target, R_FOP, MPI_SUM, r->win));
        check_rc("compare_and_swap",
                 CALL(r, Compare_and_swap)(o + O_CAS_IN, o + O_CAS_CMP, o + O_CAS_OUT, MPI_INT64_T,
                                           target, R_CAS, r->win));
    }
}

/* ---- the steps ------------------------------------------------------------------------------- */

/* Fence epochs: local stores, operations, the window and the gets' bytes at the closing fence; a
 * second epoch whose gets read stores made between the two (@p variant 1: with the assertions
 * that fit each fence; 2: an epoch that only gets, opened with MPI_MODE_NOPUT). */
static void step_fence(run_t *r, int s, int variant)
{
    int p = s % NPAIRS;
    fill_origin(r, s);
    store_window(r, s, 0, NDBL);
    if (variant == 2) {
        CALL(r, Win_fence)(MPI_MODE_NOPUT, r->win);
        issue(r, next, p, OP_GET, false);
        CALL(r, Win_fence)(MPI_MODE_NOSTORE, r->win);
        snap(r, "gets of an epoch opened with MPI_MODE_NOPUT");
        return;
    }
    CALL(r, Win_fence)(variant ? MPI_MODE_NOPRECEDE : 0, r->win);
    issue(r, next, p, OP_ALL, false);
    CALL(r, Win_fence)(variant ? MPI_MODE_NOSTORE : 0, r->win);
    snap(r, "first epoch");
    store_window(r, s + 7, R_GET, R_GET + 64);
    CALL(r, Win_fence)(0, r->win);
    issue(r, next, (p + 1) % NPAIRS, OP_GET | OP_PUT, false);
    CALL(r, Win_fence)(variant ? MPI_MODE_NOSUCCEED : 0, r->win);
    snap(r, "second epoch");
}

/* Post, start, complete, wait (@p variant 1: Win_test until it is true; 2: the exposure epoch
 * posted with MPI_MODE_NOSTORE after no store, and only gets with MPI_MODE_NOPUT). */
static void step_pscw(run_t *r, int s, int variant, MPI_Group from, MPI_Group to)
{
    int p = s % NPAIRS, flag = 0;
    fill_origin(r, s);
    if (variant != 2)
        store_window(r, s, 0, NDBL);
    CALL(r, Win_post)(from, variant == 2 ? MPI_MODE_NOSTORE | MPI_MODE_NOPUT : 0, r->win);
    CALL(r, Win_start)(to, 0, r->win);
    issue(r, next, p, variant == 2 ? OP_GET : OP_ALL, false);
    CALL(r, Win_complete)(r->win);
    if (variant == 1)
        while (!flag)
            check_rc("win_test", CALL(r, Win_test)(r->win, &flag));
    else
        CALL(r, Win_wait)(r->win);
    snap(r, "after the wait");
}

/* Lock and unlock of the next process (@p exclusive or shared); the target sees the updates in a
 * lock of its own window, stores there, and the origins read those stores in a second lock. */
static void step_lock(run_t *r, int s, bool exclusive)
{
    int p = s % NPAIRS;
    fill_origin(r, s);
    CALL(r, Win_lock)(MPI_LOCK_EXCLUSIVE, rank, 0, r->win);
    store_window(r, s, 0, NDBL);
    CALL(r, Win_unlock)(rank, r->win);
    CALL(r, Barrier)(MPI_COMM_WORLD);
    CALL(r, Win_lock)(exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, next, 0, r->win);
    issue(r, next, p, OP_ALL, false);
    CALL(r, Win_unlock)(next, r->win);
    snap_origin(r, "the origin after its unlock");
    CALL(r, Barrier)(MPI_COMM_WORLD);
    CALL(r, Win_lock)(exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, rank, 0, r->win);
    snap(r, "the target in a lock of its own window");
    store_window(r, s + 3, R_STORE, R_STORE + 64);
    CALL(r, Win_unlock)(rank, r->win);
    CALL(r, Barrier)(MPI_COMM_WORLD);
    CALL(r, Win_lock)(MPI_LOCK_SHARED, next, 0, r->win);
    check_rc("get", CALL(r, Get)((double *)(void *)r->org.ptr + O_STORE, 64, MPI_DOUBLE, next,
                                 R_STORE, 64, MPI_DOUBLE, r->win));
    CALL(r, Win_unlock)(next, r->win);
    snap_origin(r, "the stores the target made in its lock");
    CALL(r, Barrier)(MPI_COMM_WORLD);
}

/* One lock_all epoch: Win_sync at the target makes its stores public and the updates of others
 * private; operations completed by flush (@p variant 0), flush_all (1) or their request (2), and
 * gets of the target's stores completed by flush_local (0, 2) or flush_local_all (1). */
static void step_lock_all(run_t *r, int s, int variant)
{
    int p = s % NPAIRS;
    fill_origin(r, s);
    CALL(r, Win_lock_all)(0, r->win);
    store_window(r, s, 0, NDBL);
    CALL(r, Win_sync)(r->win);
    CALL(r, Barrier)(MPI_COMM_WORLD);
    issue(r, next, p, OP_ALL, variant == 2);
    if (variant == 1)
        CALL(r, Win_flush_all)(r->win);
    else
        CALL(r, Win_flush)(next, r->win);
    snap_origin(r, "the origin after the flush");
    CALL(r, Barrier)(MPI_COMM_WORLD);
    CALL(r, Win_sync)(r->win);
    snap(r, "the target after Win_sync");
    store_window(r, s + 5, R_STORE, R_STORE + 64);
    CALL(r, Win_sync)(r->win);
    CALL(r, Barrier)(MPI_COMM_WORLD);
    check_rc("get", CALL(r, Get)((double *)(void *)r->org.ptr + O_STORE, 64, MPI_DOUBLE, next,
                                 R_STORE, 64, MPI_DOUBLE, r->win));
    if (variant == 1)
        CALL(r, Win_flush_local_all)(r->win);
    else
        CALL(r, Win_flush_local)(next, r->win);
    snap_origin(r, "the target's stores after flush_local");
    CALL(r, Barrier)(MPI_COMM_WORLD);
    CALL(r, Win_unlock_all)(r->win);
}

/* The target polls its window with Win_sync until a flag its origin puts after the data is set,
 * while the data and the flag arrive: nothing Win_sync publishes may overwrite them. */
static void step_poll(run_t *r, int s)
{
    double one = 1, flag = 0;
    int p = s % NPAIRS;
    buf_t f = buf_alloc(r->okind, 8);

    mem_put(r->okind, f.ptr, &one, 8);
    fill_origin(r, s);
    CALL(r, Win_lock_all)(0, r->win);
    store_window(r, s, 0, NDBL);
    CALL(r, Win_sync)(r->win);
    CALL(r, Barrier)(MPI_COMM_WORLD);
    issue(r, next, p, OP_PUT | OP_ACC, false);
    CALL(r, Win_flush)(next, r->win);
    check_rc("put", CALL(r, Put)(f.ptr, 1, MPI_DOUBLE, next, R_FLAG, 1, MPI_DOUBLE, r->win));
    CALL(r, Win_flush)(next, r->win);
    for (long polls = 0; flag != 1; polls++) {
        int any;
        /* A bound, not a time: the test's TIMEOUT ends a hang first. */
        if (polls == 20000000) {
            FAIL("the flag never reached the target's window");
            break;
        }
        CALL(r, Win_sync)(r->win);
        mem_get(r->kind, r->base + 8 * R_FLAG, &flag, 8);
        CALL(r, Iprobe)(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &any, MPI_STATUS_IGNORE);
    }
    snap(r, "the target once the flag is set");
    CALL(r, Barrier)(MPI_COMM_WORLD);
    CALL(r, Win_unlock_all)(r->win);
    buf_free(&f);
}

/* What a program of the unified model does, beyond what the separate model allows: the target
 * stores into one part of its window (between the two an origin updates) while the origin puts
 * and accumulates; the target's lock of its own window brings the updates and keeps the stores,
 * and its unlock publishes them. */
static void step_disjoint(run_t *r, int s)
{
    fill_origin(r, s);
    CALL(r, Win_lock)(MPI_LOCK_EXCLUSIVE, next, 0, r->win);
    issue(r, next, s % NPAIRS, OP_PUT | OP_ACC, false);
    store_window(r, s + 9, R_GET, R_GET + 64);
    CALL(r, Win_unlock)(next, r->win);
    CALL(r, Barrier)(MPI_COMM_WORLD);
    CALL(r, Win_lock)(MPI_LOCK_SHARED, rank, 0, r->win);
    snap(r, "the target in a lock of its own window");
    CALL(r, Win_unlock)(rank, r->win);
    CALL(r, Barrier)(MPI_COMM_WORLD);
    CALL(r, Win_lock)(MPI_LOCK_SHARED, next, 0, r->win);
    check_rc("get", CALL(r, Get)((double *)(void *)r->org.ptr + O_STORE, 64, MPI_DOUBLE, next,
                                 R_GET, 64, MPI_DOUBLE, r->win));
    CALL(r, Win_unlock)(next, r->win);
    snap_origin(r, "the stores of the target");
    CALL(r, Barrier)(MPI_COMM_WORLD);
}

/* An update no synchronisation of the target made visible: Win_free does. */
static void step_free(run_t *r, int s)
{
    fill_origin(r, s);
    CALL(r, Win_lock)(MPI_LOCK_EXCLUSIVE, next, 0, r->win);
    issue(r, next, s % NPAIRS, OP_PUT, false);
    CALL(r, Win_unlock)(next, r->win);
    CALL(r, Barrier)(MPI_COMM_WORLD);
    check_rc("win_free", CALL(r, Win_free)(&r->win));
    snap(r, "after Win_free");
}

/* ---- one kind of window memory --------------------------------------------------------------- */

static void open_run(run_t *r, bool dev, kind_t kind, kind_t okind)
{
    memset(r, 0, sizeof(*r));
    r->dev = dev;
    r->kind = kind;
    r->okind = okind;
    r->alloc = buf_alloc(kind, ALLOC);
    r->org = buf_alloc(okind, OBYTES);
    r->base = r->alloc.ptr + WOFF;
    {
        unsigned char z[ALLOC];
        for (int i = 0; i < ALLOC; i++)
            z[i] = (unsigned char)(i * 31 + 7);
        mem_put(kind, r->alloc.ptr, z, ALLOC);
    }
    check_rc("win_create",
             CALL(r, Win_create)(r->base, WSIZE, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &r->win));
    CALL(r, Win_set_errhandler)(r->win, MPI_ERRORS_RETURN);
}

/* The window's attributes through typejit: its device memory and MPI_WIN_SEPARATE for a window in
 * device or managed memory; the system MPI's own answers for one in host memory. */
static void check_attributes(run_t *d)
{
    void *v;
    int flag, model = -1, ref_model = -1;

    checked++;
    if (MPI_Win_get_attr(d->win, MPI_WIN_BASE, &v, &flag) != MPI_SUCCESS || !flag || v != d->base)
        FAIL("%s: MPI_WIN_BASE is %p, the window's memory %p", kind_names[d->kind], v, d->base);
    if (MPI_Win_get_attr(d->win, MPI_WIN_MODEL, &v, &flag) == MPI_SUCCESS && flag)
        model = *(int *)v;
    if (PMPI_Win_get_attr(d->win, MPI_WIN_MODEL, &v, &flag) == MPI_SUCCESS && flag)
        ref_model = *(int *)v;
    if (on_device(d->kind) ? model != MPI_WIN_SEPARATE : model != ref_model)
        FAIL("%s: MPI_WIN_MODEL is %d (separate %d, the system MPI's %d)", kind_names[d->kind],
             model, MPI_WIN_SEPARATE, ref_model);
    if (MPI_Win_get_attr(d->win, MPI_WIN_SIZE, &v, &flag) != MPI_SUCCESS || !flag ||
        *(MPI_Aint *)v != WSIZE)
        FAIL("%s: MPI_WIN_SIZE is not %d", kind_names[d->kind], WSIZE);
    if (MPI_Win_get_attr(d->win, MPI_WIN_DISP_UNIT, &v, &flag) != MPI_SUCCESS || !flag ||
        *(int *)v != 8)
        FAIL("%s: MPI_WIN_DISP_UNIT is not 8", kind_names[d->kind]);
}

static void one_kind(kind_t kind, MPI_Group from, MPI_Group to)
{
    static run_t runs[2];
    run_t *d = &runs[0], *h = &runs[1];
    char step[160];
    int s = 0;

    for (int o = 0; o < 2; o++) {
        kind_t okind = o ? K_DEVICE : K_HOST;
        open_run(d, true, kind, okind);
        open_run(h, false, K_HOST, K_HOST);
        check_attributes(d);
#define BOTH(_name, _call)                                                                         \
    do {                                                                                           \
        snprintf(step, sizeof(step), "%s window, %s origin, %s (%s)", kind_names[kind],            \
                 kind_names[okind], _name, pairs[s % NPAIRS].name);                                \
        if (verbose && rank == 0)                                                                  \
            fprintf(stderr, "%s\n", step);                                                         \
        {                                                                                          \
            run_t *r = d;                                                                          \
            _call;                                                                                 \
            r = h;                                                                                 \
            _call;                                                                                 \
        }                                                                                          \
        compare(d, h, step);                                                                       \
        s++;                                                                                       \
    } while (0)
        for (int v = 0; v < 3; v++)
            BOTH("fence", step_fence(r, s, v));
        for (int v = 0; v < 3; v++)
            BOTH("post/start/complete/wait", step_pscw(r, s, v, from, to));
        BOTH("lock exclusive", step_lock(r, s, true));
        BOTH("lock shared", step_lock(r, s, false));
        for (int v = 0; v < 3; v++)
            BOTH("lock_all", step_lock_all(r, s, v));
        BOTH("Win_sync polling", step_poll(r, s));
        BOTH("stores beside puts", step_disjoint(r, s));
        BOTH("Win_free", step_free(r, s));
#undef BOTH
        buf_free(&d->alloc);
        buf_free(&d->org);
        buf_free(&h->alloc);
        buf_free(&h->org);
    }
}

/* ---- what the synchronisations move ---------------------------------------------------------- */

#define BIG (1 << 20)

static void expect_moved(const char *what, long dtoh0, long htod0, long dtoh, long htod)
{
    long d = tj_counter("window_dtoh_bytes") - dtoh0, h = tj_counter("window_htod_bytes") - htod0;
    checked++;
    if (d != dtoh || h != htod)
        FAIL("%s: %ld bytes read from the device and %ld written, not %ld and %ld", what, d, h,
             dtoh, htod);
}

/* A 1 MiB window: its public copy is read once at MPI_Win_create; a fence with MPI_MODE_NOSTORE
 * reads nothing, and writes the one block of 256 bytes an 8-byte put changed; Win_sync reads the
 * window and writes nothing when nothing changed; a lock of the own window reads and writes the
 * changed block; the unlock reads the window. */
static void bytes_moved(void)
{
    buf_t big = buf_alloc(K_DEVICE, BIG);
    unsigned char *zero = calloc(1, BIG);
    long separate = tj_counter("windows_separate"), d0, h0;
    double v = 42, got;
    MPI_Win win;

    REQUIRE(zero);
    buf_put(&big, zero);
    d0 = tj_counter("window_dtoh_bytes");
    h0 = tj_counter("window_htod_bytes");
    MPI_Win_create(big.ptr, BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    expect_moved("MPI_Win_create", d0, h0, BIG, 0);
    checked++;
    if (tj_counter("windows_separate") != separate + 1)
        FAIL("windows_separate did not count the window");

    d0 = tj_counter("window_dtoh_bytes");
    h0 = tj_counter("window_htod_bytes");
    MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSTORE, win);
    MPI_Put(&v, 1, MPI_DOUBLE, next, 524292, 1, MPI_DOUBLE, win);
    MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED, win);
    expect_moved("fences with MPI_MODE_NOSTORE around an 8-byte put", d0, h0, 0, 256);
    /* Each phase ends at a barrier, so that no process's next phase reaches a window whose
     * owner is still in the last one (a fence need not end together everywhere). */
    MPI_Barrier(MPI_COMM_WORLD);
    mem_get(K_DEVICE, big.ptr + 524292, &got, 8);
    checked++;
    if (got != 42)
        FAIL("the put's double is %g in the target's device memory", got);

    d0 = tj_counter("window_dtoh_bytes");
    h0 = tj_counter("window_htod_bytes");
    MPI_Win_lock_all(0, win);
    MPI_Win_sync(win);
    expect_moved("lock_all and Win_sync, nothing changed", d0, h0, BIG, 0);
    MPI_Win_unlock_all(win);
    expect_moved("and unlock_all", d0, h0, 2 * BIG, 0);
    MPI_Barrier(MPI_COMM_WORLD);

    v = 43;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win);
    MPI_Put(&v, 1, MPI_DOUBLE, next, 8, 1, MPI_DOUBLE, win);
    MPI_Win_unlock(next, win);
    MPI_Barrier(MPI_COMM_WORLD);
    d0 = tj_counter("window_dtoh_bytes");
    h0 = tj_counter("window_htod_bytes");
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    expect_moved("lock of the own window after a put", d0, h0, 256, 256);
    MPI_Win_unlock(rank, win);
    expect_moved("and its unlock", d0, h0, 256 + BIG, 256);
    mem_get(K_DEVICE, big.ptr + 8, &got, 8);
    checked++;
    if (got != 43)
        FAIL("the second put's double is %g in the target's device memory", got);

    MPI_Barrier(MPI_COMM_WORLD);
    d0 = tj_counter("window_dtoh_bytes");
    h0 = tj_counter("window_htod_bytes");
    MPI_Win_free(&win);
    expect_moved("MPI_Win_free, nothing changed", d0, h0, 0, 0);
    buf_free(&big);
    free(zero);
}

/* A window past the end of its device allocation: MPI_ERR_BUFFER on every process (one error line
 * each), and a window that the program can free. */
static void past_allocation(void)
{
    buf_t small = buf_alloc(K_DEVICE, ALLOC);
    MPI_Comm comm;
    MPI_Win win = MPI_WIN_NULL;
    int rc, cls = MPI_SUCCESS;

    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    rc = MPI_Win_create(small.ptr + 1024, ALLOC, 1, MPI_INFO_NULL, comm, &win);
    MPI_Error_class(rc, &cls);
    checked++;
    if (cls != MPI_ERR_BUFFER)
        FAIL("a window past its device allocation: error class %d, not MPI_ERR_BUFFER", cls);
    if (win != MPI_WIN_NULL)
        MPI_Win_free(&win);
    MPI_Comm_free(&comm);
    buf_free(&small);
}

/* --cudaaware (the MPI takes device memory: tests/cudaaware_shim.c): a window on device memory is
 * the system MPI's own, with its base and model, and its synchronisations pass through (no
 * operation: the stand-in does not model one-sided calls on device memory). */
static void cuda_aware(void)
{
    buf_t mem = buf_alloc(K_DEVICE, ALLOC);
    long separate = tj_counter("windows_separate");
    void *v;
    int flag, model = -1, ref_model = -2;
    MPI_Win win;

    check_rc("win_create", MPI_Win_create(mem.ptr, ALLOC, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Win_fence(0, win);
    MPI_Win_fence(0, win);
    MPI_Win_lock_all(0, win);
    MPI_Win_sync(win);
    MPI_Win_unlock_all(win);
    checked++;
    if (MPI_Win_get_attr(win, MPI_WIN_BASE, &v, &flag) != MPI_SUCCESS || !flag || v != mem.ptr)
        FAIL("a CUDA-aware MPI's window: MPI_WIN_BASE is %p, not %p", v, (void *)mem.ptr);
    if (MPI_Win_get_attr(win, MPI_WIN_MODEL, &v, &flag) == MPI_SUCCESS && flag)
        model = *(int *)v;
    if (PMPI_Win_get_attr(win, MPI_WIN_MODEL, &v, &flag) == MPI_SUCCESS && flag)
        ref_model = *(int *)v;
    if (model != ref_model || tj_counter("windows_separate") != separate)
        FAIL("a CUDA-aware MPI's window: model %d (the MPI's %d), windows_separate grew", model,
             ref_model);
    MPI_Win_free(&win);
    buf_free(&mem);
}

int main(int argc, char **argv)
{
    MPI_Group world, from, to;
    long all_failures, all_checked;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int i = 1; i < argc; i++) {
        verbose |= strcmp(argv[i], "--verbose") == 0;
        cudaaware |= strcmp(argv[i], "--cudaaware") == 0;
    }
    if (!cudrv_open()) {
        MPI_Finalize();
        return 77;
    }
    REQUIRE(nranks >= 2);
    next = (rank + 1) % nranks;
    prev = (rank + nranks - 1) % nranks;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &prev, &from);
    MPI_Group_incl(world, 1, &next, &to);
    make_types();

    if (cudaaware) {
        cuda_aware();
    } else {
        one_kind(K_DEVICE, from, to);
        one_kind(K_MANAGED, from, to);
        one_kind(K_PINNED, from, to);
        bytes_moved();
        past_allocation();
    }

    MPI_Group_free(&from);
    MPI_Group_free(&to);
    MPI_Group_free(&world);
    MPI_Type_free(&t_vec);
    MPI_Type_free(&t_contig);
    MPI_Type_free(&t_idx);
    MPI_Allreduce(&failures, &all_failures, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&checked, &all_checked, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %ld checks, %ld failures\n", all_failures ? "FAIL" : "PASS", all_checked,
               all_failures);
    MPI_Finalize();
    return all_failures ? 1 : 0;
}
