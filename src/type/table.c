/* The type table: a uthash map from MPI_Datatype to its record under a reader-writer lock, safe
 * under MPI_THREAD_MULTIPLE. Lookups (every pack) take the read side only. */
#include "type/table.h"

#include <pthread.h>
#include <stdlib.h>
#include <uthash.h>

typedef struct {
    MPI_Datatype type;
    tj_type_info_t info;
    UT_hash_handle hh;
} entry_t;

static entry_t *table;
static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;

tj_status_t tj_table_put(MPI_Datatype type, const tj_type_info_t *info)
{
    entry_t *e, *old;

    pthread_rwlock_wrlock(&table_lock);
    HASH_FIND(hh, table, &type, sizeof(type), old);
    if (old != NULL) {
        old->info = *info;
        pthread_rwlock_unlock(&table_lock);
        return TJ_OK;
    }
    e = calloc(1, sizeof(*e));
    if (e == NULL) {
        pthread_rwlock_unlock(&table_lock);
        return TJ_ERR_NOMEM;
    }
    e->type = type;
    e->info = *info;
    HASH_ADD(hh, table, type, sizeof(e->type), e);
    pthread_rwlock_unlock(&table_lock);
    return TJ_OK;
}

bool tj_table_get(MPI_Datatype type, tj_type_info_t *info)
{
    entry_t *e;

    pthread_rwlock_rdlock(&table_lock);
    HASH_FIND(hh, table, &type, sizeof(type), e);
    if (e != NULL)
        *info = e->info;
    pthread_rwlock_unlock(&table_lock);
    return e != NULL;
}

void tj_table_drop(MPI_Datatype type)
{
    entry_t *e;

    pthread_rwlock_wrlock(&table_lock);
    HASH_FIND(hh, table, &type, sizeof(type), e);
    if (e != NULL) {
        HASH_DEL(table, e);
        free(e);
    }
    pthread_rwlock_unlock(&table_lock);
}

void tj_table_clear(void)
{
    entry_t *e, *tmp;

    pthread_rwlock_wrlock(&table_lock);
    HASH_ITER(hh, table, e, tmp)
    {
        HASH_DEL(table, e);
        free(e);
    }
    pthread_rwlock_unlock(&table_lock);
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
    info->true_lb = (int64_t)tlb;
    info->true_extent = (int64_t)textent;
}
