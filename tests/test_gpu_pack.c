/* The oracle on device buffers: MPI_Pack / MPI_Unpack through the preloaded library with device
 * memory on one or both sides, against PMPI_Pack / PMPI_Unpack on host copies, byte for byte,
 * with counts > 1, positions != 0 and poisoned outputs. Exits 77 without a CUDA device.
 *
 *   test_gpu_pack [--seed N] [--types N]
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpu/cuda.h"
#include "randtype.h"

#define POISON 0xA5

typedef int (*stats_format_fn)(char *, size_t);

static long counter(const char *key)
{
    stats_format_fn fmt = (stats_format_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "tj_stats_format");
    char text[2048], pat[64];
    if (fmt == NULL)
        return -1;
    fmt(text, sizeof(text));
    snprintf(pat, sizeof(pat), " %s=", key);
    const char *at = strstr(text, pat);
    return at ? atol(at + strlen(pat)) : -1;
}

static int mismatches;

static void report(const char *what, const char *desc, int count, int pos)
{
    if (mismatches++ < 10)
        fprintf(stderr, "MISMATCH %s: %s count=%d position=%d\n", what, desc, count, pos);
}

static void *dev_ptr(tj_devptr_t p)
{
    return (void *)(uintptr_t)p;
}

/* One type, every combination of buffer kinds. */
static void check_type(MPI_Datatype type, const char *desc, int count, int pos, uint64_t salt)
{
    MPI_Aint tlb, text, lb, ext;
    int size, outsize, p_ref, p_got;
    int64_t lo, span;
    unsigned char *src, *ref, *got, *uref, *ugot;
    tj_devptr_t dsrc, dpk, dtyped;

    MPI_Type_size(type, &size);
    MPI_Type_get_true_extent(type, &tlb, &text);
    MPI_Type_get_extent(type, &lb, &ext);
    int64_t reach = (int64_t)(count - 1) * ext;
    lo = tlb + (reach < 0 ? reach : 0);
    span = text + (reach < 0 ? -reach : reach);
    if (span > (32 << 20) || span <= 0)
        return;
    outsize = pos + count * size + 8;
    src = malloc((size_t)span);
    uref = malloc((size_t)span);
    ugot = malloc((size_t)span);
    ref = malloc((size_t)outsize);
    got = malloc((size_t)outsize);
    REQUIRE(src && uref && ugot && ref && got);
    REQUIRE(tj_gpu_alloc((size_t)span, &dsrc) == TJ_OK);
    REQUIRE(tj_gpu_alloc((size_t)span, &dtyped) == TJ_OK);
    REQUIRE(tj_gpu_alloc((size_t)outsize, &dpk) == TJ_OK);
    for (int64_t i = 0; i < span; i++)
        src[i] = (unsigned char)(i * 13 + salt);
    REQUIRE(tj_gpu_copy_htod(dsrc, src, (size_t)span) == TJ_OK);

    /* Reference. */
    memset(ref, POISON, (size_t)outsize);
    p_ref = pos;
    REQUIRE(PMPI_Pack(src - lo, count, type, ref, outsize, &p_ref, MPI_COMM_SELF) == MPI_SUCCESS);

    /* device -> device */
    REQUIRE(tj_gpu_memset(dpk, POISON, (size_t)outsize) == TJ_OK);
    p_got = pos;
    CHECK(MPI_Pack((char *)dev_ptr(dsrc) - lo, count, type, dev_ptr(dpk), outsize, &p_got,
                   MPI_COMM_SELF) == MPI_SUCCESS);
    REQUIRE(tj_gpu_copy_dtoh(got, dpk, (size_t)outsize) == TJ_OK);
    if (p_got != p_ref || memcmp(got, ref, (size_t)outsize) != 0)
        report("pack device->device", desc, count, pos);

    /* device -> host */
    memset(got, POISON, (size_t)outsize);
    p_got = pos;
    CHECK(MPI_Pack((char *)dev_ptr(dsrc) - lo, count, type, got, outsize, &p_got, MPI_COMM_SELF) ==
          MPI_SUCCESS);
    if (p_got != p_ref || memcmp(got, ref, (size_t)outsize) != 0)
        report("pack device->host", desc, count, pos);

    /* host -> device */
    REQUIRE(tj_gpu_memset(dpk, POISON, (size_t)outsize) == TJ_OK);
    p_got = pos;
    CHECK(MPI_Pack(src - lo, count, type, dev_ptr(dpk), outsize, &p_got, MPI_COMM_SELF) ==
          MPI_SUCCESS);
    REQUIRE(tj_gpu_copy_dtoh(got, dpk, (size_t)outsize) == TJ_OK);
    if (p_got != p_ref || memcmp(got, ref, (size_t)outsize) != 0)
        report("pack host->device", desc, count, pos);

    /* Unpack reference: the packed pattern into a poisoned host copy. */
    for (int i = 0; i < outsize; i++)
        ref[i] = (unsigned char)(i * 7 + salt);
    memset(uref, POISON, (size_t)span);
    p_ref = pos;
    REQUIRE(PMPI_Unpack(ref, outsize, &p_ref, uref - lo, count, type, MPI_COMM_SELF) ==
            MPI_SUCCESS);

    /* host packed -> device typed */
    REQUIRE(tj_gpu_memset(dtyped, POISON, (size_t)span) == TJ_OK);
    p_got = pos;
    CHECK(MPI_Unpack(ref, outsize, &p_got, (char *)dev_ptr(dtyped) - lo, count, type,
                     MPI_COMM_SELF) == MPI_SUCCESS);
    REQUIRE(tj_gpu_copy_dtoh(ugot, dtyped, (size_t)span) == TJ_OK);
    if (p_got != p_ref || memcmp(ugot, uref, (size_t)span) != 0)
        report("unpack host->device", desc, count, pos);

    /* device packed -> device typed */
    REQUIRE(tj_gpu_copy_htod(dpk, ref, (size_t)outsize) == TJ_OK);
    REQUIRE(tj_gpu_memset(dtyped, POISON, (size_t)span) == TJ_OK);
    p_got = pos;
    CHECK(MPI_Unpack(dev_ptr(dpk), outsize, &p_got, (char *)dev_ptr(dtyped) - lo, count, type,
                     MPI_COMM_SELF) == MPI_SUCCESS);
    REQUIRE(tj_gpu_copy_dtoh(ugot, dtyped, (size_t)span) == TJ_OK);
    if (p_got != p_ref || memcmp(ugot, uref, (size_t)span) != 0)
        report("unpack device->device", desc, count, pos);

    /* device packed -> host typed */
    memset(ugot, POISON, (size_t)span);
    p_got = pos;
    CHECK(MPI_Unpack(dev_ptr(dpk), outsize, &p_got, ugot - lo, count, type, MPI_COMM_SELF) ==
          MPI_SUCCESS);
    if (p_got != p_ref || memcmp(ugot, uref, (size_t)span) != 0)
        report("unpack device->host", desc, count, pos);

    /* Too small: the system MPI's error, position untouched, nothing written. */
    p_got = pos;
    int rc = MPI_Pack((char *)dev_ptr(dsrc) - lo, count, type, dev_ptr(dpk), pos + count * size - 1,
                      &p_got, MPI_COMM_SELF);
    if (size > 0 && (rc == MPI_SUCCESS || p_got != pos))
        report("pack truncation", desc, count, pos);

    tj_gpu_free(dsrc);
    tj_gpu_free(dtyped);
    tj_gpu_free(dpk);
    free(src);
    free(uref);
    free(ugot);
    free(ref);
    free(got);
}

int main(int argc, char **argv)
{
    uint64_t seed = 1;
    long types = 400;
    rt_options_t opt = {
        .max_depth = 4, .max_size = 1 << 20, .max_span = 16 << 20, .huge_percent = 0};
    rt_rng_t rng;
    char desc[8192];

    MPI_Init(&argc, &argv);
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--types") == 0)
            types = atol(argv[++i]);
    }
    if (tj_gpu_init() != TJ_OK || tj_gpu_use(0) != TJ_OK) {
        printf("SKIP: no CUDA device\n");
        MPI_Finalize();
        return 77;
    }
    REQUIRE(dlsym(RTLD_DEFAULT, "tj_version") != NULL); /* run with libtypejit.so preloaded */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    rt_seed(&rng, seed);
    for (long t = 0; t < types; t++) {
        MPI_Datatype type = rt_random_type(&rng, &opt, desc, sizeof(desc));
        if (type == MPI_DATATYPE_NULL) {
            t--;
            continue;
        }
        check_type(type, desc, (int)rt_range(&rng, 1, 4),
                   (int)rt_range(&rng, 0, 5) * 4 + (int)rt_range(&rng, 0, 1) * 3, rt_next(&rng));
        MPI_Type_free(&type);
    }
    printf("%ld types: packs_gpu=%ld unpacks_gpu=%ld gpu_fallbacks=%ld, %d mismatches\n", types,
           counter("packs_gpu"), counter("unpacks_gpu"), counter("gpu_fallbacks"), mismatches);
    CHECK(mismatches == 0);
    CHECK(counter("packs_gpu") > 0);
    CHECK(counter("unpacks_gpu") > 0);
    MPI_Finalize();
    CHECK_DONE();
}
