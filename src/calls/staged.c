/* SPDX-License-Identifier: BSD-3-Clause */
/* Calls staged through host mirrors (see staged.h). */
#include "calls/staged.h"

#include <stdlib.h>

#include "calls/request.h"
#include "util/log.h"
#include "util/stats.h"

tj_call_result_t tj_staged_begin(const char *fn, int n, const tj_staged_buf_t *bufs, bool keep,
                                 tj_staged_t **out, int *rc)
{
    tj_staged_t *s = calloc(1, sizeof(*s));
    bool any = false;

    if (s == NULL) {
        tj_log_error("%s: out of memory staging a device buffer", fn);
        *rc = MPI_ERR_NO_MEM;
        return TJ_CALL_FAILED;
    }
    s->fn = fn;
    s->n = n;
    for (int i = 0; i < n; i++) {
        const tj_staged_buf_t *b = &bufs[i];
        s->out[i] = b->out;
        s->has[i] = tj_mirror_find(b->info, b->type, b->buf, b->count, fn, &s->m[i]);
        any |= s->has[i];
    }
    if (!any) {
        free(s);
        return TJ_CALL_PASS;
    }
    if (keep && (s->reserved = tj_request_reserve()) == NULL) {
        tj_staged_release(s);
        *rc = MPI_ERR_NO_MEM;
        return TJ_CALL_FAILED;
    }
    for (int i = 0; i < n; i++) {
        if (!s->has[i])
            continue;
        if ((*rc = tj_mirror_fetch(&s->m[i], fn)) != MPI_SUCCESS ||
            (keep && s->out[i] && (*rc = tj_mirror_keep_type(&s->m[i])) != MPI_SUCCESS)) {
            tj_staged_release(s);
            return TJ_CALL_FAILED;
        }
    }
    tj_stats_inc(TJ_STAT_calls_staged);
    *out = s;
    return TJ_CALL_TAKEN;
}

void *tj_staged_arg(const tj_staged_t *s, int i, const void *buf)
{
    return s->has[i] ? tj_mirror_arg(&s->m[i]) : (void *)buf;
}

int tj_staged_finish(tj_staged_t *s)
{
    int rc = MPI_SUCCESS;

    if (s->finished)
        return MPI_SUCCESS;
    s->finished = true;
    for (int i = 0; i < s->n; i++)
        if (s->has[i] && s->out[i]) {
            int r = tj_mirror_write_back(&s->m[i]);
            if (rc == MPI_SUCCESS)
                rc = r;
        }
    return rc;
}

void tj_staged_release(tj_staged_t *s)
{
    tj_request_unreserve(s->reserved);
    for (int i = 0; i < s->n; i++)
        if (s->has[i])
            tj_mirror_free(&s->m[i]);
    free(s);
}

/* The write-back waits for itself: no batch. */
static int finish_cb(void *arg, const MPI_Status *status, tj_batch_t *b)
{
    (void)status;
    (void)b;
    return tj_staged_finish(arg);
}

static void release_cb(void *arg)
{
    tj_staged_release(arg);
}

int tj_staged_complete(tj_staged_t *s, int rc, MPI_Request *req)
{
    if (rc != MPI_SUCCESS) {
        tj_staged_release(s);
        return rc;
    }
    if (req != NULL && s->reserved != NULL) {
        tj_completion_t done = {finish_cb, release_cb, s};
        tj_request_add_completion(s->reserved, *req, &done);
        s->reserved = NULL;
        return MPI_SUCCESS;
    }
    rc = tj_staged_finish(s);
    tj_staged_release(s);
    return rc;
}
