/* SPDX-License-Identifier: BSD-3-Clause */
/* The table of kinds of kernel (see kind.h): one strided block, a fused set, the generic kernel,
 * the parts of a layout. */
#include "kernels/kind.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit/text.h"
#include "kernels/layoutline.h"
#include "type/layout_words.h"
#include "util/common.h"

static const char *dir_name(tj_dir_t dir)
{
    return dir == TJ_DIR_PACK ? "pack" : "unpack";
}

/* ---- what the kinds of blocks share ---------------------------------------------------------- */

/* Each block valid for its word: with edges, an edge word dividing the block's word and a W above
 * it dividing its edges_word; without, W dividing the block's word. */
static tj_status_t check_blocks(const tj_kernel_spec_t *spec)
{
    if (spec->blocks == NULL || !tj_spec_valid_word(spec->word))
        return TJ_ERR_INVALID;
    for (int i = 0; i < spec->nblocks; i++) {
        const tj_block_t *b = &spec->blocks[i];
        int word = tj_spec_block_word(spec, i);
        if (b->ndims < 1 || b->ndims > TJ_BLOCK_MAX_DIMS || !tj_spec_valid_word(word))
            return TJ_ERR_INVALID;
        if (spec->edge != 0 ? !tj_spec_valid_word(spec->edge) || spec->edge >= word ||
                                  b->word % spec->edge != 0 || b->edges_word % word != 0
                            : b->word % word != 0)
            return TJ_ERR_INVALID;
    }
    return TJ_OK;
}

/* The W of @p spec's manifest line: a fused kernel's widest block word, else its word. */
static int line_word(const tj_kernel_spec_t *spec)
{
    int w = spec->word;

    if (spec->kind == TJ_KERNEL_FUSED && spec->words != NULL) {
        w = 1;
        for (int i = 0; i < spec->nblocks; i++)
            w = TJ_MAX(w, spec->words[i]);
    }
    return w;
}

/* The memory key of a kernel of blocks (none for the generic kernel): the same identity as its
 * key text, hashed from packed records so that a hit formats no text. */
static tj_hash_t blocks_memo(const tj_kernel_spec_t *spec)
{
    typedef struct {
        int32_t ndims, word;
        int64_t extent, counts[TJ_BLOCK_MAX_DIMS], strides[TJ_BLOCK_MAX_DIMS];
    } rec_t;
    struct {
        char target[TJ_TARGET_MAX];
        int32_t kind, dir, word, edge, n, pad;
        rec_t blocks[TJ_FUSED_MAX];
    } rec;
    int n = spec->nblocks < 0 ? 0 : spec->nblocks > TJ_FUSED_MAX ? TJ_FUSED_MAX : spec->nblocks;

    memset(&rec, 0, sizeof(rec));
    snprintf(rec.target, sizeof(rec.target), "%s", spec->target);
    rec.kind = (int32_t)spec->kind;
    rec.dir = (int32_t)spec->dir;
    rec.word = line_word(spec);
    rec.edge = spec->edge;
    rec.n = n;
    /* The start is left out: kernels are built for their blocks moved to start 0. */
    for (int i = 0; i < n; i++) {
        const tj_block_t *b = &spec->blocks[i];
        rec.blocks[i].ndims = b->ndims;
        rec.blocks[i].word = tj_spec_block_word(spec, i);
        rec.blocks[i].extent = b->extent;
        for (int d = 0; d < b->ndims && d < TJ_BLOCK_MAX_DIMS; d++) {
            rec.blocks[i].counts[d] = b->counts[d];
            rec.blocks[i].strides[d] = b->strides[d];
        }
    }
    return tj_hash_bytes(&rec, (size_t)((char *)&rec.blocks[n] - (char *)&rec));
}

/* "TARGET DIRECTION W=WORD[ TAG][ edge=EDGE] BLOCK[ | [W=W2 ]BLOCK ...]": each block moved to
 * start 0 as tj_block_format writes it, a fused block moved with a narrower word than the line's
 * after its word. */
static int blocks_line(const tj_kernel_spec_t *spec, const char *tag, char *buf, size_t len)
{
    text_t t = {0};
    char block[1024];

    tj_text_printf(&t, "%s %s W=%d%s%s", spec->target, dir_name(spec->dir), line_word(spec),
                   tag != NULL ? " " : "", tag != NULL ? tag : "");
    if (spec->edge != 0)
        tj_text_printf(&t, " edge=%d", spec->edge);
    for (int i = 0; i < spec->nblocks; i++) {
        tj_block_t b = tj_block_at_zero(&spec->blocks[i]);
        tj_block_format(&b, block, sizeof(block));
        tj_text_printf(&t, "%s", i == 0 ? " " : " | ");
        if (tj_spec_block_word(spec, i) != line_word(spec))
            tj_text_printf(&t, "W=%d ", tj_spec_block_word(spec, i));
        tj_text_printf(&t, "%s", block);
    }
    return tj_text_finish(&t, buf, len);
}

/* The blocks of a manifest line, one or (@p fused) several separated by " | ", each after its
 * word when that is not the line's. */
static tj_status_t parse_blocks(const char *p, bool fused, tj_spec_line_t *parsed)
{
    char text[1024];
    int used, w = parsed->word;

    for (;;) {
        const char *end;
        size_t n;
        tj_block_t *b = &parsed->blocks[parsed->nblocks];
        int bw = w;
        if (parsed->nblocks == TJ_FUSED_MAX)
            return TJ_ERR_PARSE;
        if (fused && strncmp(p, "W=", 2) == 0) {
            used = 0;
            if (sscanf(p, "W=%d %n", &bw, &used) != 1 || used == 0 ||
                (bw != 1 && bw != 2 && bw != 4 && bw != 8) || bw >= w)
                return TJ_ERR_PARSE;
            p += used;
        }
        end = strstr(p, " | ");
        n = end != NULL ? (size_t)(end - p) : strlen(p);
        if (n >= sizeof(text))
            return TJ_ERR_PARSE;
        memcpy(text, p, n);
        text[n] = '\0';
        if (tj_block_parse(text, b) != TJ_OK ||
            (parsed->edge != 0 ? b->word % parsed->edge != 0 || b->edges_word % w != 0
                               : b->word % bw != 0))
            return TJ_ERR_PARSE;
        parsed->words[parsed->nblocks++] = bw;
        if (end == NULL)
            return TJ_OK;
        if (!fused)
            return TJ_ERR_PARSE;
        p = end + 3;
    }
}

/* Objects, the two pointers, and the three arguments every kernel of blocks takes first. */
static void base_args(tj_kind_args_t *a, int64_t count)
{
    a->count = count;
    a->argv[0] = &a->dst;
    a->argv[1] = &a->src;
    a->argv[2] = &a->count;
}

/* ---- one strided block ---------------------------------------------------------------------- */

static tj_status_t single_check(const tj_kernel_spec_t *spec)
{
    const tj_kernel_op_t *op = &spec->op;

    if (spec->nblocks != 1 || spec->words != NULL || spec->layout != NULL || spec->serial)
        return TJ_ERR_INVALID;
    if (op->kind == TJ_OP_REDUCE &&
        (op->ctype == NULL || op->expr == NULL || op->what == NULL ||
         strlen(op->ctype) >= TJ_KERNEL_OP_TEXT_MAX || strlen(op->expr) >= TJ_KERNEL_OP_TEXT_MAX ||
         strlen(op->what) >= TJ_KERNEL_OP_TEXT_MAX))
        return TJ_ERR_INVALID;
    if (op->kind != TJ_OP_MOVE && op->kind != TJ_OP_SWAP && op->kind != TJ_OP_REDUCE)
        return TJ_ERR_INVALID;
    if (op->kind != TJ_OP_MOVE && spec->edge != 0)
        return TJ_ERR_INVALID;
    return check_blocks(spec);
}

static const char *single_function(const tj_kernel_spec_t *spec)
{
    bool pack = spec->dir == TJ_DIR_PACK;

    switch (spec->op.kind) {
    case TJ_OP_SWAP:
        return pack ? "tj_external32_pack" : "tj_external32_unpack";
    case TJ_OP_REDUCE:
        return "tj_reduce_local";
    case TJ_OP_MOVE:
        break;
    }
    return pack ? "tj_pack" : "tj_unpack";
}

static tj_status_t single_source(const tj_kernel_spec_t *spec, char **source)
{
    tj_block_t zero = tj_block_at_zero(&spec->blocks[0]);
    const char *name = single_function(spec);

    switch (spec->op.kind) {
    case TJ_OP_SWAP:
        return tj_gen_swap_source(&zero, spec->word, spec->dir, name, source);
    case TJ_OP_REDUCE:
        return tj_gen_reduce_source(&zero, spec->word, spec->op.ctype, spec->op.expr, spec->op.what,
                                    name, source);
    case TJ_OP_MOVE:
        break;
    }
    if (spec->edge != 0)
        return tj_gen_edges_source(&zero, spec->word, spec->edge, spec->dir, name, source);
    return tj_gen_source(&zero, spec->word, spec->dir, name, source);
}

static tj_hash_t single_memo(const tj_kernel_spec_t *spec)
{
    tj_hash_t moved = blocks_memo(spec);
    char rec[sizeof(moved) + 4 + 3 * TJ_KERNEL_OP_TEXT_MAX];

    if (spec->op.kind == TJ_OP_MOVE)
        return moved;
    /* A kernel that swaps or reduces each word: the block's identity, the op and its texts. */
    memset(rec, 0, sizeof(rec));
    memcpy(rec, &moved, sizeof(moved));
    rec[sizeof(moved)] = (char)spec->op.kind;
    if (spec->op.kind == TJ_OP_REDUCE) {
        char *at = rec + sizeof(moved) + 4;
        snprintf(at, TJ_KERNEL_OP_TEXT_MAX, "%s", spec->op.ctype);
        snprintf(at + TJ_KERNEL_OP_TEXT_MAX, TJ_KERNEL_OP_TEXT_MAX, "%s", spec->op.expr);
        snprintf(at + 2 * TJ_KERNEL_OP_TEXT_MAX, TJ_KERNEL_OP_TEXT_MAX, "%s", spec->op.what);
    }
    return tj_hash_bytes(rec, sizeof(rec));
}

/* A kernel that swaps or reduces has no manifest line: the warm tool cannot make one without its
 * caller, and its disk key stays what it was (function and source). */
static int single_line(const tj_kernel_spec_t *spec, char *buf, size_t len)
{
    return spec->op.kind == TJ_OP_MOVE ? blocks_line(spec, NULL, buf, len) : -1;
}

static tj_status_t single_parse(const char *p, tj_spec_line_t *parsed)
{
    int used = 0;

    parsed->kind = TJ_KERNEL_SINGLE;
    if (strncmp(p, "edge=", 5) == 0) {
        int e = 0;
        if (sscanf(p, "edge=%d %n", &e, &used) != 1 || used == 0 ||
            (e != 1 && e != 2 && e != 4 && e != 8) || e >= parsed->word)
            return TJ_ERR_PARSE;
        parsed->edge = e;
        p += used;
    }
    return parse_blocks(p, false, parsed);
}

static void single_describe(const tj_kernel_spec_t *spec, char *buf, size_t len)
{
    char block[1024];
    tj_block_t b = tj_block_at_zero(&spec->blocks[0]);

    if (spec->op.kind != TJ_OP_MOVE) {
        snprintf(buf, len, "%s %s", single_function(spec), spec->target);
        return;
    }
    tj_block_format(&b, block, sizeof(block));
    snprintf(buf, len, "%s %s W=%d %s", dir_name(spec->dir), spec->target, spec->word, block);
}

static bool single_describe_key(const char *head, size_t hlen, const char *tail, size_t tlen,
                                char *buf, size_t len)
{
    if (tail == NULL)
        return false;
    snprintf(buf, len, "%.*s %.*s", (int)hlen, head, (int)tlen, tail);
    return true;
}

static tj_status_t single_geometry(const tj_kernel_spec_t *spec, const tj_kind_work_t *work,
                                   tj_kind_args_t *a)
{
    tj_block_t b = tj_block_at_zero(&spec->blocks[0]);

    tj_gen_edges_launch(&b, spec->word, spec->edge, work->count, &a->geo);
    base_args(a, work->count);
    return TJ_OK;
}

/* ---- a fused set of blocks ------------------------------------------------------------------ */

static tj_status_t fused_check(const tj_kernel_spec_t *spec)
{
    if (spec->nblocks < 1 || spec->nblocks > TJ_FUSED_MAX || spec->edge != 0 ||
        spec->op.kind != TJ_OP_MOVE || spec->layout != NULL || spec->serial)
        return TJ_ERR_INVALID;
    return check_blocks(spec);
}

static const char *fused_function(const tj_kernel_spec_t *spec)
{
    return spec->dir == TJ_DIR_PACK ? "tj_fused_pack" : "tj_fused_unpack";
}

static tj_status_t fused_source(const tj_kernel_spec_t *spec, char **source)
{
    tj_block_t zero[TJ_FUSED_MAX];
    int words[TJ_FUSED_MAX];

    for (int i = 0; i < spec->nblocks; i++) {
        zero[i] = tj_block_at_zero(&spec->blocks[i]);
        words[i] = tj_spec_block_word(spec, i);
    }
    return tj_gen_fused_source(zero, words, spec->nblocks, spec->dir, fused_function(spec), source);
}

static int fused_line(const tj_kernel_spec_t *spec, char *buf, size_t len)
{
    return blocks_line(spec, "fused", buf, len);
}

static tj_status_t fused_parse(const char *p, tj_spec_line_t *parsed)
{
    parsed->kind = TJ_KERNEL_FUSED;
    parsed->words_given = true;
    return parse_blocks(p, true, parsed);
}

static void fused_describe(const tj_kernel_spec_t *spec, char *buf, size_t len)
{
    snprintf(buf, len, "fused %s %s W=%d of %d blocks", dir_name(spec->dir), spec->target,
             spec->word, spec->nblocks);
}

static bool fused_describe_key(const char *head, size_t hlen, const char *tail, size_t tlen,
                               char *buf, size_t len)
{
    int blocks = 1;

    if (tail == NULL)
        return false;
    for (const char *q = tail; (q = strstr(q, " | ")) != NULL && (size_t)(q - tail) < tlen; q += 3)
        blocks++;
    snprintf(buf, len, "fused %.*s of %d blocks", (int)hlen, head, blocks);
    return true;
}

static tj_status_t fused_geometry(const tj_kernel_spec_t *spec, const tj_kind_work_t *work,
                                  tj_kind_args_t *a)
{
    tj_block_t zero[TJ_FUSED_MAX];
    int words[TJ_FUSED_MAX];
    tj_status_t st;

    for (int i = 0; i < spec->nblocks; i++) {
        zero[i] = tj_block_at_zero(&spec->blocks[i]);
        words[i] = tj_spec_block_word(spec, i);
    }
    if ((st = tj_gen_fused_launch(zero, words, spec->nblocks, work->members, work->nmembers,
                                  &a->by.fused, &a->geo)) != TJ_OK)
        return st;
    a->argv[0] = &a->dst;
    a->argv[1] = &a->src;
    a->argv[2] = &a->by.fused;
    return TJ_OK;
}

/* ---- the generic kernel: the layout as run-time arguments ----------------------------------- */

static tj_status_t generic_check(const tj_kernel_spec_t *spec)
{
    return spec->nblocks == 0 && spec->edge == 0 && spec->words == NULL &&
                   spec->op.kind == TJ_OP_MOVE && spec->layout == NULL && !spec->serial &&
                   tj_spec_valid_word(spec->word)
               ? TJ_OK
               : TJ_ERR_INVALID;
}

static const char *generic_function(const tj_kernel_spec_t *spec)
{
    return spec->dir == TJ_DIR_PACK ? "tj_generic_pack" : "tj_generic_unpack";
}

static tj_status_t generic_source(const tj_kernel_spec_t *spec, char **source)
{
    return tj_gen_generic_source(spec->word, source);
}

static void generic_describe(const tj_kernel_spec_t *spec, char *buf, size_t len)
{
    snprintf(buf, len, "generic %s %s W=%d", dir_name(spec->dir), spec->target, spec->word);
}

/* Named by its function, "tj_generic_pack": the manifest does not record it. */
static bool generic_describe_key(const char *head, size_t hlen, const char *tail, size_t tlen,
                                 char *buf, size_t len)
{
    (void)tlen;
    if (tail != NULL || hlen <= 11 || strncmp(head, "tj_generic_", 11) != 0)
        return false;
    snprintf(buf, len, "generic %.*s", (int)(hlen - 11), head + 11);
    return true;
}

static tj_status_t generic_geometry(const tj_kernel_spec_t *spec, const tj_kind_work_t *work,
                                    tj_kind_args_t *a)
{
    if (work->block == NULL)
        return TJ_ERR_INVALID;
    if (!tj_gen_generic_usable(work->block, spec->word))
        return TJ_ERR_UNSUPPORTED; /* 2^31 words per object or more */
    tj_gen_generic_params(work->block, spec->word, &a->by.generic);
    tj_gen_generic_launch(work->block, spec->word, work->count, &a->geo);
    base_args(a, work->count);
    a->argv[3] = &a->by.generic;
    return TJ_OK;
}

/* ---- the parts of a layout ------------------------------------------------------------------ */

static tj_status_t parts_check(const tj_kernel_spec_t *spec)
{
    return spec->nblocks == 0 && spec->edge == 0 && spec->words == NULL &&
                   spec->op.kind == TJ_OP_MOVE && spec->layout != NULL && spec->layout->finished &&
                   tj_layout_kernel_word(spec->layout, spec->word, spec->one_object) &&
                   (!spec->serial || spec->dir == TJ_DIR_UNPACK)
               ? TJ_OK
               : TJ_ERR_INVALID;
}

static const char *parts_function(const tj_kernel_spec_t *spec)
{
    return spec->dir == TJ_DIR_PACK ? "tj_parts_pack"
           : spec->serial           ? "tj_parts_unpack_serial"
                                    : "tj_parts_unpack";
}

static tj_status_t parts_source(const tj_kernel_spec_t *spec, char **source)
{
    return tj_gen_parts_source(spec->layout, spec->word, spec->one_object, spec->dir,
                               parts_function(spec), source);
}

/* Its identity is the layout's kernel hash (frame, shapes, element sizes, a baked table), with
 * the word, direction, serial launch, launches of one object and target. */
static tj_hash_t parts_memo(const tj_kernel_spec_t *spec)
{
    struct {
        char target[TJ_TARGET_MAX];
        int32_t kind, dir, word, serial, one_object;
        uint64_t hash[2];
    } r;

    memset(&r, 0, sizeof(r));
    snprintf(r.target, sizeof(r.target), "%s", spec->target);
    r.kind = (int32_t)spec->kind;
    r.dir = (int32_t)spec->dir;
    r.word = spec->word;
    r.serial = spec->serial;
    r.one_object = spec->one_object;
    r.hash[0] = spec->layout->hash[0];
    r.hash[1] = spec->layout->hash[1];
    return tj_hash_bytes(&r, sizeof(r));
}

/* "TARGET DIRECTION W=WORD parts [serial ][objects=1 ]LAYOUT" (tj_layoutline_format). */
static int parts_line(const tj_kernel_spec_t *spec, char *buf, size_t len)
{
    char *lay;
    int n, m = tj_layoutline_format(spec->layout, NULL, 0);

    if (m < 0 || (lay = malloc((size_t)m + 1)) == NULL)
        return -1;
    tj_layoutline_format(spec->layout, lay, (size_t)m + 1);
    n = snprintf(buf, len, "%s %s W=%d parts%s%s %s", spec->target, dir_name(spec->dir), spec->word,
                 spec->serial ? " serial" : "", spec->one_object ? " objects=1" : "", lay);
    free(lay);
    return n;
}

static tj_status_t parts_parse(const char *p, tj_spec_line_t *parsed)
{
    parsed->kind = TJ_KERNEL_PARTS;
    if (strncmp(p, "serial ", 7) == 0) {
        if (parsed->dir != TJ_DIR_UNPACK)
            return TJ_ERR_PARSE;
        parsed->serial = true;
        p += 7;
    }
    if (strncmp(p, "objects=1 ", 10) == 0) {
        parsed->one_object = true;
        p += 10;
    }
    if (tj_layoutline_parse(p, parsed->word, &parsed->layout) != TJ_OK)
        return TJ_ERR_PARSE;
    if (!tj_layout_kernel_word(parsed->layout, parsed->word, parsed->one_object)) {
        tj_layout_release(parsed->layout);
        parsed->layout = NULL;
        return TJ_ERR_PARSE;
    }
    return TJ_OK;
}

static void parts_describe(const tj_kernel_spec_t *spec, char *buf, size_t len)
{
    snprintf(buf, len, "parts %s%s%s %s W=%d of %lld parts, %d shapes, %s table",
             dir_name(spec->dir), spec->serial ? " serial" : "",
             spec->one_object ? " of one object" : "", spec->target, spec->word,
             (long long)spec->layout->nparts, spec->layout->nshapes,
             spec->layout->baked ? "baked" : "device");
}

/* "parts pack W=8 serial, baked table, 3 shapes" ("..., of one object, baked table, ..."). */
static bool parts_describe_key(const char *head, size_t hlen, const char *tail, size_t tlen,
                               char *buf, size_t len)
{
    bool serial, one;
    size_t at;
    int shapes = 0;

    if (tail == NULL)
        return false;
    serial = tlen >= 7 && strncmp(tail, "serial ", 7) == 0;
    at = serial ? 7 : 0;
    one = tlen >= at + 10 && strncmp(tail + at, "objects=1 ", 10) == 0;
    at += one ? 10 : 0;
    for (const char *q = tail;
         (q = strstr(q, " | ")) != NULL && (size_t)(q - tail) < tlen && strncmp(q, " | parts=", 9);
         q += 3)
        shapes++;
    snprintf(buf, len, "parts %.*s%s%s, %s, %d shape%s", (int)hlen, head, serial ? " serial" : "",
             one ? ", of one object" : "",
             tlen >= at + 11 && strncmp(tail + at, "table=baked", 11) == 0 ? "baked table"
                                                                           : "device table",
             shapes, shapes == 1 ? "" : "s");
    return true;
}

static tj_status_t parts_geometry(const tj_kernel_spec_t *spec, const tj_kind_work_t *work,
                                  tj_kind_args_t *a)
{
    tj_gen_parts_args(spec->layout, work->table, &a->by.parts);
    tj_gen_parts_launch(spec->layout, spec->word, spec->one_object, work->count, spec->serial,
                        &a->geo);
    base_args(a, work->count);
    a->argv[3] = &a->by.parts;
    return TJ_OK;
}

/* ---- the table ------------------------------------------------------------------------------ */

static const tj_kind_t kinds[TJ_KERNEL_KINDS] = {
    [TJ_KERNEL_SINGLE] = {"single", NULL, single_check, single_function, single_source, single_memo,
                          single_line, single_parse, single_describe, single_describe_key,
                          single_geometry},
    [TJ_KERNEL_FUSED] = {"fused", "fused", fused_check, fused_function, fused_source, blocks_memo,
                         fused_line, fused_parse, fused_describe, fused_describe_key,
                         fused_geometry},
    [TJ_KERNEL_GENERIC] = {"generic", NULL, generic_check, generic_function, generic_source,
                           blocks_memo, NULL, NULL, generic_describe, generic_describe_key,
                           generic_geometry},
    [TJ_KERNEL_PARTS] = {"parts", "parts", parts_check, parts_function, parts_source, parts_memo,
                         parts_line, parts_parse, parts_describe, parts_describe_key,
                         parts_geometry},
};

const tj_kind_t *tj_kind_of(tj_kernel_kind_t kind)
{
    return (unsigned)kind < TJ_KERNEL_KINDS ? &kinds[kind] : NULL;
}
