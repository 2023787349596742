/* SPDX-License-Identifier: BSD-3-Clause */
/* Commit of huge indexed types under typejit: the translation's memory must not grow with the
 * number of members beyond what the type needs (1,000,000 one-int blocks once took 1.97 GB,
 * about 1.9 KB a member); an irregular one gets no layout at its commit, only at its first
 * device call or description (a host-only program pays nothing for it), and so do
 * thousands of small irregular types.
 *
 *   mpirun -np 1 -x LD_PRELOAD=libtypejit.so test_huge_commit [--members N] [--bound-mb M]
 *
 * For each shape the same type is built twice; one copy is created and committed with
 * PMPI_Type_indexed and PMPI_Type_commit (the system MPI alone), the other with MPI_Type_indexed
 * and MPI_Type_commit (through typejit, which translates the type in its constructor wrapper),
 * and the growth of the peak resident set over each create + commit is measured from a reset
 * peak (/proc/self/clear_refs "5"). What typejit adds over the system MPI must stay under the
 * bound: its translation holds a few IR chains per nesting level, whatever the member count, and
 * no layout (the `layouts` counter, read through tj_stats_format). It links only MPI: the
 * typejit functions come from the preloaded library. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "counters.h"

typedef int (*describe_fn_t)(const void *, char *, size_t);

/* A field of /proc/self/status in kB, or -1. */
static long status_kb(const char *field)
{
    char line[256];
    long v = -1;
    size_t len = strlen(field);
    FILE *f = fopen("/proc/self/status", "r");

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (strncmp(line, field, len) == 0 && line[len] == ':') {
            v = strtol(line + len + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

/* Reset the peak resident set to the current one (Linux 4.0 and later). */
static int reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    int ok;

    if (f == NULL)
        return 0;
    ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

/* n one-int blocks at stride 3 ints; `last` > 0 moves the last block by that many ints (an
 * irregular type whose mismatch is found only at the end, so the whole member list is scanned;
 * its layout folds the evenly spaced blocks into one part), `last` < 0 every odd block by one
 * int (a layout of n parts). */
typedef int (*indexed_fn_t)(int, const int[], const int[], MPI_Datatype, MPI_Datatype *);

static MPI_Datatype build(indexed_fn_t indexed, int n, int last)
{
    int *bl = malloc((size_t)n * sizeof(int)), *d = malloc((size_t)n * sizeof(int));
    MPI_Datatype t;

    REQUIRE(bl != NULL && d != NULL);
    for (int i = 0; i < n; i++) {
        bl[i] = 1;
        d[i] = 3 * i;
    }
    for (int i = 1; i < n && last < 0; i += 2)
        d[i] += 1;
    if (last > 0)
        d[n - 1] += last;
    REQUIRE(indexed(n, bl, d, MPI_INT, &t) == MPI_SUCCESS);
    free(bl);
    free(d);
    return t;
}

/* Growth of the peak resident set, in kB, over one create + commit. */
static long commit_growth(indexed_fn_t indexed, int (*commit)(MPI_Datatype *), int n, int last,
                          MPI_Datatype *t)
{
    long before;

    REQUIRE(reset_peak());
    before = status_kb("VmRSS");
    *t = build(indexed, n, last);
    REQUIRE(commit(t) == MPI_SUCCESS);
    return status_kb("VmHWM") - before;
}

/* Thousands of small irregular types, as a mesh code makes one per neighbour and field, each
 * committed and used on the host only: none gets a layout, every one is deferred. */
static void small_types(void)
{
    enum { TYPES = 5000 };
    long deferred = tj_counter("deferred");
    MPI_Datatype *t = malloc(TYPES * sizeof(MPI_Datatype));
    int bl[8], d[8], in[64] = {0}, pos;
    char out[64 * sizeof(int)];

    REQUIRE(t != NULL);
    for (int i = 0; i < TYPES; i++) {
        for (int k = 0; k < 8; k++) {
            bl[k] = 1 + (i + k) % 3;
            d[k] = 7 * k + (i * k) % 5;
        }
        REQUIRE(MPI_Type_indexed(8, bl, d, MPI_INT, &t[i]) == MPI_SUCCESS);
        REQUIRE(MPI_Type_commit(&t[i]) == MPI_SUCCESS);
        pos = 0;
        REQUIRE(MPI_Pack(in, 1, t[i], out, sizeof(out), &pos, MPI_COMM_SELF) == MPI_SUCCESS);
    }
    CHECK_EQ_INT(tj_counter("deferred") - deferred, TYPES);
    for (int i = 0; i < TYPES; i++)
        MPI_Type_free(&t[i]);
    free(t);
}

int main(int argc, char **argv)
{
    int n = 1000000;
    long bound_mb = 8, built = 0;
    describe_fn_t describe;
    static const struct {
        const char *name;
        int last;
        const char *expect; /* prefix of typejit's description */
    } shapes[] = {
        {"strided", 0, "strided W=4"},
        {"irregular at the end", 1,
         "layout (irregular displacements): parts=2 shapes=2 table=baked "},
        {"every odd block moved", -1, "layout (irregular displacements): parts=1000000 "}};

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--members") == 0 && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (strcmp(argv[i], "--bound-mb") == 0 && i + 1 < argc)
            bound_mb = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--members N] [--bound-mb M]\n", argv[0]);
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    describe = (describe_fn_t)(uintptr_t)dlsym(RTLD_DEFAULT, "tj_type_describe");
    REQUIRE(describe != NULL); /* the library is preloaded */
    if (!reset_peak() || status_kb("VmHWM") < 0) {
        printf("SKIP: no /proc/self/clear_refs peak reset\n");
        MPI_Finalize();
        return 77;
    }
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        MPI_Datatype native, typejit;
        long native_kb =
            commit_growth(PMPI_Type_indexed, PMPI_Type_commit, n, shapes[s].last, &native);
        long typejit_kb =
            commit_growth(MPI_Type_indexed, MPI_Type_commit, n, shapes[s].last, &typejit);
        char text[256];

        /* The commit built no layout; the description builds the irregular one's. */
        CHECK_EQ_INT(tj_counter("layouts"), built);
        REQUIRE(describe(&typejit, text, sizeof(text)) == 0);
        built += shapes[s].last != 0;
        CHECK_EQ_INT(tj_counter("layouts"), built);
        printf(
            "%s, %d members: peak growth over create + commit: system MPI %ld kB, typejit %ld kB "
            "(+%ld kB, bound %ld MB); typejit: %s\n",
            shapes[s].name, n, native_kb, typejit_kb, typejit_kb - native_kb, bound_mb, text);
        /* The translation really ran: the type was recognised (or given a layout) as expected;
         * the layout's part count is the member count's only for the default 1,000,000. */
        CHECK(strncmp(text, shapes[s].expect,
                      n == 1000000 ? strlen(shapes[s].expect) : strcspn(shapes[s].expect, ":")) ==
              0);
        CHECK(typejit_kb - native_kb < bound_mb * 1024);
        MPI_Type_free(&native);
        MPI_Type_free(&typejit);
    }
    small_types();
    CHECK_EQ_INT(tj_counter("layouts"), built);
    MPI_Finalize();
    CHECK_DONE();
}
