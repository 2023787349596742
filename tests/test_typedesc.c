/* SPDX-License-Identifier: BSD-3-Clause */
/* Type description parser: random descriptions round-trip to equivalent datatypes, every
 * constructor and spelling by hand, and every error comes back with a column and no leaked
 * handle.
 *
 *   test_typedesc [--seed N] [--types N] */
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "randtype.h"
#include "typedesc.h"
#include "util/log.h"
#include "options.h"

#define PACK_SPAN_LIMIT ((int64_t)64 << 20) /* largest source footprint packed for comparison */
#define POISON          0xA5

/* ---- equivalence of two datatypes ------------------------------------------------------------ */

typedef struct {
    MPI_Count size, lb, extent, tlb, textent;
} layout_t;

static layout_t layout_of(MPI_Datatype t)
{
    layout_t l;
    REQUIRE(MPI_Type_size_x(t, &l.size) == MPI_SUCCESS);
    REQUIRE(MPI_Type_get_extent_x(t, &l.lb, &l.extent) == MPI_SUCCESS);
    REQUIRE(MPI_Type_get_true_extent_x(t, &l.tlb, &l.textent) == MPI_SUCCESS);
    return l;
}

/* True when @p a and @p b have the same size, extents and packed bytes (two objects, packed from
 * one patterned source). *packed tells whether the bytes were compared: sources beyond
 * PACK_SPAN_LIMIT are not. */
static bool same_type(MPI_Datatype a, MPI_Datatype b, const char *desc, bool *packed)
{
    layout_t la = layout_of(a), lb = layout_of(b);
    int64_t lo, hi, span;
    unsigned char *src, *pa, *pb;
    int outsize, posa = 0, posb = 0;
    bool same;

    *packed = false;
    if (memcmp(&la, &lb, sizeof(la)) != 0) {
        fprintf(stderr,
                "layout differs for %s: size %lld/%lld lb %lld/%lld extent %lld/%lld "
                "true lb %lld/%lld true extent %lld/%lld\n",
                desc, (long long)la.size, (long long)lb.size, (long long)la.lb, (long long)lb.lb,
                (long long)la.extent, (long long)lb.extent, (long long)la.tlb, (long long)lb.tlb,
                (long long)la.textent, (long long)lb.textent);
        return false;
    }
    /* A type without data has nothing to pack (and its true extent is a sentinel). */
    if (la.size == 0)
        return true;
    lo = la.tlb + (la.extent < 0 ? la.extent : 0);
    hi = la.tlb + la.textent + (la.extent > 0 ? la.extent : 0);
    span = hi - lo;
    if (span > PACK_SPAN_LIMIT || 2 * la.size > INT_MAX - 64)
        return true;
    src = malloc((size_t)(span > 0 ? span : 1));
    outsize = (int)(2 * la.size) + 64;
    pa = malloc((size_t)outsize);
    pb = malloc((size_t)outsize);
    REQUIRE(src != NULL && pa != NULL && pb != NULL);
    for (int64_t i = 0; i < span; i++)
        src[i] = (unsigned char)((i * 131 + (i >> 8) + 7) & 0xff);
    memset(pa, POISON, (size_t)outsize);
    memset(pb, POISON, (size_t)outsize);
    REQUIRE(MPI_Pack(src - lo, 2, a, pa, outsize, &posa, MPI_COMM_SELF) == MPI_SUCCESS);
    REQUIRE(MPI_Pack(src - lo, 2, b, pb, outsize, &posb, MPI_COMM_SELF) == MPI_SUCCESS);
    same = posa == posb && memcmp(pa, pb, (size_t)outsize) == 0;
    if (!same)
        fprintf(stderr, "packed bytes differ for %s\n", desc);
    free(src);
    free(pa);
    free(pb);
    *packed = true;
    return same;
}

/* ---- handle leak counting ------------------------------------------------------------------ */

/* The parser calls PMPI_* directly; definitions here take precedence over the MPI library's in
 * the dynamic link, count the handles made and freed, and forward to the library's own. */
static long created, freed;

static void *real(const char *name)
{
    void *fn = dlsym(RTLD_NEXT, name);
    REQUIRE(fn != NULL);
    return fn;
}

#define COUNTED(_name, _params, _args, _counter)                                                   \
    int _name _params                                                                              \
    {                                                                                              \
        static int(*fn) _params;                                                                   \
        int rc;                                                                                    \
        if (fn == NULL)                                                                            \
            fn = (int(*) _params)real(#_name);                                                     \
        rc = fn _args;                                                                             \
        _counter += rc == MPI_SUCCESS;                                                             \
        return rc;                                                                                 \
    }

COUNTED(PMPI_Type_contiguous, (int n, MPI_Datatype t, MPI_Datatype *o), (n, t, o), created)
COUNTED(PMPI_Type_vector, (int n, int b, int s, MPI_Datatype t, MPI_Datatype *o), (n, b, s, t, o),
        created)
COUNTED(PMPI_Type_create_hvector, (int n, int b, MPI_Aint s, MPI_Datatype t, MPI_Datatype *o),
        (n, b, s, t, o), created)
COUNTED(PMPI_Type_create_subarray,
        (int n, const int sz[], const int sub[], const int st[], int order, MPI_Datatype t,
         MPI_Datatype *o),
        (n, sz, sub, st, order, t, o), created)
COUNTED(PMPI_Type_create_resized, (MPI_Datatype t, MPI_Aint lb, MPI_Aint ext, MPI_Datatype *o),
        (t, lb, ext, o), created)
COUNTED(PMPI_Type_dup, (MPI_Datatype t, MPI_Datatype *o), (t, o), created)
COUNTED(PMPI_Type_create_indexed_block,
        (int n, int b, const int d[], MPI_Datatype t, MPI_Datatype *o), (n, b, d, t, o), created)
COUNTED(PMPI_Type_create_hindexed_block,
        (int n, int b, const MPI_Aint d[], MPI_Datatype t, MPI_Datatype *o), (n, b, d, t, o),
        created)
COUNTED(PMPI_Type_indexed, (int n, const int b[], const int d[], MPI_Datatype t, MPI_Datatype *o),
        (n, b, d, t, o), created)
COUNTED(PMPI_Type_create_hindexed,
        (int n, const int b[], const MPI_Aint d[], MPI_Datatype t, MPI_Datatype *o),
        (n, b, d, t, o), created)
COUNTED(PMPI_Type_create_struct,
        (int n, const int b[], const MPI_Aint d[], const MPI_Datatype t[], MPI_Datatype *o),
        (n, b, d, t, o), created)
COUNTED(PMPI_Type_free, (MPI_Datatype * t), (t), freed)

/* Handles the parser made and has not freed (results handed out included). */
static long outstanding(void)
{
    return created - freed;
}

/* The counters see the parser's handles: one result handed out, intermediates freed. */
static void test_counting(void)
{
    MPI_Datatype t;
    char err[256];
    long made = created, before = outstanding();

    REQUIRE(tj_typedesc_parse("struct({1,1},{0,64},{vector(2,1,4,int), contiguous(2,float)})", &t,
                              err, sizeof(err)) == TJ_OK);
    /* vector, contiguous, struct: three made, the two members freed. */
    REQUIRE(created - made == 3);
    CHECK_EQ_INT(outstanding(), before + 1);
    PMPI_Type_free(&t);
    CHECK_EQ_INT(outstanding(), before);
    /* A bare named type comes back as a duplicate. */
    REQUIRE(tj_typedesc_parse("float", &t, err, sizeof(err)) == TJ_OK);
    CHECK_EQ_INT(outstanding(), before + 1);
    PMPI_Type_free(&t);
    CHECK_EQ_INT(outstanding(), before);
}

/* ---- round trip ---------------------------------------------------------------------------- */

/* Rewrites a generated description in another legal spelling: lower case without the MPI_
 * prefix and with spaces (style 1), or across lines with comments (style 2). */
static void respell(const char *in, char *out, size_t len, int style)
{
    size_t o = 0;

    if (style == 2)
        o += (size_t)snprintf(out, len, "# generated\n");
    for (const char *p = in; *p != '\0' && o + 16 < len; p++) {
        if (style == 1 && strncmp(p, "MPI_", 4) == 0) {
            p += 3;
            continue;
        }
        if (style == 1)
            out[o++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        else
            out[o++] = *p;
        if (style == 1 && (*p == ',' || *p == '(' || *p == '{'))
            out[o++] = ' ';
        if (style == 2 && *p == '{') {
            memcpy(out + o, " # list\n  ", 10);
            o += 10;
        }
    }
    out[o] = '\0';
    if (style == 1)
        snprintf(out + o, len - o, "   # trailing comment");
}

static void test_round_trip(uint64_t seed, long types)
{
    rt_options_t opt = {
        .max_depth = 4, .max_size = 1 << 20, .max_span = (int64_t)1 << 34, .huge_percent = 5};
    rt_rng_t rng;
    static char desc[8192], text[16384];
    char err[256];
    long packed = 0, failures = 0;

    rt_seed(&rng, seed);
    for (long t = 0; t < types; t++) {
        MPI_Datatype orig = rt_draw_type(&rng, &opt, desc, sizeof(desc)), parsed;
        bool did_pack = false;
        tj_status_t st;
        respell(desc, text, sizeof(text), (int)(t % 3));
        st = tj_typedesc_parse(text, &parsed, err, sizeof(err));
        if (st != TJ_OK) {
            if (failures++ < 10)
                fprintf(stderr, "round trip: %s: %s: %s\n", text, tj_status_string(st), err);
            MPI_Type_free(&orig);
            continue;
        }
        if (!same_type(parsed, orig, text, &did_pack))
            failures++;
        packed += did_pack;
        MPI_Type_free(&parsed);
        MPI_Type_free(&orig);
    }
    printf("round trip: %ld types, %ld packed and compared, %ld failures\n", types, packed,
           failures);
    CHECK_EQ_INT(failures, 0);
    /* Almost every draw has a small footprint; the byte comparison must not quietly vanish. */
    CHECK(packed * 10 >= types * 8);
}

/* ---- hand cases ---------------------------------------------------------------------------- */

typedef struct {
    const char *text;
    long long size, lb, extent, tlb, textent;
} hand_t;

static void test_hand_layouts(void)
{
    static const hand_t cases[] = {
        {"float", 4, 0, 4, 0, 4},
        {"MPI_FLOAT", 4, 0, 4, 0, 4},
        {"Mpi_Float", 4, 0, 4, 0, 4},
        {"  DOUBLE  ", 8, 0, 8, 0, 8},
        {"2int", 8, 0, 8, 0, 8},
        {"uint16_t", 2, 0, 2, 0, 2},
        {"contiguous(3, double)", 24, 0, 24, 0, 24},
        {"contiguous(2*2, int)", 16, 0, 16, 0, 16},
        {"vector(4, 1, 8, MPI_FLOAT)", 16, 0, 100, 0, 100},
        {"vector(3, 2, -4, int)", 24, -32, 40, -32, 40},
        {"hvector(4, 1, 512*4, float)", 16, 0, 6148, 0, 6148},
        {"hvector(2, 1, -512*4, float)", 8, -2048, 2052, -2048, 2052},
        {"hvector(2, 1, 4294967296, double)", 16, 0, 4294967304LL, 0, 4294967304LL},
        {"MPI_Type_create_hvector(2, 1, 16, double)", 16, 0, 24, 0, 24},
        {"subarray({4,6},{2,3},{1,2},C,double)", 48, 0, 192, 64, 72},
        {"subarray({4,6},{2,3},{1,2},F,double)", 48, 0, 192, 72, 80},
        {"subarray({4,6},{2,3},{1,2},MPI_ORDER_FORTRAN,double)", 48, 0, 192, 72, 80},
        {"subarray({4,6},{2,3},{1,2},fortran,double)", 48, 0, 192, 72, 80},
        {"subarray({4,6},{2,3},{1,2},mpi_order_c,double)", 48, 0, 192, 64, 72},
        {"resized(-8, 32, int)", 4, -8, 32, 0, 4},
        {"dup(double)", 8, 0, 8, 0, 8},
        {"indexed_block(2, {0, 5}, int)", 16, 0, 28, 0, 28},
        {"hindexed_block(1, {0, 16}, double)", 16, 0, 24, 0, 24},
        {"indexed({1,2},{0,4},short)", 6, 0, 12, 0, 12},
        {"hindexed({1,2},{0,100},char)", 3, 0, 102, 0, 102},
        {"indexed({0,2},{-7,4},short)", 4, 8, 4, 8, 4},
        {"struct({1,1},{0,8},{int,double})", 12, 0, 16, 0, 16},
        {"contiguous(+3, int)", 12, 0, 12, 0, 12},
        {"  vector ( 4 ,1,\t8 , float )  # halo column", 16, 0, 100, 0, 100},
        {"struct({1, 1},  # two members\n {0, 8},\n {int, double})  # done\n", 12, 0, 16, 0, 16},
        {"contiguous(2, # count\n float) # a comment that names ) and ,\n", 8, 0, 8, 0, 8},
        {"hvector(4, 1, 8, vector(4, 1, 4, double))", 128, 0, 128, 0, 128},
        /* Members written otherwise are distinct datatypes. */
        {"struct({1,1},{0,64},{contiguous(2,int),contiguous(3,int)})", 20, 0, 76, 0, 76},
    };
    char err[256];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const hand_t *c = &cases[i];
        MPI_Datatype t;
        tj_status_t st = tj_typedesc_parse(c->text, &t, err, sizeof(err));
        if (st != TJ_OK) {
            fprintf(stderr, "hand case %s: %s: %s\n", c->text, tj_status_string(st), err);
            check_failures++;
            continue;
        }
        layout_t l = layout_of(t);
        if (l.size != c->size || l.lb != c->lb || l.extent != c->extent || l.tlb != c->tlb ||
            l.textent != c->textent) {
            fprintf(stderr,
                    "hand case %s: size=%lld lb=%lld extent=%lld true lb=%lld true extent=%lld\n",
                    c->text, (long long)l.size, (long long)l.lb, (long long)l.extent,
                    (long long)l.tlb, (long long)l.textent);
            check_failures++;
        }
        MPI_Type_free(&t);
    }
}

/* Descriptions against the same types built directly with MPI. */
static void test_hand_equivalents(void)
{
    MPI_Datatype direct[10], inner, parsed;
    const char *texts[10];
    int n = 0, sizes[3] = {8, 6, 5}, subs[3] = {1, 6, 5}, starts[3] = {7, 0, 0};
    int bls[2] = {1, 2};
    MPI_Aint displs[2] = {4, 16};
    MPI_Datatype members[2];
    char err[256];
    bool packed;

    texts[n] = "subarray({8,6,5},{1,6,5},{7,0,0},C,float)";
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_FLOAT, &direct[n++]);
    texts[n] = "subarray({8,6,5},{1,6,5},{7,0,0},F,float)";
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_FLOAT, &direct[n++]);
    texts[n] = "hvector(4, 1, 8, vector(4, 1, 4, double))";
    MPI_Type_vector(4, 1, 4, MPI_DOUBLE, &inner);
    MPI_Type_create_hvector(4, 1, 8, inner, &direct[n++]);
    MPI_Type_free(&inner);
    texts[n] = "struct({1, 2}, {4, 16}, {float, contiguous(2, short)})";
    members[0] = MPI_FLOAT;
    MPI_Type_contiguous(2, MPI_SHORT, &members[1]);
    MPI_Type_create_struct(2, bls, displs, members, &direct[n++]);
    MPI_Type_free(&members[1]);
    texts[n] = "double_int";
    MPI_Type_dup(MPI_DOUBLE_INT, &direct[n++]);
    texts[n] = "MPI_LONG_DOUBLE_INT";
    MPI_Type_dup(MPI_LONG_DOUBLE_INT, &direct[n++]);
    texts[n] = "vector(3, 2, 5, subarray({4}, {2}, {1}, C, float))";
    {
        int s = 4, ss = 2, st = 1;
        MPI_Type_create_subarray(1, &s, &ss, &st, MPI_ORDER_C, MPI_FLOAT, &inner);
        MPI_Type_vector(3, 2, 5, inner, &direct[n++]);
        MPI_Type_free(&inner);
    }
    /* Members written alike are one datatype, as a program makes the struct that builds the
     * member once: on MPICH that has another extent (180) than distinct datatypes of the same
     * layout (184), elsewhere the same. */
    {
        int bl[2] = {3, 3};
        MPI_Aint d[2] = {0, 144};
        MPI_Type_create_resized(MPI_INT64_T, -3, 12, &inner);
        members[0] = members[1] = inner;
        texts[n] = "struct({3,3},{0,144},{resized(-3,12,int64_t), Resized( -3 ,12, MPI_INT64_T )})";
        MPI_Type_create_struct(2, bl, d, members, &direct[n++]);
        texts[n] = "struct({3,3},{0,144},{resized(-3,12,INT64_T) # one\n, resized(-3,12,int64_t)})";
        MPI_Type_create_struct(2, bl, d, members, &direct[n++]);
        MPI_Type_free(&inner);
    }
    for (int i = 0; i < n; i++) {
        MPI_Type_commit(&direct[i]);
        if (tj_typedesc_parse(texts[i], &parsed, err, sizeof(err)) != TJ_OK) {
            fprintf(stderr, "%s: %s\n", texts[i], err);
            check_failures++;
        } else {
            CHECK(same_type(parsed, direct[i], texts[i], &packed));
            CHECK(packed);
            MPI_Type_free(&parsed);
        }
        MPI_Type_free(&direct[i]);
    }
}

/* Every predefined name, spelled with and without the prefix and in both cases. */
static void test_named(void)
{
    const struct {
        const char *name;
        MPI_Datatype type;
    } named[] = {
        {"MPI_BYTE", MPI_BYTE},
        {"MPI_CHAR", MPI_CHAR},
        {"MPI_SIGNED_CHAR", MPI_SIGNED_CHAR},
        {"MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR},
        {"MPI_SHORT", MPI_SHORT},
        {"MPI_UNSIGNED_SHORT", MPI_UNSIGNED_SHORT},
        {"MPI_INT", MPI_INT},
        {"MPI_UNSIGNED", MPI_UNSIGNED},
        {"MPI_LONG", MPI_LONG},
        {"MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG},
        {"MPI_LONG_LONG", MPI_LONG_LONG},
        {"MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG},
        {"MPI_FLOAT", MPI_FLOAT},
        {"MPI_DOUBLE", MPI_DOUBLE},
        {"MPI_LONG_DOUBLE", MPI_LONG_DOUBLE},
        {"MPI_INT8_T", MPI_INT8_T},
        {"MPI_INT16_T", MPI_INT16_T},
        {"MPI_INT32_T", MPI_INT32_T},
        {"MPI_INT64_T", MPI_INT64_T},
        {"MPI_UINT8_T", MPI_UINT8_T},
        {"MPI_UINT16_T", MPI_UINT16_T},
        {"MPI_UINT32_T", MPI_UINT32_T},
        {"MPI_UINT64_T", MPI_UINT64_T},
        {"MPI_C_BOOL", MPI_C_BOOL},
        {"MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX},
        {"MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX},
        {"MPI_FLOAT_INT", MPI_FLOAT_INT},
        {"MPI_DOUBLE_INT", MPI_DOUBLE_INT},
        {"MPI_LONG_INT", MPI_LONG_INT},
        {"MPI_2INT", MPI_2INT},
        {"MPI_SHORT_INT", MPI_SHORT_INT},
        {"MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT},
        {"MPI_PACKED", MPI_PACKED},
        {"MPI_WCHAR", MPI_WCHAR},
        {"MPI_AINT", MPI_AINT},
        {"MPI_OFFSET", MPI_OFFSET},
        {"MPI_COUNT", MPI_COUNT},
    };
    char text[64], err[256];

    for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
        for (int spelling = 0; spelling < 3; spelling++) {
            MPI_Datatype t;
            bool packed;
            const char *name = named[i].name + (spelling > 0 ? 4 : 0);
            size_t k;
            for (k = 0; name[k] != '\0' && k + 1 < sizeof(text); k++)
                text[k] = spelling == 2 && name[k] >= 'A' && name[k] <= 'Z'
                              ? (char)(name[k] - 'A' + 'a')
                              : name[k];
            text[k] = '\0';
            if (tj_typedesc_parse(text, &t, err, sizeof(err)) != TJ_OK) {
                fprintf(stderr, "named %s: %s\n", text, err);
                check_failures++;
                continue;
            }
            /* The result is a committed duplicate the caller may free. */
            CHECK(t != named[i].type);
            CHECK(same_type(t, named[i].type, text, &packed));
            MPI_Type_free(&t);
        }
    }
}

/* "contiguous(1,contiguous(1,...int...))": @p depth constructors nested (malloc'd). */
static char *nested_contiguous(int depth)
{
    char *text = malloc((size_t)depth * 16 + 16);
    size_t len = 0;

    REQUIRE(text != NULL);
    for (int i = 0; i < depth; i++)
        len += (size_t)sprintf(text + len, "contiguous(1,");
    len += (size_t)sprintf(text + len, "int");
    for (int i = 0; i < depth; i++)
        text[len++] = ')';
    text[len] = '\0';
    return text;
}

static void test_limits_ok(void)
{
    char err[256], *text;
    size_t len, n = 100000;
    MPI_Datatype t;
    MPI_Count size;

    /* 64 nested constructors are allowed. */
    text = nested_contiguous(64);
    CHECK_EQ_INT(tj_typedesc_parse(text, &t, err, sizeof(err)), TJ_OK);
    MPI_Type_free(&t);
    free(text);

    /* A long list grows past its first allocation. */
    text = malloc(n * 12 + 64);
    REQUIRE(text != NULL);
    len = (size_t)sprintf(text, "hindexed_block(1, {");
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(text + len, "%s%zu", i ? "," : "", i * 8);
    sprintf(text + len, "}, double)");
    REQUIRE(tj_typedesc_parse(text, &t, err, sizeof(err)) == TJ_OK);
    MPI_Type_size_x(t, &size);
    CHECK_EQ_INT(size, n * 8);
    MPI_Type_free(&t);
    free(text);

    /* Empty lists mean count zero. */
    REQUIRE(tj_typedesc_parse("indexed({}, {}, int)", &t, err, sizeof(err)) == TJ_OK);
    MPI_Type_size_x(t, &size);
    CHECK_EQ_INT(size, 0);
    MPI_Type_free(&t);
    REQUIRE(tj_typedesc_parse("contiguous(0, int)", &t, err, sizeof(err)) == TJ_OK);
    MPI_Type_size_x(t, &size);
    CHECK_EQ_INT(size, 0);
    MPI_Type_free(&t);
}

/* ---- errors ------------------------------------------------------------------------------- */

typedef struct {
    const char *text;
    const char *at;      /* where the error points: first occurrence in text; NULL = the end */
    const char *message; /* a part of the message */
    int column;          /* when nonzero, the column instead of `at` */
} error_case_t;

static void test_errors(void)
{
    static const error_case_t cases[] = {
        {"vector(4, 1, 8, float", NULL, "expected ')' to close vector(, found end of text", 0},
        {"vector(4, 1, 8, float))", NULL, "unexpected ')' after the type", 23},
        {"contiguous(4, flaot)", "flaot", "unknown type name 'flaot'", 0},
        {"vector(4, 1, float)", "float", "expected an integer for stride, found 'float'", 0},
        {"vector(4, 1)", ")", "expected ',' after block length", 0},
        {"contiguous(-1, int)", "-1", "count must not be negative, got -1", 0},
        {"vector(2, -3, 1, int)", "-3", "block length must not be negative", 0},
        {"hvector(2, 1, 99999999999999999999, double)", "9999", "stride does not fit in 64 bits",
         0},
        {"vector(2, 1, 4294967296, int)", "4294", "stride 4294967296 does not fit in int", 0},
        {"vector(1, 2147483648, 1, int)", "2147", "block length 2147483648 does not fit in int", 0},
        {"indexed({1}, {-2147483649}, int)", "-2147",
         "displacements[0] -2147483649 does not fit in int", 0},
        {"hvector(2,1,4294967296*4294967296,double)", NULL, "product does not fit in 64 bits", 24},
        {"contiguous(3*, int)", ", int", "expected an integer for count, found ','", 0},
        {"contiguous(2 int)", "int", "expected ',' after count, found 'int'", 0},
        {"", NULL, "expected a type name or constructor, found end of text", 0},
        {"   # only a comment", NULL, "expected a type name or constructor", 0},
        {"-5", "-5", "expected a type name or constructor, found '-'", 0},
        {"subarray({4,4},{2},{0,0},C,float)", "{2}", "subarray has 2 sizes but 1 subsizes", 0},
        {"subarray({4},{5},{0},C,float)", "{5}", "subsizes[0] = 5 exceeds sizes[0] = 4", 0},
        {"subarray({4},{2},{3},C,float)", "{3}", "starts[0] = 3 puts the subarray past", 0},
        {"subarray({4},{0},{0},C,float)", "0}", "subsizes[0] must be at least 1, got 0", 0},
        {"subarray({},{},{},C,float)", "{}", "subarray needs at least one dimension", 0},
        {"subarray({4},{2},{0},X,float)", "X", "unknown order 'X'", 0},
        {"subarray({4},{2},{0},,float)", ",float", "expected the order C or F, found ','", 0},
        {"struct({1,1},{0,8},{int})", "{int}", "struct has 2 block lengths but 1 member types", 0},
        {"struct({1,1},{0},{int,int})", "{0}", "struct has 2 block lengths but 1 displacements", 0},
        {"hindexed({1},{0,1},int)", "{0,1}", "hindexed has 1 block lengths but 2 displacements", 0},
        {"blob(4, int)", "blob", "unknown constructor 'blob'", 0},
        /* Every constructor is named, the list made from the parser's own table. */
        {"bogus(4, int)", "bogus",
         "unknown constructor 'bogus' (expected contiguous, vector, hvector, subarray, resized, "
         "dup, indexed_block, hindexed_block, indexed, hindexed, struct or darray)",
         0},
        {"vector 4, 1, 8, float", "4", "expected '(' after vector, found '4'", 0},
        {"indexed({1,2},{0,4,},int)", "},int", "expected an integer for displacements[2]", 0},
        {"indexed({1,2}{0,4},int)", "{0,4}", "expected ',' after block lengths", 0},
        {"indexed({1 2},{0,4},int)", "2}", "expected ',' or '}' in the list of block lengths", 0},
        {"int x", "x", "unexpected 'x' after the type", 0},
        {"vector(2,1,2,int,)", ",)", "expected ')' to close vector(, found ','", 0},
        {"contiguous(2, int) junk", "junk", "unexpected 'junk' after the type", 0},
        {"struct({1,1,1},{0,8,16},{vector(2,1,2,int), contiguous(3,double), flaot})", "flaot",
         "unknown type name 'flaot'", 0},
        {"struct({1,1},{0,8},{int double})", "double", "expected ',' or '}' in the list of member",
         0},
        {"subarray({4},{5},{0},C,contiguous(2,int))", "{5}", "exceeds sizes[0]", 0},
        {"resized(0, 9223372036854775807, contiguous(2, double))", "resized",
         "do not fit in 64 bits", 0},
        {"contiguous(2147483647, contiguous(2147483647, contiguous(2147483647, double)))",
         "contiguous(2147483647, contiguous(2147483647, double", "do not fit in 64 bits", 0},
        {"hvector(2, 1, -9223372036854775808, byte)", "hvector", "do not fit in 64 bits", 0},
        {"dup(vector(2, 1, 2, int), int)", NULL, "expected ')' to close dup(, found ','", 25},
        {"float(4)", "float", "unknown constructor 'float'", 0},
        {"contiguous(4, int)\x01", "\x01", "unexpected byte 0x01 after the type", 0},
    };
    char err[256];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const error_case_t *c = &cases[i];
        const char *at = c->at == NULL ? c->text + strlen(c->text) : strstr(c->text, c->at);
        MPI_Datatype t = MPI_INT;
        char want[32];
        tj_status_t st;
        long before = outstanding();

        REQUIRE(at != NULL);
        snprintf(want, sizeof(want),
                 "column %d: ", c->column ? c->column : (int)(at - c->text) + 1);
        err[0] = '\0';
        st = tj_typedesc_parse(c->text, &t, err, sizeof(err));
        if (st != TJ_ERR_PARSE || strncmp(err, want, strlen(want)) != 0 ||
            strstr(err, c->message) == NULL) {
            fprintf(stderr, "error case %s: got %s \"%s\", want %s\"...%s...\"\n", c->text,
                    tj_status_string(st), err, want, c->message);
            check_failures++;
        }
        /* Output arguments are written only on success. */
        CHECK(t == MPI_INT);
        if (outstanding() != before) {
            fprintf(stderr, "error case %s left %ld datatype handles behind\n", c->text,
                    outstanding() - before);
            check_failures++;
        }
    }
}

static void test_error_details(void)
{
    char err[256], small[12], *text;
    MPI_Datatype t;
    size_t len;
    MPI_Errhandler h;
    long before = outstanding();
    int level;

    /* A description across lines reports line and column. */
    CHECK_EQ_INT(
        tj_typedesc_parse("struct({1,1},\n  {0,8},\n  {int, flaot})", &t, err, sizeof(err)),
        TJ_ERR_PARSE);
    CHECK(strncmp(err, "line 3, column 9: unknown type name 'flaot'", 43) == 0);

    /* No error buffer, or a tiny one, is fine. */
    CHECK_EQ_INT(tj_typedesc_parse("blob", &t, NULL, 0), TJ_ERR_PARSE);
    CHECK_EQ_INT(tj_typedesc_parse("blob", &t, small, sizeof(small)), TJ_ERR_PARSE);
    CHECK(strlen(small) == sizeof(small) - 1);
    /* A missing argument is a caller's bug: logged as an error, which this test silences. */
    level = tj_log_level();
    tj_log_set_level(TJ_LOG_OFF);
    CHECK_EQ_INT(tj_typedesc_parse(NULL, &t, err, sizeof(err)), TJ_ERR_INVALID);
    tj_log_set_level((tj_log_level_t)level);

    /* One nesting level too many. */
    text = nested_contiguous(65);
    CHECK_EQ_INT(tj_typedesc_parse(text, &t, err, sizeof(err)), TJ_ERR_PARSE);
    CHECK(strstr(err, "column 846: types nested deeper than 64 levels") == err);
    CHECK_EQ_INT(outstanding(), before);
    free(text);

    /* A list one element longer than the limit. */
    text = malloc((size_t)((1 << 20) + 1) * 2 + 64);
    REQUIRE(text != NULL);
    len = (size_t)sprintf(text, "indexed_block(1, {0");
    for (int i = 1; i < (1 << 20) + 1; i++) {
        text[len++] = ',';
        text[len++] = '0';
    }
    sprintf(text + len, "}, byte)");
    CHECK_EQ_INT(tj_typedesc_parse(text, &t, err, sizeof(err)), TJ_ERR_PARSE);
    CHECK(strstr(err, "list of displacements longer than 1048576 elements") != NULL);
    CHECK_EQ_INT(outstanding(), before);
    free(text);

    /* The error handlers are back to what they were. */
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &h);
    CHECK(h == MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&h);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK_EQ_INT(tj_typedesc_parse("blob", &t, err, sizeof(err)), TJ_ERR_PARSE);
    MPI_Comm_get_errhandler(MPI_COMM_SELF, &h);
    CHECK(h == MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&h);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

/* ---- files -------------------------------------------------------------------------------- */

typedef struct {
    int calls, parsed, lines[16];
    char texts[16][64];
    int stop_after;
} file_ctx_t;

static int on_line(int line, const char *text, void *arg)
{
    file_ctx_t *ctx = arg;
    MPI_Datatype t;
    char err[256];

    if (ctx->calls < 16) {
        ctx->lines[ctx->calls] = line;
        snprintf(ctx->texts[ctx->calls], sizeof(ctx->texts[0]), "%s", text);
    }
    ctx->calls++;
    if (tj_typedesc_parse(text, &t, err, sizeof(err)) == TJ_OK) {
        ctx->parsed++;
        MPI_Type_free(&t);
    } else {
        fprintf(stderr, "line %d: %s\n", line, err);
    }
    return ctx->stop_after > 0 && ctx->calls >= ctx->stop_after;
}

static void test_file(void)
{
    const char *tmp = getenv("TMPDIR");
    char path[512];
    FILE *f;
    int fd;
    file_ctx_t ctx;

    snprintf(path, sizeof(path), "%s/test_typedesc.XXXXXX", tmp != NULL ? tmp : "/tmp");
    fd = mkstemp(path);
    REQUIRE(fd >= 0);
    f = fdopen(fd, "w");
    REQUIRE(f != NULL);
    fputs("# a file of type descriptions\n"
          "\n"
          "float\n"
          "   \t  \n"
          "vector(4, 1, 8, double)   # halo column\n"
          "  # an indented comment\n"
          "struct({1,1},{0,8},{int,double})#no space\n"
          "  dup(int)\n",
          f);
    fputs("hindexed_block(1, {", f);
    for (int i = 0; i < 5000; i++)
        fprintf(f, "%s%d", i ? "," : "", i * 16);
    fputs("}, double)\n", f);
    fputs("contiguous(2, int)", f); /* no newline at the end */
    REQUIRE(fclose(f) == 0);

    memset(&ctx, 0, sizeof(ctx));
    CHECK_EQ_INT(tj_typedesc_each_line(path, on_line, &ctx), TJ_OK);
    CHECK_EQ_INT(ctx.calls, 6);
    CHECK_EQ_INT(ctx.parsed, 6);
    CHECK_EQ_INT(ctx.lines[0], 3);
    CHECK(strcmp(ctx.texts[0], "float") == 0);
    CHECK_EQ_INT(ctx.lines[1], 5);
    CHECK(strcmp(ctx.texts[1], "vector(4, 1, 8, double)") == 0);
    CHECK_EQ_INT(ctx.lines[2], 7);
    CHECK(strcmp(ctx.texts[2], "struct({1,1},{0,8},{int,double})") == 0);
    CHECK_EQ_INT(ctx.lines[3], 8);
    CHECK(strcmp(ctx.texts[3], "  dup(int)") == 0);
    CHECK_EQ_INT(ctx.lines[4], 9);
    CHECK_EQ_INT(ctx.lines[5], 10);
    CHECK(strcmp(ctx.texts[5], "contiguous(2, int)") == 0);

    /* A nonzero return stops the walk. */
    memset(&ctx, 0, sizeof(ctx));
    ctx.stop_after = 2;
    CHECK_EQ_INT(tj_typedesc_each_line(path, on_line, &ctx), TJ_OK);
    CHECK_EQ_INT(ctx.calls, 2);
    unlink(path);

    memset(&ctx, 0, sizeof(ctx));
    CHECK_EQ_INT(tj_typedesc_each_line(path, on_line, &ctx), TJ_ERR_IO);
    CHECK_EQ_INT(tj_typedesc_each_line(tmp != NULL ? tmp : "/tmp", on_line, &ctx), TJ_ERR_IO);
    CHECK_EQ_INT(ctx.calls, 0);
}

int main(int argc, char **argv)
{
    uint64_t seed = 7;
    long types = 3000;

    MPI_Init(&argc, &argv);
    options_read(
        argc, argv,
        (const opt_t[]){{"--seed", OPT_U64, &seed}, {"--types", OPT_LONG, &types}, {NULL}});
    test_counting();
    test_hand_layouts();
    test_hand_equivalents();
    test_named();
    test_limits_ok();
    test_errors();
    test_error_details();
    test_file();
    test_round_trip(seed, types);
    MPI_Finalize();
    CHECK_DONE();
}
