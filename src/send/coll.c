/* Collectives built from per-peer packs. A call is described as two sides, send and receive,
 * each a list of slices (one per peer: a count of objects of one datatype at a byte offset from
 * the buffer argument). A side with bytes in device or managed memory is packed: its slices are
 * laid out one after another, in peer order, in one page-locked mapped host buffer of the
 * buffer's context, which the kernels write (or read) directly; the system MPI, CUDA-aware or
 * not, moves host memory. A side in host memory is passed to the system MPI unchanged.
 *
 * On the wire a packed slice of `count` objects of a type of `size` bytes is `count` objects of
 * a contiguous type of `size` bytes (MPI_BYTE for Alltoallw slices of empty types): the same
 * byte stream as the application's type, and the same count and object size, so that the
 * system MPI chooses the same algorithm and segments messages at the same object boundaries on
 * every rank, whether a rank packs or passes its typed host buffer. Displacements of packed
 * slices are computed in 64 bits; the system MPI gets the form of the call the application
 * made (an int form, or the large-count `_c` form with MPI_Count counts and MPI_Aint
 * displacements), and an int form fails with MPI_ERR_COUNT where a packed displacement does not
 * fit its int.
 *
 * Consecutive slices of one type whose objects follow each other in the typed buffer (the usual
 * displacements) are packed or unpacked by one call, so one kernel launch serves all of them.
 * When a side has several such runs of strided types (a halo exchange's faces), one fused kernel
 * (templates/fused.cu) moves all of them in a single launch; anything it cannot take goes run by
 * run through src/send/devpack.c. */
#include "send/coll.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda.h"
#include "gpu/batch.h"
#include "send/onewait.h"
#include "send/count.h"
#include "send/devpack.h"
#include "send/fused.h"
#include "type/lazy.h"
#include "send/model.h"
#include "send/request.h"
#include "send/span.h"
#include "send/staging.h"
#include "util/common.h"
#include "util/config.h"
#include "util/log.h"
#include "util/stats.h"

/* A datatype a side uses, with its record. */
typedef struct {
    MPI_Datatype type;   /* the application's, or the duplicate a pending receive keeps */
    bool dup;            /* `type` is typejit's duplicate, freed on release */
    bool known;          /* `info` is the type table's record (else extents only) */
    tj_type_info_t info; /* extents always valid */
    MPI_Datatype wire;   /* what the system MPI moves for one object; MPI_DATATYPE_NULL: none */
} ctype_t;

/* One peer's part of a side. */
typedef struct {
    int64_t count;
    int t;        /* index into the side's types */
    int64_t off;  /* byte offset of object 0 from the buffer argument */
    int64_t poff; /* byte offset in the packed buffer */
    bool skip;    /* an MPI_PROC_NULL neighbour: the system MPI never touches this slice */
    bool in;      /* MPI_IN_PLACE: packed before the call too */
} slice_t;

typedef struct {
    bool present; /* this rank has this side in this call */
    bool packed;  /* typejit packs it */
    bool split;   /* a slice's bytes lie in more than one allocation or memory kind */
    bool blind;   /* the driver cannot tell where the side lies: packed bytes of zeros are sent,
                   * nothing is received into it, and the call reports MPI_ERR_INTERN */
    char *buf;    /* the buffer argument */
    int n;
    slice_t *slices;
    ctype_t *types;
    int ntypes;
    int64_t bytes; /* packed bytes of all slices */
    tj_gpu_ctx_t ctx;
    int device;
    tj_stage_t *stage;
    /* The arguments the system MPI gets for a packed side: counts and displacements as int
     * arrays, or MPI_Count and MPI_Aint arrays for a large-count call. */
    void *wcounts, *wdispls;
    MPI_Aint *wadispls;
    MPI_Datatype *wtypes;
} side_t;

typedef struct {
    tj_coll_call_t c;
    bool inplace; /* the send side is MPI_IN_PLACE: the receive side's `in` slices go first */
    int failed;   /* a pack that failed: the call is still made, and then reports this */
    side_t s, r;
} coll_t;

static bool is_gpu(tj_mem_t m)
{
    return m == TJ_MEM_DEVICE || m == TJ_MEM_MANAGED;
}

_Static_assert(sizeof(MPI_Count) == sizeof(int64_t) && sizeof(MPI_Aint) == sizeof(int64_t),
               "the large-count arrays hold 64-bit values");

/* Element @p i of the application's counts[] or displs[]: ints, or in a large-count call
 * MPI_Count counts and MPI_Aint displacements. */
static int64_t count_at(const tj_coll_call_t *c, const void *a, int i)
{
    return c->large ? (int64_t)((const MPI_Count *)a)[i] : ((const int *)a)[i];
}

static int64_t displ_at(const tj_coll_call_t *c, const void *a, int i)
{
    return c->large ? (int64_t)((const MPI_Aint *)a)[i] : ((const int *)a)[i];
}

/* ---- describing a call --------------------------------------------------------------------- */

static bool side_init(side_t *sd, const void *buf, int n, int ntypes)
{
    size_t k = n > 0 ? (size_t)n : 1;
    sd->present = true;
    sd->buf = (char *)buf;
    sd->n = n;
    sd->slices = calloc(k, sizeof(slice_t));
    sd->types = calloc(ntypes > 0 ? (size_t)ntypes : 1, sizeof(ctype_t));
    if (sd->slices == NULL || sd->types == NULL) {
        tj_log_error("out of memory describing a collective of %d peers", n);
        return false;
    }
    return true;
}

/* The index of @p type in the side's types, recorded on first use; -1 for a type whose extents
 * the system MPI does not know (it reports the error). */
static int type_index(side_t *sd, MPI_Datatype type, const tj_coll_call_t *c)
{
    ctype_t *ct;
    if (type == MPI_DATATYPE_NULL)
        return -1;
    for (int i = sd->ntypes - 1; i >= 0; i--)
        if (sd->types[i].type == type)
            return i;
    ct = &sd->types[sd->ntypes];
    ct->type = type;
    ct->wire = MPI_DATATYPE_NULL;
    ct->known = c->lookup != NULL && c->lookup(type, &ct->info);
    if (!ct->known) {
        memset(&ct->info, 0, sizeof(ct->info));
        tj_table_read_extents(type, &ct->info);
    }
    /* The record may outlive the call (a non-blocking collective), and the type with it. */
    tj_type_info_hold(&ct->info);
    if (!ct->info.extents)
        return -1;
    return sd->ntypes++;
}

/* Slice @p i: @p count objects of @p type at byte offset @p off. False for arguments the system
 * MPI must judge (a negative count, a null type). */
static bool set_slice(side_t *sd, int i, int64_t count, MPI_Datatype type, int64_t off,
                      const tj_coll_call_t *c)
{
    slice_t *sl = &sd->slices[i];
    if (count < 0 || (sl->t = type_index(sd, type, c)) < 0)
        return false;
    sl->count = count;
    sl->off = off;
    return true;
}

/* A side of @p n slices from the single-count, v-form or per-peer-type arguments: displs[] in
 * bytes when @p bytes (Alltoallw), else in elements. */
static bool side_from(side_t *sd, const void *buf, int n, int64_t count, const void *counts,
                      const void *displs, bool bytes, const MPI_Aint *adispls, MPI_Datatype type,
                      const MPI_Datatype *types, const tj_coll_call_t *c)
{
    if (!side_init(sd, buf, n, types != NULL ? n : 1))
        return false;
    if ((counts != NULL && displs == NULL && adispls == NULL) ||
        (n > 0 && ((counts == NULL && count < 0) || (types != NULL && counts == NULL))))
        return false;
    for (int i = 0; i < n; i++) {
        MPI_Datatype t = types != NULL ? types[i] : type;
        int64_t k = counts != NULL ? count_at(c, counts, i) : count;
        int64_t off, ext, at;
        int ti = type_index(sd, t, c);
        if (ti < 0)
            return false;
        ext = sd->types[ti].info.extent;
        if (adispls != NULL)
            off = adispls[i];
        else if (displs != NULL && bytes)
            off = displ_at(c, displs, i);
        else if (displs != NULL ? !tj_mul64(displ_at(c, displs, i), ext, &off)
                                : !tj_mul64(i, count, &at) || !tj_mul64(at, ext, &off))
            return false;
        if (!set_slice(sd, i, k, t, off, c))
            return false;
    }
    return true;
}

/* @p v: per-peer counts (and displacements), as opposed to one count for every peer. */
static bool send_side(coll_t *x, int n, bool v)
{
    const tj_coll_call_t *c = &x->c;
    return side_from(&x->s, c->sbuf, n, c->scount, v ? c->scounts : NULL, v ? c->sdispls : NULL,
                     c->kind == TJ_COLL_ALLTOALLW, c->sadispls, c->stype, c->stypes, c);
}

static bool recv_side(coll_t *x, int n, bool v)
{
    const tj_coll_call_t *c = &x->c;
    return side_from(&x->r, c->rbuf, n, c->rcount, v ? c->rcounts : NULL, v ? c->rdispls : NULL,
                     c->kind == TJ_COLL_ALLTOALLW, c->radispls, c->rtype, c->rtypes, c);
}

/* The single send slice of the gather and allgather forms. */
static bool one_send(coll_t *x)
{
    const tj_coll_call_t *c = &x->c;
    return side_init(&x->s, c->sbuf, 1, 1) && set_slice(&x->s, 0, c->scount, c->stype, 0, c);
}

/* The single receive slice of the scatter forms. */
static bool one_recv(coll_t *x)
{
    const tj_coll_call_t *c = &x->c;
    return side_init(&x->r, c->rbuf, 1, 1) && set_slice(&x->r, 0, c->rcount, c->rtype, 0, c);
}

/* The neighbours of a process topology, in the order the neighbourhood collectives use them:
 * per Cartesian dimension the -1 neighbour, then the +1 neighbour. */
static bool neighbours(MPI_Comm comm, int *in, int **src, int *out, int **dst)
{
    int topo, rank, weighted = 0;
    *src = *dst = NULL;
    if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS)
        return false;
    if (topo == MPI_CART) {
        int nd;
        if (PMPI_Cartdim_get(comm, &nd) != MPI_SUCCESS)
            return false;
        *in = *out = 2 * nd;
        *src = malloc((size_t)(2 * nd + 1) * sizeof(int));
        *dst = malloc((size_t)(2 * nd + 1) * sizeof(int));
        if (*src == NULL || *dst == NULL)
            return false;
        for (int d = 0; d < nd; d++) {
            int lo, hi;
            if (PMPI_Cart_shift(comm, d, 1, &lo, &hi) != MPI_SUCCESS)
                return false;
            (*src)[2 * d] = (*dst)[2 * d] = lo;
            (*src)[2 * d + 1] = (*dst)[2 * d + 1] = hi;
        }
        return true;
    }
    if (topo == MPI_GRAPH) {
        int nn;
        if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS ||
            PMPI_Graph_neighbors_count(comm, rank, &nn) != MPI_SUCCESS)
            return false;
        *in = *out = nn;
        *src = malloc((size_t)(nn + 1) * sizeof(int));
        *dst = malloc((size_t)(nn + 1) * sizeof(int));
        if (*src == NULL || *dst == NULL ||
            PMPI_Graph_neighbors(comm, rank, nn, *src) != MPI_SUCCESS)
            return false;
        memcpy(*dst, *src, (size_t)nn * sizeof(int));
        return true;
    }
    if (topo == MPI_DIST_GRAPH) {
        int *sw = NULL, *dw = NULL;
        bool ok;
        if (PMPI_Dist_graph_neighbors_count(comm, in, out, &weighted) != MPI_SUCCESS)
            return false;
        *src = malloc((size_t)(*in + 1) * sizeof(int));
        *dst = malloc((size_t)(*out + 1) * sizeof(int));
        if (weighted) {
            sw = malloc((size_t)(*in + 1) * sizeof(int));
            dw = malloc((size_t)(*out + 1) * sizeof(int));
        }
        ok = *src != NULL && *dst != NULL && (!weighted || (sw != NULL && dw != NULL)) &&
             PMPI_Dist_graph_neighbors(comm, *in, *src, weighted ? sw : MPI_UNWEIGHTED, *out, *dst,
                                       weighted ? dw : MPI_UNWEIGHTED) == MPI_SUCCESS;
        free(sw);
        free(dw);
        return ok;
    }
    return false; /* no topology: the system MPI reports the error */
}

/* Which sides this rank has in the call, and their slices. False: not typejit's call. */
static bool describe(coll_t *x)
{
    const tj_coll_call_t *c = &x->c;
    int inter = 0, rank = 0, size = 0, n;
    bool root;

    if (c->comm == MPI_COMM_NULL || PMPI_Comm_test_inter(c->comm, &inter) != MPI_SUCCESS ||
        PMPI_Comm_rank(c->comm, &rank) != MPI_SUCCESS ||
        (inter ? PMPI_Comm_remote_size : PMPI_Comm_size)(c->comm, &size) != MPI_SUCCESS)
        return false;
    n = size; /* peers: the remote group of an intercommunicator */
    /* Rooted forms: the root's side, the others' side, or none (MPI_PROC_NULL); a root out of
     * range is the system MPI's error to report. */
    if (c->kind == TJ_COLL_GATHER || c->kind == TJ_COLL_GATHERV || c->kind == TJ_COLL_SCATTER ||
        c->kind == TJ_COLL_SCATTERV || c->kind == TJ_COLL_BCAST) {
        if (inter) {
            root = c->root == MPI_ROOT;
            if (!root && (c->root < 0 || c->root >= size))
                return false;
        } else {
            int local = 0;
            PMPI_Comm_size(c->comm, &local);
            if (c->root < 0 || c->root >= local)
                return false;
            root = c->root == rank;
        }
    } else {
        root = false;
    }

    switch (c->kind) {
    case TJ_COLL_ALLTOALL:
    case TJ_COLL_ALLTOALLV:
    case TJ_COLL_ALLTOALLW: {
        bool v = c->kind != TJ_COLL_ALLTOALL;
        x->inplace = !inter && c->sbuf == MPI_IN_PLACE;
        if (!x->inplace && !send_side(x, n, v))
            return false;
        if (!recv_side(x, n, v))
            return false;
        for (int i = 0; x->inplace && i < n; i++)
            x->r.slices[i].in = true;
        return true;
    }
    case TJ_COLL_NEIGHBOR_ALLTOALL:
    case TJ_COLL_NEIGHBOR_ALLTOALLV:
    case TJ_COLL_NEIGHBOR_ALLTOALLW:
    case TJ_COLL_NEIGHBOR_ALLGATHER:
    case TJ_COLL_NEIGHBOR_ALLGATHERV: {
        /* The allgather forms send one slice to every out-neighbour; the others one slice per
         * out-neighbour. Receives: one slice per in-neighbour. */
        bool gather =
            c->kind == TJ_COLL_NEIGHBOR_ALLGATHER || c->kind == TJ_COLL_NEIGHBOR_ALLGATHERV;
        bool sv = c->kind == TJ_COLL_NEIGHBOR_ALLTOALLV || c->kind == TJ_COLL_NEIGHBOR_ALLTOALLW;
        bool rv = sv || c->kind == TJ_COLL_NEIGHBOR_ALLGATHERV;
        int in = 0, out = 0, *src, *dst;
        bool ok = neighbours(c->comm, &in, &src, &out, &dst) &&
                  (gather ? one_send(x) : send_side(x, out, sv)) && recv_side(x, in, rv);
        for (int i = 0; ok && !gather && i < out; i++)
            x->s.slices[i].skip = dst[i] == MPI_PROC_NULL;
        for (int i = 0; ok && i < in; i++)
            x->r.slices[i].skip = src[i] == MPI_PROC_NULL;
        free(src);
        free(dst);
        return ok;
    }
    case TJ_COLL_ALLGATHER:
    case TJ_COLL_ALLGATHERV:
        x->inplace = !inter && c->sbuf == MPI_IN_PLACE;
        if ((!x->inplace && !one_send(x)) || !recv_side(x, n, c->kind == TJ_COLL_ALLGATHERV))
            return false;
        if (x->inplace)
            x->r.slices[rank].in = true;
        return true;
    case TJ_COLL_GATHER:
    case TJ_COLL_GATHERV:
        if (!root)
            return one_send(x);
        x->inplace = !inter && c->sbuf == MPI_IN_PLACE;
        if ((!inter && !x->inplace && !one_send(x)) || !recv_side(x, n, c->kind == TJ_COLL_GATHERV))
            return false;
        if (x->inplace)
            x->r.slices[rank].in = true;
        return true;
    case TJ_COLL_SCATTER:
    case TJ_COLL_SCATTERV: {
        bool v = c->kind == TJ_COLL_SCATTERV;
        if (!root)
            return one_recv(x);
        /* MPI_IN_PLACE at the root: its own slice stays where it is. */
        if (!send_side(x, n, v))
            return false;
        return inter || c->rbuf == MPI_IN_PLACE || one_recv(x);
    }
    case TJ_COLL_BCAST:
        if (root)
            return side_init(&x->s, c->sbuf, 1, 1) &&
                   set_slice(&x->s, 0, c->scount, c->stype, 0, c);
        return side_init(&x->r, c->sbuf, 1, 1) && set_slice(&x->r, 0, c->scount, c->stype, 0, c);
    }
    return false;
}

/* ---- deciding and laying out ---------------------------------------------------------------- */

/* Whether a device-resident type needs typejit (see tj_coll_run); a type whose layout is pending
 * (type/lazy.h) may. */
static bool wants(const ctype_t *ct)
{
    const tj_block_t *b = &ct->info.block;
    if (!tj_model_cuda_aware())
        return true;
    if (ct->info.strided && b->ndims == 1 && b->extent == b->size)
        return tj_model_stage_contiguous();
    return tj_type_info_kernel(&ct->info) || ct->info.pending;
}

/* Whether a type of the side's slices that move bytes wants typejit. */
static bool side_wants(const side_t *sd)
{
    bool want = false;

    for (int i = 0; i < sd->n && !want; i++) {
        const slice_t *sl = &sd->slices[i];
        if (sl->count != 0 && !sl->skip && sd->types[sl->t].info.size != 0)
            want = wants(&sd->types[sl->t]);
    }
    return want;
}

/* A side is packed when its first byte is on a GPU and a type it moves bytes of needs it. A side
 * the driver cannot place is packed blind: the other ranks are entering the collective and would
 * wait forever for this one, so the call is still made (as after a pack that failed: prepare),
 * with bytes that are no one's, and fails. */
static void classify(side_t *sd)
{
    const slice_t *first = NULL;
    bool want = false, pending = false;
    tj_gpu_ptr_t where;
    int rc;

    if (!sd->present)
        return;
    for (int i = 0; i < sd->n; i++) {
        const slice_t *sl = &sd->slices[i];
        const ctype_t *ct = &sd->types[sl->t];
        if (sl->count == 0 || sl->skip || ct->info.size == 0)
            continue;
        if (first == NULL)
            first = sl;
        want |= wants(ct);
        pending |= ct->info.pending;
        /* A type at absolute addresses may have bytes in host and device memory at once. */
        if (ct->info.wide && !sd->split && !sd->blind &&
            (rc = tj_span_check(&ct->info, ct->type, sd->buf + sl->off, sl->count,
                                "a collective")) != MPI_SUCCESS) {
            sd->split = rc == MPI_ERR_BUFFER;
            sd->blind = !sd->split;
        }
    }
    if (sd->split)
        return;
    if (!sd->blind && first != NULL && want &&
        tj_gpu_query(sd->buf + first->off + sd->types[first->t].info.true_lb, &where) != TJ_OK)
        sd->blind = true; /* the query said why */
    if (sd->blind) {
        sd->packed = true;
        return;
    }
    if (first == NULL || !want)
        return;
    if (!is_gpu(where.kind))
        return;
    /* On the device: the layouts of pending types are built now (held as the records are). */
    if (pending) {
        for (int t = 0; t < sd->ntypes; t++)
            if (sd->types[t].info.pending) {
                tj_lazy_resolve(sd->types[t].type, &sd->types[t].info);
                tj_type_info_hold(&sd->types[t].info);
            }
        if (!side_wants(sd))
            return;
    }
    sd->packed = true;
    sd->ctx = where.ctx;
    sd->device = where.device;
}

/* Whether @p v fits the int of an int-form call (a large-count call takes any). */
static bool fits_int(const tj_coll_call_t *c, int64_t v, const char *what)
{
    if (c->large || v <= INT_MAX)
        return true;
    tj_log_error("a device collective's packed %s is %lld, more than an MPI int can say (%d); "
                 "MPI_ERR_COUNT",
                 what, (long long)v, INT_MAX);
    return false;
}

/* Element @p i of a packed side's counts or displacements, in the call's form. */
static void put_count(const tj_coll_call_t *c, void *a, int i, int64_t v)
{
    if (c->large)
        ((MPI_Count *)a)[i] = (MPI_Count)v;
    else
        ((int *)a)[i] = (int)v;
}

static void put_displ(const tj_coll_call_t *c, void *a, int i, int64_t v)
{
    if (c->large)
        ((MPI_Aint *)a)[i] = (MPI_Aint)v;
    else
        ((int *)a)[i] = (int)v;
}

/* Packed offsets, the wire types and the arguments the system MPI gets; MPI result. */
static int layout(const tj_coll_call_t *c, side_t *sd, bool bytes_displs)
{
    size_t k = sd->n > 0 ? (size_t)sd->n : 1;
    int64_t at = 0;

    sd->wcounts = malloc(k * (c->large ? sizeof(MPI_Count) : sizeof(int)));
    sd->wdispls = malloc(k * (c->large ? sizeof(MPI_Aint) : sizeof(int)));
    sd->wadispls = malloc(k * sizeof(MPI_Aint));
    sd->wtypes = malloc(k * sizeof(MPI_Datatype));
    if (!sd->wcounts || !sd->wdispls || !sd->wadispls || !sd->wtypes) {
        tj_log_error("out of memory laying out a collective of %d peers", sd->n);
        return MPI_ERR_NO_MEM;
    }
    for (int t = 0; t < sd->ntypes; t++) {
        ctype_t *ct = &sd->types[t];
        int rc;
        if (ct->info.size == 0)
            continue;
        if (!fits_int(c, ct->info.size, "object size"))
            return MPI_ERR_COUNT;
        if ((rc = tj_count_contiguous(ct->info.size, MPI_BYTE, &ct->wire)) != MPI_SUCCESS)
            return rc;
        if ((rc = PMPI_Type_commit(&ct->wire)) != MPI_SUCCESS)
            return rc;
    }
    for (int i = 0; i < sd->n; i++) {
        slice_t *sl = &sd->slices[i];
        const ctype_t *ct = &sd->types[sl->t];
        int64_t len;
        if (!tj_mul64(sl->count, ct->info.size, &len) || !tj_add64(at, len, &sd->bytes)) {
            tj_log_error("a device collective's packed size overflows 64 bits; MPI_ERR_COUNT");
            return MPI_ERR_COUNT;
        }
        sl->poff = at;
        put_count(c, sd->wcounts, i, ct->info.size > 0 ? sl->count : 0);
        sd->wtypes[i] = ct->wire != MPI_DATATYPE_NULL ? ct->wire : MPI_BYTE;
        sd->wadispls[i] = (MPI_Aint)at;
        if (bytes_displs) {
            if (!fits_int(c, at, "byte displacement"))
                return MPI_ERR_COUNT;
            put_displ(c, sd->wdispls, i, at);
        } else {
            /* In objects of the wire type, whose extent is the type's size. */
            int64_t d = ct->info.size > 0 ? at / ct->info.size : 0;
            if (!fits_int(c, d, "displacement"))
                return MPI_ERR_COUNT;
            put_displ(c, sd->wdispls, i, d);
        }
        at = sd->bytes;
    }
    return MPI_SUCCESS;
}

static int get_stage(side_t *sd)
{
    size_t len = (size_t)(sd->bytes > 0 ? sd->bytes : 1);
    tj_gpu_scope_t scope;
    tj_status_t st;

    if (sd->blind)
        return tj_staging_host(len, &sd->stage) == TJ_OK ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if ((st = tj_gpu_enter(sd->ctx, &scope)) != TJ_OK)
        return MPI_ERR_INTERN;
    st = tj_staging_get(TJ_STAGE_PINNED, len, &sd->stage);
    tj_gpu_leave(&scope);
    return st == TJ_OK ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* ---- packing -------------------------------------------------------------------------------- */

/* Slices [i, j) form one run: same type, objects consecutive in the typed buffer and in the
 * packed one, none skipped. Returns j and the run's object count. */
static int run_end(const side_t *sd, int i, bool only_in, int64_t *objs)
{
    const slice_t *a = &sd->slices[i];
    const ctype_t *ct = &sd->types[a->t];
    int64_t n = a->count;
    int j = i + 1;

    for (; j < sd->n; j++) {
        const slice_t *b = &sd->slices[j];
        int64_t total, bytes;
        int64_t reach, next;
        if (b->t != a->t || b->skip || (only_in && !b->in) || !tj_add64(n, b->count, &total) ||
            !tj_count_sayable(total) || !tj_mul64(total, ct->info.size, &bytes) ||
            !tj_count_sayable(bytes) || !tj_mul64(n, ct->info.extent, &reach) ||
            !tj_add64(a->off, reach, &next) || b->off != next ||
            b->poff != a->poff + n * ct->info.size)
            break;
        n = total;
    }
    *objs = n;
    return j;
}

/* ---- the fused path ------------------------------------------------------------------------- */

/* Pack (or unpack) every run of a packed side with one fused kernel launch (send/fused.c), into
 * @p b. False, with nothing moved, when the side does not fit: fewer than two runs or more than
 * TJ_FUSED_MAX, a type with no record, or what tj_fused_move refuses; the caller then goes run
 * by run. */
static bool fused_move(side_t *sd, bool pack, tj_batch_t *b)
{
    tj_fused_item_t items[TJ_FUSED_MAX];
    int n = 0;

    if (sd->stage == NULL || sd->stage->dev == 0)
        return false;
    for (int i = 0; i < sd->n;) {
        const slice_t *sl = &sd->slices[i];
        const ctype_t *ct = &sd->types[sl->t];
        int64_t objs;

        if (sl->skip || sl->count == 0 || ct->info.size == 0) {
            i++;
            continue;
        }
        if (n == TJ_FUSED_MAX || !ct->known)
            return false;
        i = run_end(sd, i, false, &objs);
        items[n++] = (tj_fused_item_t){&ct->info, sl->off, sl->poff, objs};
    }
    return tj_fused_move(sd->buf, sd->ctx, sd->stage->dev, items, n,
                         pack ? TJ_DIR_PACK : TJ_DIR_UNPACK, b);
}

/* Pack (or unpack) every slice of a packed side that moves bytes, into @p b; @p only_in: the
 * MPI_IN_PLACE slices. Returns the MPI result. */
static int side_move(coll_t *x, side_t *sd, bool pack, bool only_in, tj_batch_t *b)
{
    /* What a query of the staging would say: typejit made it. */
    tj_gpu_ptr_t at = tj_staging_where(sd->stage, sd->device);
    int i = 0;

    if (!only_in && fused_move(sd, pack, b))
        return MPI_SUCCESS;
    while (i < sd->n) {
        const slice_t *sl = &sd->slices[i];
        const ctype_t *ct = &sd->types[sl->t];
        int64_t objs;
        int j, rc = MPI_SUCCESS;
        int64_t pos = 0, len;
        char *typed, *packed;
        const tj_type_info_t *info;

        if (sl->skip || sl->count == 0 || ct->info.size == 0 || (only_in && !sl->in)) {
            i++;
            continue;
        }
        j = run_end(sd, i, only_in, &objs);
        if (!tj_count_sayable(objs * ct->info.size)) {
            tj_log_error("a device collective's slice of %lld packed bytes is more than this MPI "
                         "can say (%d); MPI_ERR_COUNT",
                         (long long)(objs * ct->info.size), INT_MAX);
            return MPI_ERR_COUNT;
        }
        len = objs * ct->info.size;
        typed = sd->buf + sl->off;
        packed = sd->stage->host + sl->poff;
        info = ct->known ? &ct->info : NULL;
        if (pack) {
            if (!tj_devpack_pack_at(info, ct->type, typed, objs, NULL, packed, len, &at, &pos,
                                    x->c.comm, b, &rc))
                rc = tj_count_pack(typed, objs, ct->type, packed, len, &pos, x->c.comm);
        } else if (!tj_devpack_unpack_at(info, ct->type, packed, len, &at, &pos, typed, objs, NULL,
                                         x->c.comm, b, &rc)) {
            rc = tj_count_unpack(packed, len, &pos, typed, objs, ct->type, x->c.comm);
        }
        if (rc != MPI_SUCCESS)
            return rc;
        i = j;
    }
    return MPI_SUCCESS;
}

/* ---- the system MPI's collective ------------------------------------------------------------ */

static int call_system(coll_t *x, MPI_Request *req)
{
    const tj_coll_call_t *c = &x->c;
    const side_t *s = &x->s, *r = &x->r;
    const void *sb = x->inplace ? MPI_IN_PLACE : s->packed ? (const void *)s->stage->host : c->sbuf;
    void *rb = r->packed ? r->stage->host : c->rbuf;
    /* Arrays in the call's form: int, or MPI_Count counts and MPI_Aint displacements. */
    const void *sc = s->packed ? s->wcounts : c->scounts, *rc = r->packed ? r->wcounts : c->rcounts;
    const void *sd = s->packed ? s->wdispls : c->sdispls, *rd = r->packed ? r->wdispls : c->rdispls;
    const MPI_Aint *sad = s->packed ? s->wadispls : c->sadispls;
    const MPI_Aint *rad = r->packed ? r->wadispls : c->radispls;
    MPI_Datatype st = s->packed ? s->types[0].wire : c->stype;
    MPI_Datatype rt = r->packed ? r->types[0].wire : c->rtype;
    const MPI_Datatype *sts = s->packed ? s->wtypes : c->stypes;
    const MPI_Datatype *rts = r->packed ? r->wtypes : c->rtypes;
    int64_t sn = c->scount, rn = c->rcount;
    MPI_Comm comm = c->comm;
    bool l = c->large;

    switch (c->kind) {
    case TJ_COLL_ALLTOALL:
        return req ? TJ_COUNT_CALL(l, Ialltoall, sb, sn, st, rb, rn, rt, comm, req)
                   : TJ_COUNT_CALL(l, Alltoall, sb, sn, st, rb, rn, rt, comm);
    case TJ_COLL_ALLTOALLV:
        return req ? TJ_COUNT_CALL(l, Ialltoallv, sb, sc, sd, st, rb, rc, rd, rt, comm, req)
                   : TJ_COUNT_CALL(l, Alltoallv, sb, sc, sd, st, rb, rc, rd, rt, comm);
    case TJ_COLL_ALLTOALLW:
        return req ? TJ_COUNT_CALL(l, Ialltoallw, sb, sc, sd, sts, rb, rc, rd, rts, comm, req)
                   : TJ_COUNT_CALL(l, Alltoallw, sb, sc, sd, sts, rb, rc, rd, rts, comm);
    case TJ_COLL_NEIGHBOR_ALLTOALLV:
        return req ? TJ_COUNT_CALL(l, Ineighbor_alltoallv, sb, sc, sd, st, rb, rc, rd, rt, comm,
                                   req)
                   : TJ_COUNT_CALL(l, Neighbor_alltoallv, sb, sc, sd, st, rb, rc, rd, rt, comm);
    case TJ_COLL_NEIGHBOR_ALLTOALLW:
        return req ? TJ_COUNT_CALL(l, Ineighbor_alltoallw, sb, sc, sad, sts, rb, rc, rad, rts, comm,
                                   req)
                   : TJ_COUNT_CALL(l, Neighbor_alltoallw, sb, sc, sad, sts, rb, rc, rad, rts, comm);
    case TJ_COLL_NEIGHBOR_ALLTOALL:
        return req ? TJ_COUNT_CALL(l, Ineighbor_alltoall, sb, sn, st, rb, rn, rt, comm, req)
                   : TJ_COUNT_CALL(l, Neighbor_alltoall, sb, sn, st, rb, rn, rt, comm);
    case TJ_COLL_NEIGHBOR_ALLGATHER:
        return req ? TJ_COUNT_CALL(l, Ineighbor_allgather, sb, sn, st, rb, rn, rt, comm, req)
                   : TJ_COUNT_CALL(l, Neighbor_allgather, sb, sn, st, rb, rn, rt, comm);
    case TJ_COLL_NEIGHBOR_ALLGATHERV:
        return req ? TJ_COUNT_CALL(l, Ineighbor_allgatherv, sb, sn, st, rb, rc, rd, rt, comm, req)
                   : TJ_COUNT_CALL(l, Neighbor_allgatherv, sb, sn, st, rb, rc, rd, rt, comm);
    case TJ_COLL_ALLGATHER:
        return req ? TJ_COUNT_CALL(l, Iallgather, sb, sn, st, rb, rn, rt, comm, req)
                   : TJ_COUNT_CALL(l, Allgather, sb, sn, st, rb, rn, rt, comm);
    case TJ_COLL_ALLGATHERV:
        return req ? TJ_COUNT_CALL(l, Iallgatherv, sb, sn, st, rb, rc, rd, rt, comm, req)
                   : TJ_COUNT_CALL(l, Allgatherv, sb, sn, st, rb, rc, rd, rt, comm);
    case TJ_COLL_GATHER:
        return req ? TJ_COUNT_CALL(l, Igather, sb, sn, st, rb, rn, rt, c->root, comm, req)
                   : TJ_COUNT_CALL(l, Gather, sb, sn, st, rb, rn, rt, c->root, comm);
    case TJ_COLL_GATHERV:
        return req ? TJ_COUNT_CALL(l, Igatherv, sb, sn, st, rb, rc, rd, rt, c->root, comm, req)
                   : TJ_COUNT_CALL(l, Gatherv, sb, sn, st, rb, rc, rd, rt, c->root, comm);
    case TJ_COLL_SCATTER:
        return req ? TJ_COUNT_CALL(l, Iscatter, sb, sn, st, rb, rn, rt, c->root, comm, req)
                   : TJ_COUNT_CALL(l, Scatter, sb, sn, st, rb, rn, rt, c->root, comm);
    case TJ_COLL_SCATTERV:
        return req ? TJ_COUNT_CALL(l, Iscatterv, sb, sc, sd, st, rb, rn, rt, c->root, comm, req)
                   : TJ_COUNT_CALL(l, Scatterv, sb, sc, sd, st, rb, rn, rt, c->root, comm);
    case TJ_COLL_BCAST: {
        /* One buffer: the root's send side or another rank's receive side. */
        void *buf = (s->present ? s->packed : r->packed) ? (s->present ? s->stage : r->stage)->host
                                                         : (void *)c->sbuf;
        MPI_Datatype t = s->present ? st : rt;
        return req ? TJ_COUNT_CALL(l, Ibcast, buf, sn, t, c->root, comm, req)
                   : TJ_COUNT_CALL(l, Bcast, buf, sn, t, c->root, comm);
    }
    }
    return MPI_ERR_INTERN;
}

/* ---- life of a call ------------------------------------------------------------------------- */

static void side_free(side_t *sd)
{
    tj_staging_put(sd->stage);
    for (int t = 0; t < sd->ntypes; t++) {
        tj_type_info_release(&sd->types[t].info);
        if (sd->types[t].wire != MPI_DATATYPE_NULL)
            PMPI_Type_free(&sd->types[t].wire);
        if (sd->types[t].dup)
            PMPI_Type_free(&sd->types[t].type);
    }
    free(sd->slices);
    free(sd->types);
    free(sd->wcounts);
    free(sd->wdispls);
    free(sd->wadispls);
    free(sd->wtypes);
}

static void release(void *arg)
{
    coll_t *x = arg;
    side_free(&x->s);
    side_free(&x->r);
    free(x);
}

/* The receive side's unpacks, into @p b (tj_onewait_work_t). */
static int unpack_side(void *arg, tj_batch_t *b)
{
    coll_t *x = arg;
    return x->r.packed && !x->r.blind ? side_move(x, &x->r, false, false, b) : MPI_SUCCESS;
}

/* The sends' packs, and those of the receive side's MPI_IN_PLACE slices, into @p b. */
static int pack_sides(void *arg, tj_batch_t *b)
{
    coll_t *x = arg;
    int rc = MPI_SUCCESS;

    if (x->s.packed && !x->s.blind)
        rc = side_move(x, &x->s, true, false, b);
    if (rc == MPI_SUCCESS && x->r.packed && !x->r.blind && x->inplace)
        rc = side_move(x, &x->r, true, true, b);
    return rc;
}

static int finish(void *arg, const MPI_Status *status, tj_batch_t *b)
{
    coll_t *x = arg;
    int rc = b != NULL ? unpack_side(x, b) : tj_onewait_run(unpack_side, x);
    (void)status;
    return x->failed != MPI_SUCCESS ? x->failed : rc;
}

/* A receive completed later may outlive the application's types: keep duplicates. */
static int keep_types(side_t *sd)
{
    for (int t = 0; t < sd->ntypes; t++) {
        MPI_Datatype d;
        int rc = PMPI_Type_dup(sd->types[t].type, &d);
        if (rc != MPI_SUCCESS)
            return rc;
        sd->types[t].type = d;
        sd->types[t].dup = true;
    }
    return MPI_SUCCESS;
}

/* Everything before the system MPI's call: layout, staging, the packs. MPI result of what must
 * stop the call before it is made. A pack that fails (a driver call failed, even through the
 * staged path) does not: the other ranks are entering the collective and would wait forever
 * for this one, so the call is still made, with the bytes it has, and reports the failure when
 * it completes (x->failed). */
static int prepare(coll_t *x, bool nonblocking)
{
    bool bytes = x->c.kind == TJ_COLL_ALLTOALLW;
    int rc = MPI_SUCCESS;
    side_t *sides[2] = {&x->s, &x->r};

    for (int k = 0; k < 2 && rc == MPI_SUCCESS; k++)
        if (sides[k]->packed && (rc = layout(&x->c, sides[k], bytes)) == MPI_SUCCESS)
            rc = get_stage(sides[k]);
    if (rc == MPI_SUCCESS && nonblocking && x->r.packed)
        rc = keep_types(&x->r);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Every pack launched, then one wait, before the system MPI reads the bytes. */
    x->failed = tj_onewait_run(pack_sides, x);
    if (x->s.blind || x->r.blind)
        x->failed = MPI_ERR_INTERN;
    return MPI_SUCCESS;
}

bool tj_coll_on_device(const tj_coll_call_t *c)
{
    coll_t *x;
    bool on = false;

    if (!tj_gpu_available() || (x = calloc(1, sizeof(*x))) == NULL)
        return false;
    x->c = *c;
    if (describe(x)) {
        classify(&x->s);
        classify(&x->r);
        on = x->s.packed || x->r.packed || x->s.split || x->r.split;
    }
    release(x);
    return on;
}

tj_coll_result_t tj_coll_run(const tj_coll_call_t *c, MPI_Request *req, int *rc)
{
    tj_request_t *r = NULL;
    coll_t *x;

    if (!tj_gpu_available())
        return TJ_COLL_PASS;
    if ((x = calloc(1, sizeof(*x))) == NULL) {
        tj_log_error("out of memory describing a collective");
        return TJ_COLL_PASS;
    }
    x->c = *c;
    if (!describe(x)) {
        release(x);
        return TJ_COLL_PASS;
    }
    classify(&x->s);
    classify(&x->r);
    if (x->s.split || x->r.split) {
        *rc = MPI_ERR_BUFFER; /* classify said why */
        release(x);
        return TJ_COLL_FAILED;
    }
    if (!x->s.packed && !x->r.packed) {
        release(x);
        return TJ_COLL_PASS;
    }
    /* A non-blocking call's record is taken before the system MPI starts it: once started it
     * could only be completed here, which would block a non-blocking call. */
    if (req != NULL && (r = tj_request_reserve()) == NULL) {
        release(x);
        *rc = MPI_ERR_NO_MEM;
        return TJ_COLL_FAILED;
    }
    if ((*rc = prepare(x, req != NULL)) != MPI_SUCCESS) {
        tj_request_unreserve(r);
        release(x);
        return TJ_COLL_FAILED;
    }
    if ((*rc = call_system(x, req)) != MPI_SUCCESS) {
        tj_request_unreserve(r);
        release(x);
        return TJ_COLL_DONE;
    }
    if (req != NULL) {
        tj_completion_t done = {finish, release, x};
        tj_request_add_completion(r, *req, &done);
        return TJ_COLL_DONE;
    }
    *rc = finish(x, MPI_STATUS_IGNORE, NULL);
    release(x);
    return *rc == MPI_SUCCESS ? TJ_COLL_DONE : TJ_COLL_FAILED;
}
