/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI-4 large-count datatypes through the preloaded library (MPICH 4 and 5, the standard ABI;
 * an MPI without the `_c` calls exits 77).
 *
 *   test_largecount types     every `_c` constructor, with counts, displacements and extents
 *                             past 2^31 where the kind has them, committed with errors fatal
 *                             (typejit's own introspection must never reach an error handler),
 *                             translated exactly (strided where the layout is, with the
 *                             system MPI's size), and packed and unpacked with MPI_Pack_c and
 *                             MPI_Unpack_c from sparse host memory, byte for byte against the
 *                             system MPI's PMPI_Pack_c and PMPI_Unpack_c
 *   test_largecount envelope  MPI_Type_get_envelope (the int form) on a type of a `_c`
 *                             constructor, with an error handler that counts its calls: prints
 *                             what the application sees (the error class, the handler calls
 *                             before and after), which must be the same with and without
 *                             typejit (tests/same_output.sh)
 *   test_largecount calls     (any number of ranks, a CUDA device or the test driver) one call
 *                             of each family of `_c` forms on device buffers, with a strided
 *                             type of `_c` constructors: point to point, the collectives with
 *                             MPI_Count counts and MPI_Aint displacements, reductions,
 *                             external32, one-sided, MPI-IO; every byte of each buffer compared
 *                             with the system MPI's int form of the call on host copies; and the
 *                             `_c` forms typejit refuses on device memory: MPI_ERR_BUFFER
 *   test_largecount big       (one rank, a CUDA device or the test driver) counts past 2^31:
 *                             see big() */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <dlfcn.h>

#include "check.h"
#include "counters.h"
#include "cudrv.h"
#include "devbuf.h"
#include "tempdir.h"

#if MPI_VERSION >= 4

#define POISON 0xA5
#define G2     ((MPI_Count)1 << 31)

typedef int (*describe_fn)(const void *, char *, size_t);

static int handler_calls;

static void count_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    handler_calls++;
}

/* A sparse buffer of @p len bytes: pages are backed only where touched. */
static unsigned char *sparse(size_t len)
{
    void *p =
        mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    REQUIRE(p != MAP_FAILED);
    return p;
}

/* Commit @p t, check typejit's record, and pack and unpack @p count objects of it at @p off
 * bytes into a sparse buffer of @p span bytes, against the system MPI. */
static void check_type(const char *name, MPI_Datatype t, MPI_Count count, size_t span, size_t off,
                       int want_strided)
{
    describe_fn describe = (describe_fn)dlsym(RTLD_DEFAULT, "tj_type_describe");
    char text[1024] = "";
    MPI_Count size, lb, ext, tlb, text_;
    MPI_Count bytes, pos_tj = 0, pos_mpi = 0;
    unsigned char *typed, *mirror, *a, *b;

    REQUIRE(MPI_Type_commit(&t) == MPI_SUCCESS);
    REQUIRE(describe != NULL);
    REQUIRE(describe(&t, text, sizeof(text)) == 0);
    if (want_strided && strncmp(text, "strided", 7) != 0) {
        fprintf(stderr, "%s: typejit says \"%s\", want strided\n", name, text);
        exit(1);
    }
    /* Not one strided block: a layout of strided parts (docs/layouts.md), or the system MPI's. */
    if (!want_strided && strncmp(text, "layout", 6) != 0 && strncmp(text, "not strided", 11) != 0) {
        fprintf(stderr, "%s: typejit says \"%s\", want a layout or not strided\n", name, text);
        exit(1);
    }
    REQUIRE(MPI_Type_size_c(t, &size) == MPI_SUCCESS);
    if (want_strided || strncmp(text, "layout", 6) == 0) {
        char want[64];
        snprintf(want, sizeof(want), "size=%lld ", (long long)size);
        if (strstr(text, want) == NULL) {
            fprintf(stderr, "%s: typejit says \"%s\", want %s\n", name, text, want);
            exit(1);
        }
    }
    if (count == 0) {
        MPI_Type_free(&t);
        return;
    }
    REQUIRE(MPI_Type_get_extent_c(t, &lb, &ext) == MPI_SUCCESS);
    REQUIRE(MPI_Type_get_true_extent_c(t, &tlb, &text_) == MPI_SUCCESS);
    bytes = size * count;
    typed = sparse(span);
    mirror = sparse(span);
    a = malloc((size_t)bytes);
    b = malloc((size_t)bytes);
    REQUIRE(a != NULL && b != NULL);
    /* A pattern in the bytes the system MPI reads: pack once with PMPI from zero pages, then
     * unpack a pattern stream with PMPI, which writes exactly the typemap. */
    for (MPI_Count i = 0; i < bytes; i++)
        a[i] = (unsigned char)(i * 131 + 7);
    REQUIRE(PMPI_Unpack_c(a, bytes, &pos_mpi, typed + off, count, t, MPI_COMM_WORLD) ==
            MPI_SUCCESS);
    memset(a, POISON, (size_t)bytes);
    memset(b, POISON, (size_t)bytes);
    REQUIRE(MPI_Pack_c(typed + off, count, t, a, bytes, &pos_tj, MPI_COMM_WORLD) == MPI_SUCCESS);
    pos_mpi = 0;
    REQUIRE(PMPI_Pack_c(typed + off, count, t, b, bytes, &pos_mpi, MPI_COMM_WORLD) == MPI_SUCCESS);
    if (pos_tj != pos_mpi || memcmp(a, b, (size_t)bytes) != 0) {
        fprintf(stderr, "%s: MPI_Pack_c differs from the system MPI (%s)\n", name, text);
        exit(1);
    }
    /* Unpack the same bytes into a poisoned mirror with typejit, compare every byte the type
     * touches (and its neighbours) with the system MPI's unpack into the typed buffer. */
    {
        size_t lo = (size_t)((MPI_Count)off + tlb), n = (size_t)((count - 1) * ext + text_);
        for (size_t i = 0; n < ((size_t)1 << 26) && i < n; i += 4096) {
            size_t l = n - i < 4096 ? n - i : 4096;
            /* Pages untouched by the typemap read as zero in both. */
            memcpy(mirror + lo + i, typed + lo + i, l);
        }
        pos_tj = 0;
        REQUIRE(MPI_Unpack_c(a, bytes, &pos_tj, mirror + off, count, t, MPI_COMM_WORLD) ==
                MPI_SUCCESS);
        REQUIRE(pos_tj == bytes);
        if (n < ((size_t)1 << 26) && memcmp(mirror + lo, typed + lo, n) != 0) {
            fprintf(stderr, "%s: MPI_Unpack_c differs from the system MPI\n", name);
            exit(1);
        }
    }
    munmap(typed, span);
    munmap(mirror, span);
    free(a);
    free(b);
    MPI_Type_free(&t);
}

static void types(void)
{
    MPI_Datatype t, inner;
    MPI_Count bl2[2] = {1, 2}, d2[2] = {0, G2 + 8}, dsmall[2] = {0, 5};
    MPI_Count sizes[2] = {2, G2 + 16}, subs[2] = {2, 4}, starts[2] = {0, G2};
    MPI_Datatype two[2] = {MPI_INT, MPI_INT};
    size_t big = (size_t)(5 * G2);

    /* Small values: every kind through the `_c` constructor. */
    MPI_Type_contiguous_c(7, MPI_INT, &t);
    check_type("contiguous_c", t, 3, 4096, 0, 1);
    MPI_Type_vector_c(3, 2, 5, MPI_INT, &t);
    check_type("vector_c", t, 2, 4096, 0, 1);
    MPI_Type_create_hvector_c(3, 2, 40, MPI_INT, &t);
    check_type("hvector_c", t, 2, 4096, 0, 1);
    MPI_Type_indexed_c(2, bl2, dsmall, MPI_INT, &t);
    check_type("indexed_c", t, 2, 4096, 0, 0);
    MPI_Type_create_hindexed_c(2, bl2, dsmall, MPI_CHAR, &t);
    check_type("hindexed_c", t, 2, 4096, 0, 0);
    MPI_Type_create_indexed_block_c(2, 3, dsmall, MPI_INT, &t);
    check_type("indexed_block_c", t, 2, 4096, 0, 1);
    MPI_Type_create_hindexed_block_c(2, 1, dsmall, MPI_CHAR, &t);
    check_type("hindexed_block_c", t, 2, 4096, 0, 1);
    MPI_Type_create_struct_c(2, bl2, dsmall, two, &t);
    check_type("struct_c", t, 2, 4096, 0, 0);
    {
        MPI_Count sz[2] = {4, 5}, sb[2] = {2, 3}, st[2] = {1, 1};
        MPI_Type_create_subarray_c(2, sz, sb, st, MPI_ORDER_C, MPI_INT, &t);
        check_type("subarray_c", t, 2, 4096, 0, 1);
    }
    {
        int dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
        int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {1, 1};
        MPI_Count gs[2] = {4, 6};
        /* One process holds the whole array: strided through its layout. */
        MPI_Type_create_darray_c(1, 0, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
        check_type("darray_c", t, 1, 4096, 0, 1);
    }
    {
        /* Rows dealt in blocks of 2 to 2 processes: rank 0 has rows 0, 1 and 4, a layout. */
        int dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
        int darg[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 1};
        MPI_Count gs[2] = {5, 6};
        MPI_Type_create_darray_c(2, 0, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
        check_type("darray_c block-cyclic", t, 2, 4096, 0, 0);
    }
    MPI_Type_create_resized_c(MPI_INT, -4, 16, &t);
    check_type("resized_c", t, 3, 4096, 64, 1);

    /* Values past 2^31: a count (committed and translated; its bytes are too many to pack
     * here), strides, displacements, sizes and extents (packed from sparse memory). */
    MPI_Type_contiguous_c(G2 + 8, MPI_BYTE, &t);
    check_type("contiguous_c(2^31+8)", t, 0, 0, 0, 1);
    MPI_Type_vector_c(2, 3, G2 + 8, MPI_BYTE, &t);
    check_type("vector_c stride 2^31+8", t, 1, big, 0, 1);
    MPI_Type_create_hvector_c(2, 2, 3 * G2 / 2, MPI_INT, &t);
    check_type("hvector_c stride 3*2^30", t, 1, big, 0, 1);
    MPI_Type_create_hindexed_block_c(2, 4, d2, MPI_CHAR, &t);
    check_type("hindexed_block_c displ 2^31+8", t, 1, big, 0, 1);
    MPI_Type_create_indexed_block_c(2, 1, d2, MPI_CHAR, &t);
    check_type("indexed_block_c displ 2^31+8", t, 1, big, 0, 1);
    MPI_Type_create_hindexed_c(2, bl2, d2, MPI_CHAR, &t);
    check_type("hindexed_c displ 2^31+8", t, 1, big, 0, 0);
    MPI_Type_create_struct_c(2, bl2, d2, two, &t);
    check_type("struct_c displ 2^31+8", t, 1, big, 0, 0);
    MPI_Type_create_subarray_c(2, sizes, subs, starts, MPI_ORDER_C, MPI_BYTE, &t);
    check_type("subarray_c sizes 2^31+16", t, 1, big, 0, 1);
    MPI_Type_create_resized_c(MPI_INT, 0, G2 + 12, &t);
    check_type("resized_c extent 2^31+12", t, 2, big, 0, 1);
    /* Nested: a `_c` type inside an int-constructed one. */
    MPI_Type_create_hvector_c(2, 1, G2, MPI_SHORT, &inner);
    MPI_Type_contiguous(2, inner, &t);
    MPI_Type_free(&inner);
    check_type("contiguous(hvector_c)", t, 1, big, 0, 1);
    printf("types: ok\n");
}

static void envelope(void)
{
    MPI_Errhandler eh;
    MPI_Datatype t;
    int ni, na, nd, combiner, rc, cls = -1, before;

    MPI_Comm_create_errhandler(count_handler, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, eh);
    MPI_Type_vector_c(3, 2, G2 + 8, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    before = handler_calls;
    rc = MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    printf("handler calls before the application's call %d; MPI_Type_get_envelope %s (class %d); "
           "handler calls after %d\n",
           before, rc == MPI_SUCCESS ? "succeeded" : "failed", cls, handler_calls);
    MPI_Type_free(&t);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&eh);
}

/* ---- the `_c` forms on device buffers ------------------------------------------------------- */

static int rank, nranks;
static MPI_Datatype vt; /* 3 ints 8 bytes apart, extent 32: strided, with holes */
/* The same made by the int constructors: MPICH 4.0.2's MPI-IO (ROMIO) takes apart a file
 * access's type with MPI_Type_get_envelope, which refuses a type of `_c` constructors (the
 * program aborts, without typejit too). */
static MPI_Datatype vi;
#define VT_EXT 32
#define K      2 /* objects per peer */

/* A device buffer and its host reference, filled with the same pattern. */
typedef struct {
    buf_t dev;
    unsigned char *host, *got;
    size_t len;
} pair_t;

static void pair_make(pair_t *p, size_t len, unsigned salt)
{
    p->len = len;
    p->dev = buf_alloc(K_DEVICE, len);
    p->host = malloc(len);
    p->got = malloc(len);
    REQUIRE(p->host != NULL && p->got != NULL);
    for (size_t i = 0; i < len; i++)
        p->host[i] = (unsigned char)(i * 37 + salt * 101 + (unsigned)rank * 13 + 1);
    buf_put(&p->dev, p->host);
}

/* Every byte of the device buffer against the reference. */
static void pair_check(pair_t *p, const char *what)
{
    buf_get(&p->dev, p->got);
    if (memcmp(p->got, p->host, p->len) != 0) {
        size_t i = 0;
        while (p->got[i] == p->host[i])
            i++;
        fprintf(stderr, "rank %d: %s: byte %zu is %u, the system MPI's %u\n", rank, what, i,
                p->got[i], p->host[i]);
        check_failures++;
    }
}

static void pair_free(pair_t *p)
{
    buf_free(&p->dev);
    free(p->host);
    free(p->got);
}

#define DEV(_p) ((void *)(_p).dev.ptr)

static void check_ok(const char *what, int rc)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: %s: rc %d\n", rank, what, rc);
        check_failures++;
    }
}

static void p2p_calls(void)
{
    pair_t s, r;
    int to = (rank + 1) % nranks, from = (rank + nranks - 1) % nranks;
    MPI_Request req;

    pair_make(&s, K * VT_EXT, 1);
    pair_make(&r, K * VT_EXT, 2);
    check_ok("MPI_Irecv_c", MPI_Irecv_c(DEV(r), K, vt, from, 3, MPI_COMM_WORLD, &req));
    check_ok("MPI_Send_c", MPI_Send_c(DEV(s), K, vt, to, 3, MPI_COMM_WORLD));
    check_ok("MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
    REQUIRE(PMPI_Sendrecv(s.host, K, vt, to, 4, r.host, K, vt, from, 4, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE) == MPI_SUCCESS);
    pair_check(&r, "MPI_Send_c/MPI_Irecv_c");
    pair_free(&s);
    pair_free(&r);
}

static void coll_calls(void)
{
    MPI_Count *cnt = malloc((size_t)nranks * sizeof(MPI_Count));
    MPI_Aint *dsp = malloc((size_t)nranks * sizeof(MPI_Aint)),
             *bytes = malloc((size_t)nranks * sizeof(MPI_Aint));
    int *icnt = malloc((size_t)nranks * sizeof(int)), *idsp = malloc((size_t)nranks * sizeof(int)),
        *ibytes = malloc((size_t)nranks * sizeof(int));
    MPI_Datatype *types = malloc((size_t)nranks * sizeof(MPI_Datatype));
    size_t all = (size_t)(nranks < 2 ? 2 : nranks) * K * VT_EXT; /* the ring has 2 neighbours */
    pair_t s, r;
    MPI_Request req;

    REQUIRE(cnt && dsp && bytes && icnt && idsp && ibytes && types);
    for (int i = 0; i < nranks; i++) {
        cnt[i] = icnt[i] = K;
        /* Slices in reverse peer order: displacements that are not the usual ones. */
        dsp[i] = idsp[i] = (nranks - 1 - i) * K;
        bytes[i] = ibytes[i] = (nranks - 1 - i) * K * VT_EXT;
        types[i] = vt;
    }

    pair_make(&s, all, 3);
    pair_make(&r, all, 4);
    check_ok("MPI_Alltoallv_c",
             MPI_Alltoallv_c(DEV(s), cnt, dsp, vt, DEV(r), cnt, dsp, vt, MPI_COMM_WORLD));
    REQUIRE(PMPI_Alltoallv(s.host, icnt, idsp, vt, r.host, icnt, idsp, vt, MPI_COMM_WORLD) ==
            MPI_SUCCESS);
    pair_check(&r, "MPI_Alltoallv_c");

    check_ok("MPI_Ialltoallw_c", MPI_Ialltoallw_c(DEV(s), cnt, bytes, types, DEV(r), cnt, bytes,
                                                  types, MPI_COMM_WORLD, &req));
    check_ok("MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
    REQUIRE(PMPI_Alltoallw(s.host, icnt, ibytes, types, r.host, icnt, ibytes, types,
                           MPI_COMM_WORLD) == MPI_SUCCESS);
    pair_check(&r, "MPI_Ialltoallw_c");

    check_ok("MPI_Allgatherv_c",
             MPI_Allgatherv_c(DEV(s), K, vt, DEV(r), cnt, dsp, vt, MPI_COMM_WORLD));
    REQUIRE(PMPI_Allgatherv(s.host, K, vt, r.host, icnt, idsp, vt, MPI_COMM_WORLD) == MPI_SUCCESS);
    pair_check(&r, "MPI_Allgatherv_c");

    check_ok("MPI_Bcast_c", MPI_Bcast_c(DEV(s), K, vt, nranks - 1, MPI_COMM_WORLD));
    REQUIRE(PMPI_Bcast(s.host, K, vt, nranks - 1, MPI_COMM_WORLD) == MPI_SUCCESS);
    pair_check(&s, "MPI_Bcast_c");

    check_ok("MPI_Igatherv_c",
             MPI_Igatherv_c(DEV(s), K, vt, DEV(r), cnt, dsp, vt, 0, MPI_COMM_WORLD, &req));
    check_ok("MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
    REQUIRE(PMPI_Gatherv(s.host, K, vt, r.host, icnt, idsp, vt, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
    pair_check(&r, "MPI_Igatherv_c");

    check_ok("MPI_Scatterv_c",
             MPI_Scatterv_c(DEV(s), cnt, dsp, vt, DEV(r), K, vt, nranks - 1, MPI_COMM_WORLD));
    REQUIRE(PMPI_Scatterv(s.host, icnt, idsp, vt, r.host, K, vt, nranks - 1, MPI_COMM_WORLD) ==
            MPI_SUCCESS);
    pair_check(&r, "MPI_Scatterv_c");

    /* A periodic ring: two neighbours, MPI_Aint byte displacements in both forms. */
    {
        MPI_Comm ring;
        int dims = nranks, periods = 1;
        MPI_Count ncnt[2] = {K, K};
        MPI_Aint nd[2] = {K * VT_EXT, 0};
        int incnt[2] = {K, K};
        MPI_Datatype nt[2] = {vt, vt};
        REQUIRE(MPI_Cart_create(MPI_COMM_WORLD, 1, &dims, &periods, 0, &ring) == MPI_SUCCESS);
        check_ok("MPI_Neighbor_alltoallw_c",
                 MPI_Neighbor_alltoallw_c(DEV(s), ncnt, nd, nt, DEV(r), ncnt, nd, nt, ring));
        REQUIRE(PMPI_Neighbor_alltoallw(s.host, incnt, nd, nt, r.host, incnt, nd, nt, ring) ==
                MPI_SUCCESS);
        pair_check(&r, "MPI_Neighbor_alltoallw_c");
        MPI_Comm_free(&ring);
    }
    pair_free(&s);
    pair_free(&r);
    free(cnt);
    free(dsp);
    free(bytes);
    free(icnt);
    free(idsp);
    free(ibytes);
    free(types);
}

static void reduce_calls(void)
{
    MPI_Count *rc = malloc((size_t)nranks * sizeof(MPI_Count));
    int *irc = malloc((size_t)nranks * sizeof(int)), n = 6;
    pair_t s, r;
    MPI_Request req;

    REQUIRE(rc && irc);
    for (int i = 0; i < nranks; i++)
        rc[i] = irc[i] = i + 1;
    pair_make(&s, (size_t)(nranks * (nranks + 1) / 2 + n) * sizeof(int), 5);
    pair_make(&r, s.len, 6);
    check_ok("MPI_Iallreduce_c",
             MPI_Iallreduce_c(DEV(s), DEV(r), n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
    check_ok("MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
    REQUIRE(PMPI_Allreduce(s.host, r.host, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
    pair_check(&r, "MPI_Iallreduce_c");

    check_ok("MPI_Reduce_scatter_c",
             MPI_Reduce_scatter_c(DEV(s), DEV(r), rc, MPI_INT, MPI_BXOR, MPI_COMM_WORLD));
    REQUIRE(PMPI_Reduce_scatter(s.host, r.host, irc, MPI_INT, MPI_BXOR, MPI_COMM_WORLD) ==
            MPI_SUCCESS);
    pair_check(&r, "MPI_Reduce_scatter_c");

    check_ok("MPI_Reduce_local_c", MPI_Reduce_local_c(DEV(s), DEV(r), n, MPI_INT, MPI_MAX));
    REQUIRE(PMPI_Reduce_local(s.host, r.host, n, MPI_INT, MPI_MAX) == MPI_SUCCESS);
    pair_check(&r, "MPI_Reduce_local_c");
    pair_free(&s);
    pair_free(&r);
    free(rc);
    free(irc);
}

static void external_calls(void)
{
    pair_t t, p;
    MPI_Count pos = 8;
    MPI_Aint ipos = 8;

    pair_make(&t, K * VT_EXT, 7);
    pair_make(&p, K * 12 + 16, 8);
    check_ok("MPI_Pack_external_c",
             MPI_Pack_external_c("external32", DEV(t), K, vt, DEV(p), (MPI_Count)p.len, &pos));
    REQUIRE(PMPI_Pack_external("external32", t.host, K, vt, p.host, (MPI_Aint)p.len, &ipos) ==
            MPI_SUCCESS);
    CHECK_EQ_INT(pos, ipos);
    pair_check(&p, "MPI_Pack_external_c");
    /* Back into a buffer of other bytes. */
    pair_free(&t);
    pair_make(&t, K * VT_EXT, 9);
    pos = ipos = 8;
    check_ok("MPI_Unpack_external_c",
             MPI_Unpack_external_c("external32", DEV(p), (MPI_Count)p.len, &pos, DEV(t), K, vt));
    REQUIRE(PMPI_Unpack_external("external32", p.host, (MPI_Aint)p.len, &ipos, t.host, K, vt) ==
            MPI_SUCCESS);
    CHECK_EQ_INT(pos, ipos);
    pair_check(&t, "MPI_Unpack_external_c");
    pair_free(&t);
    pair_free(&p);
}

static void rma_calls(void)
{
    size_t wlen = (size_t)K * VT_EXT;
    unsigned char *wa = calloc(1, wlen), *wb = calloc(1, wlen), *got = malloc(wlen);
    int to = (rank + 1) % nranks;
    MPI_Win a, b;
    pair_t o;

    REQUIRE(wa && wb && got);
    REQUIRE(MPI_Win_create(wa, (MPI_Aint)wlen, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &a) ==
            MPI_SUCCESS);
    REQUIRE(PMPI_Win_create(wb, (MPI_Aint)wlen, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &b) ==
            MPI_SUCCESS);
    pair_make(&o, wlen, 10);
    MPI_Win_fence(0, a);
    PMPI_Win_fence(0, b);
    check_ok("MPI_Put_c", MPI_Put_c(DEV(o), K, vt, to, 0, K, vt, a));
    REQUIRE(PMPI_Put(o.host, K, vt, to, 0, K, vt, b) == MPI_SUCCESS);
    MPI_Win_fence(0, a);
    PMPI_Win_fence(0, b);
    if (memcmp(wa, wb, wlen) != 0) {
        fprintf(stderr, "rank %d: MPI_Put_c: the window differs from the system MPI's\n", rank);
        check_failures++;
    }
    /* Get into a fresh device buffer. */
    pair_free(&o);
    pair_make(&o, wlen, 11);
    check_ok("MPI_Get_c", MPI_Get_c(DEV(o), K, vt, to, 0, K, vt, a));
    REQUIRE(PMPI_Get(o.host, K, vt, to, 0, K, vt, b) == MPI_SUCCESS);
    MPI_Win_fence(0, a);
    PMPI_Win_fence(0, b);
    pair_check(&o, "MPI_Get_c");
    pair_free(&o);
    MPI_Win_free(&a);
    PMPI_Win_free(&b);
    free(wa);
    free(wb);
    free(got);
}

static void file_calls(void)
{
    char dir[256], pa[300], pb[300];
    size_t len = (size_t)K * 12;
    unsigned char *fa = malloc(len), *fb = malloc(len);
    MPI_File a, b;
    pair_t t;

    REQUIRE(fa && fb);
    tempdir_make("largecount", dir, sizeof(dir));
    snprintf(pa, sizeof(pa), "%s/a", dir);
    snprintf(pb, sizeof(pb), "%s/b", dir);
    REQUIRE(MPI_File_open(MPI_COMM_SELF, pa, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &a) ==
            MPI_SUCCESS);
    REQUIRE(PMPI_File_open(MPI_COMM_SELF, pb, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &b) ==
            MPI_SUCCESS);
    pair_make(&t, (size_t)K * VT_EXT, 12);
    check_ok("MPI_File_write_at_c", MPI_File_write_at_c(a, 0, DEV(t), K, vi, MPI_STATUS_IGNORE));
    REQUIRE(PMPI_File_write_at(b, 0, t.host, K, vi, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    REQUIRE(PMPI_File_read_at(a, 0, fa, (int)len, MPI_BYTE, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    REQUIRE(PMPI_File_read_at(b, 0, fb, (int)len, MPI_BYTE, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    if (memcmp(fa, fb, len) != 0) {
        fprintf(stderr, "rank %d: MPI_File_write_at_c: the file differs from the system MPI's\n",
                rank);
        check_failures++;
    }
    pair_free(&t);
    pair_make(&t, (size_t)K * VT_EXT, 13);
    check_ok("MPI_File_read_at_c", MPI_File_read_at_c(a, 0, DEV(t), K, vi, MPI_STATUS_IGNORE));
    REQUIRE(PMPI_File_read_at(b, 0, t.host, K, vi, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    pair_check(&t, "MPI_File_read_at_c");
    pair_free(&t);
    MPI_File_close(&a);
    PMPI_File_close(&b);
    CHECK(tempdir_remove(dir));
    free(fa);
    free(fb);
}

/* The `_c` forms typejit refuses on device memory with an MPI that is not CUDA-aware. */
static void refused_calls(void)
{
    pair_t t;
    MPI_Request req;
    int cls;

    pair_make(&t, 4096, 14);
    MPI_Error_class(MPI_Buffer_attach_c(DEV(t), 4096), &cls);
    CHECK_EQ_INT(cls, MPI_ERR_BUFFER);
    MPI_Error_class(MPI_Isendrecv_c(DEV(t), 1, MPI_INT, rank, 5, (char *)DEV(t) + 64, 1, MPI_INT,
                                    rank, 5, MPI_COMM_WORLD, &req),
                    &cls);
    CHECK_EQ_INT(cls, MPI_ERR_BUFFER);
    MPI_Error_class(MPI_Allreduce_init_c(DEV(t), (char *)DEV(t) + 64, 4, MPI_INT, MPI_SUM,
                                         MPI_COMM_WORLD, MPI_INFO_NULL, &req),
                    &cls);
    CHECK_EQ_INT(cls, MPI_ERR_BUFFER);
    pair_free(&t);
}

/* MPI_Win_create_c on device memory: a window on a host public copy, in the separate memory model,
 * whose fence brings a put into the device memory. */
static void window_c(void)
{
    pair_t t;
    MPI_Win w;
    void *v;
    int flag = 0, x = 1234 + rank, got = 0, from = (rank + nranks - 1) % nranks;

    pair_make(&t, 4096, 15);
    check_ok("MPI_Win_create_c", MPI_Win_create_c(DEV(t), 4096, (MPI_Aint)sizeof(int),
                                                  MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    REQUIRE(MPI_Win_get_attr(w, MPI_WIN_MODEL, &v, &flag) == MPI_SUCCESS && flag);
    CHECK_EQ_INT(*(int *)v, MPI_WIN_SEPARATE);
    MPI_Win_fence(0, w);
    check_ok("MPI_Put_c", MPI_Put_c(&x, 1, MPI_INT, (rank + 1) % nranks, 3, 1, MPI_INT, w));
    MPI_Win_fence(0, w);
    CUDRV(cuMemcpyDtoH(&got, (CUdeviceptr)(uintptr_t)((char *)DEV(t) + 3 * sizeof(int)),
                       sizeof(int)));
    CHECK_EQ_INT(got, 1234 + from);
    MPI_Win_free(&w);
    pair_free(&t);
}

static int calls(void)
{
    MPI_Datatype v;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (!cudrv_open())
        return 77;
    REQUIRE(dlsym(RTLD_DEFAULT, "tj_version") != NULL); /* run with libtypejit.so preloaded */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Type_vector_c(3, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized_c(v, 0, VT_EXT, &vt);
    MPI_Type_free(&v);
    MPI_Type_commit(&vt);
    MPI_Type_vector(3, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, VT_EXT, &vi);
    MPI_Type_free(&v);
    MPI_Type_commit(&vi);
    p2p_calls();
    coll_calls();
    reduce_calls();
    external_calls();
    rma_calls();
    window_c();
    file_calls();
    refused_calls();
    MPI_Type_free(&vt);
    MPI_Type_free(&vi);
    if (rank == 0 && check_failures == 0)
        printf("calls: the _c forms on device buffers agree with the system MPI\n");
    return check_failures ? 1 : 0;
}

/* ---- counts past 2^31 ------------------------------------------------------------------------ */

#define CHUNK ((size_t)64 << 20)
/* More than 2^31 objects of one byte: the kernel's object index, packed word index and typed
 * offset all pass 2^31 (and INT_MAX, the last int count). */
#define BIG_COUNT ((MPI_Count)G2 + 4099)
/* The pattern's period: a prime, so that no shift by a power of two (an index cut to 31 or 32
 * bits) maps the pattern onto itself. */
#define PERIOD 251

static unsigned char big_pattern(MPI_Count i)
{
    return (unsigned char)(i % PERIOD * 7 + 1);
}

/* The chunks of the big buffers that get the pattern: the first, and those from 2^31 - CHUNK to
 * the end, across 2^31. The others keep what the allocation holds (untouched pages, which cost
 * no memory on the test driver or in host memory), and the system MPI is given the same bytes. */
static bool edge_chunk(MPI_Count at)
{
    return at == 0 || at >= G2 - (MPI_Count)CHUNK;
}

static size_t chunk_len(MPI_Count at)
{
    return (size_t)(BIG_COUNT - at < (MPI_Count)CHUNK ? BIG_COUNT - at : (MPI_Count)CHUNK);
}

/* A big buffer of host memory (sparse) or device memory. */
static unsigned char *big_alloc(bool dev)
{
    CUdeviceptr d;
    if (!dev)
        return sparse((size_t)BIG_COUNT);
    CUDRV(cuMemAlloc(&d, (size_t)BIG_COUNT));
    return (unsigned char *)(uintptr_t)d;
}

static void big_free(unsigned char *p, bool dev)
{
    if (dev)
        CUDRV(cuMemFree((CUdeviceptr)(uintptr_t)p));
    else
        munmap(p, (size_t)BIG_COUNT);
}

/* The pattern in the edge chunks of @p p; @p rep holds CHUNK + PERIOD bytes of it. */
static void big_fill_edges(unsigned char *p, bool dev, const unsigned char *rep)
{
    for (MPI_Count at = 0; at < BIG_COUNT; at += (MPI_Count)CHUNK) {
        if (!edge_chunk(at))
            continue;
        if (dev)
            CUDRV(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)(p + at), rep + at % PERIOD, chunk_len(at)));
        else
            memcpy(p + at, rep + at % PERIOD, chunk_len(at));
    }
}

/* The chunk at @p at of @p p, in host memory: @p p itself, or copied from the device to @p tmp. */
static const unsigned char *big_chunk(const unsigned char *p, bool dev, MPI_Count at,
                                      unsigned char *tmp)
{
    if (!dev)
        return p + at;
    CUDRV(cuMemcpyDtoH(tmp, (CUdeviceptr)(uintptr_t)(p + at), chunk_len(at)));
    return tmp;
}

/* Poisons the BIG_COUNT bytes of @p p. */
static void big_poison(unsigned char *p, bool dev)
{
    if (dev)
        CUDRV(cuMemsetD8((CUdeviceptr)(uintptr_t)p, POISON, (size_t)BIG_COUNT));
    else
        memset(p, POISON, (size_t)BIG_COUNT);
}

/* Whether MPI_Pack_c (MPI_Unpack_c with @p unpack) of BIG_COUNT objects of @p t (size 1, extent
 * 1) succeeded, @p rc, with the position at BIG_COUNT, @p end, and @p out holds, chunk by chunk,
 * what the system MPI makes of @p in. */
static bool big_right(const char *what, MPI_Datatype t, bool unpack, int rc, MPI_Count end,
                      const unsigned char *in, const unsigned char *out, bool dev, unsigned char *a,
                      unsigned char *b)
{
    if (rc != MPI_SUCCESS || end != BIG_COUNT) {
        fprintf(stderr, "%s: %s rc %d position %lld of %lld\n", what,
                unpack ? "MPI_Unpack_c" : "MPI_Pack_c", rc, (long long)end, (long long)BIG_COUNT);
        return false;
    }
    for (MPI_Count at = 0; at < BIG_COUNT; at += (MPI_Count)CHUNK) {
        MPI_Count n = (MPI_Count)chunk_len(at), pos = 0;
        const unsigned char *src = big_chunk(in, dev, at, a);
        int ref_rc = unpack ? PMPI_Unpack_c(src, n, &pos, b, n, t, MPI_COMM_SELF)
                            : PMPI_Pack_c(src, n, t, b, n, &pos, MPI_COMM_SELF);
        REQUIRE(ref_rc == MPI_SUCCESS);
        if (memcmp(big_chunk(out, dev, at, a), b, (size_t)n) != 0) {
            fprintf(stderr, "%s: the %s bytes from %lld differ from the system MPI's\n", what,
                    unpack ? "typed" : "packed", (long long)at);
            return false;
        }
    }
    return true;
}

/* MPI_Pack_c and MPI_Unpack_c of BIG_COUNT objects of @p t between two buffers of one kind
 * (device: one kernel launch each way; host: typejit's CPU engine, TYPEJIT_HOST=engine). Only
 * one of the two buffers is written whole at a time: the pack reads a typed buffer patterned at
 * its edges into a poisoned packed one, which is then freed; the unpack reads a new packed buffer
 * patterned at its edges into the poisoned typed one. */
static void big_count(const char *what, MPI_Datatype t, bool dev)
{
    unsigned char *typed, *packed, *a = malloc(CHUNK), *b = malloc(CHUNK);
    unsigned char *rep = malloc(CHUNK + PERIOD);
    long launches = tj_counter("kernel_launches"), staged = tj_counter("gpu_fallbacks");
    long engine = tj_counter("packs_engine") + tj_counter("unpacks_engine");
    MPI_Count pos = 0;
    int rc;

    REQUIRE(a != NULL && b != NULL && rep != NULL);
    for (size_t i = 0; i < CHUNK + PERIOD; i++)
        rep[i] = big_pattern((MPI_Count)i);

    typed = big_alloc(dev);
    big_fill_edges(typed, dev, rep);
    packed = big_alloc(dev);
    big_poison(packed, dev);
    rc = MPI_Pack_c(typed, BIG_COUNT, t, packed, BIG_COUNT, &pos, MPI_COMM_SELF);
    if (!big_right(what, t, false, rc, pos, typed, packed, dev, a, b))
        check_failures++;
    big_free(packed, dev);

    packed = big_alloc(dev);
    big_fill_edges(packed, dev, rep);
    big_poison(typed, dev);
    pos = 0;
    rc = MPI_Unpack_c(packed, BIG_COUNT, &pos, typed, BIG_COUNT, t, MPI_COMM_SELF);
    if (!big_right(what, t, true, rc, pos, packed, typed, dev, a, b))
        check_failures++;
    big_free(packed, dev);
    big_free(typed, dev);

    /* Each direction by one kernel (device) or the engine (host), never staged. */
    if (dev &&
        (tj_counter("kernel_launches") - launches != 2 || tj_counter("gpu_fallbacks") != staged)) {
        fprintf(stderr, "%s: %ld kernel launches (2 expected), %ld staged\n", what,
                tj_counter("kernel_launches") - launches, tj_counter("gpu_fallbacks") - staged);
        check_failures++;
    }
    if (!dev && tj_counter("packs_engine") + tj_counter("unpacks_engine") - engine != 2) {
        fprintf(stderr, "%s: not packed by the engine\n", what);
        check_failures++;
    }
    free(a);
    free(b);
    free(rep);
    printf("%s: %lld objects packed and unpacked exactly\n", what, (long long)BIG_COUNT);
}

/* A small strided pack at a position past 2^31 (and its unpack), for each kind of both sides:
 * the packed buffer is a sparse allocation of 2^31 + 1 MiB. */
static void big_position(MPI_Datatype t, kind_t tk, kind_t pk)
{
    const MPI_Count at = G2 + 12345, len = G2 + ((MPI_Count)1 << 20), n = 5;
    MPI_Count size, lb, ext, pos;
    unsigned char *typed, *packed, want[4096], got[4096], *tbuf;
    CUdeviceptr d;
    char what[96];
    int rc;

    snprintf(what, sizeof(what), "a pack at 2^31+12345 from %s into %s memory", kind_names[tk],
             kind_names[pk]);
    MPI_Type_size_c(t, &size);
    MPI_Type_get_extent_c(t, &lb, &ext);
    REQUIRE(n * size <= (MPI_Count)sizeof(want) && n * ext <= (MPI_Count)sizeof(want));
    tbuf = malloc((size_t)(n * ext));
    REQUIRE(tbuf != NULL);
    for (MPI_Count i = 0; i < n * ext; i++)
        tbuf[i] = big_pattern(i * 3);
    if (on_device(tk)) {
        CUDRV(cuMemAlloc(&d, (size_t)(n * ext)));
        CUDRV(cuMemcpyHtoD(d, tbuf, (size_t)(n * ext)));
        typed = (unsigned char *)(uintptr_t)d;
    } else {
        typed = tbuf;
    }
    if (on_device(pk)) {
        CUDRV(cuMemAlloc(&d, (size_t)len));
        packed = (unsigned char *)(uintptr_t)d;
    } else {
        packed = sparse((size_t)len);
    }
    pos = 0;
    REQUIRE(PMPI_Pack_c(tbuf, n, t, want, n * size, &pos, MPI_COMM_SELF) == MPI_SUCCESS);
    pos = at;
    rc = MPI_Pack_c(typed, n, t, packed, len, &pos, MPI_COMM_SELF);
    if (on_device(pk))
        CUDRV(cuMemcpyDtoH(got, (CUdeviceptr)(uintptr_t)(packed + at), (size_t)(n * size)));
    else
        memcpy(got, packed + at, (size_t)(n * size));
    if (rc != MPI_SUCCESS || pos != at + n * size || memcmp(got, want, (size_t)(n * size)) != 0) {
        fprintf(stderr, "%s: rc %d position %lld\n", what, rc, (long long)pos);
        check_failures++;
    }
    /* Back: unpack from there into poisoned typed memory. */
    memset(got, POISON, sizeof(got));
    if (on_device(tk))
        CUDRV(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)typed, got, (size_t)(n * ext)));
    else
        memcpy(typed, got, (size_t)(n * ext));
    pos = at;
    rc = MPI_Unpack_c(packed, len, &pos, typed, n, t, MPI_COMM_SELF);
    memcpy(want, got, (size_t)(n * ext));
    {
        MPI_Count p0 = 0;
        REQUIRE(PMPI_Pack_c(tbuf, n, t, got, n * size, &p0, MPI_COMM_SELF) == MPI_SUCCESS);
        p0 = 0;
        REQUIRE(PMPI_Unpack_c(got, n * size, &p0, want, n, t, MPI_COMM_SELF) == MPI_SUCCESS);
    }
    if (on_device(tk))
        CUDRV(cuMemcpyDtoH(got, (CUdeviceptr)(uintptr_t)typed, (size_t)(n * ext)));
    else
        memcpy(got, typed, (size_t)(n * ext));
    if (rc != MPI_SUCCESS || pos != at + n * size || memcmp(got, want, (size_t)(n * ext)) != 0) {
        fprintf(stderr, "%s, unpacked back: rc %d position %lld\n", what, rc, (long long)pos);
        check_failures++;
    }
    if (on_device(tk))
        CUDRV(cuMemFree((CUdeviceptr)(uintptr_t)typed));
    if (on_device(pk))
        CUDRV(cuMemFree((CUdeviceptr)(uintptr_t)packed));
    else
        munmap(packed, (size_t)len);
    free(tbuf);
}

/* Counts past 2^31 (TYPEJIT_HOST=engine, one rank): BIG_COUNT bytes packed and unpacked with
 * MPI_Pack_c and MPI_Unpack_c between two device buffers (one generated kernel each way, whose
 * object index, packed index and typed offset pass 2^31) and between two host buffers (the CPU
 * engine), each compared chunk by chunk with the system MPI given the same input (about 2.2 GB
 * written at once: see big_count); and a strided type packed at a position past 2^31 and
 * unpacked from there, with each side in host or device memory. */
static int big(void)
{
    MPI_Datatype v, t;
    kind_t kinds[2] = {K_DEVICE, K_HOST};

    if (!cudrv_open())
        return 77;
    REQUIRE(dlsym(RTLD_DEFAULT, "tj_version") != NULL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Type_contiguous_c(1, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    big_count("device", t, true);
    big_count("host", t, false);
    MPI_Type_free(&t);
    MPI_Type_vector_c(3, 2, 3, MPI_SHORT, &v);
    MPI_Type_create_resized_c(v, 0, 20, &t);
    MPI_Type_commit(&t);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            big_position(t, kinds[i], kinds[j]);
    printf("positions past 2^31: exact\n");
    MPI_Type_free(&v);
    MPI_Type_free(&t);
    return check_failures ? 1 : 0;
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
#if MPI_VERSION >= 4
    int rc = 0;
    if (argc > 1 && strcmp(argv[1], "types") == 0)
        types();
    else if (argc > 1 && strcmp(argv[1], "envelope") == 0)
        envelope();
    else if (argc > 1 && strcmp(argv[1], "calls") == 0)
        rc = calls();
    else if (argc > 1 && strcmp(argv[1], "big") == 0)
        rc = big();
    else {
        fprintf(stderr, "usage: %s types|envelope|calls|big\n", argv[0]);
        return 2;
    }
    MPI_Finalize();
    return rc;
#else
    (void)argv;
    printf("SKIP: this MPI has no large-count calls\n");
    MPI_Finalize();
    return argc > 0 ? 77 : 77;
#endif
}
