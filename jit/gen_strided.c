/* SPDX-License-Identifier: BSD-3-Clause */
/* The single strided kernels: templates/strided.cu filled with the constants of one strided block,
 * moving each word (with edges: templates/edges.cu), reducing it or swapping its bytes. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit/gen.h"
#include "jit/gen_internal.h"
#include "jit/templates.h"
#include "jit/text.h"
#include "util/common.h"
#include "util/log.h"

/* The kernel of templates/strided.cu for (block, word): the text of what it does with each word
 * (@p what, for its comment), the word's type, the pointer declarations and the statement run
 * for each word at byte (base + off) of the typed buffer (word k * WORDS + i of the packed one). */
static tj_status_t gen_strided(const tj_block_t *block, int word, int edge, const char *what,
                               const char *wtype, const char *pointers, const char *copy,
                               const char *name, char **source);

tj_status_t tj_gen_source(const tj_block_t *block, int word, tj_dir_t dir, const char *name,
                          char **source)
{
    bool pack = dir == TJ_DIR_PACK;

    if (dir != TJ_DIR_PACK && dir != TJ_DIR_UNPACK) {
        tj_log_error("cannot generate kernel %s: invalid direction",
                     tj_gen_valid_name(name) ? name : "");
        return TJ_ERR_INVALID;
    }
    return gen_strided(
        block, word, 0, pack ? "pack" : "unpack", tj_gen_word_type(word),
        pack ? "    const char *typed = (const char *)src;\n"
               "    word_t *packed = (word_t *)dst;"
             : "    char *typed = (char *)dst;\n"
               "    const word_t *packed = (const word_t *)src;",
        pack ? "            packed[k * WORDS + i] = *(const word_t *)(typed + (base + off));"
             : "            *(word_t *)(typed + (base + off)) = packed[k * WORDS + i];",
        name, source);
}

tj_status_t tj_gen_reduce_source(const tj_block_t *block, int esize, const char *ctype,
                                 const char *expr, const char *what, const char *name,
                                 char **source)
{
    char copy[512];
    int n;

    if (ctype == NULL || expr == NULL || what == NULL || strpbrk(ctype, "@;{}") != NULL ||
        strpbrk(expr, "@;{}") != NULL)
        return TJ_ERR_INVALID;
    n = snprintf(copy, sizeof(copy),
                 "            word_t *po = (word_t *)(inout + (base + off));\n"
                 "            const word_t o = *po, a = *(const word_t *)(in + (base + off));\n"
                 "            *po = %s;",
                 expr);
    if (n < 0 || (size_t)n >= sizeof(copy))
        return TJ_ERR_INVALID;
    return gen_strided(block, esize, 0, what, ctype,
                       "    char *inout = (char *)dst;\n"
                       "    const char *in = (const char *)src;",
                       copy, name, source);
}

tj_status_t tj_gen_swap_source(const tj_block_t *block, int esize, tj_dir_t dir, const char *name,
                               char **source)
{
    bool pack = dir == TJ_DIR_PACK;

    if (dir != TJ_DIR_PACK && dir != TJ_DIR_UNPACK)
        return TJ_ERR_INVALID;
    return gen_strided(
        block, esize, 0,
        pack ? "pack (external32: each element's bytes reversed)"
             : "unpack (external32: each element's bytes reversed)",
        tj_gen_word_type(esize),
        pack ? "    const char *typed = (const char *)src;\n"
               "    word_t *packed = (word_t *)dst;"
             : "    char *typed = (char *)dst;\n"
               "    const word_t *packed = (const word_t *)src;",
        pack ? "            const word_t v = *(const word_t *)(typed + (base + off));\n"
               "            word_t r = 0;\n"
               "            for (int b = 0; b < (int)sizeof(word_t); b++)\n"
               "                r = (word_t)((r << 8) | ((v >> (8 * b)) & 0xff));\n"
               "            packed[k * WORDS + i] = r;"
             : "            const word_t v = packed[k * WORDS + i];\n"
               "            word_t r = 0;\n"
               "            for (int b = 0; b < (int)sizeof(word_t); b++)\n"
               "                r = (word_t)((r << 8) | ((v >> (8 * b)) & 0xff));\n"
               "            *(word_t *)(typed + (base + off)) = r;",
        name, source);
}

static tj_status_t gen_strided(const tj_block_t *block, int word, int edge, const char *what,
                               const char *wtype, const char *pointers, const char *copy,
                               const char *name, char **source)
{
    text_t dims_text = {0}, offset_text = {0}, note = {0};
    char *block_text = NULL;
    char start[48], extent[48], words[48], words_literal[48], word_s[8], objects[16], span[16];
    char kstep[16], istep[16];
    const char *isuffix;
    dim_t dims[TJ_BLOCK_MAX_DIMS];
    shape_t shape;
    bool index32;
    tj_status_t status;
    int n, blen;

    if (!tj_gen_valid_form(block, word, edge) || !tj_gen_valid_name(name)) {
        tj_log_error("cannot generate kernel %s: invalid block, word %d, edge %d or name",
                     tj_gen_valid_name(name) ? name : "(bad name)", word, edge);
        return TJ_ERR_INVALID;
    }

    blen = tj_block_format(block, NULL, 0);
    if (blen < 0 || (block_text = malloc((size_t)blen + 1)) == NULL) {
        status = TJ_ERR_NOMEM;
        goto out;
    }
    tj_block_format(block, block_text, (size_t)blen + 1);

    tj_gen_shape_of(tj_gen_words_of(block, word, edge), word, &shape);
    index32 = shape.words <= TJ_GEN_INDEX32_LIMIT;
    isuffix = index32 ? "u" : "ull";
    if (edge == 0) {
        n = tj_gen_merge_dims(block, word, dims);
        tj_gen_emit_dimensions(&dims_text, dims, n, isuffix);
        tj_gen_emit_offset(&offset_text, dims, n, "i");
    } else {
        char lit[48];
        n = tj_gen_edge_dims(block, dims);
        tj_text_printf(
            &note,
            "\n * Edges: a \"word\" is a slot, one of the SLOTS W-aligned windows of the "
            "packed buffer\n * that one run of RUN bytes meets; the head and the tail of "
            "the run are moved\n * %d bytes or more at a time (templates/edges.cu).",
            edge);
        tj_text_printf(
            &dims_text,
            "    /* Runs of RUN bytes, OBJECT_BYTES packed bytes per object, SLOTS slots per "
            "run; the\n     * runs of one object: dimension d has COUNT_d runs STRIDE_d "
            "bytes apart (merged as\n     * the dimensions of the kernels without edges). "
            "*/\n");
        tj_gen_literal(lit, sizeof(lit), dims[0].count);
        tj_text_printf(&dims_text, "    const long long RUN = %s;\n", lit);
        tj_gen_literal(lit, sizeof(lit), block->size);
        tj_text_printf(&dims_text, "    const long long OBJECT_BYTES = %s;\n", lit);
        tj_text_printf(&dims_text, "    const index_t SLOTS = %" PRId64 "%s;\n",
                       tj_gen_edge_slots(dims[0].count, word, edge), isuffix);
        tj_gen_emit_counts(&dims_text, dims + 1, n - 1, isuffix);
        tj_text_printf(&offset_text, "            const index_t j = i %% SLOTS;\n"
                                     "            const index_t run = i / SLOTS;\n");
        tj_gen_emit_offset(&offset_text, dims + 1, n - 1, "run");
    }
    if (dims_text.failed || offset_text.failed || note.failed) {
        status = TJ_ERR_NOMEM;
        goto out;
    }
    tj_gen_literal(start, sizeof(start), block->start);
    tj_gen_literal(extent, sizeof(extent), block->extent);
    snprintf(words, sizeof(words), "%" PRId64, shape.words);
    snprintf(words_literal, sizeof(words_literal), "%" PRId64 "%s", shape.words, isuffix);
    snprintf(word_s, sizeof(word_s), "%d", word);
    snprintf(objects, sizeof(objects), "%uu", shape.objects);
    snprintf(span, sizeof(span), "%uu", shape.span);
    snprintf(kstep, sizeof(kstep), "%uu", shape.kstep);
    snprintf(istep, sizeof(istep), "%uu", shape.istep);

    const tj_gen_subst_t subst[] = {
        {"NAME", name},
        {"DIRECTION", what},
        {"BLOCK", block_text},
        {"WORD", word_s},
        {"WORDS", words},
        {"EDGES", note.buf != NULL ? note.buf : ""},
        {"WORDS_LITERAL", words_literal},
        {"WORD_TYPE", wtype},
        {"INDEX_TYPE", index32 ? "unsigned int" : "unsigned long long"},
        {"START", start},
        {"EXTENT", extent},
        {"OBJECTS", objects},
        {"SPAN", span},
        {"KSTEP", kstep},
        {"ISTEP", istep},
        {"DIMENSIONS", dims_text.buf},
        {"POINTERS", pointers},
        {"OFFSET", offset_text.buf},
        {"COPY", copy},
    };
    status = tj_gen_fill("strided.cu", subst, TJ_ARRAY_SIZE(subst), source);

out:
    free(note.buf);
    free(offset_text.buf);
    free(dims_text.buf);
    free(block_text);
    if (status == TJ_ERR_NOMEM)
        tj_log_error("out of memory generating kernel %s", name);
    return status;
}

/* One piece of a partial window: @p w bytes at x, when @p cond holds. */
static void emit_piece(text_t *t, const char *ind, const char *cond, int w)
{
    tj_text_printf(t,
                   "%sif (%s) {\n%s    *(%s *)(to + x) = *(const %s *)(from + x);\n"
                   "%s    x += %du;\n%s}\n",
                   ind, cond, ind, tj_gen_word_type(w), tj_gen_word_type(w), ind, w, ind);
}

tj_status_t tj_gen_edges_source(const tj_block_t *block, int word, int edge, tj_dir_t dir,
                                const char *name, char **source)
{
    text_t pieces = {0};
    char *copy = NULL, cond[64], full[128];
    const char *ind;
    dim_t dims[TJ_BLOCK_MAX_DIMS];
    bool pack = dir == TJ_DIR_PACK, run_long, rel32;
    tj_status_t status;

    if (dir != TJ_DIR_PACK && dir != TJ_DIR_UNPACK) {
        tj_log_error("cannot generate kernel %s: invalid direction",
                     tj_gen_valid_name(name) ? name : "");
        return TJ_ERR_INVALID;
    }
    if (edge == 0)
        return tj_gen_source(block, word, dir, name, source);
    if (!tj_gen_valid_form(block, word, edge))
        return gen_strided(block, word, edge, "", "", "", "", name, source); /* refused there */
    /* A head grows its alignment from x up to the window's end, a tail shrinks from its start
     * to its end: each piece aligned, none past the run's bytes [x, end). When every run is a
     * window long or more, a partial window is a head (x > 0, end = W) or a tail (x = 0): a
     * piece of a head is there when its bit of x is, one of a tail when its bit of end is. */
    run_long = tj_gen_edge_dims(block, dims) > 0 && dims[0].count >= word;
    ind = run_long ? "                        " : "                    ";
    if (run_long)
        tj_text_printf(&pieces, "                    if (x != 0u) { /* the run's head */\n");
    for (int w = edge; w < word; w *= 2) {
        if (run_long)
            snprintf(cond, sizeof(cond), "(x & %du) != 0u", w);
        else
            snprintf(cond, sizeof(cond), "(x & %du) != 0u && x + %du <= end", w, w);
        emit_piece(&pieces, ind, cond, w);
    }
    if (run_long)
        tj_text_printf(&pieces, "                    } else { /* its tail */\n");
    for (int w = word / 2; w >= edge; w /= 2) {
        if (run_long)
            snprintf(cond, sizeof(cond), "(end & %du) != 0u", w);
        else
            snprintf(cond, sizeof(cond), "x + %du <= end", w);
        emit_piece(&pieces, ind, cond, w);
    }
    if (run_long)
        tj_text_printf(&pieces, "                    }\n");
    if (pieces.failed) {
        status = TJ_ERR_NOMEM;
        goto out;
    }
    pieces.buf[pieces.len - 1] = '\0'; /* the template's line ends the last */
    /* Offsets in a run fit 32 bits when the run does (with a window to spare). A window is
     * whole when 0 <= o <= RUN - W: one unsigned comparison, none at all when no run is a
     * window long. */
    rel32 = dims[0].count <= INT32_MAX - 2 * word;
    if (!run_long)
        snprintf(full, sizeof(full), "false");
    else
        snprintf(full, sizeof(full), "(%s)o <= (%s)(RUN - (long long)sizeof(word_t))",
                 rel32 ? "unsigned" : "unsigned long long",
                 rel32 ? "unsigned" : "unsigned long long");
    const tj_gen_subst_t subst[] = {
        {"REL", rel32 ? "int" : "long long"},
        {"FULL", full},
        {"TO",
         pack ? "char *const to = packed + (at + o)" : "char *const to = typed + (base + off + o)"},
        {"FROM", pack ? "const char *const from = typed + (base + off + o)"
                      : "const char *const from = packed + (at + o)"},
        {"PIECES", pieces.buf},
    };
    if ((status = tj_gen_fill("edges.cu", subst, TJ_ARRAY_SIZE(subst), &copy)) != TJ_OK)
        goto out;
    status = gen_strided(block, word, edge, pack ? "pack" : "unpack", tj_gen_word_type(word),
                         pack ? "    const char *typed = (const char *)src;\n"
                                "    char *packed = (char *)dst;"
                              : "    char *typed = (char *)dst;\n"
                                "    const char *packed = (const char *)src;",
                         copy, name, source);
out:
    free(copy);
    free(pieces.buf);
    if (status == TJ_ERR_NOMEM)
        tj_log_error("out of memory generating kernel %s", name);
    return status;
}
