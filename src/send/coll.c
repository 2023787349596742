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
 * slices are computed in 64 bits and the call fails with MPI_ERR_COUNT where one does not fit
 * the int the MPI interface takes.
 *
 * Consecutive slices of one type whose objects follow each other in the typed buffer (the usual
 * displacements) are packed or unpacked by one call, so one kernel launch serves all of them.
 * When a side has several such runs of strided types (a halo exchange's faces), one fused kernel
 * (templates/fused.cu) moves all of them in a single launch; anything it cannot take goes run by
 * run through src/send/devpack.c. */
#include "send/coll.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache/hash.h"
#include "gpu/cuda.h"
#include "send/devpack.h"
#include "send/kernels.h"
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
    int count;
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
    char *buf;    /* the buffer argument */
    int n;
    slice_t *slices;
    ctype_t *types;
    int ntypes;
    int64_t bytes; /* packed bytes of all slices */
    tj_gpu_ctx_t ctx;
    tj_stage_t *stage;
    /* The arguments the system MPI gets for a packed side. */
    int *wcounts, *wdispls;
    MPI_Aint *wadispls;
    MPI_Datatype *wtypes;
} side_t;

typedef struct {
    tj_coll_call_t c;
    bool inplace; /* the send side is MPI_IN_PLACE: the receive side's `in` slices go first */
    side_t s, r;
} coll_t;

static bool is_gpu(tj_mem_t m)
{
    return m == TJ_MEM_DEVICE || m == TJ_MEM_MANAGED;
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
    if (!ct->info.extents)
        return -1;
    return sd->ntypes++;
}

/* Slice @p i: @p count objects of @p type at byte offset @p off. False for arguments the system
 * MPI must judge (a negative count, a null type). */
static bool set_slice(side_t *sd, int i, int count, MPI_Datatype type, int64_t off,
                      const tj_coll_call_t *c)
{
    slice_t *sl = &sd->slices[i];
    if (count < 0 || (sl->t = type_index(sd, type, c)) < 0)
        return false;
    sl->count = count;
    sl->off = off;
    return true;
}

/* A side of @p n slices from the single-count, v-form or per-peer-type arguments. */
static bool side_from(side_t *sd, const void *buf, int n, int count, const int *counts,
                      const int *displs, const int *bdispls, const MPI_Aint *adispls,
                      MPI_Datatype type, const MPI_Datatype *types, const tj_coll_call_t *c)
{
    if (!side_init(sd, buf, n, types != NULL ? n : 1))
        return false;
    if ((counts != NULL && displs == NULL && bdispls == NULL && adispls == NULL) ||
        (n > 0 && ((counts == NULL && count < 0) || (types != NULL && counts == NULL))))
        return false;
    for (int i = 0; i < n; i++) {
        MPI_Datatype t = types != NULL ? types[i] : type;
        int k = counts != NULL ? counts[i] : count;
        int64_t off, ext;
        int ti = type_index(sd, t, c);
        if (ti < 0)
            return false;
        ext = sd->types[ti].info.extent;
        if (bdispls != NULL)
            off = bdispls[i];
        else if (adispls != NULL)
            off = adispls[i];
        else if (!tj_mul64(displs != NULL ? displs[i] : (int64_t)i * count, ext, &off))
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
    bool w = c->kind == TJ_COLL_ALLTOALLW;
    return side_from(&x->s, c->sbuf, n, c->scount, v ? c->scounts : NULL,
                     v && !w ? c->sdispls : NULL, w ? c->sdispls : NULL, c->sadispls, c->stype,
                     c->stypes, c);
}

static bool recv_side(coll_t *x, int n, bool v)
{
    const tj_coll_call_t *c = &x->c;
    bool w = c->kind == TJ_COLL_ALLTOALLW;
    return side_from(&x->r, c->rbuf, n, c->rcount, v ? c->rcounts : NULL,
                     v && !w ? c->rdispls : NULL, w ? c->rdispls : NULL, c->radispls, c->rtype,
                     c->rtypes, c);
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

/* Whether a device-resident type needs typejit (see tj_coll_run). */
static bool wants(const ctype_t *ct)
{
    const tj_block_t *b = &ct->info.block;
    if (!tj_model_cuda_aware())
        return true;
    if (ct->info.strided && b->ndims == 1 && b->extent == b->size)
        return tj_model_stage_contiguous();
    return ct->info.strided;
}

/* A side is packed when its first byte is on a GPU and a type it moves bytes of needs it. */
static void classify(side_t *sd)
{
    const slice_t *first = NULL;
    bool want = false;
    tj_gpu_ptr_t where;

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
        /* A type at absolute addresses may have bytes in host and device memory at once. */
        if (ct->info.wide && !sd->split &&
            !tj_span_together(&ct->info, ct->type, sd->buf + sl->off, sl->count, "a collective"))
            sd->split = true;
    }
    if (sd->split)
        return;
    if (first == NULL || !want)
        return;
    tj_gpu_query(sd->buf + first->off + sd->types[first->t].info.true_lb, &where);
    if (!is_gpu(where.kind))
        return;
    sd->packed = true;
    sd->ctx = where.ctx;
}

static bool fits_int(int64_t v, const char *what)
{
    if (v <= INT_MAX)
        return true;
    tj_log_error("a device collective's packed %s is %lld, more than an MPI int can say (%d); "
                 "MPI_ERR_COUNT",
                 what, (long long)v, INT_MAX);
    return false;
}

/* Packed offsets, the wire types and the arguments the system MPI gets; MPI result. */
static int layout(side_t *sd, bool bytes_displs)
{
    size_t k = sd->n > 0 ? (size_t)sd->n : 1;
    int64_t at = 0;

    sd->wcounts = malloc(k * sizeof(int));
    sd->wdispls = malloc(k * sizeof(int));
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
        if (!fits_int(ct->info.size, "object size"))
            return MPI_ERR_COUNT;
        if ((rc = PMPI_Type_contiguous((int)ct->info.size, MPI_BYTE, &ct->wire)) != MPI_SUCCESS)
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
        sd->wcounts[i] = ct->info.size > 0 ? sl->count : 0;
        sd->wtypes[i] = ct->wire != MPI_DATATYPE_NULL ? ct->wire : MPI_BYTE;
        sd->wadispls[i] = (MPI_Aint)at;
        if (bytes_displs) {
            if (!fits_int(at, "byte displacement"))
                return MPI_ERR_COUNT;
            sd->wdispls[i] = (int)at;
        } else {
            /* In objects of the wire type, whose extent is the type's size. */
            int64_t d = ct->info.size > 0 ? at / ct->info.size : 0;
            if (!fits_int(d, "displacement"))
                return MPI_ERR_COUNT;
            sd->wdispls[i] = (int)d;
        }
        at = sd->bytes;
    }
    return MPI_SUCCESS;
}

static int get_stage(side_t *sd)
{
    tj_gpu_scope_t scope;
    tj_status_t st;

    if ((st = tj_gpu_enter(sd->ctx, &scope)) != TJ_OK)
        return MPI_ERR_INTERN;
    st = tj_staging_get(TJ_STAGE_PINNED, (size_t)(sd->bytes > 0 ? sd->bytes : 1), &sd->stage);
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
        if (b->t != a->t || b->skip || (only_in && !b->in) || !tj_add64(n, b->count, &total) ||
            total > INT_MAX || !tj_mul64(total, ct->info.size, &bytes) || bytes > INT_MAX ||
            b->off != a->off + n * ct->info.extent || b->poff != a->poff + n * ct->info.size)
            break;
        n = total;
    }
    *objs = n;
    return j;
}

/* ---- the fused path ------------------------------------------------------------------------- */

/* Typed bytes of a fused unpack whose members' spans interleave are checked run by run: at most
 * this many contiguous runs (the check sorts them), and the answer is remembered for this many
 * sets, so that a fixed call pattern pays for the check once. */
#define FUSED_CHECK_RUNS   ((int64_t)1 << 21)
#define FUSED_CHECK_MEMORY 64

typedef struct {
    int64_t lo, hi;
} span_t;

static int span_cmp(const void *a, const void *b)
{
    const span_t *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Whether no typed byte is written twice by the members (@p blocks[m] with start, @p shift[m]
 * being the byte offset of object 0 relative to the buffer minus the block's start, @p count[m]
 * objects), computed by listing every contiguous run; false when there are too many runs. */
static bool runs_disjoint(const tj_block_t *const *blocks, const int64_t *offs,
                          const int64_t *counts, int nm)
{
    int64_t total = 0, n = 0, end = INT64_MIN;
    span_t *spans;
    bool ok = true;

    for (int m = 0; m < nm; m++) {
        int64_t rows = blocks[m]->size / blocks[m]->counts[0], r;
        if (!tj_mul64(rows, counts[m], &r) || !tj_add64(total, r, &total) ||
            total > FUSED_CHECK_RUNS)
            return false;
    }
    if ((spans = malloc((size_t)total * sizeof(span_t))) == NULL)
        return false;
    for (int m = 0; m < nm; m++) {
        const tj_block_t *b = blocks[m];
        for (int64_t k = 0; k < counts[m]; k++) {
            int64_t idx[TJ_BLOCK_MAX_DIMS] = {0}, at = offs[m] + b->start + k * b->extent;
            for (;;) {
                int d = 1;
                spans[n].lo = at;
                spans[n].hi = at + b->counts[0];
                n++;
                /* The next row: an odometer over dimensions 1 and up. */
                for (; d < b->ndims; d++) {
                    at += b->strides[d];
                    if (++idx[d] < b->counts[d])
                        break;
                    at -= b->strides[d] * b->counts[d];
                    idx[d] = 0;
                }
                if (d == b->ndims)
                    break;
            }
        }
    }
    qsort(spans, (size_t)n, sizeof(span_t), span_cmp);
    for (int64_t i = 0; i < n && ok; i++) {
        ok = spans[i].lo >= end;
        end = TJ_MAX(end, spans[i].hi);
    }
    free(spans);
    return ok;
}

static pthread_mutex_t checked_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    tj_hash_t key;
    bool used, disjoint;
} checked[FUSED_CHECK_MEMORY];
static unsigned checked_next;

/* runs_disjoint, remembered by a hash of the members' layouts, offsets and counts. */
static bool members_disjoint(const tj_block_t *const *blocks, const int64_t *offs,
                             const int64_t *counts, int nm)
{
    int64_t rec[TJ_FUSED_MAX * (5 + 2 * TJ_BLOCK_MAX_DIMS)];
    size_t len = 0;
    tj_hash_t key;
    bool found = false, disjoint = false;

    for (int m = 0; m < nm; m++) {
        const tj_block_t *b = blocks[m];
        rec[len++] = offs[m];
        rec[len++] = counts[m];
        rec[len++] = b->start;
        rec[len++] = b->extent;
        rec[len++] = b->ndims;
        for (int d = 0; d < b->ndims; d++) {
            rec[len++] = b->counts[d];
            rec[len++] = b->strides[d];
        }
    }
    key = tj_hash_bytes(rec, len * sizeof(rec[0]));
    pthread_mutex_lock(&checked_lock);
    for (int i = 0; i < FUSED_CHECK_MEMORY && !found; i++)
        if (checked[i].used && checked[i].key.hi == key.hi && checked[i].key.lo == key.lo) {
            found = true;
            disjoint = checked[i].disjoint;
        }
    pthread_mutex_unlock(&checked_lock);
    if (found)
        return disjoint;
    disjoint = runs_disjoint(blocks, offs, counts, nm);
    pthread_mutex_lock(&checked_lock);
    checked[checked_next].key = key;
    checked[checked_next].used = true;
    checked[checked_next].disjoint = disjoint;
    checked_next = (checked_next + 1) % FUSED_CHECK_MEMORY;
    pthread_mutex_unlock(&checked_lock);
    return disjoint;
}

/* Pack (or unpack) every run of a packed side with one fused kernel launch. False, with nothing
 * moved, when the side does not fit: fewer than two runs or more than TJ_FUSED_MAX, a type that
 * is not strided or has no record, bytes outside the buffer's allocation, an unpack whose runs
 * could overlap, no kernel; the caller then goes run by run. A launch or sync that fails also
 * returns false: both directions may be redone, packs and disjoint unpacks being idempotent. */
static bool fused_move(const coll_t *x, side_t *sd, bool pack)
{
    tj_block_t blocks[TJ_FUSED_MAX];
    int shape_type[TJ_FUSED_MAX];
    tj_fused_member_t members[TJ_FUSED_MAX];
    int64_t lo[TJ_FUSED_MAX], hi[TJ_FUSED_MAX], offs[TJ_FUSED_MAX], counts[TJ_FUSED_MAX];
    const tj_block_t *typed_blocks[TJ_FUSED_MAX];
    bool apart = true;
    tj_dir_t dir = pack ? TJ_DIR_PACK : TJ_DIR_UNPACK;
    tj_devptr_t typed = (tj_devptr_t)(uintptr_t)sd->buf, packed = sd->stage->dev;
    tj_devptr_t dst = pack ? packed : typed, src = pack ? typed : packed;
    tj_fused_args_t args;
    void *argv[3] = {&dst, &src, &args};
    int nshapes = 0, nm = 0, word = 16;
    char target[32];
    tj_gpu_ptr_t where;
    tj_gpu_scope_t scope;
    tj_gpu_function_t fn;
    tj_kernel_t *k;
    tj_launch_t geo;
    tj_status_t st;

    (void)x;
    if (tj_config()->jit == TJ_JIT_OFF || packed == 0)
        return false;
    for (int i = 0; i < sd->n;) {
        const slice_t *sl = &sd->slices[i];
        const ctype_t *ct = &sd->types[sl->t];
        const tj_type_info_t *info = &ct->info;
        int64_t objs, reach, shift;
        int s = 0;

        if (sl->skip || sl->count == 0 || info->size == 0) {
            i++;
            continue;
        }
        if (nm == TJ_FUSED_MAX || !ct->known || !info->strided)
            return false;
        i = run_end(sd, i, false, &objs);
        if (!tj_mul64(objs - 1, info->extent, &reach) ||
            !tj_add64(sl->off, info->block.start, &shift))
            return false;
        if (!pack && !tj_block_disjoint(&info->block, objs))
            return false; /* a parallel unpack into an overlapping layout would race */
        while (s < nshapes && shape_type[s] != sl->t)
            s++;
        if (s == nshapes) {
            blocks[s] = tj_block_at_zero(&info->block);
            shape_type[s] = sl->t;
            nshapes++;
        }
        word = TJ_MIN(word, info->block.word);
        word = tj_block_word_at(word, (uintptr_t)typed + (uintptr_t)shift);
        word = tj_block_word_at(word, (uintptr_t)packed + (uintptr_t)sl->poff);
        lo[nm] = sl->off + info->true_lb + (reach < 0 ? reach : 0);
        hi[nm] = sl->off + info->true_lb + info->true_extent + (reach > 0 ? reach : 0);
        members[nm].shape = s;
        members[nm].typed = shift;
        members[nm].packed = sl->poff;
        members[nm].count = objs;
        typed_blocks[nm] = &info->block;
        offs[nm] = sl->off;
        counts[nm] = objs;
        nm++;
    }
    if (nm < 2)
        return false;
    /* Every member's bytes inside the one allocation of the buffer's context, and an unpack's
     * members apart from each other: their spans, else (halo faces interleave) their runs. */
    tj_gpu_query(sd->buf + lo[0], &where);
    if (!is_gpu(where.kind) || where.ctx != sd->ctx)
        return false;
    for (int m = 0; m < nm; m++) {
        if (!tj_gpu_inside(&where, (uintptr_t)(sd->buf + lo[m]), (uintptr_t)(sd->buf + hi[m])))
            return false;
        for (int o = 0; !pack && o < m; o++)
            apart = apart && (lo[m] >= hi[o] || lo[o] >= hi[m]);
    }
    if (!apart && !members_disjoint(typed_blocks, offs, counts, nm))
        return false;
    if (tj_kernels_loadable() != TJ_OK ||
        tj_kernels_target(where.device, target, sizeof(target)) != TJ_OK ||
        tj_kernels_get_fused(blocks, nshapes, word, dir, target, &k) != TJ_OK ||
        tj_gen_fused_launch(blocks, nshapes, word, members, nm, &args, &geo) != TJ_OK)
        return false;
    if (tj_gpu_enter(sd->ctx, &scope) != TJ_OK)
        return false;
    if ((st = tj_kernels_function(k, &fn)) == TJ_OK &&
        (st = tj_gpu_launch(fn, geo.grid, geo.block, argv)) == TJ_OK)
        st = tj_gpu_sync();
    tj_gpu_leave(&scope);
    if (st != TJ_OK) {
        tj_log_warn_once("a fused device %s of %d slices failed (%s); packing slice by slice",
                         pack ? "pack" : "unpack", nm, tj_status_string(st));
        return false;
    }
    tj_stats_inc(TJ_STAT_kernel_launches);
    tj_stats_add(pack ? TJ_STAT_packs_gpu : TJ_STAT_unpacks_gpu, (uint64_t)nm);
    tj_log_debug("fused device %s: %d slices of %d types, W=%d, one launch",
                 pack ? "pack" : "unpack", nm, nshapes, word);
    return true;
}

/* Pack (or unpack) every slice of a packed side that moves bytes; @p only_in: the MPI_IN_PLACE
 * slices. Returns the MPI result. */
static int side_move(coll_t *x, side_t *sd, bool pack, bool only_in)
{
    int i = 0;

    if (!only_in && fused_move(x, sd, pack))
        return MPI_SUCCESS;
    while (i < sd->n) {
        const slice_t *sl = &sd->slices[i];
        const ctype_t *ct = &sd->types[sl->t];
        int64_t objs;
        int j, pos = 0, rc = MPI_SUCCESS, len;
        char *typed, *packed;
        const tj_type_info_t *info;

        if (sl->skip || sl->count == 0 || ct->info.size == 0 || (only_in && !sl->in)) {
            i++;
            continue;
        }
        j = run_end(sd, i, only_in, &objs);
        if (!fits_int(objs * ct->info.size, "slice size"))
            return MPI_ERR_COUNT;
        len = (int)(objs * ct->info.size);
        typed = sd->buf + sl->off;
        packed = sd->stage->host + sl->poff;
        info = ct->known ? &ct->info : NULL;
        if (pack) {
            if (!tj_devpack_pack(info, ct->type, typed, (int)objs, packed, len, &pos, x->c.comm,
                                 &rc))
                rc = PMPI_Pack(typed, (int)objs, ct->type, packed, len, &pos, x->c.comm);
        } else if (!tj_devpack_unpack(info, ct->type, packed, len, &pos, typed, (int)objs,
                                      x->c.comm, &rc)) {
            rc = PMPI_Unpack(packed, len, &pos, typed, (int)objs, ct->type, x->c.comm);
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
    const int *sc = s->packed ? s->wcounts : c->scounts, *rc = r->packed ? r->wcounts : c->rcounts;
    const int *sd = s->packed ? s->wdispls : c->sdispls, *rd = r->packed ? r->wdispls : c->rdispls;
    const MPI_Aint *sad = s->packed ? s->wadispls : c->sadispls;
    const MPI_Aint *rad = r->packed ? r->wadispls : c->radispls;
    MPI_Datatype st = s->packed ? s->types[0].wire : c->stype;
    MPI_Datatype rt = r->packed ? r->types[0].wire : c->rtype;
    const MPI_Datatype *sts = s->packed ? s->wtypes : c->stypes;
    const MPI_Datatype *rts = r->packed ? r->wtypes : c->rtypes;
    MPI_Comm comm = c->comm;

    switch (c->kind) {
    case TJ_COLL_ALLTOALL:
        return req ? PMPI_Ialltoall(sb, c->scount, st, rb, c->rcount, rt, comm, req)
                   : PMPI_Alltoall(sb, c->scount, st, rb, c->rcount, rt, comm);
    case TJ_COLL_ALLTOALLV:
        return req ? PMPI_Ialltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm, req)
                   : PMPI_Alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm);
    case TJ_COLL_ALLTOALLW:
        return req ? PMPI_Ialltoallw(sb, sc, sd, sts, rb, rc, rd, rts, comm, req)
                   : PMPI_Alltoallw(sb, sc, sd, sts, rb, rc, rd, rts, comm);
    case TJ_COLL_NEIGHBOR_ALLTOALLV:
        return req ? PMPI_Ineighbor_alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm, req)
                   : PMPI_Neighbor_alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm);
    case TJ_COLL_NEIGHBOR_ALLTOALLW:
        return req ? PMPI_Ineighbor_alltoallw(sb, sc, sad, sts, rb, rc, rad, rts, comm, req)
                   : PMPI_Neighbor_alltoallw(sb, sc, sad, sts, rb, rc, rad, rts, comm);
    case TJ_COLL_NEIGHBOR_ALLTOALL:
        return req ? PMPI_Ineighbor_alltoall(sb, c->scount, st, rb, c->rcount, rt, comm, req)
                   : PMPI_Neighbor_alltoall(sb, c->scount, st, rb, c->rcount, rt, comm);
    case TJ_COLL_NEIGHBOR_ALLGATHER:
        return req ? PMPI_Ineighbor_allgather(sb, c->scount, st, rb, c->rcount, rt, comm, req)
                   : PMPI_Neighbor_allgather(sb, c->scount, st, rb, c->rcount, rt, comm);
    case TJ_COLL_NEIGHBOR_ALLGATHERV:
        return req ? PMPI_Ineighbor_allgatherv(sb, c->scount, st, rb, rc, rd, rt, comm, req)
                   : PMPI_Neighbor_allgatherv(sb, c->scount, st, rb, rc, rd, rt, comm);
    case TJ_COLL_ALLGATHER:
        return req ? PMPI_Iallgather(sb, c->scount, st, rb, c->rcount, rt, comm, req)
                   : PMPI_Allgather(sb, c->scount, st, rb, c->rcount, rt, comm);
    case TJ_COLL_ALLGATHERV:
        return req ? PMPI_Iallgatherv(sb, c->scount, st, rb, rc, rd, rt, comm, req)
                   : PMPI_Allgatherv(sb, c->scount, st, rb, rc, rd, rt, comm);
    case TJ_COLL_GATHER:
        return req ? PMPI_Igather(sb, c->scount, st, rb, c->rcount, rt, c->root, comm, req)
                   : PMPI_Gather(sb, c->scount, st, rb, c->rcount, rt, c->root, comm);
    case TJ_COLL_GATHERV:
        return req ? PMPI_Igatherv(sb, c->scount, st, rb, rc, rd, rt, c->root, comm, req)
                   : PMPI_Gatherv(sb, c->scount, st, rb, rc, rd, rt, c->root, comm);
    case TJ_COLL_SCATTER:
        return req ? PMPI_Iscatter(sb, c->scount, st, rb, c->rcount, rt, c->root, comm, req)
                   : PMPI_Scatter(sb, c->scount, st, rb, c->rcount, rt, c->root, comm);
    case TJ_COLL_SCATTERV:
        return req ? PMPI_Iscatterv(sb, sc, sd, st, rb, c->rcount, rt, c->root, comm, req)
                   : PMPI_Scatterv(sb, sc, sd, st, rb, c->rcount, rt, c->root, comm);
    case TJ_COLL_BCAST: {
        /* One buffer: the root's send side or another rank's receive side. */
        void *buf = (s->present ? s->packed : r->packed) ? (s->present ? s->stage : r->stage)->host
                                                         : (void *)c->sbuf;
        MPI_Datatype t = s->present ? st : rt;
        return req ? PMPI_Ibcast(buf, c->scount, t, c->root, comm, req)
                   : PMPI_Bcast(buf, c->scount, t, c->root, comm);
    }
    }
    return MPI_ERR_INTERN;
}

/* ---- life of a call ------------------------------------------------------------------------- */

static void side_free(side_t *sd)
{
    tj_staging_put(sd->stage);
    for (int t = 0; t < sd->ntypes; t++) {
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

static int finish(void *arg, const MPI_Status *status)
{
    coll_t *x = arg;
    (void)status;
    return x->r.packed ? side_move(x, &x->r, false, false) : MPI_SUCCESS;
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

/* Everything before the system MPI's call: layout, staging, the packs. MPI result. */
static int prepare(coll_t *x, bool nonblocking)
{
    bool bytes = x->c.kind == TJ_COLL_ALLTOALLW;
    int rc = MPI_SUCCESS;
    side_t *sides[2] = {&x->s, &x->r};

    for (int k = 0; k < 2 && rc == MPI_SUCCESS; k++)
        if (sides[k]->packed && (rc = layout(sides[k], bytes)) == MPI_SUCCESS)
            rc = get_stage(sides[k]);
    if (rc == MPI_SUCCESS && nonblocking && x->r.packed)
        rc = keep_types(&x->r);
    if (rc == MPI_SUCCESS && x->s.packed)
        rc = side_move(x, &x->s, true, false);
    if (rc == MPI_SUCCESS && x->r.packed && x->inplace)
        rc = side_move(x, &x->r, true, true);
    return rc;
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
    if ((*rc = prepare(x, req != NULL)) != MPI_SUCCESS) {
        release(x);
        return TJ_COLL_FAILED;
    }
    if ((*rc = call_system(x, req)) != MPI_SUCCESS) {
        release(x);
        return TJ_COLL_DONE;
    }
    if (req != NULL) {
        tj_completion_t done = {finish, release, x};
        MPI_Status st;
        if (tj_request_add_completion(*req, &done) == TJ_OK)
            return TJ_COLL_DONE;
        /* Not trackable: complete it here. */
        *rc = PMPI_Wait(req, &st);
        if (*rc != MPI_SUCCESS) {
            release(x);
            return TJ_COLL_DONE;
        }
    }
    *rc = finish(x, MPI_STATUS_IGNORE);
    release(x);
    return *rc == MPI_SUCCESS ? TJ_COLL_DONE : TJ_COLL_FAILED;
}
