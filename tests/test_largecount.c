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
 *                             typejit (tests/same_output.sh) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <dlfcn.h>

#include "check.h"

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
    if (!want_strided && strncmp(text, "not strided", 11) != 0) {
        fprintf(stderr, "%s: typejit says \"%s\", want not strided\n", name, text);
        exit(1);
    }
    REQUIRE(MPI_Type_size_c(t, &size) == MPI_SUCCESS);
    if (want_strided) {
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
        MPI_Type_create_darray_c(1, 0, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
        check_type("darray_c", t, 1, 4096, 0, 0);
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
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
#if MPI_VERSION >= 4
    if (argc > 1 && strcmp(argv[1], "types") == 0)
        types();
    else if (argc > 1 && strcmp(argv[1], "envelope") == 0)
        envelope();
    else {
        fprintf(stderr, "usage: %s types|envelope\n", argv[0]);
        return 2;
    }
    MPI_Finalize();
    return 0;
#else
    (void)argv;
    printf("SKIP: this MPI has no large-count calls\n");
    MPI_Finalize();
    return argc > 0 ? 77 : 77;
#endif
}
