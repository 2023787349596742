/* SPDX-License-Identifier: BSD-3-Clause */
/* Request wrappers: Wait, Test and their any/some/all forms, Start, Startall, Request_free and
 * Request_get_status. While typejit has no request of its own in flight each goes straight to
 * the system MPI; otherwise the requests typejit made are taken out of its table around the
 * system MPI's call and finished (a receive unpacked, staging released) as they complete. The
 * tests never wait: a send of typejit's still in the send queue, or a receive whose unpack still
 * runs, is not complete yet. MPI_Cancel starts a queued send first; a cancelled receive is
 * recognised at completion and not unpacked. */
#include <stdlib.h>

#include "interpose/init.h"
#include "interpose/wrappers.h"
#include "calls/request.h"
#include "calls/send_queue.h"
#include "util/log.h"
#include "util/mpierr.h"

static bool ours(void)
{
    return tj_request_live() > 0 && tj_interpose_active();
}

/* The status a single-completion call hands to the system MPI: the application's own, so that
 * only the system MPI writes there (it leaves MPI_ERROR as it was), or @p local when the
 * application ignores it (typejit still needs the count to unpack). */
static MPI_Status *status_for(MPI_Status *status, MPI_Status *local)
{
    return status != MPI_STATUS_IGNORE ? status : local;
}

/* The records of an array of requests, taken out of the table; NULL entries are not typejit's.
 * Returns whether any is. */
static bool take_all(int n, const MPI_Request reqs[], MPI_Request *saved, tj_request_t **recs)
{
    bool any = false;
    for (int i = 0; i < n; i++) {
        saved[i] = reqs[i];
        recs[i] = tj_request_take(reqs[i]);
        any |= recs[i] != NULL;
    }
    return any;
}

/* Calls over this many requests or fewer keep their scratch arrays on the stack. */
#define SCRATCH_SMALL 32

/* Scratch arrays for one call over @p n requests: handles, records, statuses and the results of
 * finishing the completed ones. */
typedef struct {
    MPI_Request *saved;
    tj_request_t **recs;
    MPI_Status *statuses; /* the caller's, when it wants them */
    int *results;
    MPI_Request saved_small[SCRATCH_SMALL];
    tj_request_t *recs_small[SCRATCH_SMALL];
    MPI_Status statuses_small[SCRATCH_SMALL];
    int results_small[SCRATCH_SMALL];
} scratch_t;

typedef enum {
    SCRATCH_OK,
    SCRATCH_PASS,  /* out of memory, but no request is typejit's: the system MPI takes the call */
    SCRATCH_REFUSE /* out of memory: MPI_ERR_NO_MEM, every request still active */
} scratch_rc_t;

static void scratch_put(scratch_t *s, MPI_Status *user)
{
    if (s->saved != s->saved_small)
        free(s->saved);
    if (s->recs != s->recs_small)
        free(s->recs);
    if (s->statuses != user && s->statuses != s->statuses_small)
        free(s->statuses);
    if (s->results != s->results_small)
        free(s->results);
}

/* Scratch for a call over @p reqs; @p statuses: whether it needs statuses (in @p user's array
 * when there is one) and results. Out of memory nothing is held, and a call with a request of
 * typejit's is refused: without the scratch typejit could not finish it, and the system MPI alone
 * would complete it without its unpack. */
static scratch_rc_t scratch_get(int n, const MPI_Request reqs[], MPI_Status *user, bool statuses,
                                scratch_t *s)
{
    size_t k = n > 0 ? (size_t)n : 1;
    bool small = k <= SCRATCH_SMALL;

    s->saved = small ? s->saved_small : malloc(k * sizeof(MPI_Request));
    s->recs = small ? s->recs_small : malloc(k * sizeof(tj_request_t *));
    s->statuses = user != MPI_STATUSES_IGNORE || !statuses ? user
                  : small                                  ? s->statuses_small
                                                           : malloc(k * sizeof(MPI_Status));
    s->results = small || !statuses ? s->results_small : malloc(k * sizeof(int));
    if (s->saved != NULL && s->recs != NULL && (!statuses || s->statuses != NULL) &&
        s->results != NULL)
        return SCRATCH_OK;
    scratch_put(s, user);
    for (int i = 0; i < n; i++)
        if (tj_request_known(reqs[i])) {
            tj_log_error("out of memory tracking %d requests; MPI_ERR_NO_MEM", n);
            tj_mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
            return SCRATCH_REFUSE;
        }
    return SCRATCH_PASS;
}

/* Put back every record not completed by the call. */
static void put_back(int n, scratch_t *s)
{
    for (int i = 0; i < n; i++)
        if (s->recs[i] != NULL)
            tj_request_put(s->recs[i], s->saved[i]);
}

int TJ_WRAPPER(MPI_Wait)(MPI_Request *req, MPI_Status *status)
{
    MPI_Request handle;
    tj_request_t *r;
    MPI_Status local, *st = status_for(status, &local);
    int rc, done;

    if (!ours() || req == NULL || (r = tj_request_take(*req)) == NULL)
        return PMPI_Wait(req, status);
    handle = *req;
    tj_request_block(r, handle);
    rc = PMPI_Wait(req, st);
    done = tj_request_done(r, handle, st, req);
    if (rc == MPI_SUCCESS)
        rc = done;
    tj_request_progress(false);
    return rc;
}

int TJ_WRAPPER(MPI_Test)(MPI_Request *req, int *flag, MPI_Status *status)
{
    MPI_Request handle;
    tj_request_t *r;
    MPI_Status local, *st = status_for(status, &local);
    int rc, done;

    if (!ours() || req == NULL || (r = tj_request_take(*req)) == NULL)
        return PMPI_Test(req, flag, status);
    handle = *req;
    if (!tj_request_ready(r, handle)) {
        tj_request_put(r, handle);
        *flag = 0;
        return MPI_SUCCESS;
    }
    rc = PMPI_Test(req, flag, st);
    if (rc != MPI_SUCCESS || !*flag) {
        tj_request_put(r, handle);
        return rc;
    }
    done = tj_request_done(r, handle, st, req);
    tj_request_progress(false);
    return done;
}

/* The call's result @p rc with a completed request's result of finishing, @p done, in its status
 * @p st when the application has statuses (@p user). */
static int report(int rc, int done, MPI_Status *st, MPI_Status *user)
{
    if (done == MPI_SUCCESS)
        return rc;
    if (user != MPI_STATUSES_IGNORE) {
        st->MPI_ERROR = done;
        return MPI_ERR_IN_STATUS;
    }
    return rc == MPI_SUCCESS ? done : rc;
}

/* After a Waitall or Testall that completed everything (or reported per-request errors): the
 * completed requests finished together (one wait for all their unpacks). */
static int finish_all(int n, MPI_Request reqs[], scratch_t *s, MPI_Status *user, int rc)
{
    for (int i = 0; i < n; i++)
        if (s->recs[i] != NULL && rc == MPI_ERR_IN_STATUS &&
            s->statuses[i].MPI_ERROR == MPI_ERR_PENDING) {
            tj_request_put(s->recs[i], s->saved[i]);
            s->recs[i] = NULL;
        }
    tj_request_done_all(n, s->recs, s->saved, NULL, s->statuses, s->results, reqs);
    for (int i = 0; i < n; i++)
        rc = report(rc, s->results[i], &s->statuses[i], user);
    return rc;
}

int TJ_WRAPPER(MPI_Waitall)(int n, MPI_Request reqs[], MPI_Status statuses[])
{
    scratch_rc_t got = SCRATCH_PASS;
    scratch_t s;
    int rc;

    if (!ours() || n <= 0 || (got = scratch_get(n, reqs, statuses, true, &s)) == SCRATCH_PASS)
        return PMPI_Waitall(n, reqs, statuses);
    if (got == SCRATCH_REFUSE)
        return MPI_ERR_NO_MEM;
    if (!take_all(n, reqs, s.saved, s.recs)) {
        scratch_put(&s, statuses);
        return PMPI_Waitall(n, reqs, statuses);
    }
    for (int i = 0; i < n; i++)
        if (s.recs[i] != NULL)
            tj_request_block(s.recs[i], s.saved[i]);
    rc = PMPI_Waitall(n, reqs, s.statuses);
    rc = finish_all(n, reqs, &s, statuses, rc);
    scratch_put(&s, statuses);
    tj_request_progress(false);
    return rc;
}

int TJ_WRAPPER(MPI_Testall)(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    scratch_rc_t got = SCRATCH_PASS;
    scratch_t s;
    int rc;

    if (!ours() || n <= 0 || (got = scratch_get(n, reqs, statuses, true, &s)) == SCRATCH_PASS)
        return PMPI_Testall(n, reqs, flag, statuses);
    if (got == SCRATCH_REFUSE)
        return MPI_ERR_NO_MEM;
    if (!take_all(n, reqs, s.saved, s.recs)) {
        scratch_put(&s, statuses);
        return PMPI_Testall(n, reqs, flag, statuses);
    }
    /* One of typejit's not complete yet: Testall completes none. */
    for (int i = 0; i < n; i++)
        if (s.recs[i] != NULL && !tj_request_ready(s.recs[i], s.saved[i])) {
            put_back(n, &s);
            scratch_put(&s, statuses);
            *flag = 0;
            return MPI_SUCCESS;
        }
    rc = PMPI_Testall(n, reqs, flag, s.statuses);
    if (*flag || rc == MPI_ERR_IN_STATUS)
        rc = finish_all(n, reqs, &s, statuses, rc);
    else
        put_back(n, &s); /* nothing completed */
    scratch_put(&s, statuses);
    return rc;
}

/* Before a Testany or Testsome: typejit's requests that are not complete yet are hidden from the
 * system MPI's test (MPI_REQUEST_NULL in @p reqs until unhide). Returns how many. */
static int hide_unready(int n, MPI_Request reqs[], scratch_t *s)
{
    int hidden = 0;
    for (int i = 0; i < n; i++)
        if (s->recs[i] != NULL && !tj_request_ready(s->recs[i], s->saved[i])) {
            reqs[i] = MPI_REQUEST_NULL;
            hidden++;
        }
    return hidden;
}

/* The hidden requests back in @p reqs, where the test left them MPI_REQUEST_NULL. */
static void unhide(int n, MPI_Request reqs[], const scratch_t *s)
{
    for (int i = 0; i < n; i++)
        if (s->recs[i] != NULL && reqs[i] == MPI_REQUEST_NULL)
            reqs[i] = s->saved[i];
}

/* Waitany and Testany: the one completed request, if any. */
static int any(bool wait, int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    MPI_Status local, *st = status_for(status, &local);
    scratch_rc_t got = SCRATCH_PASS;
    scratch_t s;
    int rc, done, hidden;

    if (!ours() || n <= 0 ||
        (got = scratch_get(n, reqs, MPI_STATUSES_IGNORE, false, &s)) == SCRATCH_PASS)
        return wait ? PMPI_Waitany(n, reqs, index, status)
                    : PMPI_Testany(n, reqs, index, flag, status);
    if (got == SCRATCH_REFUSE)
        return MPI_ERR_NO_MEM;
    if (!take_all(n, reqs, s.saved, s.recs)) {
        scratch_put(&s, MPI_STATUSES_IGNORE);
        return wait ? PMPI_Waitany(n, reqs, index, status)
                    : PMPI_Testany(n, reqs, index, flag, status);
    }
    hidden = wait ? 0 : hide_unready(n, reqs, &s);
    if (hidden > 0) {
        /* With only hidden ones active the system MPI reports none and writes an empty status,
         * which the application must not see: its status is written only when one completed
         * (MPI_ERROR as the application left it, which a single completion does not set). */
        MPI_Status seen = *st;
        int k;
        MPI_Request completed;
        rc = PMPI_Testany(n, reqs, index, flag, &seen);
        k = *index;
        completed = k != MPI_UNDEFINED ? reqs[k] : MPI_REQUEST_NULL;
        unhide(n, reqs, &s);
        if (k != MPI_UNDEFINED) {
            reqs[k] = completed; /* it keeps what the system MPI set */
            *st = seen;
        }
        if (rc == MPI_SUCCESS && *flag && k == MPI_UNDEFINED)
            *flag = 0; /* no active request but typejit's unfinished ones */
    } else {
        rc = wait ? PMPI_Waitany(n, reqs, index, st) : PMPI_Testany(n, reqs, index, flag, st);
    }
    if (*index != MPI_UNDEFINED && s.recs[*index] != NULL) {
        done = tj_request_done(s.recs[*index], s.saved[*index], st, &reqs[*index]);
        s.recs[*index] = NULL;
        if (rc == MPI_SUCCESS)
            rc = done;
    }
    put_back(n, &s);
    scratch_put(&s, MPI_STATUSES_IGNORE);
    return rc;
}

/* Whether a Waitany or Waitsome over @p reqs must poll: the system MPI alone cannot complete
 * the generalized request of a deferred collective (tj_request_deferred). */
static bool must_poll(int n, const MPI_Request reqs[])
{
    if (!ours())
        return false;
    for (int i = 0; i < n; i++)
        if (tj_request_deferred(reqs[i]))
            return true;
    return false;
}

int TJ_WRAPPER(MPI_Waitany)(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
    int flag = 1, rc;

    if (n <= 0 || reqs == NULL || !must_poll(n, reqs))
        return any(true, n, reqs, index, &flag, status);
    do
        rc = any(false, n, reqs, index, &flag, status);
    while (rc == MPI_SUCCESS && !flag);
    return rc;
}

int TJ_WRAPPER(MPI_Testany)(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    return any(false, n, reqs, index, flag, status);
}

/* Waitsome and Testsome: the completed requests are listed in indices. */
static int some(bool wait, int n, MPI_Request reqs[], int *outcount, int indices[],
                MPI_Status statuses[])
{
    scratch_rc_t got = SCRATCH_PASS;
    scratch_t s;
    int rc, hidden;

    if (!ours() || n <= 0 || (got = scratch_get(n, reqs, statuses, true, &s)) == SCRATCH_PASS)
        return wait ? PMPI_Waitsome(n, reqs, outcount, indices, statuses)
                    : PMPI_Testsome(n, reqs, outcount, indices, statuses);
    if (got == SCRATCH_REFUSE)
        return MPI_ERR_NO_MEM;
    if (!take_all(n, reqs, s.saved, s.recs)) {
        scratch_put(&s, statuses);
        return wait ? PMPI_Waitsome(n, reqs, outcount, indices, statuses)
                    : PMPI_Testsome(n, reqs, outcount, indices, statuses);
    }
    hidden = wait ? 0 : hide_unready(n, reqs, &s);
    rc = wait ? PMPI_Waitsome(n, reqs, outcount, indices, s.statuses)
              : PMPI_Testsome(n, reqs, outcount, indices, s.statuses);
    if (hidden > 0) {
        /* The completed ones keep what the system MPI set (a hidden one is never among them: it
         * was MPI_REQUEST_NULL); the hidden ones stay active. */
        int ndone = *outcount != MPI_UNDEFINED ? *outcount : 0;
        for (int i = 0; i < n; i++)
            if (s.recs[i] != NULL && reqs[i] == MPI_REQUEST_NULL) {
                bool completed = false;
                for (int j = 0; j < ndone && !completed; j++)
                    completed = indices[j] == i;
                if (!completed)
                    reqs[i] = s.saved[i];
            }
        if (rc == MPI_SUCCESS && *outcount == MPI_UNDEFINED)
            *outcount = 0; /* no active request but typejit's unfinished ones */
    }
    if (*outcount != MPI_UNDEFINED && *outcount > 0) {
        tj_request_done_all(*outcount, s.recs, s.saved, indices, s.statuses, s.results, reqs);
        for (int j = 0; j < *outcount; j++)
            rc = report(rc, s.results[j], &s.statuses[j], statuses);
    }
    put_back(n, &s);
    scratch_put(&s, statuses);
    return rc;
}

int TJ_WRAPPER(MPI_Waitsome)(int n, MPI_Request reqs[], int *outcount, int indices[],
                             MPI_Status statuses[])
{
    int rc;

    if (n <= 0 || reqs == NULL || !must_poll(n, reqs))
        return some(true, n, reqs, outcount, indices, statuses);
    do
        rc = some(false, n, reqs, outcount, indices, statuses);
    while (rc == MPI_SUCCESS && *outcount == 0);
    return rc;
}

int TJ_WRAPPER(MPI_Testsome)(int n, MPI_Request reqs[], int *outcount, int indices[],
                             MPI_Status statuses[])
{
    return some(false, n, reqs, outcount, indices, statuses);
}

/* Before the system MPI starts @p handle: a request not typejit's may be a send to a destination
 * with sends in the send queue, which go first. */
static void order_before(MPI_Request handle)
{
    if (!tj_send_queue_empty() && !tj_request_known(handle))
        tj_send_queue_flush();
}

int TJ_WRAPPER(MPI_Start)(MPI_Request *req)
{
    bool queued = false;
    int rc;
    if (ours() && req != NULL) {
        if ((rc = tj_request_start(*req, &queued)) != MPI_SUCCESS)
            return rc;
        if (queued)
            return MPI_SUCCESS; /* the send queue starts it */
        order_before(*req);
    }
    return PMPI_Start(req);
}

int TJ_WRAPPER(MPI_Startall)(int n, MPI_Request reqs[])
{
    bool queued_small[64], *queued;
    bool any = false;
    int rc;

    if (!ours() || n <= 0)
        return PMPI_Startall(n, reqs);
    queued = n <= 64 ? queued_small : malloc((size_t)n * sizeof(bool));
    if (queued == NULL) {
        tj_log_error("out of memory starting %d requests; MPI_ERR_NO_MEM", n);
        return tj_mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
    }
    rc = tj_request_start_all(n, reqs, queued);
    for (int i = 0; i < n; i++)
        any |= queued[i];
    if (rc == MPI_SUCCESS && !any) {
        for (int i = 0; i < n; i++)
            order_before(reqs[i]);
        rc = PMPI_Startall(n, reqs);
    } else if (rc == MPI_SUCCESS) {
        /* The send queue starts the queued ones; the others start now, in order. */
        for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
            if (!queued[i]) {
                order_before(reqs[i]);
                rc = PMPI_Start(&reqs[i]);
            }
    }
    if (queued != queued_small)
        free(queued);
    return rc;
}

int TJ_WRAPPER(MPI_Cancel)(MPI_Request *req)
{
    if (ours() && req != NULL)
        tj_request_flush(*req);
    return PMPI_Cancel(req);
}

int TJ_WRAPPER(MPI_Request_free)(MPI_Request *req)
{
    if (!ours() || req == NULL)
        return PMPI_Request_free(req);
    return tj_request_free(req);
}

int TJ_WRAPPER(MPI_Request_get_status)(MPI_Request req, int *flag, MPI_Status *status)
{
    MPI_Status local, *st = status_for(status, &local);
    tj_request_t *r;
    int rc;

    if (!ours())
        return PMPI_Request_get_status(req, flag, status);
    if ((r = tj_request_take(req)) != NULL) {
        bool ready = tj_request_ready(r, req);
        tj_request_put(r, req);
        if (!ready) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    rc = PMPI_Request_get_status(req, flag, st);
    if (rc == MPI_SUCCESS && *flag)
        rc = tj_request_finish_early(req, st);
    return rc;
}
