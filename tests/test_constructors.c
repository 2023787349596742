/* SPDX-License-Identifier: BSD-3-Clause */
/* The constructor wrappers: a type recorded at creation (src/interpose/constructors.c) commits
 * to the same block, or the same not-strided reason, as translating the committed type afresh
 * through envelope and contents; a type that is not strided gets no layout at its commit, and
 * the layout its first device call builds is the one made afresh. This program contains the
 * wrappers themselves (it is linked with the interposer's sources), so every MPI_Type_* call below
 * goes through them.
 *
 *   test_constructors [--seed N] [--types N] */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "interpose/constructors.h"
#include "interpose/init.h"
#include "interpose/types.h"
#include "randtype.h"
#include "type/lazy.h"
#include "type/flatten.h"
#include "type/translate.h"
#include "util/stats.h"
#include "options.h"

/* A copy of the commit record of @p t (its layout held by the record, which the type keeps). */
static bool copy_of(MPI_Datatype t, tj_type_info_t *info)
{
    const tj_type_info_t *r = tj_table_get(t);

    if (r == NULL)
        return false;
    *info = *r;
    tj_table_return(r);
    return true;
}

/* The commit record of @p t as its first device call finds it. A commit builds no layout: a
 * type that is not strided (and packs bytes) is pending until then (type/lazy.h), and the device
 * call builds it. */
static bool record_of(MPI_Datatype t, tj_type_info_t *info)
{
    const tj_type_info_t *r, *built;

    if ((r = tj_table_get(t)) == NULL)
        return false;
    *info = *r;
    if (!info->strided && info->why == TJ_ERR_NOT_STRIDED && info->size > 0 &&
        (!info->pending || info->layout != NULL)) {
        char label[MPI_MAX_OBJECT_NAME + 32];
        tj_table_label(t, label, sizeof(label));
        fprintf(stderr, "%s: committed, not strided, and not pending (%s)\n", label,
                info->layout != NULL ? "a layout" : "no layout");
        check_failures++;
    }
    built = tj_lazy_resolve(t, r);
    *info = *built;
    tj_lazy_return(r, built);
    tj_table_return(r);
    return true;
}

/* What a commit makes of @p t afresh, through envelope and contents: its strided block, else
 * its layout (*lay, finished), else why neither. */
static tj_status_t afresh(MPI_Datatype t, tj_block_t *fresh, tj_layout_t **lay, tj_reason_t *reason)
{
    tj_status_t st = tj_flatten_form(t, fresh, lay, reason);
    /* The commit record keeps the strided translation's reason for a layout. */
    if (st == TJ_OK && *lay != NULL) {
        tj_ir_t ir;
        st = tj_translate_ir(t, &ir, reason);
        if (st == TJ_OK) { /* a chain too long for a block */
            st = TJ_ERR_NOT_STRIDED;
            *reason = TJ_REASON_DIMS;
        }
    }
    return st;
}

/* The same layout: parts, frame, shapes and placement. */
static bool same_layout(const tj_layout_t *a, const tj_layout_t *b)
{
    return a->hash[0] == b->hash[0] && a->hash[1] == b->hash[1] && a->start == b->start &&
           a->extent == b->extent && a->nparts == b->nparts && a->word == b->word &&
           memcmp(a->disp, b->disp, (size_t)a->nparts * sizeof(int64_t)) == 0 &&
           memcmp(a->pre, b->pre, (size_t)(a->nparts + 1) * sizeof(int64_t)) == 0;
}

/* @p t is committed: its record must exist, come from its creation, and agree with a fresh
 * translation of the same handle. */
static void compare(MPI_Datatype t, const char *what)
{
    tj_type_info_t info;
    tj_block_t fresh;
    tj_layout_t *lay;
    tj_status_t st, kst;
    tj_reason_t reason;
    tj_ir_t ir;

    if (!record_of(t, &info)) {
        fprintf(stderr, "%s: no commit record\n", what);
        check_failures++;
        return;
    }
    if (!tj_translate_known(t, &kst, &ir, &reason)) {
        fprintf(stderr, "%s: no creation record\n", what);
        check_failures++;
    }
    st = afresh(t, &fresh, &lay, &reason);
    if (st != info.why || (st == TJ_OK && !tj_block_equal(&fresh, &info.block)) ||
        (st == TJ_ERR_NOT_STRIDED && (int)reason != info.reason) ||
        ((lay == NULL) != (info.layout == NULL)) ||
        (lay != NULL && !same_layout(lay, info.layout))) {
        char a[640], b[512] = "";
        tj_interpose_describe(&info, a, sizeof(a));
        if (st == TJ_OK)
            tj_block_format(&fresh, b, sizeof(b));
        fprintf(stderr, "%s: recorded \"%s\", afresh %s (%s) %s\n", what, a, tj_status_string(st),
                st == TJ_ERR_NOT_STRIDED ? tj_reason_string(reason) : "",
                lay != NULL ? "with a layout" : b);
        check_failures++;
    }
    tj_layout_release(lay);
}

static void commit_compare_free(MPI_Datatype t, const char *what)
{
    REQUIRE(MPI_Type_commit(&t) == MPI_SUCCESS);
    compare(t, what);
    MPI_Type_free(&t);
}

/* @p t is not strided for @p reason; it has a layout or not as @p layout says. */
static void expect_reason_layout(MPI_Datatype t, tj_reason_t reason, bool layout, const char *what)
{
    tj_type_info_t info;

    REQUIRE(MPI_Type_commit(&t) == MPI_SUCCESS);
    compare(t, what); /* builds the layout */
    REQUIRE(copy_of(t, &info));
    if (info.strided || info.reason != (int)reason || (info.layout != NULL) != layout) {
        fprintf(stderr, "%s: reason \"%s\"%s, expected \"%s\"%s\n", what,
                tj_reason_string((tj_reason_t)info.reason), info.layout ? " with a layout" : "",
                tj_reason_string(reason), layout ? " with a layout" : "");
        check_failures++;
    }
    MPI_Type_free(&t);
}

static void expect_reason(MPI_Datatype t, tj_reason_t reason, const char *what)
{
    expect_reason_layout(t, reason, true, what);
}

/* @p levels nested hvectors of doubles whose strides (3 times the child's extent) never fold:
 * a chain of levels + 1 dimensions, which a strided block holds up to 16. Past that the reason
 * must say so (it read "not strided (strided)"). */
static void deep_chain(int levels, bool strided)
{
    MPI_Datatype t = MPI_DOUBLE, next;
    MPI_Aint extent = 8;
    tj_type_info_t info;

    for (int i = 0; i < levels; i++) {
        MPI_Type_create_hvector(2, 1, 3 * extent, t, &next);
        if (t != MPI_DOUBLE)
            MPI_Type_free(&t);
        t = next;
        extent *= 4; /* 3 * extent + extent */
    }
    if (!strided) {
        expect_reason(t, TJ_REASON_DIMS, "17 strided dimensions");
        return;
    }
    REQUIRE(MPI_Type_commit(&t) == MPI_SUCCESS);
    REQUIRE(copy_of(t, &info));
    CHECK(info.strided && info.block.ndims == 16);
    MPI_Type_free(&t);
}

/* Every constructor once, by hand, with the children freed before the parent is committed. */
static void each_constructor(void)
{
    MPI_Datatype v, t, types[3];
    tj_type_info_t info;
    int bl[3] = {2, 2, 2}, dis[3] = {0, 5, 10}, bl_irr[3] = {1, 2, 1};
    MPI_Aint bdis[3] = {0, 40, 80};
    int sizes[3] = {8, 9, 10}, subs[3] = {2, 3, 4}, starts[3] = {1, 2, 3};
    int gsizes[2] = {8, 8}, distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK},
        dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, psizes[2] = {1, 1};

    MPI_Type_vector(3, 2, 7, MPI_DOUBLE, &v);
    MPI_Type_contiguous(4, v, &t);
    commit_compare_free(t, "contiguous");
    MPI_Type_create_hvector(5, 1, 1000, v, &t);
    commit_compare_free(t, "hvector");
    MPI_Type_indexed(3, bl, dis, MPI_INT, &t);
    commit_compare_free(t, "indexed");
    MPI_Type_create_hindexed(3, bl, bdis, v, &t);
    commit_compare_free(t, "hindexed");
    MPI_Type_create_indexed_block(3, 2, dis, MPI_FLOAT, &t);
    commit_compare_free(t, "indexed_block");
    MPI_Type_create_hindexed_block(3, 1, bdis, v, &t);
    commit_compare_free(t, "hindexed_block");
    types[0] = types[1] = types[2] = v;
    MPI_Type_create_struct(3, bl, bdis, types, &t);
    commit_compare_free(t, "struct");
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t);
    commit_compare_free(t, "subarray C");
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_FORTRAN, v, &t);
    commit_compare_free(t, "subarray Fortran");
    MPI_Type_create_resized(v, -8, 400, &t);
    commit_compare_free(t, "resized");
    MPI_Type_dup(v, &t);
    commit_compare_free(t, "dup of an uncommitted type");

    /* The specific reasons. */
    MPI_Type_indexed(3, bl_irr, dis, MPI_INT, &t);
    expect_reason(t, TJ_REASON_IRREGULAR_BLOCKS, "irregular indexed");
    dis[2] = 11;
    MPI_Type_indexed(3, bl, dis, MPI_INT, &t);
    expect_reason(t, TJ_REASON_IRREGULAR_DISPLS, "uneven indexed");
    types[1] = MPI_INT;
    MPI_Type_create_struct(3, bl, bdis, types, &t);
    expect_reason(t, TJ_REASON_MIXED_MEMBERS, "mixed struct");
    /* A darray of blocks is a subarray: strided. */
    MPI_Type_create_darray(1, 0, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &t);
    REQUIRE(MPI_Type_commit(&t) == MPI_SUCCESS);
    compare(t, "darray of blocks");
    CHECK(copy_of(t, &info) && info.strided && info.block.ndims == 1);
    MPI_Type_free(&t);
    /* Blocks of 3 rows dealt to 2 processes: rank 0 has rows 0-2 and 6-7, a shorter last
     * block: a layout. */
    distribs[0] = MPI_DISTRIBUTE_CYCLIC;
    dargs[0] = 3;
    psizes[0] = 2;
    MPI_Type_create_darray(2, 0, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &t);
    REQUIRE(MPI_Type_commit(&t) == MPI_SUCCESS);
    compare(t, "cyclic darray");
    CHECK(copy_of(t, &info) && info.layout != NULL);
    MPI_Type_free(&t);
    /* A block-cyclic dimension over a distributed block one. */
    distribs[0] = MPI_DISTRIBUTE_CYCLIC;
    distribs[1] = MPI_DISTRIBUTE_BLOCK;
    psizes[0] = 1;
    psizes[1] = 3;
    MPI_Type_create_darray(3, 1, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &t);
    expect_reason(t, TJ_REASON_DARRAY, "block-cyclic darray over a block");
    MPI_Type_contiguous(2, MPI_SHORT_INT, &t);
    expect_reason(t, TJ_REASON_NAMED_HOLES, "contiguous of MPI_SHORT_INT");
    MPI_Type_free(&v);
    deep_chain(15, true);
    deep_chain(16, false);
}

/* MPI_Type_dup of a committed type is committed, and typejit knows it without a commit. */
static void dup_of_committed(void)
{
    MPI_Datatype v, d;
    tj_type_info_t a, b;

    MPI_Type_vector(16, 3, 8, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    MPI_Type_dup(v, &d);
    REQUIRE(copy_of(v, &a));
    CHECK(copy_of(d, &b));
    CHECK(b.strided && tj_block_equal(&a.block, &b.block));
    MPI_Type_dup(MPI_DOUBLE, &d); /* a named original is committed too */
    CHECK(copy_of(d, &b) && b.strided && b.block.size == 8);
    MPI_Type_free(&d);
    MPI_Type_free(&v);
}

/* A handle freed behind typejit's back and reused by MPI for a type typejit never saw: the
 * record of the old type must not be used for the new one. */
static void reused_handle(void)
{
    for (int i = 0; i < 50; i++) {
        MPI_Datatype a, b;
        int bl[2] = {1, 1}, dis[2] = {0, 3};
        MPI_Type_vector(4, 1, 2 + i, MPI_INT, &a);
        PMPI_Type_free(&a);                         /* unseen: the record stays */
        PMPI_Type_indexed(2, bl, dis, MPI_INT, &b); /* unseen: often at the same handle */
        MPI_Type_commit(&b);
        tj_type_info_t info;
        tj_block_t fresh;
        REQUIRE(copy_of(b, &info));
        CHECK(tj_translate_block(b, &fresh, NULL) == TJ_OK);
        CHECK(info.strided && tj_block_equal(&info.block, &fresh));
        MPI_Type_free(&b);
    }
}

int main(int argc, char **argv)
{
    uint64_t seed = 1;
    long types = 2000, known = 0;
    uint64_t via_contents;
    rt_options_t opt = {
        .max_depth = 4, .max_size = 1 << 20, .max_span = (int64_t)1 << 34, .huge_percent = 5};
    rt_rng_t rng;
    char desc[8192];

    MPI_Init(&argc, &argv);
    options_read(argc, argv,
                 (const opt_t[]){{"--seed", OPT_U64, &seed},
                                 {"--types", OPT_LONG, &types},
                                 {"--large", OPT_INT, &opt.large_percent},
                                 {NULL}});
    if (rt_large_unavailable(&opt)) {
        MPI_Finalize();
        return 77;
    }
    REQUIRE(tj_interpose_active());
    each_constructor();
    dup_of_committed();
    reused_handle();
    rt_seed(&rng, seed);
    via_contents = tj_stats_get(TJ_STAT_commits_via_contents);
    for (long n = 0; n < types; n++) {
        MPI_Datatype t = rt_draw_type(&rng, &opt, desc, sizeof(desc));
        tj_status_t st;
        tj_reason_t why;
        tj_ir_t ir;
        known += tj_translate_known(t, &st, &ir, &why);
        compare(t, desc);
        MPI_Type_free(&t);
    }
    printf("%ld random types, %ld with a creation record\n", types, known);
    CHECK_EQ_INT(known, types);
    /* Not one of them needed MPI_Type_get_contents at its commit. */
    CHECK_EQ_INT(tj_stats_get(TJ_STAT_commits_via_contents) - via_contents, 0);
    MPI_Finalize();
    CHECK_DONE();
}
