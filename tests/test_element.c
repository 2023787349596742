/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of a datatype's element type and of the alignment its placements keep
 * (src/type/element.c), through the system MPI's constructors. */
#include <mpi.h>
#include <stdio.h>

#include "check.h"
#include "type/element.h"

static MPI_Datatype vector_of(MPI_Datatype e)
{
    MPI_Datatype t;
    REQUIRE(MPI_Type_vector(4, 3, 7, e, &t) == MPI_SUCCESS);
    return t;
}

/* A struct of a block of @p a and a block of @p b. */
static MPI_Datatype pair_of(MPI_Datatype a, MPI_Datatype b, MPI_Aint at)
{
    int lens[2] = {1, 2};
    MPI_Aint disps[2] = {0, at};
    MPI_Datatype types[2] = {a, b}, t;
    REQUIRE(MPI_Type_create_struct(2, lens, disps, types, &t) == MPI_SUCCESS);
    return t;
}

static void test_element(void)
{
    MPI_Datatype v = vector_of(MPI_DOUBLE), vv, s, m;

    CHECK(tj_type_element(MPI_DOUBLE) == MPI_DOUBLE);
    CHECK(tj_type_element(v) == MPI_DOUBLE);
    REQUIRE(MPI_Type_create_hvector(2, 1, 1000, v, &vv) == MPI_SUCCESS);
    CHECK(tj_type_element(vv) == MPI_DOUBLE);
    s = pair_of(MPI_INT, MPI_INT, 8);
    CHECK(tj_type_element(s) == MPI_INT);
    m = pair_of(MPI_DOUBLE, MPI_INT, 8);
    CHECK(tj_type_element(m) == MPI_DATATYPE_NULL); /* mixed */
    CHECK(tj_type_element(MPI_DATATYPE_NULL) == MPI_DATATYPE_NULL);
    MPI_Type_free(&v);
    MPI_Type_free(&vv);
    MPI_Type_free(&s);
    MPI_Type_free(&m);
}

/* A typed buffer of the type lies at a multiple of its elements' alignment: the least of them,
 * a part's for complex and pair types, at most 8. */
static void test_alignment(void)
{
    MPI_Datatype v, m, c, sub, dup;
    int sizes[3] = {10, 10, 10}, subs[3] = {2, 3, 4}, starts[3] = {1, 1, 1};

    CHECK_EQ_INT(tj_type_alignment(MPI_DOUBLE), 8);
    CHECK_EQ_INT(tj_type_alignment(MPI_FLOAT), 4);
    CHECK_EQ_INT(tj_type_alignment(MPI_SHORT), 2);
    CHECK_EQ_INT(tj_type_alignment(MPI_BYTE), 1);
    CHECK_EQ_INT(tj_type_alignment(MPI_CHAR), 1);
    CHECK_EQ_INT(tj_type_alignment(MPI_LONG_DOUBLE), 8); /* larger elements: 8 */
    CHECK_EQ_INT(tj_type_alignment(MPI_C_DOUBLE_COMPLEX), 8);
    CHECK_EQ_INT(tj_type_alignment(MPI_C_FLOAT_COMPLEX), 4);
    CHECK_EQ_INT(tj_type_alignment(MPI_2INT), 4);
    CHECK_EQ_INT(tj_type_alignment(MPI_FLOAT_INT), 4);
    CHECK_EQ_INT(tj_type_alignment(MPI_DATATYPE_NULL), 1);

    v = vector_of(MPI_DOUBLE);
    CHECK_EQ_INT(tj_type_alignment(v), 8);
    MPI_Type_free(&v);
    REQUIRE(MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_FLOAT, &sub) ==
            MPI_SUCCESS);
    CHECK_EQ_INT(tj_type_alignment(sub), 4);
    REQUIRE(MPI_Type_dup(sub, &dup) == MPI_SUCCESS);
    CHECK_EQ_INT(tj_type_alignment(dup), 4);
    MPI_Type_free(&sub);
    MPI_Type_free(&dup);
    m = pair_of(MPI_DOUBLE, MPI_SHORT, 8); /* the least of the members' */
    CHECK_EQ_INT(tj_type_alignment(m), 2);
    MPI_Type_free(&m);
    REQUIRE(MPI_Type_contiguous(3, MPI_C_DOUBLE_COMPLEX, &c) == MPI_SUCCESS);
    CHECK_EQ_INT(tj_type_alignment(c), 8);
    MPI_Type_free(&c);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_element();
    test_alignment();
    MPI_Finalize();
    CHECK_DONE();
}
