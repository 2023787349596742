/* SPDX-License-Identifier: BSD-3-Clause */
/* Layouts built at a type's first device call (see lazy.h). The type table owns the records and
 * who builds one (tj_table_claim); a build runs holding no lock (it calls the system MPI), and a
 * thread that finds another one building waits for any build to end, then asks again. */
#include "type/lazy.h"

#include <pthread.h>
#include <stdio.h>

#include "type/flatten.h"
#include "type/state.h"
#include "type/translate.h"
#include "util/log.h"
#include "util/stats.h"

/* The layout of the pending record @p info, or the block it is, or why it has neither (in
 * info->reason), as the commit made them before layouts were deferred. */
static void build(MPI_Datatype type, tj_type_info_t *info)
{
    tj_layout_t *l;
    tj_reason_t why;
    tj_status_t st;

    info->pending = false;
    st = tj_flatten_commit(type, info->extent, info->size, (tj_reason_t)info->reason, &l, &why);
    if (st != TJ_OK) {
        if (st == TJ_ERR_NOT_STRIDED)
            info->reason = (int)why;
        else
            tj_log_info("datatype left to the system MPI: %s", tj_status_string(st));
        return;
    }
    tj_stats_inc(TJ_STAT_layouts);
    if (tj_layout_as_block(l, &info->block)) {
        info->strided = true;
        info->why = TJ_OK;
        info->reason = TJ_REASON_NONE;
        /* For TYPEJIT_HOST=engine; the cost model of TYPEJIT_HOST=auto decides only at commit,
         * and leaves such a type to the system MPI. */
        tj_cpu_plan(&info->block, &info->cpu);
        tj_layout_release(l);
        return;
    }
    info->layout = l;
}

static void log_built(MPI_Datatype type, const tj_type_info_t *info)
{
    char label[MPI_MAX_OBJECT_NAME + 32], text[512];

    tj_table_label(type, label, sizeof(label));
    if (info->layout != NULL) {
        tj_layout_format(info->layout, text, sizeof(text));
        tj_log_debug("layout of %s built: %s", label, text);
    } else if (info->strided) {
        tj_block_format(&info->block, text, sizeof(text));
        tj_log_debug("layout of %s built: one strided block, W=%d %s", label, info->block.word,
                     text);
    } else {
        tj_log_debug("layout of %s not built (%s): system MPI", label,
                     tj_reason_string((tj_reason_t)info->reason));
    }
}

const tj_type_info_t *tj_lazy_build(MPI_Datatype type, const tj_type_info_t *info)
{
    const tj_type_info_t *found = NULL, *result = NULL;
    tj_type_info_t rec;
    unsigned long seen;
    bool replaced;

    for (;;) {
        pthread_mutex_lock(&tj_type_state.lazy.done_lock);
        seen = tj_type_state.lazy.builds_done;
        pthread_mutex_unlock(&tj_type_state.lazy.done_lock);
        switch (tj_table_claim(type, &found)) {
        case TJ_TABLE_NONE:
            /* No record any more (freed by another thread meanwhile): the system MPI's. */
            return info;
        case TJ_TABLE_BUILT:
            return found;
        case TJ_TABLE_BUSY:
            tj_table_return(found);
            pthread_mutex_lock(&tj_type_state.lazy.done_lock);
            while (tj_type_state.lazy.builds_done == seen)
                pthread_cond_wait(&tj_type_state.lazy.done, &tj_type_state.lazy.done_lock);
            pthread_mutex_unlock(&tj_type_state.lazy.done_lock);
            continue;
        case TJ_TABLE_CLAIMED:
            break;
        }
        rec = *found;
        tj_table_return(found);
        build(type, &rec);
        /* The published record takes a reference to the layout; this one is dropped. A record
         * that is no longer pending (the type freed, or committed anew, meanwhile) is asked
         * for again. */
        replaced = tj_table_replace_pending(type, &rec, &result) == TJ_OK;
        tj_layout_release(rec.layout);
        pthread_mutex_lock(&tj_type_state.lazy.done_lock);
        tj_type_state.lazy.builds_done++;
        pthread_cond_broadcast(&tj_type_state.lazy.done);
        pthread_mutex_unlock(&tj_type_state.lazy.done_lock);
        if (replaced)
            break;
    }
    /* Its kernels are asked for by the calls that launch them (each its direction and word). */
    if (tj_log_level() >= TJ_LOG_DEBUG)
        log_built(type, result);
    return result;
}
