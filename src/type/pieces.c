/* SPDX-License-Identifier: BSD-3-Clause */
/* Taking a wide datatype apart (see pieces.h), through MPI_Type_get_envelope and
 * MPI_Type_get_contents, only as deep as its spans are wide. */
#include "type/pieces.h"

#include <stdbool.h>
#include <stdlib.h>

#include "type/contents.h"
#include "type/table.h"
#include "util/common.h"

/* Nesting taken apart at most. */
#define PIECES_DEPTH 16

typedef struct {
    tj_piece_t *out;
    int n, max;
    bool failed;
} acc_t;

static void add(acc_t *a, int64_t lo, int64_t hi)
{
    if (a->n >= a->max) {
        a->failed = true;
        return;
    }
    a->out[a->n].lo = lo;
    a->out[a->n].hi = hi;
    a->n++;
}

static void walk(acc_t *a, MPI_Datatype type, int64_t disp, int64_t n, int depth);

/* One object of @p type, whose span is wide, at @p disp: its constructor's blocks. */
static void take_apart(acc_t *a, MPI_Datatype type, int64_t disp, int depth)
{
    tj_contents_t *c;
    const tj_type_args_t *g;
    MPI_Aint clb, cext = 0;

    if (depth >= PIECES_DEPTH || tj_contents_new(type, &c) != TJ_OK) {
        a->failed = true;
        return;
    }
    g = &c->args;
    if (tj_combiner_named(c->env.combiner) ||
        (c->env.nd > 0 && PMPI_Type_get_extent(c->types[0], &clb, &cext) != MPI_SUCCESS))
        a->failed = true;
    switch (a->failed ? -1 : g->combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: /* object 0's bytes are the child's */
        walk(a, g->child, disp, 1, depth + 1);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        walk(a, g->child, disp, g->count, depth + 1);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        int64_t step = g->combiner == MPI_COMBINER_VECTOR ? g->stride * cext : g->stride;
        for (int64_t b = 0; b < g->count && !a->failed; b++)
            walk(a, g->child, disp + b * step, g->blocklen, depth + 1);
        break;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
        for (int64_t b = 0; b < g->count && !a->failed; b++)
            walk(a, g->child, disp + tj_array_at(g->displs, b) * cext,
                 g->combiner == MPI_COMBINER_INDEXED ? tj_array_at(g->blocklens, b) : g->blocklen,
                 depth + 1);
        break;
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int64_t b = 0; b < g->count && !a->failed; b++)
            walk(a, g->child, disp + tj_array_at(g->bdispls, b),
                 g->combiner == MPI_COMBINER_HINDEXED ? tj_array_at(g->blocklens, b) : g->blocklen,
                 depth + 1);
        break;
    case MPI_COMBINER_STRUCT:
        for (int64_t b = 0; b < g->count && !a->failed; b++)
            walk(a, g->types[b], disp + tj_array_at(g->bdispls, b), tj_array_at(g->blocklens, b),
                 depth + 1);
        break;
    default: /* subarray, darray, ...: not taken apart */
        a->failed = true;
        break;
    }
    tj_contents_delete(c);
}

/* `n` objects of @p type, object 0 at @p disp. */
static void walk(acc_t *a, MPI_Datatype type, int64_t disp, int64_t n, int depth)
{
    MPI_Count lb, ext, tlb, text, size;
    int64_t reach, first, far, lo, hi;

    if (a->failed || n <= 0)
        return;
    if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS) {
        a->failed = true;
        return;
    }
    /* An empty type touches no byte, whatever its true bounds (Open MPI gives a struct of empty
     * members a true lower bound of 2^63 - 1). */
    if (size == 0)
        return;
    if (PMPI_Type_get_extent_x(type, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent_x(type, &tlb, &text) != MPI_SUCCESS ||
        !tj_mul64(n - 1, (int64_t)ext, &reach) || !tj_add64(disp, (int64_t)tlb, &first) ||
        !tj_add64(first, reach < 0 ? reach : 0, &lo) ||
        !tj_add64((int64_t)text, reach > 0 ? reach : 0, &far) || !tj_add64(first, far, &hi)) {
        a->failed = true;
        return;
    }
    if (text <= 0)
        return; /* touches no byte */
    if (hi - lo < TJ_WIDE) {
        add(a, lo, hi);
        return;
    }
    if (n > 1) {
        for (int64_t k = 0; k < n && !a->failed; k++)
            walk(a, type, disp + k * (int64_t)ext, 1, depth);
        return;
    }
    take_apart(a, type, disp, depth);
}

int tj_pieces(MPI_Datatype type, int64_t count, tj_piece_t *out, int max)
{
    acc_t a = {out, 0, max, false};
    walk(&a, type, 0, count, 0);
    return a.failed ? -1 : a.n;
}
