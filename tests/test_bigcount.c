/* SPDX-License-Identifier: BSD-3-Clause */
/* Big counts and footprints on device buffers, through the preloaded library: datatypes whose
 * objects lie past 2^31 and 2^32 bytes from the buffer argument (extents and strides that large,
 * forwards and backwards), packed and unpacked with MPI_Pack and MPI_Unpack, sent to this rank
 * with MPI_Isend and MPI_Recv, and moved by MPI_Alltoallv on MPI_COMM_SELF, each compared byte
 * for byte with the system MPI on a sparse host mirror (and 70000 objects, more than a grid
 * dimension's thread blocks); a message of more than 2^31 packed bytes,
 * which typejit refuses with MPI_ERR_COUNT; and footprints whose count x extent overflows 64 bits
 * or the address space, which must get MPI_ERR_BUFFER without touching memory. After every case
 * a small device pack must still be exact: no case may leave the application's context
 * unusable. The device allocations are gigabytes the test touches sparsely (the test driver
 * backs them lazily; a GPU needs the memory). Exits 77 without a CUDA device.
 *
 *   test_bigcount */
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "cudrv.h"

#define POISON 0xA5
#define GiB    ((int64_t)1 << 30)

/* One object's elements: `n` runs of `len` bytes at `at[i]` from object 0's buffer argument. */
typedef struct {
    const char *name;
    MPI_Datatype type;
    int count;
    int64_t extent;
    int n;
    int64_t at[4];
    int len;
} big_t;

/* The footprint of a case relative to the buffer argument: [lo, hi). */
static void span_of(const big_t *b, int64_t *lo, int64_t *hi)
{
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    for (int k = 0; k < b->count; k++)
        for (int i = 0; i < b->n; i++) {
            int64_t a = b->at[i] + (int64_t)k * b->extent;
            *lo = a < *lo ? a : *lo;
            *hi = a + b->len > *hi ? a + b->len : *hi;
        }
}

/* A device buffer of the case's footprint and its sparse host mirror, both holding a pattern in
 * the elements (salted) and POISON elsewhere in the mirror's touched pages. */
typedef struct {
    CUdeviceptr dev;
    unsigned char *host;
    size_t len;
    int64_t lo;
} mirror_t;

static unsigned char pattern(int64_t a, unsigned salt)
{
    return (unsigned char)(a * 131 + (a >> 29) * 7 + salt);
}

static void mirror_alloc(const big_t *b, mirror_t *m)
{
    int64_t hi;
    span_of(b, &m->lo, &hi);
    m->len = (size_t)(hi - m->lo);
    CUDRV(cuMemAlloc(&m->dev, m->len));
    m->host = mmap(NULL, m->len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    REQUIRE(m->host != MAP_FAILED);
}

static void mirror_free(mirror_t *m)
{
    CUDRV(cuMemFree(m->dev));
    munmap(m->host, m->len);
}

/* Writes @p salt's pattern (or, with @p poison, POISON) into every element, on both sides. */
/* Footprints up to this size are copied whole, one driver call instead of one per element. */
#define WHOLE ((size_t)16 << 20)

static void mirror_fill(const big_t *b, mirror_t *m, unsigned salt, bool poison)
{
    unsigned char run[64];
    for (int k = 0; k < b->count; k++)
        for (int i = 0; i < b->n; i++) {
            int64_t off = b->at[i] + (int64_t)k * b->extent - m->lo;
            for (int j = 0; j < b->len; j++)
                run[j] = poison ? POISON : pattern(off + j, salt);
            memcpy(m->host + off, run, (size_t)b->len);
            if (m->len > WHOLE)
                CUDRV(cuMemcpyHtoD(m->dev + (CUdeviceptr)off, run, (size_t)b->len));
        }
    if (m->len <= WHOLE)
        CUDRV(cuMemcpyHtoD(m->dev, m->host, m->len));
}

static char *arg_of(const mirror_t *m)
{
    return (char *)(uintptr_t)(m->dev - (CUdeviceptr)m->lo);
}

/* A small device pack, exact: the context still works. */
static void context_alive(const char *after)
{
    MPI_Datatype v;
    CUdeviceptr d;
    unsigned char in[64], out[16], want[16];
    int pos = 0, rc;

    for (int i = 0; i < 64; i++)
        in[i] = (unsigned char)(i * 3 + 1);
    MPI_Type_vector(4, 1, 4, MPI_INT, &v);
    MPI_Type_commit(&v);
    CUDRV(cuMemAlloc(&d, 128));
    CUDRV(cuMemcpyHtoD(d, in, 64));
    rc = MPI_Pack((void *)(uintptr_t)d, 1, v, (char *)(uintptr_t)d + 64, 16, &pos, MPI_COMM_SELF);
    CUDRV(cuMemcpyDtoH(out, d + 64, 16));
    for (int i = 0; i < 4; i++)
        memcpy(want + 4 * i, in + 16 * i, 4);
    if (rc != MPI_SUCCESS || pos != 16 || memcmp(out, want, 16) != 0) {
        fprintf(stderr, "after %s: a small device pack failed (rc %d): the context died\n", after,
                rc);
        CHECK(false);
    }
    CUDRV(cuMemFree(d));
    MPI_Type_free(&v);
}

/* Whether every element of @p dev's device buffer holds what @p ref's host mirror holds. */
static bool same_as(const big_t *b, const mirror_t *dev, const mirror_t *ref)
{
    unsigned char run[64], *whole = NULL;
    bool same = true;

    if (dev->len <= WHOLE) {
        REQUIRE((whole = malloc(dev->len)) != NULL);
        CUDRV(cuMemcpyDtoH(whole, dev->dev, dev->len));
    }
    for (int k = 0; k < b->count && same; k++)
        for (int i = 0; i < b->n && same; i++) {
            int64_t off = b->at[i] + (int64_t)k * b->extent - dev->lo;
            if (whole == NULL)
                CUDRV(cuMemcpyDtoH(run, dev->dev + (CUdeviceptr)off, (size_t)b->len));
            same = memcmp(whole != NULL ? whole + off : run, ref->host + off, (size_t)b->len) == 0;
        }
    free(whole);
    return same;
}

/* Pack, unpack, a message to this rank and an Alltoallv on MPI_COMM_SELF: each exact. */
static void check_case(big_t *b)
{
    mirror_t t, r;
    int size, bytes, pos, rc, one = b->count, zero = 0;
    unsigned char *got, *want;
    CUdeviceptr packed;
    MPI_Request req;

    MPI_Type_commit(&b->type);
    MPI_Type_size(b->type, &size);
    bytes = size * b->count;
    mirror_alloc(b, &t);
    mirror_alloc(b, &r);
    CUDRV(cuMemAlloc(&packed, (size_t)bytes));
    got = malloc((size_t)bytes);
    want = malloc((size_t)bytes);
    REQUIRE(got && want);

    /* MPI_Pack. */
    mirror_fill(b, &t, 1, false);
    pos = 0;
    REQUIRE(PMPI_Pack(t.host - t.lo, b->count, b->type, want, bytes, &pos, MPI_COMM_SELF) ==
            MPI_SUCCESS);
    pos = 0;
    rc = MPI_Pack(arg_of(&t), b->count, b->type, (void *)(uintptr_t)packed, bytes, &pos,
                  MPI_COMM_SELF);
    CUDRV(cuMemcpyDtoH(got, packed, (size_t)bytes));
    if (rc != MPI_SUCCESS || pos != bytes || memcmp(got, want, (size_t)bytes) != 0) {
        fprintf(stderr, "%s: MPI_Pack rc %d position %d of %d, bytes %s\n", b->name, rc, pos, bytes,
                memcmp(got, want, (size_t)bytes) ? "differ" : "agree");
        CHECK(false);
    }
    context_alive(b->name);

    /* MPI_Unpack into poisoned elements: the bytes land where the system MPI puts them. */
    mirror_fill(b, &r, 0, true);
    pos = 0;
    REQUIRE(PMPI_Unpack(want, bytes, &pos, r.host - r.lo, b->count, b->type, MPI_COMM_SELF) ==
            MPI_SUCCESS);
    pos = 0;
    rc = MPI_Unpack((void *)(uintptr_t)packed, bytes, &pos, arg_of(&r), b->count, b->type,
                    MPI_COMM_SELF);
    if (rc != MPI_SUCCESS || pos != bytes || !same_as(b, &r, &r)) {
        fprintf(stderr, "%s: MPI_Unpack rc %d position %d of %d\n", b->name, rc, pos, bytes);
        CHECK(false);
    }
    context_alive(b->name);

    /* A message to this rank, device buffer to device buffer (same layout on both sides). */
    mirror_fill(b, &t, 3, false);
    mirror_fill(b, &r, 0, true);
    rc = MPI_Irecv(arg_of(&r), b->count, b->type, 0, 5, MPI_COMM_SELF, &req);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Send(arg_of(&t), b->count, b->type, 0, 5, MPI_COMM_SELF);
        CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    }
    if (rc != MPI_SUCCESS || !same_as(b, &r, &t)) {
        fprintf(stderr, "%s: a message to this rank: rc %d\n", b->name, rc);
        CHECK(false);
    }
    context_alive(b->name);

    /* MPI_Alltoallv on MPI_COMM_SELF, one slice each way. */
    mirror_fill(b, &t, 4, false);
    mirror_fill(b, &r, 0, true);
    rc = MPI_Alltoallv(arg_of(&t), &one, &zero, b->type, arg_of(&r), &one, &zero, b->type,
                       MPI_COMM_SELF);
    if (rc != MPI_SUCCESS || !same_as(b, &r, &t)) {
        fprintf(stderr, "%s: MPI_Alltoallv rc %d\n", b->name, rc);
        CHECK(false);
    }
    context_alive(b->name);
    printf("%s: footprint %.2f GiB: pack, unpack, send, alltoallv exact\n", b->name,
           (double)t.len / (double)GiB);

    free(got);
    free(want);
    CUDRV(cuMemFree(packed));
    mirror_free(&t);
    mirror_free(&r);
    MPI_Type_free(&b->type);
}

/* Whether @p rc is an error (of class @p cls unless that is MPI_SUCCESS). */
static bool is_error(int rc, int cls)
{
    int c;
    if (rc == MPI_SUCCESS)
        return false;
    if (cls == MPI_SUCCESS)
        return true;
    MPI_Error_class(rc, &c);
    return c == cls;
}

/* A non-blocking call of test @p name that must have failed with MPI_ERR_BUFFER; a request it
 * started all the same is cancelled. */
static void expect_buffer_error(const char *name, const char *call, int rc, MPI_Request *req)
{
    if (is_error(rc, MPI_ERR_BUFFER))
        return;
    fprintf(stderr, "%s: %s rc %d, expected MPI_ERR_BUFFER\n", name, call, rc);
    CHECK(false);
    if (rc == MPI_SUCCESS) {
        MPI_Cancel(req);
        MPI_Wait(req, MPI_STATUS_IGNORE);
    }
}

/* A footprint that no allocation can hold (count x extent overflows 64 bits, or the address
 * space): MPI_ERR_BUFFER from every call, nothing touched, the context alive. The buffer
 * argument is the start of a small device allocation. */
static void check_overflow(const char *name, MPI_Datatype type, int count)
{
    CUdeviceptr typed, packed;
    int size, pos = 0, rc, one = count, zero = 0;
    MPI_Request req;

    MPI_Type_commit(&type);
    MPI_Type_size(type, &size);
    CUDRV(cuMemAlloc(&typed, 4096));
    CUDRV(cuMemAlloc(&packed, (size_t)size * (size_t)count));
    rc = MPI_Pack((void *)(uintptr_t)typed, count, type, (void *)(uintptr_t)packed, size * count,
                  &pos, MPI_COMM_SELF);
    if (!is_error(rc, MPI_ERR_BUFFER) || pos != 0) {
        fprintf(stderr, "%s: MPI_Pack rc %d position %d, expected MPI_ERR_BUFFER\n", name, rc, pos);
        CHECK(false);
    }
    context_alive(name);
    rc = MPI_Unpack((void *)(uintptr_t)packed, size * count, &pos, (void *)(uintptr_t)typed, count,
                    type, MPI_COMM_SELF);
    if (!is_error(rc, MPI_ERR_BUFFER)) {
        fprintf(stderr, "%s: MPI_Unpack rc %d, expected MPI_ERR_BUFFER\n", name, rc);
        CHECK(false);
    }
    context_alive(name);
    rc = MPI_Isend((void *)(uintptr_t)typed, count, type, 0, 6, MPI_COMM_SELF, &req);
    expect_buffer_error(name, "MPI_Isend", rc, &req);
    context_alive(name);
    rc = MPI_Irecv((void *)(uintptr_t)typed, count, type, 0, 6, MPI_COMM_SELF, &req);
    expect_buffer_error(name, "MPI_Irecv", rc, &req);
    rc = MPI_Alltoallv((void *)(uintptr_t)typed, &one, &zero, type, (void *)(uintptr_t)packed, &one,
                       &zero, MPI_BYTE, MPI_COMM_SELF);
    if (!is_error(rc, MPI_SUCCESS)) {
        fprintf(stderr, "%s: MPI_Alltoallv succeeded\n", name);
        CHECK(false);
    }
    context_alive(name);
    printf("%s: MPI errors, the context alive\n", name);
    CUDRV(cuMemFree(typed));
    CUDRV(cuMemFree(packed));
    MPI_Type_free(&type);
}

/* More than 2^31 packed bytes (512 objects of 4 MiB): MPI_Pack cannot say it (the system MPI's
 * error), and typejit's device messages carry an int count of bytes where the MPI has no
 * large-count calls: MPI_ERR_COUNT. Where it has them (MPI 4), the message could travel, and
 * what is wrong is the footprint, far past the small allocation that stands for it here:
 * MPI_ERR_BUFFER. Nothing is touched either way. */
#if MPI_VERSION >= 4
#define BIG_MESSAGE_ERROR MPI_ERR_BUFFER
#else
#define BIG_MESSAGE_ERROR MPI_ERR_COUNT
#endif
static void check_big_message(void)
{
    MPI_Datatype v;
    CUdeviceptr d;
    int pos = 0, rc;
    MPI_Request req;

    MPI_Type_vector(1 << 20, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    CUDRV(cuMemAlloc(&d, 4096));
    rc = MPI_Pack((void *)(uintptr_t)d, 512, v, (void *)(uintptr_t)d, INT_MAX, &pos, MPI_COMM_SELF);
    CHECK(rc != MPI_SUCCESS && pos == 0);
    rc = MPI_Isend((void *)(uintptr_t)d, 512, v, 0, 7, MPI_COMM_SELF, &req);
    CHECK(is_error(rc, BIG_MESSAGE_ERROR));
    rc = MPI_Irecv((void *)(uintptr_t)d, 512, v, 0, 7, MPI_COMM_SELF, &req);
    CHECK(is_error(rc, BIG_MESSAGE_ERROR));
    context_alive("a message of 2^31 packed bytes");
    printf("2^31 packed bytes: MPI errors, the context alive\n");
    CUDRV(cuMemFree(d));
    MPI_Type_free(&v);
}

static MPI_Datatype resized(MPI_Datatype t, MPI_Aint extent)
{
    MPI_Datatype out;
    MPI_Type_create_resized(t, 0, extent, &out);
    return out;
}

static MPI_Datatype hvector(int count, int bl, MPI_Aint stride, MPI_Datatype t)
{
    MPI_Datatype out;
    MPI_Type_create_hvector(count, bl, stride, t, &out);
    return out;
}

int main(int argc, char **argv)
{
    MPI_Datatype v4;

    MPI_Init(&argc, &argv);
    if (!cudrv_open()) {
        MPI_Finalize();
        return 77;
    }
    REQUIRE(dlsym(RTLD_DEFAULT, "tj_version") != NULL); /* run with libtypejit.so preloaded */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Type_vector(4, 1, 2, MPI_FLOAT, &v4);

    /* Footprints past 2^31 and 2^32 bytes. */
    big_t cases[] = {
        {"ints 2^31+16 bytes apart", resized(MPI_INT, 2 * GiB + 16), 3, 2 * GiB + 16, 1, {0}, 4},
        {"doubles 2^32+8 bytes apart",
         hvector(2, 1, 4 * GiB + 8, MPI_DOUBLE),
         1,
         8 * GiB + 16,
         2,
         {0, 4 * GiB + 8},
         8},
        {"ints 2^32+64 bytes apart, backwards",
         hvector(2, 1, -(4 * GiB + 64), MPI_INT),
         1,
         4 * GiB + 68,
         2,
         {0, -(4 * GiB + 64)},
         4},
        {"a vector of floats, objects 3 GiB apart",
         resized(v4, 3 * GiB),
         2,
         3 * GiB,
         4,
         {0, 8, 16, 24},
         4},
        {"pairs of ints 2^31 bytes apart",
         hvector(2, 2, 2 * GiB, MPI_INT),
         2,
         2 * GiB + 8,
         2,
         {0, 2 * GiB},
         8},
        /* 1- and 2-byte words (several per thread of a kernel) past 2^32 bytes apart: the
         * generic kernel's 64-bit offsets, and below it, 32-bit ones from an object's lowest byte
         * past 2^31. */
        {"bytes 2^32+1 apart",
         hvector(2, 1, 4 * GiB + 1, MPI_BYTE),
         1,
         4 * GiB + 2,
         2,
         {0, 4 * GiB + 1},
         1},
        {"shorts 2^32+2 bytes apart, objects 4 bytes apart",
         resized(hvector(2, 1, 4 * GiB + 2, MPI_SHORT), 4),
         2,
         4,
         2,
         {0, 4 * GiB + 2},
         2},
        {"bytes 1.5 GiB apart, backwards",
         hvector(3, 1, -(3 * GiB / 2), MPI_BYTE),
         1,
         3 * GiB + 1,
         3,
         {0, -(3 * GiB / 2), -3 * GiB},
         1},
        /* More objects than a grid dimension holds thread blocks (65535). */
        {"70000 ints 8 bytes apart", resized(MPI_INT, 8), 70000, 8, 1, {0}, 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i]);

    /* Footprints that overflow. */
    check_overflow("2^24+1 bytes 2^40 apart", resized(MPI_BYTE, (MPI_Aint)1 << 40), (1 << 24) + 1);
    check_overflow("3 ints 2^62 apart", resized(MPI_INT, (MPI_Aint)1 << 62), 3);
    check_overflow("4 ints 2^62 apart, backwards", resized(MPI_INT, -((MPI_Aint)1 << 62)), 4);
    check_overflow("1024 pairs of ints 2^46 apart", hvector(2, 1, (MPI_Aint)1 << 46, MPI_INT),
                   1024);
    check_overflow("an int 2^62 bytes after the first", hvector(2, 1, (MPI_Aint)1 << 62, MPI_INT),
                   1);
    check_big_message();

    MPI_Type_free(&v4);
    MPI_Finalize();
    CHECK_DONE();
}
