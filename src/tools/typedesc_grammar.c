/* SPDX-License-Identifier: BSD-3-Clause */
/* The grammar of type descriptions, read by recursive descent: a type is a predefined name or a
 * constructor with its arguments (integers, lists of them, orders, distributions, member types
 * and the types they are made of). */
#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "typedesc_internal.h"
#include "util/common.h"

/* Deep enough for any real type, shallow enough that the recursion cannot exhaust the stack. */
#define MAX_DEPTH 64
/* Longest list of integers or member types; longer lists are more likely a runaway generator. */
#define MAX_LIST (1 << 20)

/* Accepted values of one integer argument and the C type it is passed as. */
typedef struct {
    int64_t lo, hi;
    const char *ctype;
} range_t;

static const range_t r_count = {0, INT_MAX, "int"};
static const range_t r_int = {INT_MIN, INT_MAX, "int"};
static const range_t r_size = {1, INT_MAX, "int"};
static const range_t r_aint = {AINT_MIN_V, AINT_MAX_V, "MPI_Aint"};

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
        return tj_typedesc_fail(ps, ps->p, TJ_ERR_PARSE, "expected an integer for %s, found %s",
                                name, tj_typedesc_found(ps->p, buf, sizeof(buf)));
    limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    while (isdigit((unsigned char)*ps->p)) {
        uint64_t d = (uint64_t)(*ps->p - '0');
        if (mag > (limit - d) / 10)
            return tj_typedesc_fail(ps, at, TJ_ERR_PARSE, "%s does not fit in 64 bits", name);
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

    tj_typedesc_skip_space(ps);
    at = ps->p;
    if ((status = parse_factor(ps, what, index, &v)) != TJ_OK)
        return status;
    for (;;) {
        const char *factor_at;
        tj_typedesc_skip_space(ps);
        if (*ps->p != '*')
            break;
        ps->p++;
        tj_typedesc_skip_space(ps);
        factor_at = ps->p;
        if ((status = parse_factor(ps, what, index, &f)) != TJ_OK)
            return status;
        if (!tj_mul64(v, f, &v)) {
            name_of(what, index, name, sizeof(name));
            return tj_typedesc_fail(ps, factor_at, TJ_ERR_PARSE,
                                    "%s: product does not fit in 64 bits", name);
        }
    }
    if (v < r->lo || v > r->hi) {
        name_of(what, index, name, sizeof(name));
        if (v < r->lo && r->lo == 0)
            return tj_typedesc_fail(ps, at, TJ_ERR_PARSE, "%s must not be negative, got %lld", name,
                                    (long long)v);
        if (v < r->lo && r->lo == 1)
            return tj_typedesc_fail(ps, at, TJ_ERR_PARSE, "%s must be at least 1, got %lld", name,
                                    (long long)v);
        return tj_typedesc_fail(ps, at, TJ_ERR_PARSE, "%s %lld does not fit in %s", name,
                                (long long)v, r->ctype);
    }
    *out = v;
    return TJ_OK;
}

/* The opening brace of a list of @p what; *closed when the list is `{}` and @p may_be_empty. */
static tj_status_t list_open(parser_t *ps, const char *what, bool may_be_empty, const char **at,
                             bool *closed)
{
    char ctx[64];
    tj_status_t status;

    tj_typedesc_skip_space(ps);
    *at = ps->p;
    snprintf(ctx, sizeof(ctx), "to open the list of %s", what);
    if ((status = tj_typedesc_expect(ps, '{', ctx)) != TJ_OK)
        return status;
    tj_typedesc_skip_space(ps);
    *closed = may_be_empty && *ps->p == '}';
    if (*closed)
        ps->p++;
    return TJ_OK;
}

/* After an element of a list of @p what: past the comma, or *closed past the closing brace. */
static tj_status_t list_next(parser_t *ps, const char *what, bool *closed)
{
    char buf[48];

    tj_typedesc_skip_space(ps);
    *closed = *ps->p == '}';
    if (*ps->p != '}' && *ps->p != ',')
        return tj_typedesc_fail(ps, ps->p, TJ_ERR_PARSE,
                                "expected ',' or '}' in the list of %s, found %s", what,
                                tj_typedesc_found(ps->p, buf, sizeof(buf)));
    ps->p++;
    return TJ_OK;
}

/* Room for element @p n of a list of @p what whose array @p v holds *cap elements of @p size
 * bytes: the array itself, grown by doubling up to MAX_LIST elements; NULL with *status on
 * failure (@p v is then still the list's). */
static void *list_room(parser_t *ps, const char *what, void *v, size_t size, int n, int *cap,
                       tj_status_t *status)
{
    if (n == MAX_LIST) {
        *status = tj_typedesc_fail(ps, ps->p, TJ_ERR_PARSE, "list of %s longer than %d elements",
                                   what, MAX_LIST);
        return NULL;
    }
    if (n == *cap) {
        int grown_cap = *cap ? 2 * *cap : 16;
        void *grown = realloc(v, size * (size_t)grown_cap);
        if (grown == NULL) {
            *status =
                tj_typedesc_fail(ps, ps->p, TJ_ERR_NOMEM, "out of memory for the list of %s", what);
            return NULL;
        }
        v = grown;
        *cap = grown_cap;
    }
    return v;
}

/* Parses one element of a list of @p what onto the end of the list @p list; @p arg is what the
 * kind of list needs (a range, a depth). */
typedef tj_status_t (*element_fn)(parser_t *ps, const char *what, void *list, const void *arg);

/* A list of @p what, `{e, e, ...}` (`{}` when @p may_be_empty), each element parsed by
 * @p element onto @p list; *at is where it opens. Elements parsed so far stay in @p list on
 * error, so that the caller frees them. */
static tj_status_t parse_elements(parser_t *ps, const char *what, bool may_be_empty,
                                  const char **at, element_fn element, void *list, const void *arg)
{
    tj_status_t status;
    bool closed;

    if ((status = list_open(ps, what, may_be_empty, at, &closed)) != TJ_OK)
        return status;
    while (!closed) {
        if ((status = element(ps, what, list, arg)) != TJ_OK)
            return status;
        if ((status = list_next(ps, what, &closed)) != TJ_OK)
            return status;
    }
    return TJ_OK;
}

/* An integer in the range @p arg. */
static tj_status_t int_element(parser_t *ps, const char *what, void *list, const void *arg)
{
    list_t *l = list;
    tj_status_t status = TJ_OK;
    int64_t *v = list_room(ps, what, l->v, sizeof(*v), l->n, &l->cap, &status);

    if (v == NULL)
        return status;
    l->v = v;
    if ((status = parse_int(ps, what, l->n, arg, &l->v[l->n])) != TJ_OK)
        return status;
    l->n++;
    return TJ_OK;
}

/* `{v, v, ...}`, possibly empty. */
static tj_status_t parse_list(parser_t *ps, const char *what, const range_t *r, list_t *l)
{
    return parse_elements(ps, what, true, &l->at, int_element, l, r);
}

/* A member type, with its text, at the depth *@p arg of the struct. */
static tj_status_t member_element(parser_t *ps, const char *what, void *list, const void *arg)
{
    nodes_t *m = list;
    const int *depth = arg;
    tj_status_t status = TJ_OK;
    node_t *v = list_room(ps, what, m->v, sizeof(*v), m->n, &m->cap, &status);

    if (v == NULL)
        return status;
    m->v = v;
    tj_typedesc_skip_space(ps);
    m->v[m->n].from = ps->p;
    if ((status = tj_typedesc_parse_type(ps, *depth + 1, &m->v[m->n])) != TJ_OK)
        return status;
    m->v[m->n].to = ps->p;
    m->n++;
    return TJ_OK;
}

/* The member types of a struct: `{T, T, ...}`. Members parsed so far stay in @p m on error, so
 * that the caller frees them. */
static tj_status_t parse_members(parser_t *ps, int depth, nodes_t *m)
{
    return parse_elements(ps, "member types", true, &m->at, member_element, m, &depth);
}

static tj_status_t parse_order(parser_t *ps, int *order)
{
    char word[MAX_WORD], buf[48];
    const char *at, *s;
    int n;

    tj_typedesc_skip_space(ps);
    at = ps->p;
    if (!tj_typedesc_is_word_char(*ps->p))
        return tj_typedesc_fail(ps, at, TJ_ERR_PARSE, "expected the order C or F, found %s",
                                tj_typedesc_found(at, buf, sizeof(buf)));
    n = tj_typedesc_read_word(ps, word);
    s = tj_typedesc_strip_prefix(tj_typedesc_strip_prefix(word, "MPI_"), "ORDER_");
    if (strcmp(s, "C") == 0) {
        *order = MPI_ORDER_C;
    } else if (strcmp(s, "F") == 0 || strcmp(s, "FORTRAN") == 0) {
        *order = MPI_ORDER_FORTRAN;
    } else {
        return tj_typedesc_fail(
            ps, at, TJ_ERR_PARSE,
            "unknown order '%.*s' (expected C, F, MPI_ORDER_C or MPI_ORDER_FORTRAN)", n, at);
    }
    return TJ_OK;
}

/* A distribution: block, cyclic or none (or MPI_DISTRIBUTE_BLOCK, ...), as the MPI constant. */
static tj_status_t distrib_element(parser_t *ps, const char *what, void *list, const void *arg)
{
    list_t *l = list;
    char word[MAX_WORD], buf[48];
    const char *at, *w;
    tj_status_t status = TJ_OK;
    int64_t *v;
    int n;

    (void)arg;
    tj_typedesc_skip_space(ps);
    at = ps->p;
    if ((v = list_room(ps, what, l->v, sizeof(*v), l->n, &l->cap, &status)) == NULL)
        return status;
    l->v = v;
    if (!tj_typedesc_is_word_char(*ps->p))
        return tj_typedesc_fail(ps, at, TJ_ERR_PARSE, "expected block, cyclic or none, found %s",
                                tj_typedesc_found(at, buf, sizeof(buf)));
    n = tj_typedesc_read_word(ps, word);
    w = tj_typedesc_strip_prefix(tj_typedesc_strip_prefix(word, "MPI_"), "DISTRIBUTE_");
    if (strcmp(w, "BLOCK") == 0)
        l->v[l->n++] = MPI_DISTRIBUTE_BLOCK;
    else if (strcmp(w, "CYCLIC") == 0)
        l->v[l->n++] = MPI_DISTRIBUTE_CYCLIC;
    else if (strcmp(w, "NONE") == 0)
        l->v[l->n++] = MPI_DISTRIBUTE_NONE;
    else
        return tj_typedesc_fail(ps, at, TJ_ERR_PARSE,
                                "unknown distribution '%.*s' (expected block, cyclic or none)", n,
                                at);
    return TJ_OK;
}

/* A darray's distributions, `{block, cyclic, none, ...}`, never empty. */
static tj_status_t parse_distribs(parser_t *ps, list_t *l)
{
    return parse_elements(ps, "distributions", false, &l->at, distrib_element, l, NULL);
}

/* The comma after the argument @p what, once it parsed (@p status). */
static tj_status_t comma_after(parser_t *ps, const char *what, tj_status_t status)
{
    char ctx[64];

    if (status != TJ_OK)
        return status;
    snprintf(ctx, sizeof(ctx), "after %s", what);
    return tj_typedesc_expect(ps, ',', ctx);
}

/* An integer argument and the comma after it. */
static tj_status_t int_arg(parser_t *ps, const char *what, const range_t *r, int64_t *out)
{
    return comma_after(ps, what, parse_int(ps, what, -1, r, out));
}

/* A list argument and the comma after it. */
static tj_status_t list_arg(parser_t *ps, const char *what, const range_t *r, list_t *l)
{
    return comma_after(ps, what, parse_list(ps, what, r, l));
}

/* The constructor's arguments, between its parentheses. */
static tj_status_t parse_args(parser_t *ps, int depth, args_t *args)
{
    char ctx[64];
    bool bytes = false;
    tj_status_t status = TJ_OK;

    snprintf(ctx, sizeof(ctx), "after %s", tj_typedesc_ctor_names[args->kind]);
    TRY(tj_typedesc_expect(ps, '(', ctx));
    switch (args->kind) {
    case CT_CONTIGUOUS:
        TRY(int_arg(ps, "count", &r_count, &args->a));
        break;
    case CT_HVECTOR:
        bytes = true;
        /* fall through */
    case CT_VECTOR:
        TRY(int_arg(ps, "count", &r_count, &args->a));
        TRY(int_arg(ps, "block length", &r_count, &args->b));
        TRY(int_arg(ps, "stride", bytes ? &r_aint : &r_int, &args->c));
        break;
    case CT_SUBARRAY:
        TRY(list_arg(ps, "sizes", &r_size, &args->l[0]));
        TRY(list_arg(ps, "subsizes", &r_size, &args->l[1]));
        TRY(list_arg(ps, "starts", &r_count, &args->l[2]));
        TRY(comma_after(ps, "order", parse_order(ps, &args->order)));
        break;
    case CT_RESIZED:
        TRY(int_arg(ps, "lower bound", &r_aint, &args->a));
        TRY(int_arg(ps, "extent", &r_aint, &args->b));
        break;
    case CT_DUP:
        break;
    case CT_HINDEXED_BLOCK:
        bytes = true;
        /* fall through */
    case CT_INDEXED_BLOCK:
        TRY(int_arg(ps, "block length", &r_count, &args->a));
        TRY(list_arg(ps, "displacements", bytes ? &r_aint : &r_int, &args->l[1]));
        break;
    case CT_HINDEXED:
    case CT_STRUCT:
        bytes = true;
        /* fall through */
    case CT_INDEXED:
        TRY(list_arg(ps, "block lengths", &r_count, &args->l[0]));
        TRY(list_arg(ps, "displacements", bytes ? &r_aint : &r_int, &args->l[1]));
        break;
    case CT_DARRAY:
        TRY(int_arg(ps, "size", &r_size, &args->a));
        TRY(int_arg(ps, "rank", &r_count, &args->b));
        TRY(list_arg(ps, "global sizes", &r_size, &args->l[0]));
        TRY(comma_after(ps, "distributions", parse_distribs(ps, &args->l[1])));
        TRY(list_arg(ps, "distribution arguments", &r_count, &args->l[2]));
        TRY(list_arg(ps, "process grid sizes", &r_size, &args->l[3]));
        TRY(comma_after(ps, "order", parse_order(ps, &args->order)));
        break;
    case CT_COUNT:
        break;
    }
    if (args->kind == CT_STRUCT)
        TRY(parse_members(ps, depth, &args->members));
    else
        TRY(tj_typedesc_parse_type(ps, depth + 1, &args->child));
    snprintf(ctx, sizeof(ctx), "to close %s(", tj_typedesc_ctor_names[args->kind]);
    TRY(tj_typedesc_expect(ps, ')', ctx));
cleanup:
    return status;
}

void tj_typedesc_release(node_t *node)
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
    TRY(tj_typedesc_check_args(ps, &args));
    TRY(tj_typedesc_build(ps, &args, &type));
    out->type = type;
    out->owned = true;
cleanup:
    /* The new type holds its own references to its children. */
    for (int i = 0; i < args.members.n; i++)
        tj_typedesc_release(&args.members.v[i]);
    free(args.members.v);
    tj_typedesc_release(&args.child);
    for (int i = 0; i < 4; i++)
        free(args.l[i].v);
    return status;
}

tj_status_t tj_typedesc_parse_type(parser_t *ps, int depth, node_t *out)
{
    char word[MAX_WORD], buf[48];
    const char *at;
    int n, ctor;

    tj_typedesc_skip_space(ps);
    at = ps->p;
    if (depth > MAX_DEPTH)
        return tj_typedesc_fail(ps, at, TJ_ERR_PARSE, "types nested deeper than %d levels",
                                MAX_DEPTH);
    if (!tj_typedesc_is_word_char(*ps->p))
        return tj_typedesc_fail(ps, at, TJ_ERR_PARSE,
                                "expected a type name or constructor, found %s",
                                tj_typedesc_found(at, buf, sizeof(buf)));
    n = tj_typedesc_read_word(ps, word);
    if ((ctor = tj_typedesc_lookup_ctor(word)) >= 0)
        return parse_ctor(ps, (ctor_t)ctor, at, depth, out);
    tj_typedesc_skip_space(ps);
    if (*ps->p == '(') {
        char ctors[256];
        tj_typedesc_ctor_list(ctors, sizeof(ctors));
        return tj_typedesc_fail(ps, at, TJ_ERR_PARSE, "unknown constructor '%.*s' (expected %s)", n,
                                at, ctors);
    }
    if (!tj_typedesc_lookup_named(word, &out->type))
        return tj_typedesc_fail(ps, at, TJ_ERR_PARSE, "unknown type name '%.*s'", n, at);
    out->owned = false;
    return TJ_OK;
}
