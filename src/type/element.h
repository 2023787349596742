/* SPDX-License-Identifier: BSD-3-Clause */
/* The one predefined element type a datatype is made of, if it is made of one (a vector of
 * doubles, a struct of blocks of ints), for the kernels that compute on elements rather than
 * move bytes (MPI_Reduce_local's), and the alignment that placements of a type keep. */
#ifndef TJ_TYPE_ELEMENT_H
#define TJ_TYPE_ELEMENT_H

#include <mpi.h>

/* The predefined type every element of @p type is, through its constructors
 * (MPI_Type_get_envelope and MPI_Type_get_contents); MPI_DATATYPE_NULL when its elements are of
 * several types or the system MPI does not say. A predefined type is its own element (the pair
 * types included: the caller decides what it can compute on). */
MPI_Datatype tj_type_element(MPI_Datatype type);

/* The alignment in bytes that placements of @p type in a program's memory keep: the least of
 * its elements' (1, 2, 4 or 8: the largest power of two dividing an element's size, or a part's
 * for the complex and pair types; 8 for larger ones), 1 when the constructors cannot be followed.
 * A typed buffer, and a packed position that sums packs of such types, lie at multiples of it
 * (tj_block_words_aligned_to). */
int tj_type_alignment(MPI_Datatype type);

/* The kinds of element the kernels compute on. */
enum { TJ_ELEMENT_INTEGER, TJ_ELEMENT_FLOAT, TJ_ELEMENT_BYTE };

/* The C type the kernels use for the predefined element type @p e, its size (*size) and kind
 * (*kind); NULL for the types they do not take (the pair types, complex, long double, bool,
 * MPI_CHAR, MPI_PACKED, ...). */
const char *tj_element_ctype(MPI_Datatype e, int *size, int *kind);

#endif /* TJ_TYPE_ELEMENT_H */
