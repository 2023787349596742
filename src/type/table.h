/* SPDX-License-Identifier: BSD-3-Clause */
/* The type table: what typejit knows about each committed MPI_Datatype, keyed by handle. */
#ifndef TJ_TYPE_TABLE_H
#define TJ_TYPE_TABLE_H

#include <mpi.h>
#include <stdbool.h>

#include "type/block.h"
#include "type/contents.h"
#include "type/cpu.h"
#include "type/layout.h"

/* See tj_type_info_t.wide: 4 GiB, more than one object of a type relative to its buffer spans in
 * practice, and less than the distance between a heap address and a device address. */
#define TJ_WIDE ((int64_t)1 << 32)
/* Entries are copied in and out under a lock, so a reader never sees one that another thread
 * is dropping. */
typedef struct {
    bool extents;                 /* the four MPI values below are known */
    int64_t size;                 /* MPI_Type_size */
    int64_t extent;               /* MPI_Type_get_extent */
    int64_t true_lb, true_extent; /* MPI_Type_get_true_extent: the bytes one object touches */
    /* Its bytes may lie in more than one allocation: an absolute lower bound or an extent of
     * TJ_WIDE bytes or more (a type over MPI_BOTTOM built from addresses, a huge stride). Decided
     * with the extents, so that every other type pays nothing for it at each call. */
    bool wide;
    bool strided;     /* one strided block: `block` */
    tj_status_t why;  /* TJ_OK, or why the type is not strided */
    int reason;       /* tj_reason_t (type/translate.h) when why is NOT_STRIDED */
    tj_block_t block; /* valid when strided */
    /* How the CPU packer moves the block, and whether TYPEJIT_HOST=auto lets it pack the type's
     * host calls: made at commit for a strided type unless TYPEJIT_HOST=system (run 0: none). */
    tj_cpu_plan_t cpu;
    /* A type that is not strided but has a layout (type/layout.h), finished; NULL otherwise.
     * Neither strided nor with a layout: the system MPI handles the type. The table's record
     * holds a reference; a copy made by tj_table_get does not: a copy kept beyond the MPI call
     * that made it (a request's) takes one of its own with tj_type_info_hold. */
    tj_layout_t *layout;
    /* Not strided, and whether it has a layout is not known yet: it is built at the type's first
     * device call (type/lazy.h), so that a program that never moves the type on a device pays
     * nothing for it. Until then the type is neither strided nor with a layout. */
    bool pending;
} tj_type_info_t;

/* Whether a kernel can move the type: it is strided or has a layout (a pending type has
 * neither yet). */
static inline bool tj_type_info_kernel(const tj_type_info_t *info)
{
    return info->strided || info->layout != NULL;
}

/* Take a reference to what @p info points to, for a copy kept beyond the current call; undone
 * by tj_type_info_release. */
void tj_type_info_hold(const tj_type_info_t *info);
void tj_type_info_release(tj_type_info_t *info);

/* What typejit learnt of a type when it was created (the constructor wrappers), kept until the
 * type is freed, committed or not: the status of its translation (with the chain, when TJ_OK),
 * and its envelope, which tells a reused handle from the type recorded. */
typedef struct {
    tj_status_t st;
    int reason; /* tj_reason_t when st is TJ_ERR_NOT_STRIDED */
    tj_envelope_t env;
} tj_type_known_t;

/* Whether MPI may be called from several threads at once (MPI_THREAD_MULTIPLE): the table locks
 * only then. Set inside MPI_Init, before any type exists; until then it locks. */
void tj_table_set_threaded(bool multiple);

/* Record what @p type was made of, replacing any earlier record of the handle, committed or
 * not (a constructor returned it, so it is a new type). @p ir may be NULL unless st is TJ_OK. */
tj_status_t tj_table_put_known(MPI_Datatype type, const tj_type_known_t *known, const tj_ir_t *ir);

/* Copy the creation record of @p type; false when there is none. */
bool tj_table_get_known(MPI_Datatype type, tj_type_known_t *known, tj_ir_t *ir);

/* Read the MPI size, extent and true extent of @p type into @p info (info->extents says whether
 * the system MPI answered): once per type at commit, so that device calls need not ask. */
void tj_table_read_extents(MPI_Datatype type, tj_type_info_t *info);

/* Record @p info for @p type, replacing any earlier record (handles are reused after free); the
 * record takes a reference to info->layout. */
tj_status_t tj_table_put(MPI_Datatype type, const tj_type_info_t *info);

/* Copy the commit record of @p type into @p info; false when there is none. */
bool tj_table_get(MPI_Datatype type, tj_type_info_t *info);

/* What tj_table_claim found. */
typedef enum {
    TJ_TABLE_NONE,    /* no commit record */
    TJ_TABLE_SETTLED, /* a record that is not pending, copied into *info */
    TJ_TABLE_CLAIMED, /* a pending record, copied: the caller builds its layout and settles it */
    TJ_TABLE_BUSY,    /* a pending record whose layout another thread is building */
} tj_table_claim_t;

/* The commit record of @p type, claimed for its layout's build when it is pending and no other
 * thread has claimed it (type/lazy.h builds it without holding any lock, then settles it). */
tj_table_claim_t tj_table_claim(MPI_Datatype type, tj_type_info_t *info);

/* Replace the commit record of @p type by @p info (its layout built) if that record is still
 * pending, ending its claim; the record takes a reference to info->layout. TJ_ERR_NOT_FOUND
 * when there is no pending record (the type was freed, or another thread settled it first). */
tj_status_t tj_table_settle(MPI_Datatype type, const tj_type_info_t *info);

/* Forget @p type, both its commit and its creation record (MPI_Type_free). */
void tj_table_drop(MPI_Datatype type);

/* The blocks of every committed strided type, copied (malloc'd into *@p blocks, the caller frees
 * them; as many as memory allows): the kernels of the types committed before the process met
 * the GPU are asked for this way. */
void tj_table_strided_blocks(tj_block_t **blocks, size_t *n);

/* The type as debug lines name it: `type N` (its Fortran handle, a small number in Open MPI),
 * with `"NAME"` when the application gave it one (MPI_Type_set_name), e.g. `type 17 "halo
 * x-face"`. */
void tj_table_label(MPI_Datatype type, char *buf, size_t len);

/* Forget every type (MPI_Finalize). */
void tj_table_clear(void);

#endif /* TJ_TYPE_TABLE_H */
