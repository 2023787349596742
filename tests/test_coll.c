/* SPDX-License-Identifier: BSD-3-Clause */
/* Collectives on device buffers with derived datatypes, through the preloaded library, against
 * the system MPI itself: after each call, the same collective runs through PMPI on host copies
 * of every buffer, with the same types, counts and displacements, and the receive buffers are
 * compared byte for byte over their whole footprint (bytes no typemap touches included).
 *
 * Every collective typejit interposes: Alltoallv, Alltoallw, Neighbor_alltoallv and
 * Neighbor_alltoallw (on a Cartesian communicator with MPI_PROC_NULL neighbours, on a distributed
 * graph, and from three ranks on an MPI_Graph_create ring), Allgather, Allgatherv, Gather,
 * Gatherv, Scatter, Scatterv and Bcast, blocking and non-blocking (completed by Wait, a Test loop
 * or Waitall), with MPI_IN_PLACE where the standard allows it, counts from 0 to 3 per peer, random
 * nested types (strided and not), a send type and a receive type of the same size but another
 * layout, per-peer types in the w forms, and each rank's buffers in memory of its own kind
 * (device, managed, pinned or pageable), so that ranks that pack meet ranks that pass typed host
 * buffers. Then Alltoallv, Ialltoallv, Allgather, Bcast, Gatherv and Scatter on an
 * intercommunicator (even world ranks against odd ones) with device buffers.
 *
 *   mpirun -np N test_coll [--seed S] [--iters K] [--verbose] [--host-only]
 *
 * --verbose: each rank says what it calls; --host-only: every buffer in pageable host memory
 * (the system MPI alone, a check of the test itself). Exits 77 without a CUDA device. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "counters.h"
#include "cudrv.h"
#include "devbuf.h"
#include "mpicheck.h"
#include "randtype.h"
#include "sysmpi.h"
#include "options.h"

#define POISON 0x5A
#define POOL   2
#define KINDS  11

enum {
    ALLTOALLV,
    ALLTOALLW,
    NBR_V,
    NBR_W,
    ALLGATHER,
    ALLGATHERV,
    GATHER,
    GATHERV,
    SCATTER,
    SCATTERV,
    BCAST
};
static const char *const kind_names_coll[KINDS] = {"alltoallv",
                                                   "alltoallw",
                                                   "neighbor_alltoallv",
                                                   "neighbor_alltoallw",
                                                   "allgather",
                                                   "allgatherv",
                                                   "gather",
                                                   "gatherv",
                                                   "scatter",
                                                   "scatterv",
                                                   "bcast"};

static int rank, nranks;
static long failures, checked;
static uint64_t seed = 1;
static bool verbose, host_only;
static MPI_Comm cart, graph, ring = MPI_COMM_NULL;
static int cart_src[4], cart_dst[4], graph_src[2], graph_dst[2], ring_nbrs[2];

#define FAIL(...) mpicheck_fail(&failures, 20, rank, __VA_ARGS__)

/* A value every rank computes alike from the iteration and up to three more numbers. */
static uint64_t h(long t, long a, long b, long tag)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + (uint64_t)t * 0xBF58476D1CE4E5B9ull +
                 (uint64_t)a * 0x94D049BB133111EBull + (uint64_t)b * 0x2545F4914F6CDD1Dull +
                 (uint64_t)tag * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* One side of a call as the application passes it, with a host copy and the reference. */
typedef struct {
    int n;
    int count;            /* single-count forms */
    int *counts, *displs; /* v forms (elements) and Alltoallw (bytes) */
    MPI_Aint *adispls;    /* Neighbor_alltoallw */
    MPI_Datatype type, *types;
    int64_t lo, hi;
    buf_t buf;
    char *arg;
    unsigned char *host, *ref;
} tside_t;

static void footprint(MPI_Datatype type, int count, int64_t *lo, int64_t *hi)
{
    MPI_Aint tlb, text, lb, ext;
    MPI_Type_get_true_extent(type, &tlb, &text);
    MPI_Type_get_extent(type, &lb, &ext);
    *lo = tlb;
    *hi = tlb + text + (int64_t)(count - 1) * ext;
}

static MPI_Aint extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

static void tside_alloc(tside_t *s, int n)
{
    memset(s, 0, sizeof(*s));
    s->n = n;
    s->counts = calloc((size_t)n + 1, sizeof(int));
    s->displs = calloc((size_t)n + 1, sizeof(int));
    s->adispls = calloc((size_t)n + 1, sizeof(MPI_Aint));
    s->types = calloc((size_t)n + 1, sizeof(MPI_Datatype));
    REQUIRE(s->counts && s->displs && s->adispls && s->types);
}

/* Place the slices: v forms at element displacements with random gaps, w forms at byte
 * displacements, single-count forms where MPI puts them. Then allocate the footprint. */
typedef enum { PLACE_SINGLE, PLACE_ELEMS, PLACE_BYTES } place_t;

static void tside_place(tside_t *s, place_t how, kind_t kind, long t, int tag)
{
    int64_t cursor = 0;
    s->lo = INT64_MAX;
    s->hi = INT64_MIN;
    for (int i = 0; i < s->n; i++) {
        MPI_Datatype ty = s->types[i] != MPI_DATATYPE_NULL ? s->types[i] : s->type;
        int c = how == PLACE_SINGLE ? s->count : s->counts[i];
        int64_t lo, hi, off;
        MPI_Aint ext = extent_of(ty);
        if (how == PLACE_SINGLE) {
            off = (int64_t)i * c * ext;
        } else if (how == PLACE_ELEMS) {
            s->displs[i] = (int)cursor;
            off = cursor * ext;
            cursor += c + (int64_t)(h(t, rank, i, tag) % 2);
        } else {
            footprint(ty, c > 0 ? c : 1, &lo, &hi);
            cursor = (cursor + 15) & ~(int64_t)15;
            off = cursor - lo;
            s->displs[i] = (int)off;
            s->adispls[i] = (MPI_Aint)off;
            cursor += (hi - lo) + (int64_t)(h(t, rank, i, tag) % 3) * 8;
        }
        if (c == 0)
            continue;
        footprint(ty, c, &lo, &hi);
        if (off + lo < s->lo)
            s->lo = off + lo;
        if (off + hi > s->hi)
            s->hi = off + hi;
    }
    if (s->lo > s->hi) {
        s->lo = 0;
        s->hi = 1;
    }
    s->buf = buf_alloc(kind, (size_t)(s->hi - s->lo));
    s->arg = s->buf.ptr - s->lo;
    s->host = malloc((size_t)(s->hi - s->lo));
    s->ref = malloc((size_t)(s->hi - s->lo));
    REQUIRE(s->host && s->ref);
}

static void tside_fill(tside_t *s, uint64_t salt)
{
    size_t len = (size_t)(s->hi - s->lo);
    for (size_t i = 0; i < len; i++)
        s->host[i] = salt == 0 ? POISON : (unsigned char)(i * 31 + salt);
    memcpy(s->ref, s->host, len);
    buf_put(&s->buf, s->host);
}

static char *ref_arg(tside_t *s)
{
    return (char *)s->ref - s->lo;
}

static void tside_free(tside_t *s)
{
    if (s->buf.ptr != NULL)
        buf_free(&s->buf);
    free(s->host);
    free(s->ref);
    free(s->counts);
    free(s->displs);
    free(s->adispls);
    free(s->types);
}

/* The iteration's types: a pool of random types, each with a companion of the same size and
 * another layout (every other byte), that either side may use instead. */
static MPI_Datatype pool[POOL], companion[POOL];
static char pool_desc[POOL][4096];

/* Whether unpacking one object of @p type writes @p size distinct bytes. */
static bool one_to_one(MPI_Datatype type, MPI_Aint tlb, MPI_Aint text, int size)
{
    unsigned char *foot = calloc((size_t)text + 1, 1), *packed = malloc((size_t)size);
    int pos = 0, touched = 0;
    REQUIRE(foot && packed);
    memset(packed, 0xFF, (size_t)size);
    PMPI_Unpack(packed, size, &pos, foot - tlb, 1, type, MPI_COMM_SELF);
    for (MPI_Aint i = 0; i < text; i++)
        touched += foot[i] != 0;
    free(foot);
    free(packed);
    return touched == size;
}

static void draw_pool(rt_rng_t *rng)
{
    rt_options_t opt = {.max_depth = 3, .max_size = 2048, .max_span = 16 << 10, .huge_percent = 0};
    for (int k = 0; k < POOL; k++) {
        for (;;) {
            MPI_Datatype t = rt_draw_type(rng, &opt, pool_desc[k], sizeof(pool_desc[k]));
            MPI_Aint lb, ext, tlb, text;
            int size;
            MPI_Type_get_extent(t, &lb, &ext);
            MPI_Type_get_true_extent(t, &tlb, &text);
            MPI_Type_size(t, &size);
            /* Objects that do not overlap and a typemap that names no byte twice, so that no
             * receive writes a byte twice (the standard leaves the result of that open). */
            if (ext <= 0 || text > ext || size == 0 || !one_to_one(t, tlb, text, size)) {
                MPI_Type_free(&t);
                continue;
            }
            pool[k] = t;
            MPI_Type_vector(size, 1, 2, MPI_BYTE, &companion[k]);
            MPI_Type_commit(&companion[k]);
            break;
        }
    }
}

static void free_pool(void)
{
    for (int k = 0; k < POOL; k++) {
        MPI_Type_free(&pool[k]);
        MPI_Type_free(&companion[k]);
    }
}

/* Type k of the pool, or its companion, as rank @p who chooses for slot @p slot. */
static MPI_Datatype pick(long t, int k, int who, int slot, int tag)
{
    return h(t, who, slot, tag) % 2 ? companion[k] : pool[k];
}

static kind_t pick_kind(long t, int tag)
{
    static const kind_t kinds[4] = {K_DEVICE, K_MANAGED, K_PINNED, K_HOST};
    uint64_t v = h(t, rank, 0, 1000 + tag) % 6;
    if (host_only)
        return K_HOST;
    return v < 2 ? K_DEVICE : v < 3 ? K_MANAGED : kinds[v - 2];
}

static void compare(const char *what, tside_t *r, long t, int rc, int ref_rc)
{
    checked++;
    buf_get(&r->buf, r->host);
    if ((rc == MPI_SUCCESS) != (ref_rc == MPI_SUCCESS))
        FAIL("iteration %ld %s: rc %d, system MPI %d", t, what, rc, ref_rc);
    for (int64_t i = 0; i < r->hi - r->lo; i++)
        if (r->host[i] != r->ref[i]) {
            FAIL("iteration %ld %s: byte %lld of the receive footprint is %d, system MPI %d "
                 "(types: %s | %s)",
                 t, what, (long long)(i + r->lo), r->host[i], r->ref[i], pool_desc[0],
                 pool_desc[1]);
            break;
        }
}

/* One collective of kind @p kind in iteration @p t. */
static void one(long t, int kind, bool nonblocking)
{
    tside_t s = {0}, r = {0};
    bool has_s = false, has_r = false, inplace = false;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Comm comm = MPI_COMM_WORLD;
    int rc = MPI_SUCCESS, ref_rc = MPI_SUCCESS, x = (int)(h(t, 0, 0, 1) % POOL);
    int root = (int)(h(t, 0, 0, 2) % (uint64_t)nranks), cnt0 = (int)(h(t, 0, 0, 3) % 4);
    kind_t sk = pick_kind(t, 0), rk = pick_kind(t, 1);
    char what[96];
    /* The neighbourhood: a distributed graph (0), a Cartesian grid (1), or, with three ranks or
     * more, a ring made by MPI_Graph_create (2). */
    int topo = (int)(h(t, 0, 0, 4) % (ring != MPI_COMM_NULL ? 3 : 2));
    bool nbr = kind == NBR_V || kind == NBR_W, use_cart = topo == 1;
    const int *src = topo == 1 ? cart_src : topo == 2 ? ring_nbrs : graph_src;
    const int *dst = topo == 1 ? cart_dst : topo == 2 ? ring_nbrs : graph_dst;
    int deg = use_cart ? 4 : 2;

    if (nbr)
        comm = topo == 1 ? cart : topo == 2 ? ring : graph;
    /* MPI_IN_PLACE one time in three where the standard allows it. */
    if (h(t, 0, 0, 5) % 3 == 0 && kind != NBR_V && kind != NBR_W && kind != BCAST)
        inplace = true;
    if ((kind == GATHER || kind == GATHERV || kind == SCATTER || kind == SCATTERV) && rank != root)
        inplace = false;
    /* MPICH 4.0 and Intel MPI 2021 deliver wrong bytes, without typejit too, from a non-blocking
     * in-place Alltoallw whose receive types differ between peers (docs/mpis.md); typejit's
     * packed slices have a type each. */
    if (inplace && nonblocking && kind == ALLTOALLW &&
        (sysmpi_version_has("MPICH Version: 4.0") ||
         sysmpi_version_has("Intel(R) MPI Library 2021")))
        inplace = false;
    snprintf(what, sizeof(what), "%s%s%s%s", nonblocking ? "i" : "", kind_names_coll[kind],
             inplace ? " in place" : "",
             nbr ? (topo == 1   ? " (cart)"
                    : topo == 2 ? " (graph ring)"
                                : " (dist graph)")
                 : "");
    if (verbose)
        fprintf(stderr, "rank %d: iteration %ld %s, send %s, receive %s\n", rank, t, what,
                kind_names[sk], kind_names[rk]);

    switch (kind) {
    case ALLTOALLV:
    case ALLTOALLW: {
        bool w = kind == ALLTOALLW;
        tside_alloc(&s, nranks);
        tside_alloc(&r, nranks);
        s.type = pick(t, x, rank, 0, 10);
        r.type = pick(t, x, rank, 0, 11);
        for (int p = 0; p < nranks; p++) {
            s.counts[p] = (int)(h(t, rank, p, 20) % 4);
            r.counts[p] = (int)(h(t, p, rank, 20) % 4);
            if (w) {
                s.types[p] = pick(t, (int)(h(t, rank, p, 21) % POOL), rank, p, 22);
                r.types[p] = pick(t, (int)(h(t, p, rank, 21) % POOL), rank, p, 23);
            } else {
                s.types[p] = r.types[p] = MPI_DATATYPE_NULL;
            }
        }
        if (inplace) {
            /* One list for both directions: the receive arguments must match themselves. */
            for (int p = 0; p < nranks; p++) {
                /* Open MPI 4.1.4's non-blocking in-place Alltoallv and Alltoallw return early,
                 * without taking their tag, on a rank whose counts are all 0, and the next
                 * non-blocking collective hangs: no zero counts there. */
                r.counts[p] = (int)(h(t, rank < p ? rank : p, rank < p ? p : rank, 24) % 4);
                if (nonblocking && r.counts[p] == 0 && sysmpi_version_has("Open MPI v4.1"))
                    r.counts[p] = 1;
                if (w)
                    r.types[p] =
                        pick(t, (int)(h(t, rank < p ? rank : p, rank < p ? p : rank, 25) % POOL),
                             rank, p, 23);
            }
        }
        has_s = !inplace;
        has_r = true;
        break;
    }
    case NBR_V:
    case NBR_W: {
        bool w = kind == NBR_W;
        tside_alloc(&s, deg);
        tside_alloc(&r, deg);
        s.type = pick(t, x, rank, 0, 10);
        r.type = pick(t, x, rank, 0, 11);
        for (int k = 0; k < deg; k++) {
            /* Receive slot k from src[k] is that rank's send slot k ^ 1 (Cartesian, and the
             * MPI_Graph ring {prev, next}: it sent to its +1 neighbour what we get from our -1
             * neighbour) or k (the distributed graph, whose in- and out-lists are reversed). */
            int from = src[k] == MPI_PROC_NULL ? 0 : src[k], slot = topo != 0 ? k ^ 1 : k;
            s.counts[k] = (int)(h(t, rank, k, 30) % 4);
            r.counts[k] = (int)(h(t, from, slot, 30) % 4);
            if (src[k] == MPI_PROC_NULL)
                r.counts[k] = (int)(h(t, rank, k, 31) % 4);
            if (w) {
                s.types[k] = pick(t, (int)(h(t, rank, k, 32) % POOL), rank, k, 33);
                r.types[k] = pick(t, (int)(h(t, from, slot, 32) % POOL), rank, k, 34);
            } else {
                s.types[k] = r.types[k] = MPI_DATATYPE_NULL;
            }
        }
        (void)dst;
        has_s = has_r = true;
        break;
    }
    case ALLGATHER:
    case ALLGATHERV:
    case GATHER:
    case GATHERV: {
        bool v = kind == ALLGATHERV || kind == GATHERV,
             all = kind == ALLGATHER || kind == ALLGATHERV;
        tside_alloc(&s, 1);
        tside_alloc(&r, nranks);
        s.type = pick(t, x, rank, 0, 10);
        s.types[0] = MPI_DATATYPE_NULL;
        s.count = v ? (int)(h(t, rank, 0, 40) % 4) : cnt0;
        r.type = pick(t, x, rank, 0, 11);
        r.count = cnt0;
        for (int p = 0; p < nranks; p++) {
            r.types[p] = MPI_DATATYPE_NULL;
            r.counts[p] = (int)(h(t, p, 0, 40) % 4);
        }
        has_s = !inplace;
        has_r = all || rank == root;
        break;
    }
    case SCATTER:
    case SCATTERV: {
        bool v = kind == SCATTERV;
        tside_alloc(&s, nranks);
        tside_alloc(&r, 1);
        s.type = pick(t, x, rank, 0, 10);
        s.count = cnt0;
        for (int p = 0; p < nranks; p++) {
            s.types[p] = MPI_DATATYPE_NULL;
            s.counts[p] = (int)(h(t, p, 0, 50) % 4);
        }
        r.type = pick(t, x, rank, 0, 11);
        r.types[0] = MPI_DATATYPE_NULL;
        r.count = v ? (int)(h(t, rank, 0, 50) % 4) : cnt0;
        has_s = rank == root;
        has_r = !inplace;
        break;
    }
    case BCAST:
        tside_alloc(&r, 1);
        r.type = pick(t, x, rank, 0, 11);
        r.types[0] = MPI_DATATYPE_NULL;
        r.count = cnt0;
        has_r = true;
        break;
    }

    bool single_s = kind == ALLGATHER || kind == ALLGATHERV || kind == GATHER || kind == GATHERV ||
                    kind == SCATTER;
    bool single_r =
        kind == ALLGATHER || kind == GATHER || kind == SCATTER || kind == SCATTERV || kind == BCAST;
    place_t sp = single_s                               ? PLACE_SINGLE
                 : (kind == ALLTOALLW || kind == NBR_W) ? PLACE_BYTES
                                                        : PLACE_ELEMS;
    place_t rp = single_r                               ? PLACE_SINGLE
                 : (kind == ALLTOALLW || kind == NBR_W) ? PLACE_BYTES
                                                        : PLACE_ELEMS;
    if (has_s) {
        tside_place(&s, sp, sk, t, 60);
        tside_fill(&s, 1 + (uint64_t)rank * 7 + (uint64_t)t);
    }
    if (has_r) {
        tside_place(&r, rp, rk, t, 61);
        /* In place (and the Bcast root), the receive buffer holds this rank's data. */
        tside_fill(&r, inplace || (kind == BCAST && rank == root)
                           ? 100 + (uint64_t)rank * 5 + (uint64_t)t
                           : 0);
    }

    if (verbose && has_r && !single_r)
        for (int i = 0; i < s.n || i < r.n; i++) {
            int ss = -1, rs = -1;
            if (i < s.n && has_s)
                MPI_Type_size(s.types[i] != MPI_DATATYPE_NULL ? s.types[i] : s.type, &ss);
            if (i < r.n)
                MPI_Type_size(r.types[i] != MPI_DATATYPE_NULL ? r.types[i] : r.type, &rs);
            fprintf(stderr, "rank %d:   slot %d send %d x %d B at %d, receive %d x %d B at %d\n",
                    rank, i, i < s.n ? s.counts[i] : -1, ss, i < s.n ? s.displs[i] : -1,
                    i < r.n ? r.counts[i] : -1, rs, i < r.n ? r.displs[i] : -1);
        }
#define CALL(_x, _ix, ...)                                                                         \
    (!test ? PMPI_##_x(__VA_ARGS__) : rq ? MPI_##_ix(__VA_ARGS__, rq) : MPI_##_x(__VA_ARGS__))
    /* The call under test, then the system MPI's on the host copies (CALL); the call under test
     * is non-blocking when a request is asked for. */
    for (int pass = 0; pass < 2; pass++) {
        bool test = pass == 0;
        bool scatter = kind == SCATTER || kind == SCATTERV;
        const void *sb = inplace && !scatter ? MPI_IN_PLACE
                         : !has_s            ? NULL
                         : test              ? (void *)s.arg
                                             : (void *)ref_arg(&s);
        void *rb = !has_r ? NULL : test ? (void *)r.arg : (void *)ref_arg(&r);
        MPI_Request *rq = test && nonblocking ? &req : NULL;
        int out;
        if (scatter && inplace)
            rb = MPI_IN_PLACE;
        switch (kind) {
        case ALLTOALLV:
            out = CALL(Alltoallv, Ialltoallv, sb, s.counts, s.displs, s.type, rb, r.counts,
                       r.displs, r.type, comm);
            break;
        case ALLTOALLW:
            out = CALL(Alltoallw, Ialltoallw, sb, s.counts, s.displs, s.types, rb, r.counts,
                       r.displs, r.types, comm);
            break;
        case NBR_V:
            out = CALL(Neighbor_alltoallv, Ineighbor_alltoallv, sb, s.counts, s.displs, s.type, rb,
                       r.counts, r.displs, r.type, comm);
            break;
        case NBR_W:
            out = CALL(Neighbor_alltoallw, Ineighbor_alltoallw, sb, s.counts, s.adispls, s.types,
                       rb, r.counts, r.adispls, r.types, comm);
            break;
        case ALLGATHER:
            out = CALL(Allgather, Iallgather, sb, s.count, s.type, rb, r.count, r.type, comm);
            break;
        case ALLGATHERV:
            out = CALL(Allgatherv, Iallgatherv, sb, s.count, s.type, rb, r.counts, r.displs, r.type,
                       comm);
            break;
        case GATHER:
            out = CALL(Gather, Igather, sb, s.count, s.type, rb, r.count, r.type, root, comm);
            break;
        case GATHERV:
            out = CALL(Gatherv, Igatherv, sb, s.count, s.type, rb, r.counts, r.displs, r.type, root,
                       comm);
            break;
        case SCATTER:
            out = CALL(Scatter, Iscatter, sb, s.count, s.type, rb, r.count, r.type, root, comm);
            break;
        case SCATTERV:
            out = CALL(Scatterv, Iscatterv, sb, s.counts, s.displs, s.type, rb, r.count, r.type,
                       root, comm);
            break;
        default: /* BCAST */
            out = CALL(Bcast, Ibcast, rb, r.count, r.type, root, comm);
            break;
        }
        if (rq != NULL && out == MPI_SUCCESS)
            out = mpicheck_complete(rq, t);
        if (test)
            rc = out;
        else
            ref_rc = out;
    }
#undef CALL
    if (has_r)
        compare(what, &r, t, rc, ref_rc);
    else if (rc != MPI_SUCCESS)
        FAIL("iteration %ld %s: rc %d", t, what, rc);
    tside_free(&s);
    tside_free(&r);
}

/* The fused path (one kernel launch for every strided slice of a side): an Alltoallw with a
 * different vector type per peer and an Alltoallv with one vector type at displacements that
 * leave gaps, both on device buffers at offsets that are not 16-byte aligned; and an Alltoallw
 * whose members move words of different sizes (@p words: slices of 3 ints, W 4, or of a vector
 * of 16-byte runs, W 16 or 8 where its packed bytes lie after 24 others, in turn; each member
 * with its own word). Each side must take exactly one launch, and the receive buffer must match
 * PMPI's on host copies byte for byte. */
static void fused_check(bool w, bool words)
{
    const char *what = words ? "alltoallw of two words" : w ? "alltoallw" : "alltoallv";
    const int per = 2; /* objects per peer */
    size_t slot = 4096, len = slot * (size_t)nranks + 64;
    MPI_Datatype *st = calloc((size_t)nranks, sizeof(MPI_Datatype));
    MPI_Datatype *rt = calloc((size_t)nranks, sizeof(MPI_Datatype));
    int *sc = calloc((size_t)nranks, sizeof(int)), *rc = calloc((size_t)nranks, sizeof(int));
    int *sd = calloc((size_t)nranks, sizeof(int)), *rd = calloc((size_t)nranks, sizeof(int));
    unsigned char *shost = malloc(len), *rhost = malloc(len), *ref = malloc(len);
    MPI_Datatype vs, vr;
    long before;
    int rcode;

    REQUIRE(st && rt && sc && rc && sd && rd && shost && rhost && ref);
    /* Alltoallv: one type per side, element displacements of 3 objects per peer (gaps). */
    MPI_Type_vector(4, 2, 3, MPI_INT, &vs);
    MPI_Type_vector(2, 4, 7, MPI_INT, &vr);
    MPI_Type_commit(&vs);
    MPI_Type_commit(&vr);
    for (int j = 0; j < nranks; j++) {
        sc[j] = rc[j] = per;
        if (words) {
            /* The pair (rank, j) exchanges one kind both ways, at 16-byte aligned offsets. */
            for (int side = 0; side < 2; side++) {
                MPI_Datatype *t = side == 0 ? &st[j] : &rt[j];
                if ((rank + j) % 2 == 0)
                    MPI_Type_contiguous(3, MPI_INT, t);
                else
                    MPI_Type_vector(8, 4, 8, MPI_INT, t);
                MPI_Type_commit(t);
            }
            sd[j] = rd[j] = (int)(slot * (size_t)j) + 16;
        } else if (w) {
            /* Per-peer layouts of 32 bytes each, at byte offsets 4 (mod 16). */
            MPI_Type_vector(4, 2, 3 + j, MPI_INT, &st[j]);
            MPI_Type_vector(2, 4, 5 + j, MPI_INT, &rt[j]);
            MPI_Type_commit(&st[j]);
            MPI_Type_commit(&rt[j]);
            sd[j] = (int)(slot * (size_t)j) + 4;
            rd[j] = (int)(slot * (size_t)j) + 20;
        } else {
            st[j] = vs;
            rt[j] = vr;
            sd[j] = rd[j] = 3 * per * j + 1; /* in extents of 44 bytes */
        }
    }
    for (size_t i = 0; i < len; i++) {
        shost[i] = (unsigned char)h(rank, (long)i, 7, 99);
        rhost[i] = POISON;
    }
    memcpy(ref, rhost, len);
    buf_t sb = buf_alloc(K_DEVICE, len), rb = buf_alloc(K_DEVICE, len);
    buf_put(&sb, shost);
    buf_put(&rb, rhost);

    before = tj_counter("kernel_launches");
    rcode = w ? MPI_Alltoallw(sb.ptr, sc, sd, st, rb.ptr, rc, rd, rt, MPI_COMM_WORLD)
              : MPI_Alltoallv(sb.ptr, sc, sd, vs, rb.ptr, rc, rd, vr, MPI_COMM_WORLD);
    CHECK(rcode == MPI_SUCCESS);
    if (tj_counter("kernel_launches") - before != 2)
        FAIL("fused %s: %ld kernel launches, expected 2 (one per side)", what,
             tj_counter("kernel_launches") - before);
    rcode = w ? PMPI_Alltoallw(shost, sc, sd, st, ref, rc, rd, rt, MPI_COMM_WORLD)
              : PMPI_Alltoallv(shost, sc, sd, vs, ref, rc, rd, vr, MPI_COMM_WORLD);
    CHECK(rcode == MPI_SUCCESS);
    buf_get(&rb, rhost);
    for (size_t i = 0; i < len; i++)
        if (rhost[i] != ref[i]) {
            FAIL("fused %s: received byte %zu is %d, PMPI gives %d", what, i, rhost[i], ref[i]);
            break;
        }
    checked++;
    buf_free(&sb);
    buf_free(&rb);
    for (int j = 0; w && j < nranks; j++) {
        MPI_Type_free(&st[j]);
        MPI_Type_free(&rt[j]);
    }
    MPI_Type_free(&vs);
    MPI_Type_free(&vr);
    free(st);
    free(rt);
    free(sc);
    free(rc);
    free(sd);
    free(rd);
    free(shost);
    free(rhost);
    free(ref);
}

/* Collectives on an intercommunicator (even world ranks against odd ones): the peers of a call
 * are the remote group, and a rooted call names its root by MPI_ROOT in the root's group
 * (MPI_PROC_NULL for the others there) and by its rank in the other group. Each call runs on
 * device buffers through the library, then through PMPI on host copies, and the receive
 * buffers must match byte for byte. The type is strided, so the device sides are packed. */
enum { IC_ALLTOALLV, IC_IALLTOALLV, IC_ALLGATHER, IC_BCAST, IC_GATHERV, IC_SCATTER, IC_KINDS };
static const char *const ic_names[IC_KINDS] = {"alltoallv", "ialltoallv", "allgather",
                                               "bcast",     "gatherv",    "scatter"};

static void intercomm_check(void)
{
    MPI_Comm local, inter;
    MPI_Datatype vec;
    MPI_Aint lb, ext;
    int color = rank % 2, me, lsize, rsize;
    enum { SLOTS = 8 }; /* objects per peer, at most */
    long packs, unpacks;

    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
    /* Leaders: world rank 0 for the evens, world rank 1 for the odds. */
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 4242, &inter);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    MPI_Comm_rank(inter, &me);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Type_vector(5, 2, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_get_extent(vec, &lb, &ext);
    packs = tj_counter("packs_gpu");
    unpacks = tj_counter("unpacks_gpu");

    for (int kind = 0; kind < IC_KINDS; kind++) {
        size_t len = (size_t)ext * SLOTS * (size_t)(rsize > lsize ? rsize : lsize) + 64;
        int *sc = calloc((size_t)rsize, sizeof(int)), *sd = calloc((size_t)rsize, sizeof(int));
        int *rc = calloc((size_t)rsize, sizeof(int)), *rd = calloc((size_t)rsize, sizeof(int));
        unsigned char *shost = malloc(len), *rhost = malloc(len), *ref = malloc(len);
        kind_t where = host_only ? K_HOST : K_DEVICE;
        buf_t sdev = buf_alloc(where, len), rdev = buf_alloc(where, len);
        /* The root: local rank 0 of the evens for Bcast and Scatter, of the odds for Gatherv. */
        int root_color = kind == IC_GATHERV ? 1 : 0;
        int root = color == root_color ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        bool receives;
        int out[2];

        REQUIRE(sc && sd && rc && rd && shost && rhost && ref);
        for (size_t i = 0; i < len; i++)
            shost[i] = (unsigned char)(i * 13 + (size_t)rank * 29 + (size_t)kind);
        memset(rhost, POISON, len);
        buf_put(&sdev, shost);
        buf_put(&rdev, rhost);
        memcpy(ref, rhost, len);
        /* Counts agree across the groups: what p sends me is what I expect from p. */
        for (int p = 0, so = 0, ro = 0; p < rsize; p++) {
            sc[p] = 1 + (me + p) % 3;
            /* The Gatherv root expects from remote rank p what p sends: 1 + p % 2 objects. */
            rc[p] = kind == IC_GATHERV ? 1 + p % 2 : 1 + (me + p) % 3;
            sd[p] = so, rd[p] = ro;
            so += sc[p] + 1; /* a gap of one object between peers */
            ro += rc[p] + 1;
        }
        for (int pass = 0; pass < 2; pass++) {
            bool test = pass == 0;
            const void *sb = test ? (const void *)sdev.ptr : (const void *)shost;
            void *rb = test ? (void *)rdev.ptr : (void *)ref;
            MPI_Request req;
            switch (kind) {
            case IC_ALLTOALLV:
                out[pass] = test ? MPI_Alltoallv(sb, sc, sd, vec, rb, rc, rd, vec, inter)
                                 : PMPI_Alltoallv(sb, sc, sd, vec, rb, rc, rd, vec, inter);
                break;
            case IC_IALLTOALLV:
                out[pass] = test ? MPI_Ialltoallv(sb, sc, sd, vec, rb, rc, rd, vec, inter, &req)
                                 : PMPI_Ialltoallv(sb, sc, sd, vec, rb, rc, rd, vec, inter, &req);
                if (out[pass] == MPI_SUCCESS)
                    out[pass] = test ? MPI_Wait(&req, MPI_STATUS_IGNORE)
                                     : PMPI_Wait(&req, MPI_STATUS_IGNORE);
                break;
            case IC_ALLGATHER:
                out[pass] = test ? MPI_Allgather(sb, 2, vec, rb, 2, vec, inter)
                                 : PMPI_Allgather(sb, 2, vec, rb, 2, vec, inter);
                break;
            case IC_BCAST:
                /* The root sends from its send buffer; the other group receives. */
                out[pass] =
                    test ? MPI_Bcast(root == MPI_ROOT ? (void *)sb : rb, 3, vec, root, inter)
                         : PMPI_Bcast(root == MPI_ROOT ? (void *)sb : rb, 3, vec, root, inter);
                break;
            case IC_GATHERV:
                out[pass] = test ? MPI_Gatherv(sb, 1 + me % 2, vec, rb, rc, rd, vec, root, inter)
                                 : PMPI_Gatherv(sb, 1 + me % 2, vec, rb, rc, rd, vec, root, inter);
                break;
            default: /* IC_SCATTER */
                out[pass] = test ? MPI_Scatter(sb, 2, vec, rb, 2, vec, root, inter)
                                 : PMPI_Scatter(sb, 2, vec, rb, 2, vec, root, inter);
                break;
            }
        }
        receives = kind == IC_ALLTOALLV || kind == IC_IALLTOALLV || kind == IC_ALLGATHER ||
                   ((kind == IC_BCAST || kind == IC_SCATTER) && color != root_color) ||
                   (kind == IC_GATHERV && root == MPI_ROOT);
        buf_get(&rdev, rhost);
        checked++;
        if (out[0] != out[1])
            FAIL("intercommunicator %s: rc %d, system MPI %d", ic_names[kind], out[0], out[1]);
        else if (memcmp(rhost, ref, len) != 0)
            FAIL("intercommunicator %s: the receive buffer differs from the system MPI's%s",
                 ic_names[kind], receives ? "" : " (a rank that receives nothing)");
        buf_free(&sdev);
        buf_free(&rdev);
        free(sc), free(sd), free(rc), free(rd);
        free(shost), free(rhost), free(ref);
    }
    /* Typejit packed them: every rank sends and receives in the Alltoallv. */
    if (!host_only && (tj_counter("packs_gpu") <= packs || tj_counter("unpacks_gpu") <= unpacks))
        FAIL("intercommunicator collectives: no device packs or unpacks by typejit");
    MPI_Type_free(&vec);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
}

int main(int argc, char **argv)
{
    long iters = 44;
    rt_rng_t rng;

    options_read(argc, argv,
                 (const opt_t[]){{"--seed", OPT_U64, &seed},
                                 {"--iters", OPT_LONG, &iters},
                                 {"--verbose", OPT_FLAG, &verbose},
                                 {"--host-only", OPT_FLAG, &host_only},
                                 {NULL}});
    if (!mpicheck_start(&argc, &argv, &rank, &nranks))
        return 77;

    /* A Cartesian ring of the ranks and a second dimension of one rank, not periodic, so that
     * it has MPI_PROC_NULL neighbours (the ring is periodic only with more than two ranks:
     * with two, both neighbours would be one rank and the pairing of its two messages is the
     * implementation's); and a ring as a distributed graph. */
    int dims[2] = {nranks, 1}, periods[2] = {nranks > 2, 0};
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    for (int d = 0; d < 2; d++) {
        MPI_Cart_shift(cart, d, 1, &cart_src[2 * d], &cart_src[2 * d + 1]);
        cart_dst[2 * d] = cart_src[2 * d];
        cart_dst[2 * d + 1] = cart_src[2 * d + 1];
    }
    int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    graph_src[0] = prev;
    graph_src[1] = next;
    graph_dst[0] = next;
    graph_dst[1] = prev;
    int weights[2] = {1, 1};
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, graph_src, weights, 2, graph_dst, weights,
                                   MPI_INFO_NULL, 0, &graph);
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(graph, MPI_ERRORS_RETURN);
    /* The same ring as an MPI_Graph_create topology, each rank's neighbours {prev, next}; with
     * two ranks both would be one rank, and the pairing of the two messages the
     * implementation's. */
    if (nranks >= 3) {
        int *index = malloc((size_t)nranks * sizeof(int));
        int *edges = malloc(2 * (size_t)nranks * sizeof(int));
        REQUIRE(index != NULL && edges != NULL);
        for (int r = 0; r < nranks; r++) {
            index[r] = 2 * (r + 1);
            edges[2 * r] = (r + nranks - 1) % nranks;
            edges[2 * r + 1] = (r + 1) % nranks;
        }
        MPI_Graph_create(MPI_COMM_WORLD, nranks, index, edges, 0, &ring);
        MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
        ring_nbrs[0] = prev;
        ring_nbrs[1] = next;
        free(index);
        free(edges);
    }

    /* Every rank draws the same types: the RNG has the same seed everywhere. */
    rt_seed(&rng, seed);
    for (long t = 0; t < iters; t++) {
        if (t % KINDS == 0)
            draw_pool(&rng);
        one(t, (int)(t % KINDS), (t / KINDS) % 2 == 1);
        if (t % KINDS == KINDS - 1 || t == iters - 1)
            free_pool();
    }

    if (!host_only) {
        fused_check(true, false);
        fused_check(false, false);
        fused_check(true, true);
    }
    if (nranks >= 2)
        intercomm_check();

    printf("rank %d: %ld collectives checked, packs_gpu=%ld unpacks_gpu=%ld kernel_launches=%ld, "
           "%ld failures\n",
           rank, checked, tj_counter("packs_gpu"), tj_counter("unpacks_gpu"),
           tj_counter("kernel_launches"), failures);
    CHECK(mpicheck_job_failures(failures) == 0);
    if (!host_only) {
        CHECK(tj_counter("packs_gpu") > 0);
        CHECK(tj_counter("unpacks_gpu") > 0);
        CHECK(tj_counter("kernel_launches") > 0);
    }
    MPI_Comm_free(&cart);
    MPI_Comm_free(&graph);
    if (ring != MPI_COMM_NULL)
        MPI_Comm_free(&ring);
    MPI_Finalize();
    CHECK_DONE();
}
