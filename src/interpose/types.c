/* MPI_Type_commit and MPI_Type_free: translate each committed type once and keep its record. */
#include "interpose/interpose.h"
#include "send/devpack.h"
#include "type/translate.h"
#include "util/log.h"
#include "util/stats.h"

void tj_interpose_record(MPI_Datatype type)
{
    tj_type_info_t info = {0};
    tj_status_t st = tj_translate_block(type, &info.block, NULL);

    tj_table_read_extents(type, &info);
    info.strided = st == TJ_OK;
    info.why = st;
    tj_stats_inc(TJ_STAT_commits);
    tj_stats_inc(info.strided ? TJ_STAT_strided : TJ_STAT_fallback);
    if (!info.strided && st != TJ_ERR_NOT_STRIDED)
        tj_log_info("datatype left to the system MPI: %s", tj_status_string(st));
    tj_devpack_prepare(&info);
    if (tj_table_put(type, &info) != TJ_OK)
        tj_log_warn_once("out of memory recording a datatype; it is left to the system MPI");
}

bool tj_interpose_lookup(MPI_Datatype type, tj_type_info_t *info)
{
    int ni, na, nd, combiner;

    if (tj_table_get(type, info))
        return true;
    /* Named types are never committed; record them the first time they are packed. */
    if (type == MPI_DATATYPE_NULL ||
        PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS ||
        combiner != MPI_COMBINER_NAMED)
        return false;
    *info = (tj_type_info_t){0};
    info->why = tj_translate_block(type, &info->block, NULL);
    info->strided = info->why == TJ_OK;
    tj_table_read_extents(type, info);
    tj_table_put(type, info);
    return true;
}

int MPI_Type_commit(MPI_Datatype *type)
{
    int rc;

    if (!tj_interpose_active())
        return PMPI_Type_commit(type);
    tj_in_wrapper = 1;
    rc = PMPI_Type_commit(type);
    if (rc == MPI_SUCCESS)
        tj_interpose_record(*type);
    tj_in_wrapper = 0;
    return rc;
}

int MPI_Type_free(MPI_Datatype *type)
{
    if (tj_interpose_active() && type != NULL)
        tj_table_drop(*type);
    return PMPI_Type_free(type);
}
