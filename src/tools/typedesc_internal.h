/* SPDX-License-Identifier: BSD-3-Clause */
/* What the modules of the type description parser share: the parser's position, the parsed
 * constructors, and the functions of the tokens and errors (typedesc_lex.c), the names
 * (typedesc_names.c), the grammar (typedesc_grammar.c), the checks (typedesc_check.c) and the
 * constructors' calls (typedesc_build.c). */
#ifndef TJ_TOOLS_TYPEDESC_INTERNAL_H
#define TJ_TOOLS_TYPEDESC_INTERNAL_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "typejit.h"

/* Longest name kept for look-up; longer words cannot match and are reported as unknown. */
#define MAX_WORD 64

#define AINT_MAX_V ((int64_t)(sizeof(MPI_Aint) >= 8 ? INT64_MAX : INT32_MAX))
#define AINT_MIN_V (-AINT_MAX_V - 1)

/* Stops the enclosing function at the first failing step; every caller has a `cleanup` label. */
#define TRY(_expr)                                                                                 \
    do {                                                                                           \
        if ((status = (_expr)) != TJ_OK)                                                           \
            goto cleanup;                                                                          \
    } while (0)

typedef struct {
    const char *text; /* the whole description, for columns */
    const char *p;    /* next character to read */
    char *err;
    size_t errlen;
} parser_t;

/* A parsed type. Predefined types are borrowed and must not be freed. */
typedef struct {
    MPI_Datatype type;
    bool owned;
    const char *from, *to; /* its text (struct members only) */
} node_t;

typedef struct {
    int64_t *v;
    int n, cap;
    const char *at; /* where the list opens, for messages about the whole list */
} list_t;

typedef struct {
    node_t *v;
    int n, cap;
    const char *at;
} nodes_t;

typedef enum {
    CT_CONTIGUOUS,
    CT_VECTOR,
    CT_HVECTOR,
    CT_SUBARRAY,
    CT_RESIZED,
    CT_DUP,
    CT_INDEXED_BLOCK,
    CT_HINDEXED_BLOCK,
    CT_INDEXED,
    CT_HINDEXED,
    CT_STRUCT,
    CT_DARRAY,
    CT_COUNT
} ctor_t;

/* The constructors' names, as a description spells them, by ctor_t. */
extern const char *const tj_typedesc_ctor_names[CT_COUNT];

/* The arguments of one constructor as parsed, before they are handed to MPI. */
typedef struct {
    ctor_t kind;
    const char *at; /* the constructor's name */
    int64_t a, b, c;
    list_t l[4]; /* darray: gsizes, distributions, dargs, psizes */
    int order;
    node_t child;
    nodes_t members;
} args_t;

/* ---- tokens and errors (typedesc_lex.c) ------------------------------------------------------ */

/* Records the first error with its position: a column alone for one-line descriptions, line and
 * column when the description spans several lines. Returns @p status. */
tj_status_t tj_typedesc_fail(parser_t *ps, const char *at, tj_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The error of MPI's @p call rejecting the arguments with @p rc: TJ_ERR_MPI. */
tj_status_t tj_typedesc_fail_mpi(parser_t *ps, const char *at, int rc, const char *call);

/* Whether @p c may be part of a word: a letter, a digit or '_'. */
bool tj_typedesc_is_word_char(char c);

/* What stands at @p p, for "found ..." in messages: a whole word, one character, or the end. */
const char *tj_typedesc_found(const char *p, char *buf, size_t len);

/* White space and `#` comments separate tokens anywhere. */
void tj_typedesc_skip_space(parser_t *ps);

/* Reads the character @p c after white space, else the error "expected 'c' CONTEXT". */
tj_status_t tj_typedesc_expect(parser_t *ps, char c, const char *context);

/* Reads a word, upper-cased into @p out (truncated to MAX_WORD - 1), and returns its length. */
int tj_typedesc_read_word(parser_t *ps, char out[MAX_WORD]);

/* @p s without @p prefix, if it starts with it. */
const char *tj_typedesc_strip_prefix(const char *s, const char *prefix);

/* ---- names (typedesc_names.c) ---------------------------------------------------------------- */

/* Predefined types by upper-case name without the MPI_ prefix. The table is built on each call
 * because some MPI implementations define the handles as addresses known only at load time. */
bool tj_typedesc_lookup_named(const char *name, MPI_Datatype *type);

/* Constructor by name; the MPI function names (MPI_Type_create_hvector, ...) are accepted too.
 * -1 for none. */
int tj_typedesc_lookup_ctor(const char *name);

/* "contiguous, vector, ... or darray": every constructor, from the table, for messages. */
void tj_typedesc_ctor_list(char *buf, size_t len);

/* ---- the grammar (typedesc_grammar.c) -------------------------------------------------------- */

/* Reads one type, a predefined name or a constructor, at nesting depth @p depth, into @p out. */
tj_status_t tj_typedesc_parse_type(parser_t *ps, int depth, node_t *out);

/* Frees the type of @p node if it owns it. */
void tj_typedesc_release(node_t *node);

/* ---- checks (typedesc_check.c) --------------------------------------------------------------- */

/* Checks that MPI states as preconditions, so that they get a column rather than an MPI error
 * (or, with the default error handler, an abort), and refuses types whose size or byte offsets
 * would not fit in 64 bits. */
tj_status_t tj_typedesc_check_args(parser_t *ps, const args_t *args);

/* ---- the constructors' calls (typedesc_build.c) ---------------------------------------------- */

/* Calls the MPI constructor on checked arguments. */
tj_status_t tj_typedesc_build(parser_t *ps, const args_t *args, MPI_Datatype *out);

#endif /* TJ_TOOLS_TYPEDESC_INTERNAL_H */
