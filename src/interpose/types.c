/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Type_commit, MPI_Type_free and MPI_Type_dup: translate each committed type once and keep
 * its record; tj_type_describe reads it. */
#include <stdio.h>
#include <string.h>

#include "interpose/constructors.h"
#include "interpose/init.h"
#include "interpose/pairing.h"
#include "interpose/state.h"
#include "interpose/types.h"
#include "interpose/wrappers.h"
#include "jit/nvrtc.h"
#include "kernels/prepare.h"
#include "type/commit.h"
#include "type/lazy.h"
#include "type/translate.h"
#include "util/common.h"
#include "util/log.h"

/* TYPEJIT_JIT=always asks for kernels without a device; without NVRTC none can be made, and
 * nothing else would say so. Checked at the first commit, when a kernel is first wanted. */
static void check_jit_always(void)
{
    static atomic_bool checked;
    tj_status_t st;

    /* A plain load on every commit; the exchange only until the first check. */
    if (atomic_load_explicit(&checked, memory_order_relaxed) || tj_config()->jit != TJ_JIT_ALWAYS ||
        atomic_exchange(&checked, true))
        return;
    if ((st = tj_nvrtc_load()) != TJ_OK) {
        int rank = 0;
        /* Once per job, as the settings warnings: rank 0 warns, the others say it at debug. */
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        TJ_LOG_AT(rank == 0 ? TJ_LOG_WARN : TJ_LOG_DEBUG,
                  "TYPEJIT_JIT=always but no kernel can be compiled (%s): datatypes get no "
                  "kernels",
                  tj_status_string(st));
    }
}

/* Whose packer the CPU engine stands in for on host buffers: the system MPI's, known once MPI_Init
 * has checked the pairing (every commit comes after it). MPICH's own releases pack with Yaksa;
 * other members of its family (Intel MPI, ...) and the standard ABI get the model's cautious
 * choices. */
static tj_cpu_peer_t host_peer(void)
{
    static atomic_int peer = -1;
    int p = atomic_load_explicit(&peer, memory_order_relaxed);

    if (p < 0) {
        tj_mpi_family_t family = tj_pairing_built_for();
        p = family == TJ_MPI_OPEN_MPI ? TJ_CPU_PEER_OPEN_MPI
            : family == TJ_MPI_MPICH && strncmp(tj_pairing_mpi_version(), "MPICH", 5) == 0
                ? TJ_CPU_PEER_MPICH
                : TJ_CPU_PEER_OTHER;
        atomic_store_explicit(&peer, p, memory_order_relaxed);
    }
    return (tj_cpu_peer_t)p;
}

void tj_interpose_describe(const tj_type_info_t *info, char *buf, size_t len)
{
    char block[512];

    if (info->layout != NULL) {
        tj_layout_format(info->layout, block, sizeof(block));
        snprintf(buf, len, "layout (%s): %s kernels=%s",
                 info->why == TJ_ERR_NOT_STRIDED ? tj_reason_string((tj_reason_t)info->reason)
                                                 : tj_status_string(info->why),
                 block, tj_prepare_state(info));
        return;
    }
    if (info->pending) {
        snprintf(buf, len, "not strided (%s): layout at its first device call",
                 tj_reason_string((tj_reason_t)info->reason));
        return;
    }
    if (!info->strided) {
        snprintf(buf, len, "not strided (%s): system MPI",
                 info->why == TJ_ERR_NOT_STRIDED ? tj_reason_string((tj_reason_t)info->reason)
                                                 : tj_status_string(info->why));
        return;
    }
    tj_block_format(&info->block, block, sizeof(block));
    snprintf(buf, len, "strided W=%d size=%lld %s kernels=%s", info->block.word,
             (long long)info->block.size, block, tj_prepare_state(info));
}

void tj_interpose_record(MPI_Datatype type)
{
    tj_type_info_t info = {0};

    check_jit_always();
    tj_commit_decide(type, host_peer(), &info);
    /* Recorded first: a thread that starts using CUDA meanwhile asks for the kernels of every
     * recorded type (kernels/prepare.c), so that none is missed between the two. */
    if (tj_table_put(type, &info) != TJ_OK)
        tj_log_warn_once("out of memory recording a datatype; it is left to the system MPI");
    tj_prepare_commit(&info);
    if (tj_log_level() >= TJ_LOG_DEBUG) {
        char text[640], label[MPI_MAX_OBJECT_NAME + 32], layout[512] = "";
        tj_interpose_describe(&info, text, sizeof(text));
        tj_table_label(type, label, sizeof(label));
        /* Kernels are made for the layout moved to byte 0, shared by every type of that shape:
         * the kernel lines of the log name it so. */
        if (info.strided) {
            /* At the words of one object on aligned buffers, as the manifest names the kernel. */
            tj_block_t b = tj_block_at_zero(&info.block);
            tj_words_t w[2];
            tj_block_words_aligned(&info.block, w);
            snprintf(layout, sizeof(layout), "; its kernels: W=%d ", w[0].word);
            if (w[0].edge != 0)
                snprintf(layout + strlen(layout), sizeof(layout) - strlen(layout), "edge=%d ",
                         w[0].edge);
            tj_block_format(&b, layout + strlen(layout), sizeof(layout) - strlen(layout));
        }
        tj_log_debug("commit of %s: %s%s", label, text, layout);
    }
}

/* The record of a named type, made the first time it is looked up (NULL for any other type). */
const tj_type_info_t *tj_interpose_record_named(MPI_Datatype type)
{
    tj_type_info_t info = {0};

    if (!tj_commit_decide_named(type, host_peer(), &info))
        return NULL;
    tj_table_put(type, &info);
    return tj_table_get(type);
}

int TJ_WRAPPER(MPI_Type_commit)(MPI_Datatype *type)
{
    int rc;

    if (!tj_interpose_active())
        return PMPI_Type_commit(type);
    tj_interpose_thread.init.in_wrapper = 1;
    rc = PMPI_Type_commit(type);
    if (rc == MPI_SUCCESS)
        tj_interpose_record(*type);
    tj_interpose_thread.init.in_wrapper = 0;
    return rc;
}

int TJ_WRAPPER(MPI_Type_free)(MPI_Datatype *type)
{
    /* Uncommitted types have a creation record too: drop it, or a later type MPI puts at this
     * handle could be taken for this one. */
    if (tj_interpose_active() && type != NULL)
        tj_table_drop(*type);
    return PMPI_Type_free(type);
}

int TJ_WRAPPER(MPI_Type_dup)(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const tj_type_info_t *info;
    int rc;

    if (!tj_interpose_active())
        return PMPI_Type_dup(oldtype, newtype);
    tj_interpose_thread.init.in_wrapper = 1;
    rc = PMPI_Type_dup(oldtype, newtype);
    if (rc == MPI_SUCCESS) {
        tj_type_args_t args = {.combiner = MPI_COMBINER_DUP, .child = oldtype};
        tj_interpose_learn(*newtype, &args);
        /* A duplicate has its original's committed state (named types are committed), and
         * the same typemap and extents: it shares the original's record and kernels. */
        if ((info = tj_interpose_lookup(oldtype)) != NULL &&
            tj_table_share(*newtype, info) != TJ_OK)
            tj_table_drop(*newtype);
        tj_table_return(info);
    }
    tj_interpose_thread.init.in_wrapper = 0;
    return rc;
}

tj_status_t tj_type_describe(const void *datatype, char *buf, size_t len)
{
    const tj_type_info_t *info;

    if (datatype == NULL || buf == NULL)
        return TJ_ERR_INVALID;
    if ((info = tj_interpose_lookup(*(const MPI_Datatype *)datatype)) == NULL)
        return TJ_ERR_NOT_FOUND;
    /* The form the type takes: a pending layout is built now, as its first device call would. */
    info = tj_lazy_resolve(*(const MPI_Datatype *)datatype, info);
    tj_interpose_describe(info, buf, len);
    tj_table_return(info);
    return TJ_OK;
}
