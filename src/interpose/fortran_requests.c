/* SPDX-License-Identifier: BSD-3-Clause */
/* The Fortran entry points of the request calls (requests.c), in every family: the waits and
 * tests of one, any, some or all requests, the persistent starts, MPI_Request_free and
 * MPI_Request_get_status, with their arrays of requests and statuses converted on the stack
 * when small (fortran.c says how each family's bindings reach C). */
#include <stdlib.h>

#include "interpose/fortran_binding.h"

#if !defined(MPI_ABI_VERSION)

/* ---- arrays of requests and statuses -------------------------------------------------------- */

typedef struct {
    MPI_Request *req;
    MPI_Status *st; /* MPI_STATUSES_IGNORE when the caller ignores them */
    int n;
    MPI_Request req_small[SMALL];
    MPI_Status st_small[SMALL];
} reqs_t;

static bool reqs_in(reqs_t *r, int n, const fint *f, const fint *fstatuses)
{
    r->n = n < 0 ? 0 : n;
    r->req = r->n <= SMALL ? r->req_small : malloc((size_t)r->n * sizeof(MPI_Request));
    /* MPI_STATUSES_IGNORE is a null pointer in Open MPI: only an allocation can fail here. */
    bool want = !tj_fortran_statuses_ignored(fstatuses);
    r->st = MPI_STATUSES_IGNORE;
    if (want)
        r->st = r->n <= SMALL ? r->st_small : malloc((size_t)r->n * sizeof(MPI_Status));
    if (r->req == NULL || (want && r->st == NULL)) {
        if (r->req != r->req_small)
            free(r->req);
        if (r->st != r->st_small && r->st != MPI_STATUSES_IGNORE)
            free(r->st);
        return false;
    }
    for (int i = 0; i < r->n; i++)
        r->req[i] = PMPI_Request_f2c(f[i]);
    return true;
}

/* Write the requests back (completed ones are MPI_REQUEST_NULL now) and, when @p statuses_too,
 * the first @p nst statuses, then release the arrays. */
static void reqs_out(reqs_t *r, fint *f, fint *fstatuses, bool statuses_too, int nst)
{
    for (int i = 0; i < r->n; i++)
        f[i] = PMPI_Request_c2f(r->req[i]);
    if (statuses_too && r->st != MPI_STATUSES_IGNORE)
        for (int i = 0; i < nst; i++)
            tj_fortran_status_out(&r->st[i], &fstatuses[(size_t)i * FSTATUS]);
    if (r->req != r->req_small)
        free(r->req);
    if (r->st != r->st_small && r->st != MPI_STATUSES_IGNORE)
        free(r->st);
}

FORTRAN_CALL(MPI_Wait, wait, WAIT, (REQUEST_INOUT, STATUS))

static void f_test(fint *request, fint *flag, fint *status, fint *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*request);
    MPI_Status cs, *s = tj_fortran_status_in(status, &cs);
    int done = 0, rc = MPI_Test(&r, &done, s);
    if (rc == MPI_SUCCESS) {
        *request = PMPI_Request_c2f(r);
        *flag = done ? 1 : 0; /* gfortran's .TRUE. */
        if (done)
            tj_fortran_status_out(s, status);
    }
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_test, test, TEST)

static void f_request_get_status(fint *request, fint *flag, fint *status, fint *ierr)
{
    MPI_Status cs, *s = tj_fortran_status_in(status, &cs);
    int done = 0, rc = MPI_Request_get_status(PMPI_Request_f2c(*request), &done, s);
    if (rc == MPI_SUCCESS) {
        *flag = done ? 1 : 0;
        if (done)
            tj_fortran_status_out(s, status);
    }
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_request_get_status, request_get_status, REQUEST_GET_STATUS)

FORTRAN_CALL(MPI_Request_free, request_free, REQUEST_FREE, (REQUEST_INOUT))
FORTRAN_CALL(MPI_Start, start, START, (REQUEST_INOUT))

static void f_startall(fint *count, fint *requests, fint *ierr)
{
    reqs_t r;
    int rc;
    if (!reqs_in(&r, *count, requests, NULL)) {
        tj_fortran_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    rc = MPI_Startall(r.n, r.req);
    reqs_out(&r, requests, NULL, false, 0);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_startall, startall, STARTALL)

static void f_waitall(fint *count, fint *requests, fint *statuses, fint *ierr)
{
    reqs_t r;
    int rc;
    if (!reqs_in(&r, *count, requests, statuses)) {
        tj_fortran_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    rc = MPI_Waitall(r.n, r.req, r.st);
    reqs_out(&r, requests, statuses, rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS, r.n);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_waitall, waitall, WAITALL)

static void f_testall(fint *count, fint *requests, fint *flag, fint *statuses, fint *ierr)
{
    reqs_t r;
    int done = 0, rc;
    if (!reqs_in(&r, *count, requests, statuses)) {
        tj_fortran_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    rc = MPI_Testall(r.n, r.req, &done, r.st);
    reqs_out(&r, requests, statuses, done && (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS), r.n);
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)
        *flag = done ? 1 : 0;
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_testall, testall, TESTALL)

/* Waitany and Testany: Fortran indices start at 1. */
static void any_out(reqs_t *r, fint *requests, int rc, int idx, fint *index, MPI_Status *cs,
                    fint *status)
{
    reqs_out(r, requests, NULL, false, 0);
    if (rc != MPI_SUCCESS)
        return;
    *index = idx == MPI_UNDEFINED ? MPI_UNDEFINED : idx + 1;
    if (idx != MPI_UNDEFINED)
        tj_fortran_status_out(cs, status);
}

static void f_waitany(fint *count, fint *requests, fint *index, fint *status, fint *ierr)
{
    MPI_Status cs, *s = tj_fortran_status_in(status, &cs);
    reqs_t r;
    int idx = MPI_UNDEFINED, rc;
    if (!reqs_in(&r, *count, requests, NULL)) {
        tj_fortran_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    rc = MPI_Waitany(r.n, r.req, &idx, s);
    any_out(&r, requests, rc, idx, index, s, status);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_waitany, waitany, WAITANY)

static void f_testany(fint *count, fint *requests, fint *index, fint *flag, fint *status,
                      fint *ierr)
{
    MPI_Status cs, *s = tj_fortran_status_in(status, &cs);
    reqs_t r;
    int idx = MPI_UNDEFINED, done = 0, rc;
    if (!reqs_in(&r, *count, requests, NULL)) {
        tj_fortran_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    rc = MPI_Testany(r.n, r.req, &idx, &done, s);
    any_out(&r, requests, rc, done ? idx : MPI_UNDEFINED, index, s, status);
    if (rc == MPI_SUCCESS)
        *flag = done ? 1 : 0;
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_testany, testany, TESTANY)

/* Waitsome and Testsome: statuses of the completed ones, in order, and indices from 1. */
static void some(bool wait, fint *incount, fint *requests, fint *outcount, fint *indices,
                 fint *statuses, fint *ierr)
{
    reqs_t r;
    int out = MPI_UNDEFINED, rc, *idx;
    if (!reqs_in(&r, *incount, requests, statuses)) {
        tj_fortran_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    idx = malloc((size_t)(r.n > 0 ? r.n : 1) * sizeof(int));
    if (idx == NULL) {
        reqs_out(&r, requests, NULL, false, 0);
        tj_fortran_ierr(ierr, MPI_ERR_NO_MEM);
        return;
    }
    rc = wait ? MPI_Waitsome(r.n, r.req, &out, idx, r.st)
              : MPI_Testsome(r.n, r.req, &out, idx, r.st);
    bool ok = rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS;
    reqs_out(&r, requests, statuses, ok && out != MPI_UNDEFINED, ok ? out : 0);
    if (ok) {
        *outcount = out;
        for (int i = 0; out != MPI_UNDEFINED && i < out; i++)
            indices[i] = idx[i] + 1;
    }
    free(idx);
    tj_fortran_ierr(ierr, rc);
}

static void f_waitsome(fint *incount, fint *requests, fint *outcount, fint *indices, fint *statuses,
                       fint *ierr)
{
    some(true, incount, requests, outcount, indices, statuses, ierr);
}
FORTRAN_NAMES(f_waitsome, waitsome, WAITSOME)

static void f_testsome(fint *incount, fint *requests, fint *outcount, fint *indices, fint *statuses,
                       fint *ierr)
{
    some(false, incount, requests, outcount, indices, statuses, ierr);
}
FORTRAN_NAMES(f_testsome, testsome, TESTSOME)

#endif /* MPI_ABI_VERSION */
