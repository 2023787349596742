/* SPDX-License-Identifier: BSD-3-Clause */
/* Named datatypes as IR (see named.h). Nearly every constructor's child chain ends in a named
 * type, and its translation costs four MPI calls; named handles are never freed (predefined, or
 * the F90 types MPI keeps), so a handle once named stays that type, and the last few translated
 * on this thread are kept. */
#include "type/named.h"

#include "type/state.h"

bool tj_named_cached(MPI_Datatype type, tj_status_t *st, tj_ir_t *ir, tj_reason_t *why)
{
    for (int i = 0; i < tj_type_thread.named.used; i++) {
        const tj_named_entry_t *n = &tj_type_thread.named.cache[i];
        if (n->type != type)
            continue;
        *st = n->st == TJ_OK ? TJ_OK : tj_reason_not_strided(TJ_REASON_NAMED_HOLES, why);
        if (n->st == TJ_OK)
            tj_ir_init_dense(ir, n->lb, n->size);
        return true;
    }
    return false;
}

static void remember(MPI_Datatype type, tj_status_t st, const tj_ir_t *ir)
{
    tj_named_entry_t *n;

    if (st != TJ_OK && st != TJ_ERR_NOT_STRIDED)
        return; /* an MPI failure is not a property of the type */
    if (tj_type_thread.named.used < TJ_NAMED_CACHE) {
        n = &tj_type_thread.named.cache[tj_type_thread.named.used++];
    } else {
        n = &tj_type_thread.named.cache[tj_type_thread.named.next];
        tj_type_thread.named.next = (tj_type_thread.named.next + 1) % TJ_NAMED_CACHE;
    }
    n->type = type;
    n->st = st;
    n->lb = st == TJ_OK ? ir->node[0].offset : 0;
    n->size = st == TJ_OK ? ir->node[0].extent : 0;
}

/* A named type is one dense run when its size equals its true extent. MPI_SHORT_INT (a short, a
 * hole, an int: 6 bytes in 8) is not; MPI_DOUBLE_INT is 12 dense bytes in a 16-byte extent, so
 * it is a run whose objects step by 16. */
static tj_status_t translate_named(MPI_Datatype type, tj_ir_t *ir, tj_reason_t *why)
{
    MPI_Aint lb, extent;
    int size;

    if (PMPI_Type_get_true_extent(type, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_size(type, &size) != MPI_SUCCESS)
        return TJ_ERR_MPI;
    if (size != extent)
        return tj_reason_not_strided(TJ_REASON_NAMED_HOLES, why);
    tj_ir_init_dense(ir, lb, size);
    return TJ_OK;
}

tj_status_t tj_named_translate(MPI_Datatype type, tj_ir_t *ir, tj_reason_t *why)
{
    tj_status_t st = translate_named(type, ir, why);
    remember(type, st, ir);
    return st;
}
