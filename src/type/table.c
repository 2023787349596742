/* SPDX-License-Identifier: BSD-3-Clause */
/* The type table: an open-addressing map from MPI_Datatype to its record under a reader-writer
 * lock, safe under MPI_THREAD_MULTIPLE. Lookups (every pack) take the read side only.
 *
 * Every constructor, commit and free of a datatype passes through here, so a lookup must cost
 * a few nanoseconds: the slots hold the key beside the entry pointer (one cache line for the
 * probe), and inserting or deleting touches no other entry (uthash's application-order list
 * touched two neighbours on each, a cache miss apiece in a table of thousands of types).
 *
 * The lock is taken only when the application may call MPI from several threads at once
 * (MPI_THREAD_MULTIPLE): below that level the MPI standard lets one thread at a time into MPI,
 * and every caller of this table is inside an MPI call (typejit's compile threads never touch
 * it). The lock calls were a sixth of the instructions typejit added to a constructor. */
#include "type/table.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "type/state.h"
#include "util/slab.h"

/* This module's part of the layer's state. */
static __typeof__(tj_type_state.table) *const table_state = &tj_type_state.table;

/* Chains of up to this many nodes are kept inside the entry: nearly all of them. */
#define KNOWN_SMALL 3

/* Small, because every type the application creates has one (intermediates included, and a
 * batch of thousands is common): the commit record is allocated only when the type is
 * committed. */
typedef struct tj_table_entry {
    bool known;    /* the creation record below is valid */
    bool building; /* a thread builds the pending commit record's layout (tj_table_claim) */
    int nnodes;
    tj_type_known_t kn;
    tj_type_info_t *info; /* the commit record; NULL when not committed */
    tj_ir_node_t *nodes;  /* small, or allocated */
    tj_ir_node_t small[KNOWN_SMALL];
} entry_t;

typedef struct tj_table_slot {
    MPI_Datatype type;
    entry_t *e; /* NULL: the slot is empty */
} slot_t;

void tj_table_set_threaded(bool multiple)
{
    atomic_store_explicit(&table_state->threaded, multiple, memory_order_relaxed);
}

static void read_lock(void)
{
    if (tj_table_threaded())
        pthread_rwlock_rdlock(&table_state->lock);
}

static void write_lock(void)
{
    if (tj_table_threaded())
        pthread_rwlock_wrlock(&table_state->lock);
    atomic_fetch_add_explicit(&table_state->changes, 1, memory_order_relaxed);
}

/* Unlocks what the matching lock call took: the level cannot change in between, since it is set
 * once, inside MPI_Init, before any type exists. */
static void unlock(void)
{
    if (tj_table_threaded())
        pthread_rwlock_unlock(&table_state->lock);
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static size_t slot_hash(MPI_Datatype type)
{
    uint64_t x = 0;

    memcpy(&x, &type, sizeof(type) < sizeof(x) ? sizeof(type) : sizeof(x));
    /* An int in MPICH (consecutive indices): mixed. */
    if (sizeof(type) < sizeof(void *))
        return (size_t)mix(x);
    /* A pointer in Open MPI. Types made one after another lie near one another in memory, and a
     * batch of them is committed and freed in the same order: their slots are kept in that
     * order too (one per 64 bytes of address), so that a batch walks the slots as it walks the
     * objects instead of missing the cache at each one. Each MiB of addresses starts at a
     * mixed place, so that addresses a MiB apart do not pile up on one slot. */
    return (size_t)((x >> 6) + mix(x >> 20));
}

/* The slot of @p type, or of the empty slot where it would go. nslots must be non-zero. */
static size_t slot_find(MPI_Datatype type)
{
    size_t mask = table_state->nslots - 1, i = slot_hash(type) & mask;
    while (table_state->slots[i].e != NULL && table_state->slots[i].type != type)
        i = (i + 1) & mask;
    return i;
}

static entry_t *entry_find(MPI_Datatype type)
{
    if (table_state->nslots == 0)
        return NULL;
    return table_state->slots[slot_find(type)].e;
}

static bool grow(void)
{
    size_t old_n = table_state->nslots, n = table_state->nslots ? table_state->nslots * 2 : 256;
    slot_t *old = table_state->slots, *fresh = calloc(n, sizeof(*fresh));

    if (fresh == NULL)
        return false;
    table_state->slots = fresh;
    table_state->nslots = n;
    for (size_t i = 0; i < old_n; i++)
        if (old[i].e != NULL)
            table_state->slots[slot_find(old[i].type)] = old[i];
    free(old);
    return true;
}

/* Remove the entry at slot @p i, shifting back the entries after it that probed past it, so
 * that no tombstones are needed. */
static void slot_remove(size_t i)
{
    size_t mask = table_state->nslots - 1, j = i;

    for (;;) {
        size_t k;
        j = (j + 1) & mask;
        if (table_state->slots[j].e == NULL)
            break;
        k = slot_hash(table_state->slots[j].type) & mask;
        /* Move j into the hole at i unless its home k lies cyclically in (i, j]. */
        if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
            continue;
        table_state->slots[i] = table_state->slots[j];
        i = j;
    }
    table_state->slots[i].e = NULL;
    table_state->nused--;
}

/* An object of @p pool, whose object size is set at its first use, under the lock that guards
 * the pool: state.c cannot name the types (the entry is this file's; table.h, which declares
 * the record, includes state.h). */
static void *pool_alloc(tj_slab_t *pool, size_t size)
{
    if (TJ_UNLIKELY(pool->size == 0))
        pool->size = ((tj_slab_t)TJ_SLAB_INIT(size)).size;
    return tj_slab_alloc(pool);
}

/* A record made from @p from, with one reference (the caller's) and an empty plan. */
static tj_type_info_t *record_new(const tj_type_info_t *from)
{
    tj_type_info_t *r;

    pthread_mutex_lock(&table_state->record_lock);
    r = pool_alloc(&table_state->info_pool, sizeof(tj_type_info_t));
    table_state->live_records += r != NULL;
    pthread_mutex_unlock(&table_state->record_lock);
    if (r == NULL)
        return NULL;
    *r = *from;
    memset(&r->plan, 0, sizeof(r->plan));
    r->replaced = NULL;
    r->serial = atomic_fetch_add_explicit(&table_state->serials, 1, memory_order_relaxed) + 1;
    atomic_init(&r->has_kept, false);
    atomic_init(&r->refs, 1);
    tj_layout_hold(r->layout);
    return r;
}

static void record_unref(const tj_type_info_t *info)
{
    tj_type_info_t *r = (tj_type_info_t *)info;

    while (r != NULL && atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1) {
        tj_type_info_t *from = (tj_type_info_t *)r->replaced;
        if (atomic_load(&r->has_kept))
            PMPI_Type_free(&r->kept);
        tj_layout_release(r->layout);
        pthread_mutex_lock(&table_state->record_lock);
        tj_slab_free(&table_state->info_pool, r);
        table_state->live_records--;
        pthread_mutex_unlock(&table_state->record_lock);
        r = from;
    }
}

/* A borrowed record: counted only where another thread may drop the table's reference while
 * the borrower uses it. The level is set once, inside MPI_Init, before any record exists. */
static const tj_type_info_t *borrow(const tj_type_info_t *info)
{
    if (info != NULL && tj_table_threaded())
        atomic_fetch_add_explicit(&((tj_type_info_t *)info)->refs, 1, memory_order_relaxed);
    return info;
}

void tj_table_return_counted(const tj_type_info_t *info)
{
    record_unref(info);
}

static void entry_release(entry_t *e)
{
    if (e->nodes != e->small)
        free(e->nodes);
    record_unref(e->info);
    tj_slab_free(&table_state->entry_pool, e);
}

const tj_type_info_t *tj_type_hold(const tj_type_info_t *info)
{
    if (info != NULL)
        atomic_fetch_add_explicit(&((tj_type_info_t *)info)->refs, 1, memory_order_relaxed);
    return info;
}

void tj_type_release(const tj_type_info_t *info)
{
    record_unref(info);
}

/* The entry of @p type, created empty when there is none; NULL when out of memory. Called with
 * the write lock held. */
static entry_t *entry_get(MPI_Datatype type)
{
    entry_t *e;
    size_t i;

    if ((e = entry_find(type)) != NULL)
        return e;
    if ((table_state->nused + 1) * 2 > table_state->nslots && !grow())
        return NULL;
    if ((e = pool_alloc(&table_state->entry_pool, sizeof(entry_t))) == NULL)
        return NULL;
    e->known = false;
    e->building = false;
    e->nnodes = 0;
    e->info = NULL;
    e->nodes = e->small;
    i = slot_find(type);
    table_state->slots[i].type = type;
    table_state->slots[i].e = e;
    table_state->nused++;
    return e;
}

/* Publish @p r under @p type, taking the caller's reference to it (dropped when it is not
 * published); @p if_pending: only in place of a pending record, else TJ_ERR_NOT_FOUND. */
static tj_status_t publish(MPI_Datatype type, const tj_type_info_t *r, bool if_pending,
                           const tj_type_info_t **built)
{
    const tj_type_info_t *old = NULL;
    entry_t *e;
    bool done = false;

    write_lock();
    e = if_pending ? entry_find(type) : entry_get(type);
    if (e != NULL && (!if_pending || (e->info != NULL && e->info->pending))) {
        old = e->info;
        if (if_pending) {
            ((tj_type_info_t *)r)->replaced = old; /* the table's reference, moved */
            old = NULL;
        }
        e->info = (tj_type_info_t *)r;
        e->building = false;
        done = true;
        if (built != NULL)
            *built = borrow(r);
    }
    unlock();
    record_unref(old);
    if (done)
        return TJ_OK;
    record_unref(r);
    return if_pending ? TJ_ERR_NOT_FOUND : TJ_ERR_NOMEM; /* no pending record, or no entry */
}

tj_status_t tj_table_put(MPI_Datatype type, const tj_type_info_t *info)
{
    tj_type_info_t *r = record_new(info);

    if (r == NULL)
        return TJ_ERR_NOMEM;
    return publish(type, r, false, NULL);
}

tj_status_t tj_table_share(MPI_Datatype type, const tj_type_info_t *info)
{
    tj_type_hold(info);
    return publish(type, info, false, NULL);
}

const tj_type_info_t *tj_table_lookup(MPI_Datatype type)
{
    const tj_type_info_t *r;
    unsigned now = atomic_load_explicit(&table_state->changes, memory_order_relaxed);
    entry_t *e;

    read_lock();
    e = entry_find(type);
    r = borrow(e != NULL ? e->info : NULL);
    unlock();
    tj_type_thread.table.last.type = type;
    tj_type_thread.table.last.info = r;
    tj_type_thread.table.last.changes = now;
    return r;
}

tj_table_claim_t tj_table_claim(MPI_Datatype type, const tj_type_info_t **info)
{
    tj_table_claim_t found = TJ_TABLE_NONE;
    entry_t *e;

    write_lock();
    e = entry_find(type);
    if (e != NULL && e->info != NULL) {
        *info = borrow(e->info);
        if (!e->info->pending)
            found = TJ_TABLE_BUILT;
        else if (e->building)
            found = TJ_TABLE_BUSY;
        else {
            e->building = true;
            found = TJ_TABLE_CLAIMED;
        }
    }
    unlock();
    return found;
}

tj_status_t tj_table_replace_pending(MPI_Datatype type, const tj_type_info_t *info,
                                     const tj_type_info_t **built)
{
    tj_type_info_t *r = record_new(info);

    if (r == NULL)
        return TJ_ERR_NOMEM;
    return publish(type, r, true, built);
}

tj_status_t tj_table_put_known(MPI_Datatype type, const tj_type_known_t *known, const tj_ir_t *ir)
{
    int n = known->st == TJ_OK && ir != NULL ? ir->n : 0;
    tj_ir_node_t *nodes = NULL;
    const tj_type_info_t *old_info = NULL;
    entry_t *e;

    if (n > KNOWN_SMALL && (nodes = malloc((size_t)n * sizeof(*nodes))) == NULL) {
        tj_table_drop(type); /* no record is better than a stale one */
        return TJ_ERR_NOMEM;
    }
    write_lock();
    e = entry_get(type);
    if (e != NULL) {
        if (e->nodes != e->small)
            free(e->nodes);
        e->nodes = n > KNOWN_SMALL ? nodes : e->small;
        if (n > 0)
            memcpy(e->nodes, ir->node, (size_t)n * sizeof(*nodes));
        e->nnodes = n;
        e->kn = *known;
        e->known = true;
        /* A new type at this handle: an old commit record is stale. */
        old_info = e->info;
        e->info = NULL;
        e->building = false;
    }
    unlock();
    record_unref(old_info);
    if (e == NULL) {
        free(nodes);
        return TJ_ERR_NOMEM;
    }
    return TJ_OK;
}

bool tj_table_get_known(MPI_Datatype type, tj_type_known_t *known, tj_ir_t *ir)
{
    entry_t *e;
    bool found;

    read_lock();
    e = entry_find(type);
    found = e != NULL && e->known;
    if (found) {
        *known = e->kn;
        ir->n = e->nnodes;
        memcpy(ir->node, e->nodes, (size_t)e->nnodes * sizeof(ir->node[0]));
    }
    unlock();
    return found;
}

void tj_table_drop(MPI_Datatype type)
{
    tj_type_info_t *info = NULL;
    entry_t *e;

    write_lock();
    if (table_state->nslots > 0) {
        size_t i = slot_find(type);
        if ((e = table_state->slots[i].e) != NULL) {
            slot_remove(i);
            info = e->info;
            e->info = NULL;
            entry_release(e);
        }
    }
    unlock();
    /* Held beyond the table (a transfer still to finish): the handle outlives the
     * application's. The records a record replaced share its handle but are only read. */
    if (info != NULL && atomic_load(&info->refs) > 1 && !atomic_load(&info->has_kept) &&
        PMPI_Type_dup(type, &info->kept) == MPI_SUCCESS)
        atomic_store_explicit(&info->has_kept, true, memory_order_release);
    record_unref(info);
}

void tj_table_strided_blocks(tj_block_t **blocks, size_t *n)
{
    tj_block_t *v = NULL;
    size_t count = 0, cap = 0;

    read_lock();
    for (size_t i = 0; i < table_state->nslots; i++) {
        const tj_type_info_t *info =
            table_state->slots[i].e != NULL ? table_state->slots[i].e->info : NULL;
        if (info == NULL || !info->strided)
            continue;
        if (count == cap) {
            size_t grown = cap ? 2 * cap : 64;
            tj_block_t *b = realloc(v, grown * sizeof(*b));
            if (b == NULL)
                break; /* the rest get their kernels at their device calls */
            v = b;
            cap = grown;
        }
        v[count++] = info->block;
    }
    unlock();
    *blocks = v;
    *n = count;
}

void tj_table_clear(void)
{
    tj_type_info_t **gone;
    size_t ngone = 0;

    write_lock();
    /* Records are released after the lock where memory allows: one with a kept handle frees it,
     * an MPI call. */
    gone = calloc(table_state->nslots > 0 ? table_state->nslots : 1, sizeof(*gone));
    for (size_t i = 0; i < table_state->nslots; i++)
        if (table_state->slots[i].e != NULL) {
            if (gone != NULL) {
                gone[ngone++] = table_state->slots[i].e->info;
                table_state->slots[i].e->info = NULL;
            }
            entry_release(table_state->slots[i].e);
        }
    free(table_state->slots);
    table_state->slots = NULL;
    table_state->nslots = table_state->nused = 0;
    tj_slab_release(&table_state->entry_pool);
    unlock();
    for (size_t i = 0; i < ngone; i++)
        record_unref(gone[i]);
    free(gone);
    /* Records still held (by requests the application never completed) stay where they are. */
    pthread_mutex_lock(&table_state->record_lock);
    if (table_state->live_records == 0)
        tj_slab_release(&table_state->info_pool);
    pthread_mutex_unlock(&table_state->record_lock);
}

void tj_table_read_extents(MPI_Datatype type, tj_type_info_t *info)
{
    MPI_Count size, lb, extent, tlb, textent;
    info->extents = PMPI_Type_size_x(type, &size) == MPI_SUCCESS &&
                    PMPI_Type_get_extent_x(type, &lb, &extent) == MPI_SUCCESS &&
                    PMPI_Type_get_true_extent_x(type, &tlb, &textent) == MPI_SUCCESS;
    if (!info->extents)
        return;
    info->size = (int64_t)size;
    info->extent = (int64_t)extent;
    /* An empty type touches no byte, whatever the MPI says its true bounds are (Open MPI: a
     * lower bound of 2^63 - 1 for a struct of empty members, which no address may be offset by). */
    info->true_lb = size == 0 ? 0 : (int64_t)tlb;
    info->true_extent = size == 0 ? 0 : (int64_t)textent;
    info->wide = info->true_lb >= TJ_WIDE || info->true_lb <= -TJ_WIDE ||
                 info->true_extent >= TJ_WIDE || info->extent >= TJ_WIDE ||
                 info->extent <= -TJ_WIDE;
}

/* The number a type's handle has in Fortran: MPI_Type_c2f, or in the standard ABI (whose C
 * header has no Fortran types) MPI_Type_toint. */
#if defined(MPI_ABI_VERSION)
#define TYPE_NUMBER(_t) PMPI_Type_toint(_t)
#else
#define TYPE_NUMBER(_t) PMPI_Type_c2f(_t)
#endif

void tj_table_label(MPI_Datatype type, char *buf, size_t len)
{
    char name[MPI_MAX_OBJECT_NAME] = "";
    int n = 0;

    if (type == MPI_DATATYPE_NULL) {
        snprintf(buf, len, "MPI_DATATYPE_NULL");
        return;
    }
    if (PMPI_Type_get_name(type, name, &n) != MPI_SUCCESS || n <= 0)
        name[0] = '\0';
    if (name[0] != '\0')
        snprintf(buf, len, "type %d \"%s\"", (int)TYPE_NUMBER(type), name);
    else
        snprintf(buf, len, "type %d", (int)TYPE_NUMBER(type));
}
