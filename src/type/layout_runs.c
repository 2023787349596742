/* SPDX-License-Identifier: BSD-3-Clause */
/* A layout's contiguous runs (see layout_runs.h). */
#include "type/layout_runs.h"

#include "type/layout_builder.h"
#include "type/layout_internal.h"

/* Runs in packed order, adjacent ones merged before they are passed on. */
typedef struct {
    int64_t d, len, count, max;
    void (*fn)(int64_t, int64_t, void *);
    void *arg;
    int64_t row_base, row_len; /* the shaped part being walked (emit_row) */
} runs_t;

/* Pass on the pending run, if any. */
static bool flush(runs_t *r)
{
    if (r->len > 0) {
        if (r->count >= r->max)
            return false;
        if (r->fn != NULL)
            r->fn(r->d, r->len, r->arg);
        r->count++;
    }
    r->len = 0;
    return true;
}

static bool emit(runs_t *r, int64_t d, int64_t len)
{
    if (r->len > 0 && r->d + r->len == d) {
        r->len += len;
        return true;
    }
    if (!flush(r))
        return false;
    r->d = d;
    r->len = len;
    return true;
}

/* One row of a shaped part: a run of r->row_len bytes at r->row_base + the row's offset. */
static bool emit_row(int64_t off, void *arg)
{
    runs_t *r = arg;
    return emit(r, r->row_base + off, r->row_len);
}

static bool each_run(const tj_layout_t *l, runs_t *r)
{
    int64_t elems = tj_layout_elements(l);

    for (int64_t e = 0; e < elems; e++) {
        int64_t fo = tj_layout_frame_offset(l, e);
        for (int64_t p = 0; p < l->nparts; p++) {
            const tj_block_t *sh = &l->shapes[l->shape != NULL ? l->shape[p] : 0];
            int64_t len = l->pre[p + 1] - l->pre[p], d = fo + l->disp[p];
            if (tj_layout_is_run(sh)) {
                if (!emit(r, d, len))
                    return false;
                continue;
            }
            r->row_len = sh->counts[0];
            for (int64_t k = 0; k < len / sh->size; k++) {
                r->row_base = d + k * sh->extent;
                if (!tj_block_each_run(sh, emit_row, r))
                    return false;
            }
        }
    }
    return flush(r);
}

bool tj_layout_runs_each(const tj_layout_t *l, int64_t max,
                         void (*fn)(int64_t disp, int64_t len, void *arg), void *arg)
{
    runs_t r = {0, 0, 0, max, fn, arg, 0, 0};
    return each_run(l, &r);
}

int64_t tj_layout_runs_count(const tj_layout_t *l, int64_t max)
{
    runs_t r = {0, 0, 0, max, NULL, NULL, 0, 0};
    return each_run(l, &r) ? r.count : -1;
}

static void add_one_run(int64_t disp, int64_t len, void *arg)
{
    tj_layout_builder_add_run(arg, disp, len);
}

tj_status_t tj_layout_runs_make(const tj_layout_t *l, tj_layout_t **out)
{
    tj_layout_builder_t b;
    tj_layout_t *r = NULL;
    tj_status_t st;

    tj_layout_builder_init(&b);
    b.fold = false; /* runs only: one kernel per word serves every such layout */
    if (!tj_layout_runs_each(l, TJ_LAYOUT_MAX_PARTS, add_one_run, &b)) {
        if (tj_layout_builder_end(&b, &r) == TJ_OK)
            tj_layout_release(r);
        return TJ_ERR_NOT_STRIDED;
    }
    if ((st = tj_layout_builder_end(&b, &r)) != TJ_OK)
        return st;
    r->start += l->start;
    if ((st = tj_layout_finish(&r, l->extent, l->size)) != TJ_OK) {
        tj_layout_release(r);
        return st;
    }
    /* Always a table: its kernel is the same for every layout of runs. */
    tj_layout_unbake(r);
    *out = r;
    return TJ_OK;
}
