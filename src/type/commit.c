/* SPDX-License-Identifier: BSD-3-Clause */
/* A committed type's record (see commit.h): the decisions the MPI_Type_commit wrapper hands to
 * the type table. */
#include "type/commit.h"

#include "type/contents.h"
#include "type/translate.h"
#include "util/config.h"
#include "util/log.h"
#include "util/stats.h"

/* The block of @p type: from the translation recorded when typejit saw it created, else
 * afresh; @p why says why it is not strided. */
static tj_status_t block_of(MPI_Datatype type, tj_type_info_t *info, tj_reason_t *why)
{
    tj_status_t st;
    tj_ir_t ir;

    if (info->extents && tj_translate_known(type, &st, &ir, why)) {
        if (st == TJ_OK)
            st = tj_translate_finish(&ir, info->extent, info->size, &info->block, NULL, why);
        return st;
    }
    tj_stats_inc(TJ_STAT_commits_via_contents);
    return tj_translate_block_why(type, &info->block, NULL, why);
}

/* A type that is not strided waits for its layout until its first device call (type/lazy.h):
 * pending, unless it packs no bytes (nothing to move) or MPI did not answer. */
static void defer_layout(tj_type_info_t *info)
{
    if (info->why != TJ_ERR_NOT_STRIDED || !info->extents)
        return;
    if (info->size <= 0)
        info->reason = TJ_REASON_EMPTY;
    else
        info->pending = true;
}

/* The CPU packer's plan of a strided type and the cost model's choice for TYPEJIT_HOST=auto;
 * nothing with TYPEJIT_HOST=system, which never packs with the engine. */
static void plan_host(tj_cpu_peer_t peer, tj_type_info_t *info)
{
    if (!info->strided || tj_config()->host == TJ_HOST_SYSTEM)
        return;
    tj_cpu_plan(&info->block, &info->cpu);
    tj_cpu_model_decide(&info->block, peer, &info->cpu);
}

void tj_commit_decide(MPI_Datatype type, tj_cpu_peer_t peer, tj_type_info_t *info)
{
    tj_reason_t why;
    tj_status_t st;

    tj_table_read_extents(type, info);
    st = block_of(type, info, &why);
    info->strided = st == TJ_OK;
    info->why = st;
    info->reason = st == TJ_ERR_NOT_STRIDED ? (int)why : TJ_REASON_NONE;
    defer_layout(info);
    plan_host(peer, info);
    tj_stats_inc(TJ_STAT_commits);
    tj_stats_inc(info->strided   ? TJ_STAT_strided
                 : info->pending ? TJ_STAT_deferred
                                 : TJ_STAT_fallback);
    if (!info->strided && st != TJ_ERR_NOT_STRIDED)
        tj_log_info("datatype left to the system MPI: %s", tj_status_string(st));
}

bool tj_commit_decide_named(MPI_Datatype type, tj_cpu_peer_t peer, tj_type_info_t *info)
{
    tj_envelope_t env;
    tj_reason_t why;

    if (!tj_envelope_get(type, &env) || env.combiner != MPI_COMBINER_NAMED)
        return false;
    info->why = tj_translate_block_why(type, &info->block, NULL, &why);
    info->strided = info->why == TJ_OK;
    info->reason = info->why == TJ_ERR_NOT_STRIDED ? (int)why : TJ_REASON_NONE;
    tj_table_read_extents(type, info);
    defer_layout(info); /* a pair type with a hole */
    plan_host(peer, info);
    return true;
}
