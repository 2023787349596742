/* Taking a wide datatype apart (see pieces.h), through MPI_Type_get_envelope and
 * MPI_Type_get_contents, only as deep as its spans are wide. */
#include "type/pieces.h"

#include <stdbool.h>
#include <stdlib.h>

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
    int ni, na, nd, combiner, *ints = NULL;
    MPI_Aint *aints = NULL;
    MPI_Datatype *types = NULL;
    MPI_Aint clb, cext = 0;

    if (depth >= PIECES_DEPTH ||
        PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS ||
        combiner == MPI_COMBINER_NAMED) {
        a->failed = true;
        return;
    }
    ints = malloc((size_t)(ni > 0 ? ni : 1) * sizeof(int));
    aints = malloc((size_t)(na > 0 ? na : 1) * sizeof(MPI_Aint));
    types = malloc((size_t)(nd > 0 ? nd : 1) * sizeof(MPI_Datatype));
    if (ints == NULL || aints == NULL || types == NULL ||
        PMPI_Type_get_contents(type, ni, na, nd, ints, aints, types) != MPI_SUCCESS) {
        a->failed = true;
        free(ints);
        free(aints);
        free(types);
        return;
    }
    if (nd > 0 && PMPI_Type_get_extent(types[0], &clb, &cext) != MPI_SUCCESS)
        a->failed = true;
    switch (a->failed ? -1 : combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: /* object 0's bytes are the child's */
        walk(a, types[0], disp, 1, depth + 1);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        walk(a, types[0], disp, ints[0], depth + 1);
        break;
    case MPI_COMBINER_VECTOR:
        for (int b = 0; b < ints[0] && !a->failed; b++)
            walk(a, types[0], disp + (int64_t)b * ints[2] * cext, ints[1], depth + 1);
        break;
    case MPI_COMBINER_HVECTOR:
        for (int b = 0; b < ints[0] && !a->failed; b++)
            walk(a, types[0], disp + (int64_t)b * aints[0], ints[1], depth + 1);
        break;
    case MPI_COMBINER_INDEXED:
        for (int b = 0; b < ints[0] && !a->failed; b++)
            walk(a, types[0], disp + (int64_t)ints[1 + ints[0] + b] * cext, ints[1 + b], depth + 1);
        break;
    case MPI_COMBINER_HINDEXED:
        for (int b = 0; b < ints[0] && !a->failed; b++)
            walk(a, types[0], disp + aints[b], ints[1 + b], depth + 1);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        for (int b = 0; b < ints[0] && !a->failed; b++)
            walk(a, types[0], disp + (int64_t)ints[2 + b] * cext, ints[1], depth + 1);
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int b = 0; b < ints[0] && !a->failed; b++)
            walk(a, types[0], disp + aints[b], ints[1], depth + 1);
        break;
    case MPI_COMBINER_STRUCT:
        for (int b = 0; b < ints[0] && !a->failed; b++)
            walk(a, types[b], disp + aints[b], ints[1 + b], depth + 1);
        break;
    default: /* subarray, darray, ...: not taken apart */
        a->failed = true;
        break;
    }
    /* The derived types get_contents returned are the caller's to free. */
    for (int i = 0; i < nd; i++) {
        int ci, ca, cd, cc;
        if (PMPI_Type_get_envelope(types[i], &ci, &ca, &cd, &cc) == MPI_SUCCESS &&
            cc != MPI_COMBINER_NAMED)
            PMPI_Type_free(&types[i]);
    }
    free(ints);
    free(aints);
    free(types);
}

/* `n` objects of @p type, object 0 at @p disp. */
static void walk(acc_t *a, MPI_Datatype type, int64_t disp, int64_t n, int depth)
{
    MPI_Count lb, ext, tlb, text;
    int64_t reach, lo, hi;

    if (a->failed || n <= 0)
        return;
    if (PMPI_Type_get_extent_x(type, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent_x(type, &tlb, &text) != MPI_SUCCESS ||
        !tj_mul64(n - 1, (int64_t)ext, &reach)) {
        a->failed = true;
        return;
    }
    if (text <= 0)
        return; /* touches no byte */
    lo = disp + (int64_t)tlb + (reach < 0 ? reach : 0);
    hi = disp + (int64_t)tlb + (int64_t)text + (reach > 0 ? reach : 0);
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

int tj_pieces(MPI_Datatype type, int count, tj_piece_t *out, int max)
{
    acc_t a = {out, 0, max, false};
    walk(&a, type, 0, count, 0);
    return a.failed ? -1 : a.n;
}
