/* SPDX-License-Identifier: BSD-3-Clause */
/* The type table: what typejit knows about each committed MPI_Datatype, keyed by handle. */
#ifndef TJ_TYPE_TABLE_H
#define TJ_TYPE_TABLE_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "type/block.h"
#include "type/contents.h"
#include "type/cpu.h"
#include "type/layout.h"
#include "type/state.h"

/* See tj_type_info_t.wide: 4 GiB, more than one object of a type relative to its buffer spans in
 * practice, and less than the distance between a heap address and a device address. */
#define TJ_WIDE ((int64_t)1 << 32)

/* The word variants of a launch: a word of 1, 2, 4, 8 or 16 bytes, alone or with an edge word
 * below it (tj_words_t): 5 + 10. */
#define TJ_PLAN_VARIANTS 15
/* Send methods a type's plan remembers, by packed size. */
#define TJ_PLAN_METHODS 4

/* What the layers above resolve once for a type and keep on its record, so that a steady call
 * finds it by index: per direction and word variant the kernel its launches use (a tj_kernel_t
 * of the kernel layer, opaque here; published once the kernel lookup has it) and whether it was
 * missed since the background compiler last finished one; the send methods chosen for the last
 * packed sizes. Caches only: a record with none of them moves the same bytes. */
typedef struct {
    _Atomic int target; /* the compile target the kernels are for (kernels/target.h); 0: none */
    _Atomic(void *) kernel[2][TJ_PLAN_VARIANTS];
    _Atomic unsigned missed[2][TJ_PLAN_VARIANTS];
    _Atomic unsigned long long methods[TJ_PLAN_METHODS];
    _Atomic unsigned next_method;
} tj_type_plan_t;

/* The record of a committed type: immutable once in the type table (but for the caches of its
 * plan), reference-counted, held by pointer. A call borrows it for its own length
 * (tj_table_get, tj_table_return); what keeps it beyond the call (a request, a mirror) holds a
 * reference (tj_type_hold, tj_type_release). A record is made by filling one on the stack and
 * handing it to tj_table_put or tj_table_replace_pending, which publish a copy. */
typedef struct tj_type_info {
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
     * Neither strided nor with a layout: the system MPI handles the type. A published record
     * holds a reference to it. */
    tj_layout_t *layout;
    /* Not strided, and whether it has a layout is not known yet: it is built at the type's first
     * device call (type/lazy.h), so that a program that never moves the type on a device pays
     * nothing for it. Until then the type is neither strided nor with a layout. */
    bool pending;
    tj_type_plan_t plan;
    uint64_t serial;  /* unique to this record in the process: what caches of launches name */
    _Atomic int refs; /* the table's, the holders', the borrowers' under MPI_THREAD_MULTIPLE */
    /* The pending record this one replaced (tj_table_replace_pending), kept while this one lives: a
     * call that borrowed it before the build may still read it. */
    const void *replaced;
    /* A duplicate of the type's handle, made when the application freed the type while
     * something still held this record (tj_table_drop), freed with the record: what a
     * transfer still to finish packs with (tj_type_handle). */
    MPI_Datatype kept;
    atomic_bool has_kept;
} tj_type_info_t;

/* Whether a kernel can move the type: it is strided or has a layout (a pending type has
 * neither yet). */
static inline bool tj_type_info_kernel(const tj_type_info_t *info)
{
    return info->strided || info->layout != NULL;
}

/* A reference to a published record @p info (NULL is passed through), for what keeps it beyond
 * the current call; undone by tj_type_release. */
const tj_type_info_t *tj_type_hold(const tj_type_info_t *info);
void tj_type_release(const tj_type_info_t *info);

/* The handle to move the type of @p info with: @p handle, the application's, or, once the
 * application freed it, the duplicate the record kept. */
static inline MPI_Datatype tj_type_handle(const tj_type_info_t *info, MPI_Datatype handle)
{
    return info != NULL && atomic_load_explicit(&info->has_kept, memory_order_acquire) ? info->kept
                                                                                       : handle;
}

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

/* Publish a record made from @p info for @p type, replacing any earlier record (handles are
 * reused after free); it takes a reference to info->layout, and its plan starts empty. */
tj_status_t tj_table_put(MPI_Datatype type, const tj_type_info_t *info);

/* Publish @p info itself, a record already published under another handle, for @p type too
 * (MPI_Type_dup: a duplicate shares its original's record, plan and kernels). */
tj_status_t tj_table_share(MPI_Datatype type, const tj_type_info_t *info);

/* The commit record of @p type, borrowed for the length of the calling MPI call (with a
 * reference under MPI_THREAD_MULTIPLE, where another thread may free the type meanwhile): NULL
 * when there is none. Every record it returns goes back through tj_table_return. */
const tj_type_info_t *tj_table_lookup(MPI_Datatype type);
/* Whether borrowed records are counted (MPI_THREAD_MULTIPLE): tj_table_set_threaded. */
static inline bool tj_table_threaded(void)
{
    return atomic_load_explicit(&tj_type_state.table.threaded, memory_order_relaxed);
}
/* The last record this thread looked up, while the table has not changed since
 * (tj_table_last_t). */
static inline const tj_type_info_t *tj_table_get(MPI_Datatype type)
{
    const tj_table_last_t *last = &tj_type_thread.table.last;

    if (last->info != NULL && last->type == type &&
        last->changes == atomic_load_explicit(&tj_type_state.table.changes, memory_order_relaxed) &&
        !tj_table_threaded())
        return last->info;
    return tj_table_lookup(type);
}
void tj_table_return_counted(const tj_type_info_t *info);
static inline void tj_table_return(const tj_type_info_t *info)
{
    if (info != NULL && tj_table_threaded())
        tj_table_return_counted(info);
}

/* What tj_table_claim found. */
typedef enum {
    TJ_TABLE_NONE,    /* no commit record */
    TJ_TABLE_BUILT,   /* a record that is not pending, borrowed into *info */
    TJ_TABLE_CLAIMED, /* a pending record, borrowed: the caller builds its layout and replaces it */
    TJ_TABLE_BUSY,    /* a pending record whose layout another thread is building */
} tj_table_claim_t;

/* The commit record of @p type, claimed for its layout's build when it is pending and no other
 * thread has claimed it (type/lazy.h builds it without holding any lock, then replaces it). */
tj_table_claim_t tj_table_claim(MPI_Datatype type, const tj_type_info_t **info);

/* Replace the commit record of @p type by one made from @p info (its layout built) if that
 * record is still pending, ending its claim; the new record takes a reference to info->layout
 * and to the pending record (borrowers of that one may go on reading it), and is borrowed into
 * *@p built. TJ_ERR_NOT_FOUND when there is no pending record (the type was freed, or another
 * thread built it first). */
tj_status_t tj_table_replace_pending(MPI_Datatype type, const tj_type_info_t *info,
                                     const tj_type_info_t **built);

/* Forget @p type, both its commit and its creation record (MPI_Type_free, before the system
 * MPI's): a record something still holds keeps a duplicate of the handle (tj_type_handle). */
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
