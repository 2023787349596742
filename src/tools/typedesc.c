/* SPDX-License-Identifier: BSD-3-Clause */
/* Recursive-descent parser of type descriptions into MPI datatypes built with PMPI constructors. */
#include "typedesc.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/common.h"
#include "util/log.h"

/* Deep enough for any real type, shallow enough that the recursion cannot exhaust the stack. */
#define MAX_DEPTH 64
/* Longest list of integers or member types; longer lists are more likely a runaway generator. */
#define MAX_LIST (1 << 20)
/* Longest name kept for look-up; longer words cannot match and are reported as unknown. */
#define MAX_WORD 64

#define AINT_MAX_V ((int64_t)(sizeof(MPI_Aint) >= 8 ? INT64_MAX : INT32_MAX))
#define AINT_MIN_V (-AINT_MAX_V - 1)

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

/* Accepted values of one integer argument and the C type it is passed as. */
typedef struct {
    int64_t lo, hi;
    const char *ctype;
} range_t;

static const range_t r_count = {0, INT_MAX, "int"};
static const range_t r_int = {INT_MIN, INT_MAX, "int"};
static const range_t r_size = {1, INT_MAX, "int"};
static const range_t r_aint = {AINT_MIN_V, AINT_MAX_V, "MPI_Aint"};

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

static const char *const ctor_names[CT_COUNT] = {
    "contiguous",    "vector",         "hvector", "subarray", "resized", "dup",
    "indexed_block", "hindexed_block", "indexed", "hindexed", "struct",  "darray",
};

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

/* Stops the enclosing function at the first failing step; every caller has a `cleanup` label. */
#define TRY(_expr)                                                                                 \
    do {                                                                                           \
        if ((status = (_expr)) != TJ_OK)                                                           \
            goto cleanup;                                                                          \
    } while (0)

static tj_status_t parse_type(parser_t *ps, int depth, node_t *out);

static tj_status_t fail(parser_t *ps, const char *at, tj_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Records the first error with its position: a column alone for one-line descriptions, line and
 * column when the description spans several lines. */
static tj_status_t fail(parser_t *ps, const char *at, tj_status_t status, const char *fmt, ...)
{
    char msg[384];
    const char *line_start = ps->text;
    int line = 1;
    va_list ap;

    for (const char *q = ps->text; q < at; q++)
        if (*q == '\n') {
            line++;
            line_start = q + 1;
        }
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (ps->err != NULL && ps->errlen > 0) {
        if (line > 1)
            snprintf(ps->err, ps->errlen, "line %d, column %d: %s", line,
                     (int)(at - line_start) + 1, msg);
        else
            snprintf(ps->err, ps->errlen, "column %d: %s", (int)(at - line_start) + 1, msg);
    }
    if (status == TJ_ERR_NOMEM)
        tj_log_error("type description: %s", msg);
    else
        tj_log_debug("type description: %s", msg);
    return status;
}

static tj_status_t fail_mpi(parser_t *ps, const char *at, int rc, const char *call)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (PMPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof(msg), "MPI error %d", rc);
    return fail(ps, at, TJ_ERR_MPI, "%s rejected the arguments: %s", call, msg);
}

static bool is_word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* What stands at @p p, for "found ..." in messages: a whole word, one character, or the end. */
static const char *found(const char *p, char *buf, size_t len)
{
    if (*p == '\0')
        return "end of text";
    if (*p == '\n')
        return "end of line";
    if (is_word_char(*p)) {
        int n = 0;
        while (n < 24 && is_word_char(p[n]))
            n++;
        snprintf(buf, len, "'%.*s%s'", n, p, is_word_char(p[n]) ? "..." : "");
    } else if (isprint((unsigned char)*p)) {
        snprintf(buf, len, "'%c'", *p);
    } else {
        snprintf(buf, len, "byte 0x%02x", (unsigned)(unsigned char)*p);
    }
    return buf;
}

/* White space and `#` comments separate tokens anywhere. */
static void skip_space(parser_t *ps)
{
    for (;;) {
        while (isspace((unsigned char)*ps->p))
            ps->p++;
        if (*ps->p != '#')
            return;
        while (*ps->p != '\0' && *ps->p != '\n')
            ps->p++;
    }
}

static tj_status_t expect(parser_t *ps, char c, const char *context)
{
    char buf[48];

    skip_space(ps);
    if (*ps->p != c)
        return fail(ps, ps->p, TJ_ERR_PARSE, "expected '%c' %s, found %s", c, context,
                    found(ps->p, buf, sizeof(buf)));
    ps->p++;
    return TJ_OK;
}

/* Reads a word, upper-cased into @p out (truncated to MAX_WORD - 1), and returns its length. */
static int read_word(parser_t *ps, char out[MAX_WORD])
{
    int n = 0;

    while (is_word_char(ps->p[n])) {
        if (n < MAX_WORD - 1)
            out[n] = (char)toupper((unsigned char)ps->p[n]);
        n++;
    }
    out[n < MAX_WORD - 1 ? n : MAX_WORD - 1] = '\0';
    ps->p += n;
    return n;
}

static const char *strip_prefix(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(s, prefix, n) == 0 ? s + n : s;
}

/* Predefined types by upper-case name without the MPI_ prefix. The table is built on each call
 * because some MPI implementations define the handles as addresses known only at load time. */
static bool lookup_named(const char *name, MPI_Datatype *type)
{
    const struct {
        const char *name;
        MPI_Datatype type;
    } named[] = {
        {"BYTE", MPI_BYTE},
        {"CHAR", MPI_CHAR},
        {"SIGNED_CHAR", MPI_SIGNED_CHAR},
        {"UNSIGNED_CHAR", MPI_UNSIGNED_CHAR},
        {"SHORT", MPI_SHORT},
        {"UNSIGNED_SHORT", MPI_UNSIGNED_SHORT},
        {"INT", MPI_INT},
        {"UNSIGNED", MPI_UNSIGNED},
        {"LONG", MPI_LONG},
        {"UNSIGNED_LONG", MPI_UNSIGNED_LONG},
        {"LONG_LONG", MPI_LONG_LONG},
        {"LONG_LONG_INT", MPI_LONG_LONG_INT},
        {"UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG},
        {"FLOAT", MPI_FLOAT},
        {"DOUBLE", MPI_DOUBLE},
        {"LONG_DOUBLE", MPI_LONG_DOUBLE},
        {"INT8_T", MPI_INT8_T},
        {"INT16_T", MPI_INT16_T},
        {"INT32_T", MPI_INT32_T},
        {"INT64_T", MPI_INT64_T},
        {"UINT8_T", MPI_UINT8_T},
        {"UINT16_T", MPI_UINT16_T},
        {"UINT32_T", MPI_UINT32_T},
        {"UINT64_T", MPI_UINT64_T},
        {"C_BOOL", MPI_C_BOOL},
        {"C_COMPLEX", MPI_C_COMPLEX},
        {"C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX},
        {"C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX},
        {"C_LONG_DOUBLE_COMPLEX", MPI_C_LONG_DOUBLE_COMPLEX},
        {"FLOAT_INT", MPI_FLOAT_INT},
        {"DOUBLE_INT", MPI_DOUBLE_INT},
        {"LONG_INT", MPI_LONG_INT},
        {"2INT", MPI_2INT},
        {"SHORT_INT", MPI_SHORT_INT},
        {"LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT},
        {"PACKED", MPI_PACKED},
        {"WCHAR", MPI_WCHAR},
        {"AINT", MPI_AINT},
        {"OFFSET", MPI_OFFSET},
        {"COUNT", MPI_COUNT},
    };

    name = strip_prefix(name, "MPI_");
    for (size_t i = 0; i < TJ_ARRAY_SIZE(named); i++)
        if (strcmp(name, named[i].name) == 0 && named[i].type != MPI_DATATYPE_NULL) {
            *type = named[i].type;
            return true;
        }
    return false;
}

/* Constructor by name; the MPI function names (MPI_Type_create_hvector, ...) are accepted too. */
static int lookup_ctor(const char *name)
{
    name = strip_prefix(strip_prefix(name, "MPI_TYPE_"), "CREATE_");
    for (int i = 0; i < CT_COUNT; i++)
        if (strcasecmp(name, ctor_names[i]) == 0)
            return i;
    return -1;
}

/* "contiguous, vector, ... or darray": every constructor, from the table, for messages. */
static void ctor_list(char *buf, size_t len)
{
    size_t at = 0;

    buf[0] = '\0';
    for (int i = 0; i < CT_COUNT && at < len; i++) {
        int n = snprintf(buf + at, len - at, "%s%s",
                         i == 0              ? ""
                         : i + 1 == CT_COUNT ? " or "
                                             : ", ",
                         ctor_names[i]);
        if (n < 0)
            break;
        at += (size_t)n;
    }
}

static void name_of(const char *what, int index, char *buf, size_t len)
{
    if (index < 0)
        snprintf(buf, len, "%s", what);
    else
        snprintf(buf, len, "%s[%d]", what, index);
}

/* One decimal integer with an optional sign, exact in 64 bits. */
static tj_status_t parse_factor(parser_t *ps, const char *what, int index, int64_t *out)
{
    const char *at = ps->p;
    bool negative = false;
    uint64_t mag = 0, limit;
    char name[64], buf[48];

    if (*ps->p == '+' || *ps->p == '-') {
        negative = *ps->p == '-';
        ps->p++;
    }
    name_of(what, index, name, sizeof(name));
    if (!isdigit((unsigned char)*ps->p))
        return fail(ps, ps->p, TJ_ERR_PARSE, "expected an integer for %s, found %s", name,
                    found(ps->p, buf, sizeof(buf)));
    limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    while (isdigit((unsigned char)*ps->p)) {
        uint64_t d = (uint64_t)(*ps->p - '0');
        if (mag > (limit - d) / 10)
            return fail(ps, at, TJ_ERR_PARSE, "%s does not fit in 64 bits", name);
        mag = mag * 10 + d;
        ps->p++;
    }
    if (negative)
        *out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    else
        *out = (int64_t)mag;
    return TJ_OK;
}

/* An integer argument: a product of factors (`512*4`), checked against the argument's range so
 * that nothing wraps on its way to MPI. */
static tj_status_t parse_int(parser_t *ps, const char *what, int index, const range_t *r,
                             int64_t *out)
{
    const char *at;
    int64_t v, f;
    char name[64];
    tj_status_t status;

    skip_space(ps);
    at = ps->p;
    if ((status = parse_factor(ps, what, index, &v)) != TJ_OK)
        return status;
    for (;;) {
        const char *factor_at;
        skip_space(ps);
        if (*ps->p != '*')
            break;
        ps->p++;
        skip_space(ps);
        factor_at = ps->p;
        if ((status = parse_factor(ps, what, index, &f)) != TJ_OK)
            return status;
        if (!tj_mul64(v, f, &v)) {
            name_of(what, index, name, sizeof(name));
            return fail(ps, factor_at, TJ_ERR_PARSE, "%s: product does not fit in 64 bits", name);
        }
    }
    if (v < r->lo || v > r->hi) {
        name_of(what, index, name, sizeof(name));
        if (v < r->lo && r->lo == 0)
            return fail(ps, at, TJ_ERR_PARSE, "%s must not be negative, got %lld", name,
                        (long long)v);
        if (v < r->lo && r->lo == 1)
            return fail(ps, at, TJ_ERR_PARSE, "%s must be at least 1, got %lld", name,
                        (long long)v);
        return fail(ps, at, TJ_ERR_PARSE, "%s %lld does not fit in %s", name, (long long)v,
                    r->ctype);
    }
    *out = v;
    return TJ_OK;
}

/* `{v, v, ...}`, possibly empty. */
static tj_status_t parse_list(parser_t *ps, const char *what, const range_t *r, list_t *l)
{
    char ctx[64], buf[48];
    tj_status_t status;

    skip_space(ps);
    l->at = ps->p;
    snprintf(ctx, sizeof(ctx), "to open the list of %s", what);
    if ((status = expect(ps, '{', ctx)) != TJ_OK)
        return status;
    skip_space(ps);
    if (*ps->p == '}') {
        ps->p++;
        return TJ_OK;
    }
    for (;;) {
        int64_t v;
        if (l->n == MAX_LIST)
            return fail(ps, ps->p, TJ_ERR_PARSE, "list of %s longer than %d elements", what,
                        MAX_LIST);
        if (l->n == l->cap) {
            int cap = l->cap ? 2 * l->cap : 16;
            int64_t *grown = realloc(l->v, sizeof(*grown) * (size_t)cap);
            if (grown == NULL)
                return fail(ps, ps->p, TJ_ERR_NOMEM, "out of memory for the list of %s", what);
            l->v = grown;
            l->cap = cap;
        }
        if ((status = parse_int(ps, what, l->n, r, &v)) != TJ_OK)
            return status;
        l->v[l->n++] = v;
        skip_space(ps);
        if (*ps->p == '}') {
            ps->p++;
            return TJ_OK;
        }
        if (*ps->p != ',')
            return fail(ps, ps->p, TJ_ERR_PARSE, "expected ',' or '}' in the list of %s, found %s",
                        what, found(ps->p, buf, sizeof(buf)));
        ps->p++;
    }
}

/* The member types of a struct: `{T, T, ...}`. Members parsed so far stay in @p m on error, so
 * that the caller frees them. */
static tj_status_t parse_members(parser_t *ps, int depth, nodes_t *m)
{
    char buf[48];
    tj_status_t status;

    skip_space(ps);
    m->at = ps->p;
    if ((status = expect(ps, '{', "to open the list of member types")) != TJ_OK)
        return status;
    skip_space(ps);
    if (*ps->p == '}') {
        ps->p++;
        return TJ_OK;
    }
    for (;;) {
        if (m->n == MAX_LIST)
            return fail(ps, ps->p, TJ_ERR_PARSE, "list of member types longer than %d elements",
                        MAX_LIST);
        if (m->n == m->cap) {
            int cap = m->cap ? 2 * m->cap : 16;
            node_t *grown = realloc(m->v, sizeof(*grown) * (size_t)cap);
            if (grown == NULL)
                return fail(ps, ps->p, TJ_ERR_NOMEM, "out of memory for the member types");
            m->v = grown;
            m->cap = cap;
        }
        skip_space(ps);
        m->v[m->n].from = ps->p;
        if ((status = parse_type(ps, depth + 1, &m->v[m->n])) != TJ_OK)
            return status;
        m->v[m->n].to = ps->p;
        m->n++;
        skip_space(ps);
        if (*ps->p == '}') {
            ps->p++;
            return TJ_OK;
        }
        if (*ps->p != ',')
            return fail(ps, ps->p, TJ_ERR_PARSE,
                        "expected ',' or '}' in the list of member types, found %s",
                        found(ps->p, buf, sizeof(buf)));
        ps->p++;
    }
}

static tj_status_t parse_order(parser_t *ps, int *order)
{
    char word[MAX_WORD], buf[48];
    const char *at, *s;
    int n;

    skip_space(ps);
    at = ps->p;
    if (!is_word_char(*ps->p))
        return fail(ps, at, TJ_ERR_PARSE, "expected the order C or F, found %s",
                    found(at, buf, sizeof(buf)));
    n = read_word(ps, word);
    s = strip_prefix(strip_prefix(word, "MPI_"), "ORDER_");
    if (strcmp(s, "C") == 0) {
        *order = MPI_ORDER_C;
    } else if (strcmp(s, "F") == 0 || strcmp(s, "FORTRAN") == 0) {
        *order = MPI_ORDER_FORTRAN;
    } else {
        return fail(ps, at, TJ_ERR_PARSE,
                    "unknown order '%.*s' (expected C, F, MPI_ORDER_C or MPI_ORDER_FORTRAN)", n,
                    at);
    }
    return TJ_OK;
}

/* A darray's distributions, `{block, cyclic, none, ...}` (or MPI_DISTRIBUTE_BLOCK, ...), as
 * the MPI constants. */
static tj_status_t parse_distribs(parser_t *ps, list_t *l)
{
    char word[MAX_WORD], buf[48];
    tj_status_t status;

    skip_space(ps);
    l->at = ps->p;
    if ((status = expect(ps, '{', "to open the list of distributions")) != TJ_OK)
        return status;
    for (;;) {
        const char *at, *w;
        int n;
        skip_space(ps);
        at = ps->p;
        if (!is_word_char(*ps->p))
            return fail(ps, at, TJ_ERR_PARSE, "expected block, cyclic or none, found %s",
                        found(at, buf, sizeof(buf)));
        n = read_word(ps, word);
        w = strip_prefix(strip_prefix(word, "MPI_"), "DISTRIBUTE_");
        if (l->n == MAX_LIST)
            return fail(ps, at, TJ_ERR_PARSE, "list of distributions longer than %d", MAX_LIST);
        if (l->n == l->cap) {
            int cap = l->cap ? 2 * l->cap : 16;
            int64_t *grown = realloc(l->v, sizeof(*grown) * (size_t)cap);
            if (grown == NULL)
                return fail(ps, at, TJ_ERR_NOMEM, "out of memory for the distributions");
            l->v = grown;
            l->cap = cap;
        }
        if (strcmp(w, "BLOCK") == 0)
            l->v[l->n++] = MPI_DISTRIBUTE_BLOCK;
        else if (strcmp(w, "CYCLIC") == 0)
            l->v[l->n++] = MPI_DISTRIBUTE_CYCLIC;
        else if (strcmp(w, "NONE") == 0)
            l->v[l->n++] = MPI_DISTRIBUTE_NONE;
        else
            return fail(ps, at, TJ_ERR_PARSE,
                        "unknown distribution '%.*s' (expected block, cyclic or none)", n, at);
        skip_space(ps);
        if (*ps->p == '}') {
            ps->p++;
            return TJ_OK;
        }
        if (*ps->p != ',')
            return fail(ps, ps->p, TJ_ERR_PARSE,
                        "expected ',' or '}' in the list of distributions, found %s",
                        found(ps->p, buf, sizeof(buf)));
        ps->p++;
    }
}

/* The constructor's arguments, between its parentheses. */
static tj_status_t parse_args(parser_t *ps, int depth, args_t *args)
{
    char ctx[64];
    bool bytes = false;
    tj_status_t status = TJ_OK;

    snprintf(ctx, sizeof(ctx), "after %s", ctor_names[args->kind]);
    TRY(expect(ps, '(', ctx));
    switch (args->kind) {
    case CT_CONTIGUOUS:
        TRY(parse_int(ps, "count", -1, &r_count, &args->a));
        TRY(expect(ps, ',', "after count"));
        break;
    case CT_HVECTOR:
        bytes = true;
        /* fall through */
    case CT_VECTOR:
        TRY(parse_int(ps, "count", -1, &r_count, &args->a));
        TRY(expect(ps, ',', "after count"));
        TRY(parse_int(ps, "block length", -1, &r_count, &args->b));
        TRY(expect(ps, ',', "after block length"));
        TRY(parse_int(ps, "stride", -1, bytes ? &r_aint : &r_int, &args->c));
        TRY(expect(ps, ',', "after stride"));
        break;
    case CT_SUBARRAY:
        TRY(parse_list(ps, "sizes", &r_size, &args->l[0]));
        TRY(expect(ps, ',', "after sizes"));
        TRY(parse_list(ps, "subsizes", &r_size, &args->l[1]));
        TRY(expect(ps, ',', "after subsizes"));
        TRY(parse_list(ps, "starts", &r_count, &args->l[2]));
        TRY(expect(ps, ',', "after starts"));
        TRY(parse_order(ps, &args->order));
        TRY(expect(ps, ',', "after order"));
        break;
    case CT_RESIZED:
        TRY(parse_int(ps, "lower bound", -1, &r_aint, &args->a));
        TRY(expect(ps, ',', "after lower bound"));
        TRY(parse_int(ps, "extent", -1, &r_aint, &args->b));
        TRY(expect(ps, ',', "after extent"));
        break;
    case CT_DUP:
        break;
    case CT_HINDEXED_BLOCK:
        bytes = true;
        /* fall through */
    case CT_INDEXED_BLOCK:
        TRY(parse_int(ps, "block length", -1, &r_count, &args->a));
        TRY(expect(ps, ',', "after block length"));
        TRY(parse_list(ps, "displacements", bytes ? &r_aint : &r_int, &args->l[1]));
        TRY(expect(ps, ',', "after displacements"));
        break;
    case CT_HINDEXED:
    case CT_STRUCT:
        bytes = true;
        /* fall through */
    case CT_INDEXED:
        TRY(parse_list(ps, "block lengths", &r_count, &args->l[0]));
        TRY(expect(ps, ',', "after block lengths"));
        TRY(parse_list(ps, "displacements", bytes ? &r_aint : &r_int, &args->l[1]));
        TRY(expect(ps, ',', "after displacements"));
        break;
    case CT_DARRAY:
        TRY(parse_int(ps, "size", -1, &r_size, &args->a));
        TRY(expect(ps, ',', "after size"));
        TRY(parse_int(ps, "rank", -1, &r_count, &args->b));
        TRY(expect(ps, ',', "after rank"));
        TRY(parse_list(ps, "global sizes", &r_size, &args->l[0]));
        TRY(expect(ps, ',', "after global sizes"));
        TRY(parse_distribs(ps, &args->l[1]));
        TRY(expect(ps, ',', "after distributions"));
        TRY(parse_list(ps, "distribution arguments", &r_count, &args->l[2]));
        TRY(expect(ps, ',', "after distribution arguments"));
        TRY(parse_list(ps, "process grid sizes", &r_size, &args->l[3]));
        TRY(expect(ps, ',', "after process grid sizes"));
        TRY(parse_order(ps, &args->order));
        TRY(expect(ps, ',', "after order"));
        break;
    case CT_COUNT:
        break;
    }
    if (args->kind == CT_STRUCT)
        TRY(parse_members(ps, depth, &args->members));
    else
        TRY(parse_type(ps, depth + 1, &args->child));
    snprintf(ctx, sizeof(ctx), "to close %s(", ctor_names[args->kind]);
    TRY(expect(ps, ')', ctx));
cleanup:
    return status;
}

/* Size, extent and a bound on every byte offset of a type, in 64 bits. */
typedef struct {
    int64_t size, extent, reach;
} shape_t;

static tj_status_t shape_of(parser_t *ps, const char *at, MPI_Datatype type, shape_t *s)
{
    MPI_Count size, lb, extent, tlb, textent;
    int rc;

    if ((rc = PMPI_Type_size_x(type, &size)) != MPI_SUCCESS)
        return fail_mpi(ps, at, rc, "MPI_Type_size_x");
    if ((rc = PMPI_Type_get_extent_x(type, &lb, &extent)) != MPI_SUCCESS)
        return fail_mpi(ps, at, rc, "MPI_Type_get_extent_x");
    if ((rc = PMPI_Type_get_true_extent_x(type, &tlb, &textent)) != MPI_SUCCESS)
        return fail_mpi(ps, at, rc, "MPI_Type_get_true_extent_x");
    s->size = size;
    s->extent = extent;
    /* Each term is far below 2^63 for any type MPI could describe, so the sums cannot wrap. A
     * type without data has no true extent (Open MPI reports a sentinel), only bounds. */
    s->reach = TJ_MAX(tj_abs64(lb), tj_abs64(lb + extent));
    if (size > 0)
        s->reach = TJ_MAX(s->reach, TJ_MAX(tj_abs64(tlb), tj_abs64(tlb + textent)));
    return TJ_OK;
}

/* acc += |a| * |b|, false on overflow. */
static bool add_product(int64_t *acc, int64_t a, int64_t b)
{
    int64_t p;
    if (a == INT64_MIN || b == INT64_MIN)
        return false; /* its magnitude has no int64_t */
    return tj_mul64(tj_abs64(a), tj_abs64(b), &p) && tj_add64(*acc, p, acc);
}

/* Refuses types whose size or byte offsets would not fit in 64 bits, which MPI libraries do not
 * all detect (they wrap silently). The offset bound over-estimates, which only matters within a
 * factor of a few of 2^63 bytes. */
static tj_status_t check_limits(parser_t *ps, const args_t *args)
{
    shape_t c = {0, 0, 0};
    int64_t size = 0, reach = 0, elems = 1, max_bl = 0, max_displ = 0;
    bool ok = true;
    tj_status_t status = TJ_OK;

    if (args->kind != CT_STRUCT)
        TRY(shape_of(ps, args->at, args->child.type, &c));
    for (int i = 0; i < args->l[0].n; i++)
        max_bl = TJ_MAX(max_bl, args->l[0].v[i]);
    for (int i = 0; i < args->l[1].n; i++) {
        int64_t v = args->l[1].v[i];
        /* INT64_MIN has no int64_t magnitude; INT64_MAX stands in and still overflows below. */
        max_displ = TJ_MAX(max_displ, v == INT64_MIN ? INT64_MAX : tj_abs64(v));
    }

    switch (args->kind) {
    case CT_CONTIGUOUS:
        ok = tj_mul64(args->a, c.size, &size) && add_product(&reach, args->a, c.extent);
        break;
    case CT_VECTOR:
    case CT_HVECTOR: {
        int64_t stride = args->c;
        ok = tj_mul64(args->a, args->b, &elems) && tj_mul64(elems, c.size, &size) &&
             (args->kind == CT_HVECTOR || tj_mul64(stride, c.extent, &stride)) &&
             add_product(&reach, args->a, stride) && add_product(&reach, args->b, c.extent);
        break;
    }
    case CT_SUBARRAY:
        for (int d = 0; d < args->l[0].n && ok; d++)
            ok = tj_mul64(elems, args->l[0].v[d], &elems);
        ok = ok && add_product(&reach, elems, c.extent);
        elems = 1;
        for (int d = 0; d < args->l[1].n && ok; d++)
            ok = tj_mul64(elems, args->l[1].v[d], &elems);
        ok = ok && tj_mul64(elems, c.size, &size);
        break;
    case CT_RESIZED:
        size = c.size;
        ok = add_product(&reach, args->a, 1) && add_product(&reach, args->b, 1);
        break;
    case CT_DARRAY:
        /* At most the whole global array, every byte of it. */
        for (int d = 0; d < args->l[0].n && ok; d++)
            ok = tj_mul64(elems, args->l[0].v[d], &elems);
        ok = ok && tj_mul64(elems, c.size, &size) && add_product(&reach, elems, c.extent);
        break;
    case CT_DUP:
        size = c.size;
        break;
    case CT_INDEXED_BLOCK:
    case CT_HINDEXED_BLOCK:
        ok = tj_mul64(args->l[1].n, args->a, &elems) && tj_mul64(elems, c.size, &size) &&
             add_product(&reach, max_displ, args->kind == CT_INDEXED_BLOCK ? c.extent : 1) &&
             add_product(&reach, args->a, c.extent);
        break;
    case CT_INDEXED:
    case CT_HINDEXED:
        elems = 0;
        for (int i = 0; i < args->l[0].n && ok; i++)
            ok = tj_add64(elems, args->l[0].v[i], &elems);
        ok = ok && tj_mul64(elems, c.size, &size) &&
             add_product(&reach, max_displ, args->kind == CT_INDEXED ? c.extent : 1) &&
             add_product(&reach, max_bl, c.extent);
        break;
    case CT_STRUCT:
        for (int i = 0; i < args->members.n && ok; i++) {
            shape_t m;
            int64_t r = 0;
            TRY(shape_of(ps, args->at, args->members.v[i].type, &m));
            ok = add_product(&size, args->l[0].v[i], m.size) &&
                 add_product(&r, args->l[1].v[i], 1) &&
                 add_product(&r, args->l[0].v[i], m.extent) && tj_add64(r, m.reach, &r);
            reach = TJ_MAX(reach, r);
        }
        break;
    case CT_COUNT:
        break;
    }
    if (ok && args->kind != CT_STRUCT)
        ok = tj_add64(reach, c.reach, &reach);
    if (!ok || reach > AINT_MAX_V)
        status = fail(ps, args->at, TJ_ERR_PARSE,
                      "%s: the type's size or byte offsets do not fit in 64 bits",
                      ctor_names[args->kind]);
cleanup:
    return status;
}

/* Checks that MPI states as preconditions, so that they get a column rather than an MPI error
 * (or, with the default error handler, an abort). */
static tj_status_t check_args(parser_t *ps, const args_t *args)
{
    const list_t *l = args->l;

    switch (args->kind) {
    case CT_SUBARRAY:
        if (l[0].n == 0)
            return fail(ps, l[0].at, TJ_ERR_PARSE, "subarray needs at least one dimension");
        if (l[1].n != l[0].n)
            return fail(ps, l[1].at, TJ_ERR_PARSE, "subarray has %d sizes but %d subsizes", l[0].n,
                        l[1].n);
        if (l[2].n != l[0].n)
            return fail(ps, l[2].at, TJ_ERR_PARSE, "subarray has %d sizes but %d starts", l[0].n,
                        l[2].n);
        for (int d = 0; d < l[0].n; d++) {
            if (l[1].v[d] > l[0].v[d])
                return fail(ps, l[1].at, TJ_ERR_PARSE,
                            "subsizes[%d] = %lld exceeds sizes[%d] = %lld", d, (long long)l[1].v[d],
                            d, (long long)l[0].v[d]);
            if (l[2].v[d] > l[0].v[d] - l[1].v[d])
                return fail(ps, l[2].at, TJ_ERR_PARSE,
                            "starts[%d] = %lld puts the subarray past sizes[%d] = %lld", d,
                            (long long)l[2].v[d], d, (long long)l[0].v[d]);
        }
        break;
    case CT_INDEXED:
    case CT_HINDEXED:
        if (l[1].n != l[0].n)
            return fail(ps, l[1].at, TJ_ERR_PARSE, "%s has %d block lengths but %d displacements",
                        ctor_names[args->kind], l[0].n, l[1].n);
        break;
    case CT_DARRAY: {
        int64_t procs = 1;
        if (l[0].n == 0)
            return fail(ps, l[0].at, TJ_ERR_PARSE, "darray needs at least one dimension");
        for (int i = 1; i < 4; i++)
            if (l[i].n != l[0].n)
                return fail(ps, l[i].at, TJ_ERR_PARSE, "darray has %d global sizes but %d %s",
                            l[0].n, l[i].n,
                            i == 1   ? "distributions"
                            : i == 2 ? "distribution arguments"
                                     : "process grid sizes");
        if (args->b >= args->a)
            return fail(ps, args->at, TJ_ERR_PARSE, "darray rank %lld is not below size %lld",
                        (long long)args->b, (long long)args->a);
        for (int d = 0; d < l[0].n; d++) {
            int64_t g = l[0].v[d], darg = l[2].v[d], p = l[3].v[d];
            if (!tj_mul64(procs, p, &procs))
                procs = INT64_MAX;
            if (l[1].v[d] == MPI_DISTRIBUTE_NONE && p != 1)
                return fail(ps, l[3].at, TJ_ERR_PARSE,
                            "dimension %d is not distributed but has %lld processes", d,
                            (long long)p);
            if (l[1].v[d] == MPI_DISTRIBUTE_BLOCK && darg > 0 && darg * p < g)
                return fail(ps, l[2].at, TJ_ERR_PARSE,
                            "blocks of %lld on %lld processes do not cover dimension %d of %lld",
                            (long long)darg, (long long)p, d, (long long)g);
        }
        if (procs != args->a)
            return fail(ps, l[3].at, TJ_ERR_PARSE,
                        "the process grid has %lld processes, not size %lld", (long long)procs,
                        (long long)args->a);
        break;
    }
    case CT_STRUCT:
        if (l[1].n != l[0].n)
            return fail(ps, l[1].at, TJ_ERR_PARSE,
                        "struct has %d block lengths but %d displacements", l[0].n, l[1].n);
        if (args->members.n != l[0].n)
            return fail(ps, args->members.at, TJ_ERR_PARSE,
                        "struct has %d block lengths but %d member types", l[0].n, args->members.n);
        break;
    default:
        break;
    }
    return check_limits(ps, args);
}

static int *to_int(const list_t *l)
{
    int *v = malloc(sizeof(*v) * (size_t)(l->n > 0 ? l->n : 1));
    if (v != NULL)
        for (int i = 0; i < l->n; i++)
            v[i] = (int)l->v[i];
    return v;
}

static MPI_Aint *to_aint(const list_t *l)
{
    MPI_Aint *v = malloc(sizeof(*v) * (size_t)(l->n > 0 ? l->n : 1));
    if (v != NULL)
        for (int i = 0; i < l->n; i++)
            v[i] = (MPI_Aint)l->v[i];
    return v;
}

/* A member's text as it counts for likeness, into a new string: upper case, without white space,
 * comments and the MPI_ prefix of a word. NULL when out of memory. */
static char *alike_form(const node_t *n)
{
    char *out = malloc((size_t)(n->to - n->from) + 1), *o = out;
    bool word_start = true;

    if (out == NULL)
        return NULL;
    for (const char *q = n->from; q < n->to;) {
        if (*q == '#') {
            while (q < n->to && *q != '\n')
                q++;
            word_start = true;
            continue;
        }
        if (isspace((unsigned char)*q)) {
            q++;
            word_start = true;
            continue;
        }
        if (word_start && n->to - q > 4 && strncasecmp(q, "MPI_", 4) == 0 && is_word_char(q[4]))
            q += 4;
        word_start = !is_word_char(*q);
        *o++ = (char)toupper((unsigned char)*q++);
    }
    *o = '\0';
    return out;
}

/* Whether every member of a struct is written alike: the struct is then made of one datatype,
 * as by a program that builds the member once and passes it for each. It matters on MPICH, whose
 * datatype engine (Yaksa) makes a struct of one datatype an hindexed, without the alignment
 * padding of a struct of distinct members, even of distinct members of one layout. */
static tj_status_t members_alike(parser_t *ps, const nodes_t *m, bool *alike)
{
    char *first, *other;
    tj_status_t status = TJ_OK;

    *alike = false;
    if (m->n < 2)
        return TJ_OK;
    if ((first = alike_form(&m->v[0])) == NULL)
        return fail(ps, m->at, TJ_ERR_NOMEM, "out of memory comparing the member types");
    *alike = true;
    for (int i = 1; i < m->n && *alike; i++) {
        if ((other = alike_form(&m->v[i])) == NULL) {
            status = fail(ps, m->at, TJ_ERR_NOMEM, "out of memory comparing the member types");
            *alike = false;
            break;
        }
        *alike = strcmp(first, other) == 0;
        free(other);
    }
    free(first);
    return status;
}

/* Calls the MPI constructor on checked arguments. */
static tj_status_t build(parser_t *ps, const args_t *args, MPI_Datatype *out)
{
    const list_t *l = args->l;
    MPI_Datatype child = args->child.type, *types = NULL;
    int *i0 = NULL, *i1 = NULL, *i2 = NULL, *i3 = NULL, rc = MPI_SUCCESS;
    MPI_Aint *a1 = NULL;
    const char *call = "";
    tj_status_t status = TJ_OK;

    /* Every list a constructor might need, converted to the C type MPI takes. */
    i0 = to_int(&l[0]);
    i1 = to_int(&l[1]);
    i2 = to_int(&l[2]);
    i3 = to_int(&l[3]);
    a1 = to_aint(&l[1]);
    types = malloc(sizeof(*types) * (size_t)(args->members.n > 0 ? args->members.n : 1));
    if (i0 == NULL || i1 == NULL || i2 == NULL || i3 == NULL || a1 == NULL || types == NULL) {
        status = fail(ps, args->at, TJ_ERR_NOMEM, "out of memory for the arguments of %s",
                      ctor_names[args->kind]);
        goto cleanup;
    }
    for (int i = 0; i < args->members.n; i++)
        types[i] = args->members.v[i].type;
    if (args->kind == CT_STRUCT) {
        bool alike;
        if ((status = members_alike(ps, &args->members, &alike)) != TJ_OK)
            goto cleanup;
        for (int i = 1; alike && i < args->members.n; i++)
            types[i] = types[0];
    }

    switch (args->kind) {
    case CT_CONTIGUOUS:
        call = "MPI_Type_contiguous";
        rc = PMPI_Type_contiguous((int)args->a, child, out);
        break;
    case CT_VECTOR:
        call = "MPI_Type_vector";
        rc = PMPI_Type_vector((int)args->a, (int)args->b, (int)args->c, child, out);
        break;
    case CT_HVECTOR:
        call = "MPI_Type_create_hvector";
        rc = PMPI_Type_create_hvector((int)args->a, (int)args->b, (MPI_Aint)args->c, child, out);
        break;
    case CT_SUBARRAY:
        call = "MPI_Type_create_subarray";
        rc = PMPI_Type_create_subarray(l[0].n, i0, i1, i2, args->order, child, out);
        break;
    case CT_RESIZED:
        call = "MPI_Type_create_resized";
        rc = PMPI_Type_create_resized(child, (MPI_Aint)args->a, (MPI_Aint)args->b, out);
        break;
    case CT_DUP:
        call = "MPI_Type_dup";
        rc = PMPI_Type_dup(child, out);
        break;
    case CT_INDEXED_BLOCK:
        call = "MPI_Type_create_indexed_block";
        rc = PMPI_Type_create_indexed_block(l[1].n, (int)args->a, i1, child, out);
        break;
    case CT_HINDEXED_BLOCK:
        call = "MPI_Type_create_hindexed_block";
        rc = PMPI_Type_create_hindexed_block(l[1].n, (int)args->a, a1, child, out);
        break;
    case CT_INDEXED:
        call = "MPI_Type_indexed";
        rc = PMPI_Type_indexed(l[0].n, i0, i1, child, out);
        break;
    case CT_HINDEXED:
        call = "MPI_Type_create_hindexed";
        rc = PMPI_Type_create_hindexed(l[0].n, i0, a1, child, out);
        break;
    case CT_STRUCT:
        call = "MPI_Type_create_struct";
        rc = PMPI_Type_create_struct(l[0].n, i0, a1, types, out);
        break;
    case CT_DARRAY:
        /* A distribution argument of 0 is the default. */
        for (int d = 0; d < l[2].n; d++)
            if (i2[d] == 0)
                i2[d] = MPI_DISTRIBUTE_DFLT_DARG;
        call = "MPI_Type_create_darray";
        rc = PMPI_Type_create_darray((int)args->a, (int)args->b, l[0].n, i0, i1, i2, i3,
                                     args->order, child, out);
        break;
    case CT_COUNT:
        break;
    }
    if (rc != MPI_SUCCESS)
        status = fail_mpi(ps, args->at, rc, call);
cleanup:
    free(i3);
    free(types);
    free(a1);
    free(i2);
    free(i1);
    free(i0);
    return status;
}

static void release(node_t *node)
{
    if (node->owned)
        PMPI_Type_free(&node->type);
    node->owned = false;
}

static tj_status_t parse_ctor(parser_t *ps, ctor_t kind, const char *at, int depth, node_t *out)
{
    args_t args = {.kind = kind, .at = at, .order = MPI_ORDER_C};
    MPI_Datatype type;
    tj_status_t status;

    args.child.type = MPI_DATATYPE_NULL;
    TRY(parse_args(ps, depth, &args));
    TRY(check_args(ps, &args));
    TRY(build(ps, &args, &type));
    out->type = type;
    out->owned = true;
cleanup:
    /* The new type holds its own references to its children. */
    for (int i = 0; i < args.members.n; i++)
        release(&args.members.v[i]);
    free(args.members.v);
    release(&args.child);
    for (int i = 0; i < 4; i++)
        free(args.l[i].v);
    return status;
}

static tj_status_t parse_type(parser_t *ps, int depth, node_t *out)
{
    char word[MAX_WORD], buf[48];
    const char *at;
    int n, ctor;

    skip_space(ps);
    at = ps->p;
    if (depth > MAX_DEPTH)
        return fail(ps, at, TJ_ERR_PARSE, "types nested deeper than %d levels", MAX_DEPTH);
    if (!is_word_char(*ps->p))
        return fail(ps, at, TJ_ERR_PARSE, "expected a type name or constructor, found %s",
                    found(at, buf, sizeof(buf)));
    n = read_word(ps, word);
    if ((ctor = lookup_ctor(word)) >= 0)
        return parse_ctor(ps, (ctor_t)ctor, at, depth, out);
    skip_space(ps);
    if (*ps->p == '(') {
        char ctors[256];
        ctor_list(ctors, sizeof(ctors));
        return fail(ps, at, TJ_ERR_PARSE, "unknown constructor '%.*s' (expected %s)", n, at, ctors);
    }
    if (!lookup_named(word, &out->type))
        return fail(ps, at, TJ_ERR_PARSE, "unknown type name '%.*s'", n, at);
    out->owned = false;
    return TJ_OK;
}

/* Errors of type constructors go to MPI_COMM_WORLD's handler (MPI-3) or MPI_COMM_SELF's (MPI-4);
 * both are switched to MPI_ERRORS_RETURN so that a rejected argument comes back as a status. */
typedef struct {
    MPI_Errhandler world, self;
} handlers_t;

static void errors_return(handlers_t *h)
{
    PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &h->world);
    PMPI_Comm_get_errhandler(MPI_COMM_SELF, &h->self);
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
}

static void errors_restore(handlers_t *h)
{
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, h->self);
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, h->world);
    PMPI_Errhandler_free(&h->self);
    PMPI_Errhandler_free(&h->world);
}

tj_status_t tj_typedesc_parse(const char *text, MPI_Datatype *type, char *err, size_t errlen)
{
    parser_t ps = {text, text, err, errlen};
    node_t node = {MPI_DATATYPE_NULL, false, NULL, NULL};
    handlers_t saved;
    char buf[48];
    int initialized = 0, finalized = 0, rc;
    tj_status_t status;

    if (text == NULL || type == NULL) {
        tj_log_error("type description: no text or no output handle");
        return TJ_ERR_INVALID;
    }
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized || finalized)
        return fail(&ps, text, TJ_ERR_INVALID, "MPI is not initialised");

    errors_return(&saved);
    if ((status = parse_type(&ps, 0, &node)) != TJ_OK)
        goto out_restore;
    skip_space(&ps);
    if (*ps.p != '\0') {
        status = fail(&ps, ps.p, TJ_ERR_PARSE, "unexpected %s after the type",
                      found(ps.p, buf, sizeof(buf)));
        goto out_release;
    }
    /* A bare named type is duplicated so that the caller can free every result alike. */
    if (!node.owned) {
        MPI_Datatype named = node.type;
        if ((rc = PMPI_Type_dup(named, &node.type)) != MPI_SUCCESS) {
            status = fail_mpi(&ps, text, rc, "MPI_Type_dup");
            goto out_restore;
        }
        node.owned = true;
    }
    if ((rc = PMPI_Type_commit(&node.type)) != MPI_SUCCESS) {
        status = fail_mpi(&ps, text, rc, "MPI_Type_commit");
        goto out_release;
    }
    *type = node.type;
    node.owned = false;
out_release:
    release(&node);
out_restore:
    errors_restore(&saved);
    return status;
}

tj_status_t tj_typedesc_parse_fused(const char *text, MPI_Datatype *types, int max, int *n,
                                    char *err, size_t errlen)
{
    parser_t ps = {text, text, err, errlen};
    node_t nodes[TJ_TYPEDESC_FUSED_MAX];
    handlers_t saved;
    char word[MAX_WORD], buf[48];
    const char *at;
    int count = 0, initialized = 0, finalized = 0, rc;
    tj_status_t status = TJ_OK;

    if (text == NULL || types == NULL || n == NULL || max < 2 || max > TJ_TYPEDESC_FUSED_MAX) {
        tj_log_error("type description: bad arguments for a fused set");
        return TJ_ERR_INVALID;
    }
    skip_space(&ps);
    at = ps.p;
    if (!is_word_char(*ps.p) || read_word(&ps, word) != 5 || strcasecmp(word, "fused") != 0)
        return TJ_ERR_NOT_FOUND;
    skip_space(&ps);
    if (*ps.p != '(')
        return TJ_ERR_NOT_FOUND;
    ps.p++;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized || finalized)
        return fail(&ps, text, TJ_ERR_INVALID, "MPI is not initialised");
    errors_return(&saved);
    for (;;) {
        if (count == max) {
            status = fail(&ps, ps.p, TJ_ERR_PARSE, "a fused set has at most %d members", max);
            goto out_release;
        }
        nodes[count] = (node_t){MPI_DATATYPE_NULL, false, NULL, NULL};
        if ((status = parse_type(&ps, 1, &nodes[count])) != TJ_OK)
            goto out_release;
        count++;
        skip_space(&ps);
        if (*ps.p == ')') {
            ps.p++;
            break;
        }
        if (*ps.p != ',') {
            status = fail(&ps, ps.p, TJ_ERR_PARSE,
                          "expected ',' or ')' in the members of fused(, found %s",
                          found(ps.p, buf, sizeof(buf)));
            goto out_release;
        }
        ps.p++;
    }
    skip_space(&ps);
    if (*ps.p != '\0') {
        status = fail(&ps, ps.p, TJ_ERR_PARSE, "unexpected %s after the fused set",
                      found(ps.p, buf, sizeof(buf)));
        goto out_release;
    }
    if (count < 2) {
        status = fail(&ps, at, TJ_ERR_PARSE, "a fused set has at least 2 members");
        goto out_release;
    }
    /* As tj_typedesc_parse: every result is a committed type of the caller's. */
    for (int i = 0; i < count; i++) {
        if (!nodes[i].owned) {
            MPI_Datatype named = nodes[i].type;
            if ((rc = PMPI_Type_dup(named, &nodes[i].type)) != MPI_SUCCESS) {
                nodes[i].type = MPI_DATATYPE_NULL;
                status = fail_mpi(&ps, text, rc, "MPI_Type_dup");
                goto out_release;
            }
            nodes[i].owned = true;
        }
        if ((rc = PMPI_Type_commit(&nodes[i].type)) != MPI_SUCCESS) {
            status = fail_mpi(&ps, text, rc, "MPI_Type_commit");
            goto out_release;
        }
    }
    for (int i = 0; i < count; i++)
        types[i] = nodes[i].type;
    *n = count;
    count = 0;
out_release:
    for (int i = 0; i < count; i++)
        release(&nodes[i]);
    errors_restore(&saved);
    return status;
}

tj_status_t tj_typedesc_each_line(const char *path,
                                  int (*fn)(int line, const char *text, void *arg), void *arg)
{
    FILE *f;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int number = 0;
    bool stopped = false;
    tj_status_t status = TJ_OK;

    if (path == NULL || fn == NULL) {
        tj_log_error("type descriptions: no path or no callback");
        return TJ_ERR_INVALID;
    }
    if ((f = fopen(path, "r")) == NULL) {
        int err = errno;
        tj_log_debug("type descriptions: cannot open %s: %s", path, strerror(err));
        errno = err;
        return TJ_ERR_IO;
    }
    while (!stopped && (len = getline(&line, &cap, f)) >= 0) {
        char *hash = memchr(line, '#', (size_t)len);
        size_t n = hash != NULL ? (size_t)(hash - line) : (size_t)len;
        size_t first = 0;

        number++;
        /* A NUL byte would end the text early and hide the rest of the line: say so. */
        if (memchr(line, '\0', n) != NULL) {
            stopped = fn(number, NULL, arg) != 0;
            continue;
        }
        /* Trailing white space (the newline among it) goes; leading white space stays so that
         * a parser's columns still match the file. */
        while (n > 0 && isspace((unsigned char)line[n - 1]))
            n--;
        line[n] = '\0';
        while (first < n && isspace((unsigned char)line[first]))
            first++;
        if (first == n)
            continue;
        stopped = fn(number, line, arg) != 0;
    }
    int err = errno;
    if (!stopped && ferror(f)) {
        tj_log_debug("type descriptions: cannot read %s: %s", path, strerror(err));
        status = TJ_ERR_IO;
    }
    free(line);
    fclose(f);
    errno = err; /* the caller may say why reading failed */
    return status;
}
