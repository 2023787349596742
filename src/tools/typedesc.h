/* SPDX-License-Identifier: BSD-3-Clause */
/* Type descriptions: the one-line text form of an MPI datatype used by `typejit inspect` and
 * `typejit warm`, parsed into a committed datatype with the PMPI constructors. */
#ifndef TJ_TOOLS_TYPEDESC_H
#define TJ_TOOLS_TYPEDESC_H

#include <mpi.h>
#include <stddef.h>

#include "typejit.h"

/* Build the datatype described by @p text with PMPI_Type_* constructors (intermediate handles
 * freed), committed with PMPI_Type_commit. A description that is a bare named type yields a
 * duplicate of it, so the caller always frees the result with PMPI_Type_free.
 *
 * On a syntax or range error returns TJ_ERR_PARSE and writes a one-line message with the 1-based
 * column and what was expected into @p err (e.g. "column 12: expected ',' after count"); if MPI
 * rejects the arguments returns TJ_ERR_MPI with the MPI error string. While it runs, the error
 * handlers of MPI_COMM_WORLD and MPI_COMM_SELF are MPI_ERRORS_RETURN, so that a rejected
 * argument is reported rather than fatal; they are restored before it returns. MPI must be
 * initialised (TJ_ERR_INVALID otherwise). Never leaks handles on error paths. */
tj_status_t tj_typedesc_parse(const char *text, MPI_Datatype *type, char *err, size_t errlen);

/* Most members of a fused set. */
#define TJ_TYPEDESC_FUSED_MAX 32

/* A fused set, `fused(T1, T2, ...)`: the member types of one fused launch (2 to @p max, at most
 * TJ_TYPEDESC_FUSED_MAX), each built and committed as tj_typedesc_parse builds a type, into
 * @p types (*n of them; the caller frees each). TJ_ERR_NOT_FOUND, with nothing written, when
 * @p text is not a fused set (parse it as a type then); other errors as tj_typedesc_parse. */
tj_status_t tj_typedesc_parse_fused(const char *text, MPI_Datatype *types, int max, int *n,
                                    char *err, size_t errlen);

/* Read a file of descriptions: calls fn(line_number, text_without_comment, arg) for each line
 * that holds more than white space once its `#` comment is removed (line numbers are 1-based;
 * the text keeps its leading white space so that columns match the file). A nonzero return
 * from @p fn stops the walk; the function still returns TJ_OK. A line holding a NUL byte (a
 * binary file) is passed as NULL text, so that the caller reports it rather than a cut line.
 * Returns TJ_ERR_IO if the file cannot be opened or read, with errno saying why. */
tj_status_t tj_typedesc_each_line(const char *path,
                                  int (*fn)(int line, const char *text, void *arg), void *arg);

#endif /* TJ_TOOLS_TYPEDESC_H */
