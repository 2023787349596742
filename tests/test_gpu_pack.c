/* SPDX-License-Identifier: BSD-3-Clause */
/* The oracle on device buffers: MPI_Pack / MPI_Unpack through the preloaded library with device,
 * managed, pinned mapped or pageable memory on each side (at least one on the device), against
 * PMPI_Pack / PMPI_Unpack on host copies, byte for byte: random nested types, counts 0 to 4,
 * positions other than zero, misaligned buffers, poisoned outputs, overlapping unpacks, empty
 * types, and types placed with absolute addresses (MPI_BOTTOM). After every call the caller's
 * current context must be the one it had. The test is an application: it uses the CUDA driver
 * itself (tests/cudrv.h), never typejit's. Exits 77 without a CUDA device.
 *
 *   test_gpu_pack [--seed N] [--types N] [--families F] [--expect-no-compiles]
 *                 [--expect-compiles] [--expect-staged] [--expect-generic] [--expect-disk-hits]
 *                 [--expect-edges] [--describe FILE]
 *
 * --families F: the types are constructions of F random layouts (rt_family_type), so that a
 * volume run has many types and a bounded number of kernels. --expect-disk-hits: kernels must
 * have come from the disk cache (a run over a cache an earlier run filled).
 * --describe FILE: write the descriptions of the types the run would test, one a line, to FILE
 * (for `typejit warm`) and test nothing.
 * --expect-no-compiles: a second run over a cache the first one filled must compile nothing.
 * --expect-edges: some launches must have been of kernels with edges (check_words' types).
 * --expect-compiles: a run over a cache that another build filled must compile its own kernels.
 * --expect-staged: the driver cannot load this NVRTC's kernels, so every call must be staged
 * (and still exact). --expect-generic: kernels are compiled in the background from an empty
 * cache, so some calls must have run the generic kernel meanwhile, and a type committed after its
 * layout's kernels were compiled must have them from its commit on. Without --expect-staged, every
 * pack of a strided type from device memory must have run a kernel: the test fails if calls
 * silently fell back.
 *
 * Built with TJ_CUDART (test_gpu_pack_cudart) the test is a program of the CUDA runtime API: its
 * buffers come from cudaMalloc, cudaMallocManaged and cudaHostAlloc (tests/devbuf_rt.c), and with
 * --stream-ordered its device buffers from cudaMallocAsync (pool memory, which has no context). */
#include <dlfcn.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "counters.h"
#ifndef TJ_CUDART
#include "cudrv.h"
#endif
#include "devbuf.h"
#include "options.h"
#include "randtype.h"
#include "sysmpi.h"

#define POISON   0xA5
#define MAX_SPAN ((int64_t)4 << 20)

static int mismatches;
static long kernel_calls; /* calls that must have launched a kernel */
static long device_calls; /* packs and unpacks of bytes with a device buffer */
static long typed_kernel; /* those of a type typejit gives a kernel */
#ifndef TJ_CUDART
static CUcontext app_ctx;
#endif

/* typejit's description of @p type (tj_type_describe); false without one. */
static bool type_describe(MPI_Datatype type, char *text, size_t len)
{
    int (*describe)(const void *, char *, size_t) =
        (int (*)(const void *, char *, size_t))(uintptr_t)dlsym(RTLD_DEFAULT, "tj_type_describe");
    return describe != NULL && describe(&type, text, len) == 0;
}

/* Whether typejit gives @p type a kernel: it is strided, or it has a layout. */
static bool has_kernel(MPI_Datatype type)
{
    char text[1024];
    return type_describe(type, text, sizeof(text)) &&
           (strncmp(text, "strided", 7) == 0 || strncmp(text, "layout", 6) == 0);
}

static void report(const char *what, const char *desc, kind_t tk, kind_t pk, int count, int pos,
                   int shift)
{
    if (mismatches++ < 10)
        fprintf(stderr, "MISMATCH %s typed=%s packed=%s count=%d position=%d shift=%d: %s\n", what,
                kind_names[tk], kind_names[pk], count, pos, shift, desc);
}

static void check_context(void)
{
#ifdef TJ_CUDART
    bool same = devbuf_rt_same_context();
#else
    CUcontext cur = NULL;
    CUDRV(cuCtxGetCurrent(&cur));
    bool same = cur == app_ctx;
#endif
    if (!same && mismatches++ < 10)
        fprintf(stderr, "MISMATCH: typejit left another context current\n");
}

/* The bytes count objects of @p type touch, relative to the buffer argument: [lo, lo + span). */
static bool footprint(MPI_Datatype type, int count, int64_t *lo, int64_t *span)
{
    MPI_Aint tlb, text, lb, ext;
    int size;
    MPI_Type_size(type, &size);
    /* An empty type is not checked here: its true bounds can be anything (Open MPI: a lower
     * bound of 2^63 - 1, and a pointer that far from the buffer is undefined), and MPICH 4.0's
     * reference MPI_Unpack of one raises SIGFPE (docs/mpis.md). */
    if (size == 0)
        return false;
    MPI_Type_get_true_extent(type, &tlb, &text);
    MPI_Type_get_extent(type, &lb, &ext);
    int64_t reach = (int64_t)(count > 0 ? count - 1 : 0) * ext;
    *lo = tlb + (reach < 0 ? reach : 0);
    *span = text + (reach < 0 ? -reach : reach);
    return *span > 0 && *span <= MAX_SPAN;
}

/* One type in one combination of memory kinds: pack, unpack and a too-small pack. @p bottom
 * places the object with an absolute address (a struct over MPI_BOTTOM). @p shift misaligns
 * the typed buffer, so a narrower kernel must serve it. */
static void check_case(MPI_Datatype type, const char *desc, int count, int pos, kind_t tk,
                       kind_t pk, int shift, bool bottom, uint64_t salt)
{
    int size, outsize, p_ref, p_got, rc;
    int64_t lo, span;
    MPI_Datatype used = type;

    MPI_Type_size(type, &size);
    if (!footprint(type, count, &lo, &span))
        return;
    outsize = pos + count * size + 8;
    buf_t typed = buf_alloc(tk, (size_t)span + 32), packed = buf_alloc(pk, (size_t)outsize);
    unsigned char *src = malloc(typed.len), *got = malloc(typed.len), *ref = malloc(typed.len);
    unsigned char *pin = malloc((size_t)outsize), *pref = malloc((size_t)outsize),
                  *pgot = malloc((size_t)outsize);
    REQUIRE(src && got && ref && pin && pref && pgot);
    /* Object 0 of the buffer argument `base` starts 16 + shift bytes into the allocation. */
    int64_t at = 16 + shift - lo;
    char *base = typed.ptr + at;
    unsigned char *host_base = src + at;
    void *arg = base;

    if (bottom) {
        int one = 1;
        MPI_Aint disp = (MPI_Aint)(uintptr_t)base;
        MPI_Type_create_struct(1, &one, &disp, &type, &used);
        MPI_Type_commit(&used);
        arg = MPI_BOTTOM;
    }
    for (size_t i = 0; i < typed.len; i++)
        src[i] = (unsigned char)(i * 13 + salt);
    buf_put(&typed, src);

    /* Pack. */
    memset(pref, POISON, (size_t)outsize);
    p_ref = pos;
    REQUIRE(PMPI_Pack(host_base, count, type, pref, outsize, &p_ref, MPI_COMM_SELF) == MPI_SUCCESS);
    memset(pgot, POISON, (size_t)outsize);
    buf_put(&packed, pgot);
    p_got = pos;
    rc = MPI_Pack(arg, bottom ? 1 : count, used, packed.ptr, outsize, &p_got, MPI_COMM_SELF);
    check_context();
    buf_get(&packed, pgot);
    if (rc != MPI_SUCCESS || p_got != p_ref || memcmp(pgot, pref, (size_t)outsize) != 0)
        report("pack", desc, tk, pk, count, pos, shift);
    if (on_device(tk) && count > 0 && size > 0 && has_kernel(type) && !bottom)
        kernel_calls++;
    if (count > 0 && size > 0) {
        device_calls += 2; /* the pack and the unpack */
        typed_kernel += has_kernel(type) ? 2 : 0;
    }

    /* Unpack a pattern into a poisoned typed buffer. */
    for (int i = 0; i < outsize; i++)
        pin[i] = (unsigned char)(i * 7 + salt);
    memset(ref, POISON, typed.len);
    p_ref = pos;
    REQUIRE(PMPI_Unpack(pin, outsize, &p_ref, ref + at, count, type, MPI_COMM_SELF) == MPI_SUCCESS);
    memset(got, POISON, typed.len);
    buf_put(&typed, got);
    buf_put(&packed, pin);
    p_got = pos;
    rc = MPI_Unpack(packed.ptr, outsize, &p_got, arg, bottom ? 1 : count, used, MPI_COMM_SELF);
    check_context();
    buf_get(&typed, got);
    if (rc != MPI_SUCCESS || p_got != p_ref || memcmp(got, ref, typed.len) != 0)
        report("unpack", desc, tk, pk, count, pos, shift);

    /* Too small: the system MPI's error, position untouched, nothing written. */
    if (count > 0 && size > 0 && !bottom) {
        memset(pgot, POISON, (size_t)outsize);
        buf_put(&packed, pgot);
        p_got = pos;
        rc = MPI_Pack(arg, count, type, packed.ptr, pos + count * size - 1, &p_got, MPI_COMM_SELF);
        buf_get(&packed, pin);
        if (rc == MPI_SUCCESS || p_got != pos || memcmp(pin, pgot, (size_t)outsize) != 0)
            report("pack truncation", desc, tk, pk, count, pos, shift);
    }
    if (bottom)
        MPI_Type_free(&used);
    buf_free(&typed);
    buf_free(&packed);
    free(src);
    free(got);
    free(ref);
    free(pin);
    free(pref);
    free(pgot);
}

/* Writes "{v0,v1,...}" of @p n ints to @p f. */
static void put_ints(FILE *f, const int *v, int n)
{
    fputc('{', f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%d", i ? "," : "", v[i]);
    fputc('}', f);
}

/* Shapes the random types rarely reach, each a layout: a part table in device memory (an
 * irregular indexed type of thousands of blocks, one of a vector child), a struct of differently
 * shaped members, pair types with a hole, a darray of block-cyclic rows, a subarray of 17 and
 * of 20 dimensions, indexed blocks that overlap (unpacked serially), evenly spaced members with
 * one elsewhere (folded into a strided part: of runs, of a vector's repetitions, overlapping,
 * at decreasing places; docs/layouts.md#the-form), a darray of a struct (also over
 * MPI_BOTTOM, where it keeps its layout). Each goes through
 * check_case in a few memory combinations and counts; with @p describe their descriptions go
 * there instead (for `typejit warm`). */
static int check_shapes(FILE *describe)
{
    enum { NSHAPES = 14 };
    MPI_Datatype t[NSHAPES], v, members[3];
    const char *names[NSHAPES] = {
        "indexed of 3000 irregular blocks of doubles",
        "hindexed of 700 blocks of a vector of floats",
        "struct {int; 3 strided doubles; MPI_SHORT_INT}",
        "contiguous(5, MPI_SHORT_INT)",
        "darray of 10x9 ints, rows cyclic(2) over 3, columns block",
        "subarray of 17 dimensions of bytes",
        "subarray of 20 dimensions of shorts",
        "indexed blocks of ints that overlap",
        "hvector of 3 irregular indexed types",
        "indexed of 19999 ints 3 apart, then one elsewhere (folded)",
        "hindexed of 40 pairs of vectors of floats 512 bytes apart, then one elsewhere (folded)",
        "indexed of 20 blocks of 4 ints 2 apart, then one elsewhere (folded, overlapping)",
        "indexed of 30 doubles at decreasing places, then one further (folded)",
        "darray of 10x9 struct {int; double}, over MPI_BOTTOM too"};
    static int bl[3000], dis[3000], bdis_i[700], fbl[20000], fdis[20000];
    static MPI_Aint bdis[3000];
    /* The folded shapes: evenly spaced members, one of them elsewhere. */
    int pbl[41], pdis_i[41], obl4[21], odis4[21], dbl[31], ddis[31];
    MPI_Aint pdis[41];
    int sizes[20], subs[20], starts[20], sizes20[20], subs20[20], n = 0;
    int obl[4] = {3, 3, 2, 4}, odis[4] = {0, 2, 1, 6};
    int gs[2] = {10, 9}, ds[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK}, da[2] = {2, 3},
        ps[2] = {3, 3};
    rt_rng_t rng;

    rt_seed(&rng, 77);
    for (int i = 0, at = 0; i < 3000; i++) {
        bl[i] = (int)rt_range(&rng, 1, 3);
        dis[i] = at;
        at += bl[i] + (int)rt_range(&rng, 0, 2);
    }
    for (int i = 0; i < 700; i++)
        bdis_i[i] = dis[i] * 64;
    for (int i = 0; i < 20000; i++) {
        fbl[i] = 1;
        fdis[i] = 3 * i + (i == 19999);
    }
    for (int i = 0; i < 41; i++) {
        pbl[i] = 2;
        pdis_i[i] = i < 40 ? 512 * i : 512 * 39 + 8;
        pdis[i] = pdis_i[i];
    }
    for (int i = 0; i < 21; i++) {
        obl4[i] = 4;
        odis4[i] = i < 20 ? 2 * i : 100;
    }
    for (int i = 0; i < 31; i++) {
        dbl[i] = 1;
        ddis[i] = i < 30 ? 100 - 3 * i : 200;
    }
    for (int d = 0; d < 20; d++) {
        sizes[d] = 3;
        subs[d] = 2;
        starts[d] = d % 2;
        /* 2^6 elements, 20 dimensions of which 14 are of one element */
        subs20[d] = d < 14 ? 1 : 2;
        sizes20[d] = d < 14 ? 2 : 3;
    }
    if (describe != NULL) {
        char *first = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&first, &len);
        REQUIRE(f != NULL);
        fputs("indexed(", f);
        put_ints(f, bl, 3000);
        fputc(',', f);
        put_ints(f, dis, 3000);
        fputs(",MPI_DOUBLE)", f);
        REQUIRE(fclose(f) == 0);
        fprintf(describe, "%s\n", first);
        fputs("hindexed(", describe);
        put_ints(describe, bl, 700);
        fputc(',', describe);
        put_ints(describe, bdis_i, 700);
        fputs(",vector(3,2,5,MPI_FLOAT))\n", describe);
        fputs("struct({1,1,1},{0,8,80},{MPI_INT,vector(3,1,2,MPI_DOUBLE),MPI_SHORT_INT})\n",
              describe);
        fputs("contiguous(5,MPI_SHORT_INT)\n", describe);
        fputs("darray(9,4,{10,9},{cyclic,block},{2,3},{3,3},C,MPI_INT)\n", describe);
        fputs("subarray(", describe);
        put_ints(describe, sizes, 17);
        fputc(',', describe);
        put_ints(describe, subs, 17);
        fputc(',', describe);
        put_ints(describe, starts, 17);
        fputs(",C,MPI_BYTE)\nsubarray(", describe);
        put_ints(describe, sizes20, 20);
        fputc(',', describe);
        put_ints(describe, subs20, 20);
        fputc(',', describe);
        put_ints(describe, starts, 20);
        fputs(",F,MPI_SHORT)\nindexed(", describe);
        put_ints(describe, obl, 4);
        fputc(',', describe);
        put_ints(describe, odis, 4);
        fprintf(describe, ",MPI_INT)\nhvector(3,1,%d,%s)\n", 3000 * 8 * 4, first);
        free(first);
        fputs("indexed(", describe);
        put_ints(describe, fbl, 20000);
        fputc(',', describe);
        put_ints(describe, fdis, 20000);
        fputs(",MPI_INT)\nhindexed(", describe);
        put_ints(describe, pbl, 41);
        fputc(',', describe);
        put_ints(describe, pdis_i, 41);
        fputs(",vector(3,2,5,MPI_FLOAT))\nindexed(", describe);
        put_ints(describe, obl4, 21);
        fputc(',', describe);
        put_ints(describe, odis4, 21);
        fputs(",MPI_INT)\nindexed(", describe);
        put_ints(describe, dbl, 31);
        fputc(',', describe);
        put_ints(describe, ddis, 31);
        fputs(",MPI_DOUBLE)\n", describe);
        fputs("darray(9,4,{10,9},{cyclic,block},{2,3},{3,3},C,"
              "struct({1,1},{0,8},{MPI_INT,MPI_DOUBLE}))\n",
              describe);
        return NSHAPES;
    }
    MPI_Type_indexed(3000, bl, dis, MPI_DOUBLE, &t[n++]);
    MPI_Type_vector(3, 2, 5, MPI_FLOAT, &v);
    for (int i = 0; i < 700; i++)
        bdis[i] = bdis_i[i];
    MPI_Type_create_hindexed(700, bl, bdis, v, &t[n++]);
    {
        int mbl[3] = {1, 1, 1};
        MPI_Aint mdis[3] = {0, 8, 80};
        MPI_Datatype col;
        MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &col);
        members[0] = MPI_INT, members[1] = col, members[2] = MPI_SHORT_INT;
        MPI_Type_create_struct(3, mbl, mdis, members, &t[n++]);
        MPI_Type_free(&col);
    }
    MPI_Type_contiguous(5, MPI_SHORT_INT, &t[n++]);
    MPI_Type_create_darray(9, 4, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &t[n++]);
    MPI_Type_create_subarray(17, sizes, subs, starts, MPI_ORDER_C, MPI_BYTE, &t[n++]);
    MPI_Type_create_subarray(20, sizes20, subs20, starts, MPI_ORDER_FORTRAN, MPI_SHORT, &t[n++]);
    MPI_Type_indexed(4, obl, odis, MPI_INT, &t[n++]);
    MPI_Type_create_hvector(3, 1, 3000 * 8 * 4, t[0], &t[n++]);
    MPI_Type_indexed(20000, fbl, fdis, MPI_INT, &t[n++]);
    MPI_Type_create_hindexed(41, pbl, pdis, v, &t[n++]);
    MPI_Type_indexed(21, obl4, odis4, MPI_INT, &t[n++]);
    MPI_Type_indexed(31, dbl, ddis, MPI_DOUBLE, &t[n++]);
    {
        MPI_Aint pdisp[2] = {0, 8};
        MPI_Datatype pair, ptypes[2] = {MPI_INT, MPI_DOUBLE};
        MPI_Type_create_struct(2, (int[]){1, 1}, pdisp, ptypes, &pair);
        MPI_Type_create_darray(9, 4, 2, gs, ds, da, ps, MPI_ORDER_C, pair, &t[n++]);
        MPI_Type_free(&pair);
    }
    /* A part table in device memory is built at the first device call, never at the commit
     * (the first shape has 3000 parts: its table is not baked); and so is the layout itself,
     * once per type (docs/layouts.md#built-at-the-first-device-call). */
    long tables = tj_counter("layout_tables"), layouts = tj_counter("layouts"),
         deferred = tj_counter("deferred");
    for (int i = 0; i < n; i++)
        MPI_Type_commit(&t[i]);
    CHECK(tj_counter("layout_tables") == tables);
    CHECK(tj_counter("layouts") == layouts);
    deferred = tj_counter("deferred") - deferred;
    CHECK(deferred >= n - 1); /* the 20-dimension subarray may be strided */
    for (int i = 0; i < n; i++) {
        check_case(t[i], names[i], 1, 0, K_DEVICE, K_DEVICE, 0, false, 11);
        if (!has_kernel(t[i]) && mismatches++ < 10)
            fprintf(stderr, "MISMATCH: %s gets no kernel\n", names[i]);
        if (i == 0)
            CHECK(tj_counter("layout_tables") > tables);
        check_case(t[i], names[i], 2, 12, K_DEVICE, K_PINNED, 0, false, 12);
        check_case(t[i], names[i], 3, 3, K_HOST, K_DEVICE, 0, false, 13);
        check_case(t[i], names[i], 1, 8, K_MANAGED, K_HOST, 2, false, 14);
    }
    CHECK(tj_counter("layouts") - layouts == deferred);
    /* Over MPI_BOTTOM, a struct of one member: the darray's own layout and kernel, moved
     * (typejit warm of the darray alone has compiled it). */
    check_case(t[NSHAPES - 1], names[NSHAPES - 1], 1, 0, K_DEVICE, K_DEVICE, 0, true, 15);
    MPI_Type_free(&v);
    for (int i = 0; i < n; i++)
        MPI_Type_free(&t[i]);
    return n;
}

/* Word size per dimension: types whose launches' words depend on the count,
 * the buffers and the position (docs/datatypes.md#3-strided-block), each in a few memory
 * combinations, counts, positions and misaligned buffers. 64 runs of 64 bytes with an odd
 * extent (W 16 for one object, 1 for several); a run of 4099 bytes (W 1, edges of a kernel of
 * 16-byte words); rows of 1001 floats padded by 16 bytes, 64 of them and 4 of them (edges of 4,
 * for several objects too); 4 runs of 600 bytes at a negative stride (edges of 8); runs of 1001
 * bytes 1017 apart at an odd start (edges of 1 for a position of the same misalignment); a 3-D
 * subarray of such rows (edges of 4 in a kernel of 8-byte words). And layouts whose parts take
 * words of their own (one object: a 28-byte run in 4-byte words beside a char, arrays in 16-byte
 * words beside 10 chars, a run of 8008 bytes in 16-byte words and an 8-byte tail, a run of 4000
 * bytes after a char in 16-byte words with a head of 1, 2, 4 and 8; pairs with a hole; gathers of
 * MPI_DOUBLE_INT pairs and of particles), for every alignment the runs give them. With
 * @p describe their descriptions go there instead (for `typejit warm`). Returns the number of
 * types. */
static int check_words(FILE *describe)
{
    static const char *const descs[] = {
        "resized(0, 32769, vector(64, 8, 64, MPI_DOUBLE))",
        "contiguous(4099, MPI_BYTE)",
        "vector(64, 1001, 1005, MPI_FLOAT)",
        "vector(4, 1001, 1005, MPI_FLOAT)",
        "hvector(4, 600, -616, MPI_BYTE)",
        "hindexed_block(1001, {3, 1020, 2037, 3054, 4071}, MPI_BYTE)",
        "subarray({6, 8, 1005}, {4, 6, 1001}, {1, 1, 2}, C, MPI_FLOAT)",
        /* Layouts whose parts take words of their own (docs/layouts.md#the-words-of-the-parts). */
        "struct({3, 1, 1}, {0, 24, 32}, {MPI_DOUBLE, MPI_INT, MPI_CHAR})",
        "struct({1, 1}, {0, 8}, {MPI_INT, MPI_DOUBLE})",
        "struct({1000, 500, 10}, {0, 8192, 10240}, {MPI_DOUBLE, MPI_INT, MPI_CHAR})",
        "struct({1001, 1}, {0, 8016}, {MPI_DOUBLE, MPI_CHAR})",
        "struct({1, 4000}, {0, 17}, {MPI_CHAR, MPI_BYTE})",
        "indexed_block(1, {0, 1, 3, 4, 7, 11, 12, 15}, MPI_DOUBLE_INT)",
        "indexed_block(1, {0, 2, 3, 7, 8, 9, 13, 20, 21}, "
        "struct({3, 3, 1, 1}, {0, 24, 48, 52}, {MPI_DOUBLE, MPI_DOUBLE, MPI_INT, MPI_FLOAT}))",
    };
    enum { N = sizeof(descs) / sizeof(descs[0]) };
    static const struct {
        int count, pos, shift;
        kind_t tk, pk;
    } runs[] = {
        {1, 0, 0, K_DEVICE, K_DEVICE},  {2, 0, 0, K_DEVICE, K_DEVICE},
        {3, 16, 0, K_DEVICE, K_PINNED}, {1, 3, 3, K_DEVICE, K_DEVICE},
        {1, 4, 4, K_MANAGED, K_HOST},   {2, 8, 8, K_DEVICE, K_DEVICE},
        {1, 5, 0, K_HOST, K_DEVICE},    {4, 12, 4, K_DEVICE, K_MANAGED},
    };

    for (int i = 0; i < N; i++) {
        MPI_Datatype t, inner;
        if (describe != NULL) {
            fprintf(describe, "%s\n", descs[i]);
            continue;
        }
        /* The types of descs, in order. */
        switch (i) {
        case 0:
            MPI_Type_vector(64, 8, 64, MPI_DOUBLE, &inner);
            MPI_Type_create_resized(inner, 0, 32769, &t);
            MPI_Type_free(&inner);
            break;
        case 1:
            MPI_Type_contiguous(4099, MPI_BYTE, &t);
            break;
        case 2:
        case 3:
            MPI_Type_vector(i == 2 ? 64 : 4, 1001, 1005, MPI_FLOAT, &t);
            break;
        case 4:
            MPI_Type_create_hvector(4, 600, -616, MPI_BYTE, &t);
            break;
        case 5: {
            MPI_Aint d[5] = {3, 1020, 2037, 3054, 4071};
            MPI_Type_create_hindexed_block(5, 1001, d, MPI_BYTE, &t);
            break;
        }
        case 6: {
            int sizes[3] = {6, 8, 1005}, subs[3] = {4, 6, 1001}, starts[3] = {1, 1, 2};
            MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_FLOAT, &t);
            break;
        }
        case 7:
            MPI_Type_create_struct(3, (int[]){3, 1, 1}, (MPI_Aint[]){0, 24, 32},
                                   (MPI_Datatype[]){MPI_DOUBLE, MPI_INT, MPI_CHAR}, &t);
            break;
        case 8:
            MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8},
                                   (MPI_Datatype[]){MPI_INT, MPI_DOUBLE}, &t);
            break;
        case 9:
            MPI_Type_create_struct(3, (int[]){1000, 500, 10}, (MPI_Aint[]){0, 8192, 10240},
                                   (MPI_Datatype[]){MPI_DOUBLE, MPI_INT, MPI_CHAR}, &t);
            break;
        case 10:
            MPI_Type_create_struct(2, (int[]){1001, 1}, (MPI_Aint[]){0, 8016},
                                   (MPI_Datatype[]){MPI_DOUBLE, MPI_CHAR}, &t);
            break;
        case 11:
            MPI_Type_create_struct(2, (int[]){1, 4000}, (MPI_Aint[]){0, 17},
                                   (MPI_Datatype[]){MPI_CHAR, MPI_BYTE}, &t);
            break;
        case 12:
            MPI_Type_create_indexed_block(8, 1, (int[]){0, 1, 3, 4, 7, 11, 12, 15}, MPI_DOUBLE_INT,
                                          &t);
            break;
        default:
            MPI_Type_create_struct(4, (int[]){3, 3, 1, 1}, (MPI_Aint[]){0, 24, 48, 52},
                                   (MPI_Datatype[]){MPI_DOUBLE, MPI_DOUBLE, MPI_INT, MPI_FLOAT},
                                   &inner);
            MPI_Type_create_indexed_block(9, 1, (int[]){0, 2, 3, 7, 8, 9, 13, 20, 21}, inner, &t);
            MPI_Type_free(&inner);
            break;
        }
        MPI_Type_commit(&t);
        for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++)
            check_case(t, descs[i], runs[r].count, runs[r].pos, runs[r].tk, runs[r].pk,
                       runs[r].shift, false, 40 + r);
        check_case(t, descs[i], 1, 0, K_DEVICE, K_DEVICE, 0, true, 50);
        MPI_Type_free(&t);
    }
    return N;
}

/* Types of no bytes on device buffers: MPI_SUCCESS and no movement, as the system MPI says. */
/* layout_tables: a layout's part table goes to device memory when it has more than
 * 256 parts, or, whatever its size, as the table of its runs the generic parts kernel reads
 * (TYPEJIT_JIT=off, or while its own kernel compiles in the background). One device pack and
 * unpack of a 3-part layout and of a 300-part one, each counted: with the kernels compiled at the
 * call (TYPEJIT_JIT_SYNC=1) 0 and 1, with TYPEJIT_JIT=off 1 and 1; in background mode the small
 * one depends on timing and is not checked. With @p describe their descriptions go there instead
 * (for `typejit warm`). */
static void check_layout_tables(FILE *describe)
{
    const char *jit = getenv("TYPEJIT_JIT"), *sync = getenv("TYPEJIT_JIT_SYNC");
    bool off = jit != NULL && strcmp(jit, "off") == 0;
    bool compiled_at_call = !off && sync != NULL && strcmp(sync, "1") == 0;
    int small_bl[3] = {1, 2, 1}, small_disp[3] = {0, 3, 7}; /* as described below */
    int *big_bl = malloc(300 * sizeof(int)), *big_disp = malloc(300 * sizeof(int));
    MPI_Datatype small, big;
    long before;

    REQUIRE(big_bl != NULL && big_disp != NULL);
    for (int i = 0, d = 0; i < 300; i++) {
        big_bl[i] = 1 + i % 2;
        big_disp[i] = d;
        d += big_bl[i] + 1 + i % 3;
    }
    if (describe != NULL) {
        fprintf(describe, "indexed({1,2,1},{0,3,7},MPI_INT)\nindexed({");
        for (int i = 0; i < 300; i++)
            fprintf(describe, "%s%d", i ? "," : "", big_bl[i]);
        fprintf(describe, "},{");
        for (int i = 0; i < 300; i++)
            fprintf(describe, "%s%d", i ? "," : "", big_disp[i]);
        fprintf(describe, "},MPI_INT)\n");
        free(big_bl);
        free(big_disp);
        return;
    }
    MPI_Type_indexed(3, small_bl, small_disp, MPI_INT, &small);
    MPI_Type_indexed(300, big_bl, big_disp, MPI_INT, &big);
    MPI_Type_commit(&small);
    MPI_Type_commit(&big);
    before = tj_counter("layout_tables");
    check_case(small, "indexed 3 parts", 1, 0, K_DEVICE, K_HOST, 0, false, 21);
    if (off || compiled_at_call)
        CHECK_EQ_INT(tj_counter("layout_tables") - before, off ? 1 : 0);
    before = tj_counter("layout_tables");
    check_case(big, "indexed 300 parts", 1, 0, K_DEVICE, K_HOST, 0, false, 22);
    if (off || compiled_at_call)
        CHECK_EQ_INT(tj_counter("layout_tables") - before, 1);
    MPI_Type_free(&small);
    MPI_Type_free(&big);
    free(big_bl);
    free(big_disp);
}

static void check_empty(void)
{
    MPI_Datatype empty[2];
    int zero = 0;
    MPI_Aint disp = 64;
    MPI_Datatype inner = MPI_INT;
    buf_t d = buf_alloc(K_DEVICE, 256);

    MPI_Type_contiguous(0, MPI_INT, &empty[0]);
    MPI_Type_create_struct(1, &zero, &disp, &inner, &empty[1]);
    for (int i = 0; i < 2; i++) {
        MPI_Type_commit(&empty[i]);
        int pos = 4;
        CHECK(MPI_Pack(d.ptr, 3, empty[i], d.ptr + 128, 64, &pos, MPI_COMM_SELF) == MPI_SUCCESS);
        CHECK_EQ_INT(pos, 4);
        /* MPICH 4.0 divides by the size of an empty type in MPI_Unpack (SIGFPE). */
        if (!sysmpi_version_has("MPICH Version: 4.0")) {
            CHECK(MPI_Unpack(d.ptr + 128, 64, &pos, d.ptr, 3, empty[i], MPI_COMM_SELF) ==
                  MPI_SUCCESS);
            CHECK_EQ_INT(pos, 4);
        }
        MPI_Type_free(&empty[i]);
    }
    buf_free(&d);
}

/* Background mode: a commit takes the kernels this process already has. The first vector type's
 * device pack asks for its kernels; once they are compiled, a type of the same layout committed
 * later must have them from its commit on (tj_type_describe says kernels=jit), not wait for a
 * device call. Polls for at most 60 s. */
static void check_prepared_at_commit(void)
{
    /* tj_type_describe, whose tj_status_t is an int enum, TJ_OK 0. */
    int (*describe)(const void *, char *, size_t) =
        (int (*)(const void *, char *, size_t))(uintptr_t)dlsym(RTLD_DEFAULT, "tj_type_describe");
    buf_t d = buf_alloc(K_DEVICE, 4096);
    struct timespec pause = {0, 50 * 1000 * 1000};
    char text[640] = "";
    MPI_Datatype first;
    bool ready = false;
    int pos = 0;

    REQUIRE(describe != NULL);
    MPI_Type_vector(16, 3, 7, MPI_FLOAT, &first);
    MPI_Type_commit(&first);
    CHECK(MPI_Pack(d.ptr, 1, first, d.ptr + 2048, 1024, &pos, MPI_COMM_SELF) == MPI_SUCCESS);
    for (int i = 0; i < 1200 && !ready; i++) {
        MPI_Datatype again;
        MPI_Type_vector(16, 3, 7, MPI_FLOAT, &again);
        MPI_Type_commit(&again);
        CHECK(describe(&again, text, sizeof(text)) == 0);
        ready = strstr(text, "kernels=jit") != NULL;
        MPI_Type_free(&again);
        if (!ready)
            nanosleep(&pause, NULL);
    }
    if (!ready)
        fprintf(stderr, "a type committed after its layout's kernels were compiled: %s\n", text);
    CHECK(ready);
    MPI_Type_free(&first);
    buf_free(&d);
}

/* Background mode: a type whose kernels are being made says so ("kernels=queued" or
 * "kernels=compiling"; it said "kernels=none"), and says "kernels=jit" once they are made,
 * without any device call of its own (it said "none" for ever). Polls for at most 60 s. */
static void check_described_while_compiling(void)
{
    int (*describe)(const void *, char *, size_t) =
        (int (*)(const void *, char *, size_t))(uintptr_t)dlsym(RTLD_DEFAULT, "tj_type_describe");
    struct timespec pause = {0, 50 * 1000 * 1000};
    char text[640] = "";
    MPI_Datatype t;
    bool ready = false;

    REQUIRE(describe != NULL);
    /* A layout no other part of this run makes. */
    MPI_Type_vector(13, 5, 17, MPI_SHORT, &t);
    MPI_Type_commit(&t);
    CHECK(describe(&t, text, sizeof(text)) == 0);
    if (strstr(text, "kernels=queued") == NULL && strstr(text, "kernels=compiling") == NULL &&
        strstr(text, "kernels=jit") == NULL) {
        fprintf(stderr, "a type just committed in background mode: %s\n", text);
        CHECK(false);
    }
    for (int i = 0; i < 1200 && !ready; i++) {
        CHECK(describe(&t, text, sizeof(text)) == 0);
        ready = strstr(text, "kernels=jit") != NULL;
        if (!ready)
            nanosleep(&pause, NULL);
    }
    if (!ready)
        fprintf(stderr, "a type whose kernels were compiled in the background: %s\n", text);
    CHECK(ready);
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    /* Every combination with at least one side on the device. */
    static const kind_t combos[][2] = {
        {K_DEVICE, K_DEVICE},  {K_DEVICE, K_PINNED}, {K_DEVICE, K_HOST},    {K_DEVICE, K_MANAGED},
        {K_MANAGED, K_DEVICE}, {K_MANAGED, K_HOST},  {K_HOST, K_DEVICE},    {K_PINNED, K_DEVICE},
        {K_MANAGED, K_PINNED}, {K_HOST, K_MANAGED},  {K_PINNED, K_MANAGED}, {K_MANAGED, K_MANAGED},
    };
    const int ncombos = (int)(sizeof(combos) / sizeof(combos[0]));
    uint64_t seed = 1;
    long types = 150, ntypes = 0, nkernel = 0, nlayout = 0;
    bool expect_no_compiles = false, expect_compiles = false, expect_staged = false,
         expect_generic = false, expect_disk_hits = false, expect_edges = false;
    int families = 0;
    const char *describe_path = NULL;
    FILE *describe = NULL;
    rt_options_t opt = {
        .max_depth = 3, .max_size = 64 << 10, .max_span = 1 << 20, .huge_percent = 0};
    rt_rng_t rng;
    char desc[8192];

    MPI_Init(&argc, &argv);
    options_read(argc, argv,
                 (const opt_t[]){{"--seed", OPT_U64, &seed},
                                 {"--types", OPT_LONG, &types},
                                 {"--families", OPT_INT, &families},
                                 {"--expect-no-compiles", OPT_FLAG, &expect_no_compiles},
                                 {"--expect-compiles", OPT_FLAG, &expect_compiles},
                                 {"--expect-staged", OPT_FLAG, &expect_staged},
                                 {"--expect-generic", OPT_FLAG, &expect_generic},
                                 {"--expect-disk-hits", OPT_FLAG, &expect_disk_hits},
                                 {"--expect-edges", OPT_FLAG, &expect_edges},
                                 {"--describe", OPT_TEXT, &describe_path},
#ifdef TJ_CUDART
                                 {"--stream-ordered", OPT_FLAG, &buf_stream_ordered},
#endif
                                 {NULL}});
    if (describe_path != NULL)
        REQUIRE((describe = fopen(describe_path, "w")) != NULL);
    if (describe == NULL) {
#ifdef TJ_CUDART
        if (!devbuf_rt_open()) {
#else
        if (!cudrv_open()) {
#endif
            MPI_Finalize();
            return 77;
        }
        REQUIRE(dlsym(RTLD_DEFAULT, "tj_version") != NULL); /* run with libtypejit.so preloaded */
#ifndef TJ_CUDART
        CUDRV(cuCtxGetCurrent(&app_ctx));
#endif
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        check_empty();
        if (!expect_staged) {
            check_shapes(NULL);
            check_words(NULL);
            check_layout_tables(NULL);
        }
    } else {
        check_shapes(describe);
        check_words(describe);
        check_layout_tables(describe);
    }
    rt_seed(&rng, seed);
    for (long t = 0; t < types; t++) {
        char text[1024];
        MPI_Datatype type = families > 0
                                ? rt_family_type(&rng, &opt, families, seed, desc, sizeof(desc))
                                : rt_random_type(&rng, &opt, desc, sizeof(desc));
        if (type == MPI_DATATYPE_NULL) {
            t--;
            continue;
        }
        if (describe != NULL)
            fprintf(describe, "%s\n", desc);
        ntypes++;
        if (describe == NULL && type_describe(type, text, sizeof(text))) {
            bool kernel = strncmp(text, "strided", 7) == 0 || strncmp(text, "layout", 6) == 0;
            nkernel += kernel;
            nlayout += strncmp(text, "layout", 6) == 0;
            if (!kernel)
                printf("no kernel: %s: %s\n", text, desc);
        }
        for (int c = 0; c < 2; c++) {
            const kind_t *k = combos[(t * 2 + c) % ncombos];
            int count = (int)rt_range(&rng, 0, 9);
            count = count == 0 ? 0 : count < 5 ? 1 : (int)rt_range(&rng, 2, 4);
            int pos = (int)rt_range(&rng, 0, 5) * 4 + (int)rt_range(&rng, 0, 1) * 3;
            int shift = rt_range(&rng, 0, 3) == 0 ? (int)rt_range(&rng, 1, 15) : 0;
            bool bottom = c == 1 && t % 5 == 0 && on_device(k[0]) && count == 1;
            uint64_t salt = rt_next(&rng);
            if (describe == NULL)
                check_case(type, desc, count, pos, k[0], k[1], shift, bottom, salt);
        }
        MPI_Type_free(&type);
    }
    if (describe != NULL) {
        REQUIRE(fclose(describe) == 0);
        MPI_Finalize();
        return 0;
    }
    long launches = tj_counter("kernel_launches"), compiles = tj_counter("jit_compiles");
    printf(
        "%ld types: packs_gpu=%ld unpacks_gpu=%ld gpu_fallbacks=%ld kernel_launches=%ld "
        "(at least %ld expected) jit_compiles=%ld cache_hits_disk=%ld generic_while_compiling=%ld, "
        "%d mismatches\n",
        types, tj_counter("packs_gpu"), tj_counter("unpacks_gpu"), tj_counter("gpu_fallbacks"),
        launches, kernel_calls, compiles, tj_counter("cache_hits_disk"),
        tj_counter("packs_generic_while_compiling"), mismatches);
    printf("kernels: %ld of %ld random types get one (%ld strided, %ld layouts); %ld of %ld device "
           "calls of bytes are of such types; serial unpacks=%ld, part tables copied=%ld\n",
           nkernel, ntypes, nkernel - nlayout, nlayout, typed_kernel, device_calls,
           tj_counter("unpacks_serial"), tj_counter("layout_tables"));
    CHECK(mismatches == 0);
    /* Every device call had a kernel (or the CPU engine and a copy): none was staged through
     * host memory (the types a kernel cannot take, byte stride -1 on Open MPI, are drawn rarely
     * enough that none is in these runs). */
    if (!expect_staged)
        CHECK_EQ_INT(tj_counter("gpu_fallbacks"), 0);
    if (expect_staged) {
        CHECK(launches == 0);
        CHECK(tj_counter("gpu_fallbacks") > 0);
    } else {
        CHECK(kernel_calls > 0);
        CHECK(launches >= kernel_calls);
        CHECK(tj_counter("packs_gpu") > 0);
        CHECK(tj_counter("unpacks_gpu") > 0);
    }
    if (expect_generic) {
        CHECK(tj_counter("packs_generic_while_compiling") > 0);
        check_prepared_at_commit();
        check_described_while_compiling();
    }
    if (expect_disk_hits)
        CHECK(tj_counter("cache_hits_disk") > 0);
    if (expect_edges)
        CHECK(tj_counter("edge_launches") > 0);
    if (expect_compiles)
        CHECK(compiles > 0);
    if (expect_no_compiles) {
        CHECK_EQ_INT(compiles, 0);
        CHECK_EQ_INT(tj_counter("jit_failures"), 0);
        CHECK_EQ_INT(tj_counter("packs_generic_while_compiling"), 0);
        CHECK(tj_counter("cache_hits_disk") > 0);
    }
    MPI_Finalize();
    CHECK_DONE();
}
