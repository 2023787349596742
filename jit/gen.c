/* SPDX-License-Identifier: BSD-3-Clause */
/* Kernel generation: fills templates/strided.cu with the constants of one strided block, and
 * computes the launch geometry that the filled kernel expects. */
#include "jit/gen.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "jit/gen_internal.h"
#include "jit/templates.h"
#include "util/common.h"
#include "util/log.h"

/* Threads of one thread block; objects of at most SMALL_WORDS words are packed several to a
 * thread block so that no thread block runs mostly idle. The kernels bake the shape that follows
 * from it into their source. A test builds a variant of the library with another value
 * (TJ_GEN_BLOCK_THREADS, tests/kernels.cmake): a generator whose output changed. */
#ifndef TJ_GEN_BLOCK_THREADS
#define TJ_GEN_BLOCK_THREADS 256
#endif
#define BLOCK_THREADS TJ_GEN_BLOCK_THREADS
#define SMALL_WORDS   128
/* Word indices up to this fit 32-bit arithmetic with room for the grid-stride step. */
#define INDEX32_LIMIT ((int64_t)1 << 30)
#define GRID_X_MAX    2147483647LL
#define GRID_YZ_MAX   65535LL

/* The shape of one JIT kernel: how words of objects map to threads. */
typedef struct {
    int64_t words;    /* words per object */
    unsigned objects; /* objects per thread block */
    unsigned span;    /* words of one object per thread block */
    unsigned threads; /* threads per thread block */
    unsigned kstep;   /* objects a thread moves per trip (several objects per thread block) */
    unsigned istep;   /* words of one object a thread moves per trip (one object) */
} shape_t;

/* Words a thread moves per trip with W-byte words: a 1- or 2-byte word costs as many instructions
 * as a 16-byte one, so narrow kernels move several per thread to share the loop's setup. */
static unsigned unroll_of(int word)
{
    return word == 1 ? 8 : word == 2 ? 4 : 1;
}

/* One dimension after merging, in bytes; dimension 0 counts words `word` bytes apart. `index` is
 * the block's number of the dimension (of the innermost, when merged), used in the names. */
typedef struct {
    int64_t count, stride;
    int index;
} dim_t;

/* A growing NUL-terminated string; `failed` records an allocation failure. */
typedef struct {
    char *buf;
    size_t len, cap;
    bool failed;
} text_t;

static bool valid_word(int word)
{
    return word == 1 || word == 2 || word == 4 || word == 8 || word == 16;
}

static void text_append(text_t *t, const char *s, size_t n)
{
    if (t->failed)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *buf = realloc(t->buf, cap);
        if (buf == NULL) {
            t->failed = true;
            return;
        }
        t->buf = buf;
        t->cap = cap;
    }
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

static void text_printf(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void text_printf(text_t *t, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0) {
        t->failed = true;
        return;
    }
    if ((size_t)n < sizeof(small)) {
        text_append(t, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (big == NULL) {
        t->failed = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    text_append(t, big, (size_t)n);
    free(big);
}

/* A C++ literal of type long long for any int64_t value; INT64_MIN has no literal of its own. */
static void format_i64(char *buf, size_t len, int64_t v)
{
    if (v == INT64_MIN)
        snprintf(buf, len, "(-9223372036854775807LL - 1)");
    else
        snprintf(buf, len, "%" PRId64 "LL", v);
}

static const tj_template_t *find_template(const char *name)
{
    for (size_t i = 0; i < tj_templates_count; i++)
        if (strcmp(tj_templates[i].name, name) == 0)
            return &tj_templates[i];
    return NULL;
}

static int64_t round_up(int64_t v, int64_t to)
{
    return (v + to - 1) / to * to;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

static int effective_word(const tj_block_t *block, int word)
{
    /* Guards the void geometry functions against a word the generator would have refused. */
    return valid_word(word) && block->counts[0] % word == 0 ? word : 1;
}

/* The merged dimensions of a kernel with edges: dims[0] the contiguous run in bytes (stride 1),
 * then the runs' dimensions; 0 when the block has no run of more than one byte. */
static int edge_dims(const tj_block_t *block, dim_t *dims);

/* Slots of one run of @p run bytes in a kernel with edges of (@p word, @p edge): the W-aligned
 * windows of the packed buffer the run meets at most (its packed position is a multiple of
 * @p edge). */
static int64_t edge_slots(int64_t run, int word, int edge)
{
    return (run - edge + word - 1) / word + 1;
}

/* What one thread of a kernel handles at a time, per object: words, or with edges slots. */
static int64_t words_of(const tj_block_t *block, int word, int edge)
{
    dim_t dims[TJ_BLOCK_MAX_DIMS];

    if (edge == 0 || edge_dims(block, dims) == 0)
        return block->size / word;
    return block->size / dims[0].count * edge_slots(dims[0].count, word, edge);
}

static void shape_of(int64_t words, int word, shape_t *shape)
{
    shape->words = words;
    if (words <= SMALL_WORDS) {
        shape->objects = (unsigned)(BLOCK_THREADS / words);
        shape->span = (unsigned)words;
        shape->threads = (unsigned)round_up((int64_t)shape->objects * shape->span, 32);
        shape->kstep = unroll_of(word);
        shape->istep = 1;
    } else {
        shape->objects = 1;
        shape->span = (unsigned)TJ_MIN(BLOCK_THREADS, round_up(words, 32));
        shape->threads = shape->span;
        shape->kstep = 1;
        shape->istep = unroll_of(word);
    }
}

/* The block's dimensions with dimension 0 in words, dimensions of one element dropped and
 * nested neighbours merged (an outer stride equal to the inner dimension's whole length makes
 * the two one dimension). Merging keeps every address and the order; it saves divisions. */
static int merge_dims(const tj_block_t *block, int word, dim_t *dims)
{
    int n = 0;

    for (int d = 0; d < block->ndims; d++) {
        dim_t cur = {d == 0 ? block->counts[0] / word : block->counts[d],
                     d == 0 ? word : block->strides[d], d};
        int64_t length;
        if (cur.count == 1)
            continue;
        if (n > 0 && tj_mul64(dims[n - 1].count, dims[n - 1].stride, &length) &&
            length == cur.stride) {
            dims[n - 1].count *= cur.count; /* cannot overflow: bounded by the block's size */
            continue;
        }
        dims[n++] = cur;
    }
    return n;
}

static const char *word_type(int word)
{
    switch (word) {
    case 16:
        return "uint4";
    case 8:
        return "unsigned long long";
    case 4:
        return "unsigned int";
    case 2:
        return "unsigned short";
    default:
        return "unsigned char";
    }
}

/* The constants of the merged dimensions, as declarations at the top of the kernel: each
 * dimension's count (but the outermost's) and stride. */
static void emit_counts(text_t *t, const dim_t *dims, int n, const char *isuffix)
{
    char lit[48];

    for (int d = 0; d < n; d++) {
        /* The outermost digit is the quotient left over: it needs no count. */
        if (d < n - 1)
            text_printf(t, "    const index_t COUNT_%d = %" PRId64 "%s;\n", dims[d].index,
                        dims[d].count, isuffix);
        else
            text_printf(t, "    /* COUNT_%d = %" PRId64 " */\n", dims[d].index, dims[d].count);
        format_i64(lit, sizeof(lit), dims[d].stride);
        text_printf(t, "    const long long STRIDE_%d = %s;\n", dims[d].index, lit);
    }
}

/* The same with their comment. */
static void emit_dimensions(text_t *t, const dim_t *dims, int n, const char *isuffix)
{
    if (n == 0) {
        text_printf(t, "    /* Each object is a single word. */\n");
        return;
    }
    text_printf(t,
                "    /* Dimension d has COUNT_d elements STRIDE_d bytes apart; dimension 0 counts "
                "words.\n     * Dimensions of one element are left out, and a dimension "
                "nested without a gap in\n     * the next inner one is merged into it. */\n");
    emit_counts(t, dims, n, isuffix);
}

/* The statements that turn the index @p var (the word index i, or a kernel with edges' run)
 * into the byte offset `off` within the object. */
static void emit_offset(text_t *t, const dim_t *dims, int n, const char *var)
{
    const char *ind = "            ";

    if (n == 0) {
        text_printf(t, "%sconst long long off = 0;", ind);
        return;
    }
    if (n == 1) {
        text_printf(t, "%sconst long long off = (long long)%s * STRIDE_%d;", ind, var,
                    dims[0].index);
        return;
    }
    text_printf(t, "%sindex_t q = %s;\n", ind, var);
    text_printf(t, "%slong long off = (long long)(q %% COUNT_%d) * STRIDE_%d;\n", ind,
                dims[0].index, dims[0].index);
    for (int d = 1; d < n; d++) {
        int i = dims[d].index;
        text_printf(t, "%sq /= COUNT_%d;\n", ind, dims[d - 1].index);
        if (d < n - 1)
            text_printf(t, "%soff += (long long)(q %% COUNT_%d) * STRIDE_%d;\n", ind, i, i);
        else
            text_printf(t, "%soff += (long long)q * STRIDE_%d;", ind, i);
    }
}

typedef struct {
    const char *key;
    const char *value;
} subst_t;

/* Copies the template, replacing each @KEY@ by its value. */
static tj_status_t fill(text_t *t, const char *tmpl, const subst_t *subst, size_t nsubst)
{
    const char *p = tmpl;

    while (*p) {
        const char *at = strchr(p, '@');
        if (at == NULL) {
            text_append(t, p, strlen(p));
            break;
        }
        text_append(t, p, (size_t)(at - p));
        const char *end = strchr(at + 1, '@');
        size_t klen = end ? (size_t)(end - at - 1) : 0;
        size_t i = 0;
        for (; end && i < nsubst; i++)
            if (strlen(subst[i].key) == klen && memcmp(subst[i].key, at + 1, klen) == 0)
                break;
        if (end == NULL || i == nsubst) {
            tj_log_error("kernel template has an unknown placeholder near \"%.20s\"", at);
            return TJ_ERR_INVALID;
        }
        text_append(t, subst[i].value, strlen(subst[i].value));
        p = end + 1;
    }
    return t->failed ? TJ_ERR_NOMEM : TJ_OK;
}

static bool valid_name(const char *name)
{
    if (name == NULL || !(name[0] == '_' || (name[0] >= 'a' && name[0] <= 'z') ||
                          (name[0] >= 'A' && name[0] <= 'Z')))
        return false;
    for (const char *c = name; *c; c++)
        if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
              (*c >= '0' && *c <= '9')))
            return false;
    return strlen(name) < 200;
}

static bool valid_block(const tj_block_t *block)
{
    if (block->ndims < 1 || block->ndims > TJ_BLOCK_MAX_DIMS || block->strides[0] != 1 ||
        block->size < 1)
        return false;
    for (int d = 0; d < block->ndims; d++)
        if (block->counts[d] < 1)
            return false;
    return true;
}

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
        tj_log_error("cannot generate kernel %s: invalid direction", valid_name(name) ? name : "");
        return TJ_ERR_INVALID;
    }
    return gen_strided(
        block, word, 0, pack ? "pack" : "unpack", word_type(word),
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
        word_type(esize),
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

/* Whether (word, edge) is a kernel of @p block: a word dividing the block's word; with edges, an
 * edge word dividing the block's word, a W above it dividing its edges_word, and runs of more
 * than one byte. */
static bool valid_form(const tj_block_t *block, int word, int edge)
{
    dim_t dims[TJ_BLOCK_MAX_DIMS];

    if (!valid_block(block) || !valid_word(word))
        return false;
    if (edge == 0)
        return block->word % word == 0 && block->counts[0] % word == 0;
    return valid_word(edge) && edge < word && block->word % edge == 0 &&
           block->edges_word % word == 0 && edge_dims(block, dims) > 0;
}

static int edge_dims(const tj_block_t *block, dim_t *dims)
{
    int n = merge_dims(block, 1, dims);
    return n > 0 && dims[0].stride == 1 && dims[0].count > 1 ? n : 0;
}

static tj_status_t gen_strided(const tj_block_t *block, int word, int edge, const char *what,
                               const char *wtype, const char *pointers, const char *copy,
                               const char *name, char **source)
{
    text_t t = {0}, dims_text = {0}, offset_text = {0}, note = {0};
    char *block_text = NULL;
    char start[48], extent[48], words[48], words_literal[48], word_s[8], objects[16], span[16];
    char kstep[16], istep[16];
    const tj_template_t *tmpl = find_template("strided.cu");
    const char *isuffix;
    dim_t dims[TJ_BLOCK_MAX_DIMS];
    shape_t shape;
    bool index32;
    tj_status_t status;
    int n, blen;

    if (!valid_form(block, word, edge) || !valid_name(name)) {
        tj_log_error("cannot generate kernel %s: invalid block, word %d, edge %d or name",
                     valid_name(name) ? name : "(bad name)", word, edge);
        return TJ_ERR_INVALID;
    }
    if (tmpl == NULL) {
        tj_log_error("kernel template strided.cu is missing from the library");
        return TJ_ERR_INVALID;
    }

    blen = tj_block_format(block, NULL, 0);
    if (blen < 0 || (block_text = malloc((size_t)blen + 1)) == NULL) {
        status = TJ_ERR_NOMEM;
        goto out;
    }
    tj_block_format(block, block_text, (size_t)blen + 1);

    shape_of(words_of(block, word, edge), word, &shape);
    index32 = shape.words <= INDEX32_LIMIT;
    isuffix = index32 ? "u" : "ull";
    if (edge == 0) {
        n = merge_dims(block, word, dims);
        emit_dimensions(&dims_text, dims, n, isuffix);
        emit_offset(&offset_text, dims, n, "i");
    } else {
        char lit[48];
        n = edge_dims(block, dims);
        text_printf(&note,
                    "\n * Edges: a \"word\" is a slot, one of the SLOTS W-aligned windows of the "
                    "packed buffer\n * that one run of RUN bytes meets; the head and the tail of "
                    "the run are moved\n * %d bytes or more at a time (templates/edges.cu).",
                    edge);
        text_printf(
            &dims_text,
            "    /* Runs of RUN bytes, OBJECT_BYTES packed bytes per object, SLOTS slots per "
            "run; the\n     * runs of one object: dimension d has COUNT_d runs STRIDE_d "
            "bytes apart (merged as\n     * the dimensions of the kernels without edges). "
            "*/\n");
        format_i64(lit, sizeof(lit), dims[0].count);
        text_printf(&dims_text, "    const long long RUN = %s;\n", lit);
        format_i64(lit, sizeof(lit), block->size);
        text_printf(&dims_text, "    const long long OBJECT_BYTES = %s;\n", lit);
        text_printf(&dims_text, "    const index_t SLOTS = %" PRId64 "%s;\n",
                    edge_slots(dims[0].count, word, edge), isuffix);
        emit_counts(&dims_text, dims + 1, n - 1, isuffix);
        text_printf(&offset_text, "            const index_t j = i %% SLOTS;\n"
                                  "            const index_t run = i / SLOTS;\n");
        emit_offset(&offset_text, dims + 1, n - 1, "run");
    }
    if (dims_text.failed || offset_text.failed || note.failed) {
        status = TJ_ERR_NOMEM;
        goto out;
    }
    format_i64(start, sizeof(start), block->start);
    format_i64(extent, sizeof(extent), block->extent);
    snprintf(words, sizeof(words), "%" PRId64, shape.words);
    snprintf(words_literal, sizeof(words_literal), "%" PRId64 "%s", shape.words, isuffix);
    snprintf(word_s, sizeof(word_s), "%d", word);
    snprintf(objects, sizeof(objects), "%uu", shape.objects);
    snprintf(span, sizeof(span), "%uu", shape.span);
    snprintf(kstep, sizeof(kstep), "%uu", shape.kstep);
    snprintf(istep, sizeof(istep), "%uu", shape.istep);

    const subst_t subst[] = {
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
    if ((status = fill(&t, tmpl->text, subst, TJ_ARRAY_SIZE(subst))) != TJ_OK)
        goto out;
    *source = t.buf;
    t.buf = NULL;

out:
    free(note.buf);
    free(offset_text.buf);
    free(dims_text.buf);
    free(block_text);
    free(t.buf);
    if (status == TJ_ERR_NOMEM)
        tj_log_error("out of memory generating kernel %s", name);
    return status;
}

/* One piece of a partial window: @p w bytes at x, when @p cond holds. */
static void emit_piece(text_t *t, const char *ind, const char *cond, int w)
{
    text_printf(t,
                "%sif (%s) {\n%s    *(%s *)(to + x) = *(const %s *)(from + x);\n"
                "%s    x += %du;\n%s}\n",
                ind, cond, ind, word_type(w), word_type(w), ind, w, ind);
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
        tj_log_error("cannot generate kernel %s: invalid direction", valid_name(name) ? name : "");
        return TJ_ERR_INVALID;
    }
    if (edge == 0)
        return tj_gen_source(block, word, dir, name, source);
    if (!valid_form(block, word, edge))
        return gen_strided(block, word, edge, "", "", "", "", name, source); /* refused there */
    /* A head grows its alignment from x up to the window's end, a tail shrinks from its start
     * to its end: each piece aligned, none past the run's bytes [x, end). When every run is a
     * window long or more, a partial window is a head (x > 0, end = W) or a tail (x = 0): a
     * piece of a head is there when its bit of x is, one of a tail when its bit of end is. */
    run_long = edge_dims(block, dims) > 0 && dims[0].count >= word;
    ind = run_long ? "                        " : "                    ";
    if (run_long)
        text_printf(&pieces, "                    if (x != 0u) { /* the run's head */\n");
    for (int w = edge; w < word; w *= 2) {
        if (run_long)
            snprintf(cond, sizeof(cond), "(x & %du) != 0u", w);
        else
            snprintf(cond, sizeof(cond), "(x & %du) != 0u && x + %du <= end", w, w);
        emit_piece(&pieces, ind, cond, w);
    }
    if (run_long)
        text_printf(&pieces, "                    } else { /* its tail */\n");
    for (int w = word / 2; w >= edge; w /= 2) {
        if (run_long)
            snprintf(cond, sizeof(cond), "(end & %du) != 0u", w);
        else
            snprintf(cond, sizeof(cond), "x + %du <= end", w);
        emit_piece(&pieces, ind, cond, w);
    }
    if (run_long)
        text_printf(&pieces, "                    }\n");
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
    status = gen_strided(block, word, edge, pack ? "pack" : "unpack", word_type(word),
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

/* The smallest launch, for a block the generator refuses: nothing to divide by. */
static void launch_one(tj_launch_t *launch)
{
    tj_launch_t l = {{1, 1, 1}, {1, 1, 1}};
    *launch = l;
}

/* The shape of the kernel (block, word, edge), for a form the generator would have made; the
 * void geometry functions take a refused one as W = 1 without edges. */
static void form_shape(const tj_block_t *block, int word, int edge, shape_t *shape)
{
    if (edge == 0 || !valid_form(block, word, edge)) {
        word = effective_word(block, word);
        edge = 0;
    }
    shape_of(words_of(block, word, edge), word, shape);
}

int tj_gen_words_per_thread(const tj_block_t *block, int word, int edge)
{
    shape_t shape;
    if (!valid_block(block))
        return 1;
    form_shape(block, word, edge, &shape);
    return (int)(shape.kstep * shape.istep);
}

void tj_gen_launch(const tj_block_t *block, int word, int64_t count, tj_launch_t *launch)
{
    tj_gen_edges_launch(block, word, 0, count, launch);
}

void tj_gen_edges_geometry(const tj_block_t *block, int word, int edge, tj_gen_geometry_t *geo)
{
    shape_t shape;
    tj_launch_t l;

    if (!valid_block(block)) {
        launch_one(&geo->one);
        geo->per_y = INT64_MAX; /* one thread block, whatever the count */
        return;
    }
    form_shape(block, word, edge, &shape);
    l.block[0] = shape.threads;
    l.block[1] = 1;
    l.block[2] = 1;
    l.grid[0] =
        (unsigned)TJ_MIN(ceil_div(shape.words, (int64_t)shape.span * shape.istep), GRID_X_MAX);
    l.grid[1] = 1;
    l.grid[2] = 1;
    geo->one = l;
    geo->per_y = (int64_t)shape.objects * shape.kstep;
}

void tj_gen_edges_launch(const tj_block_t *block, int word, int edge, int64_t count,
                         tj_launch_t *launch)
{
    tj_gen_geometry_t geo;

    tj_gen_edges_geometry(block, word, edge, &geo);
    tj_gen_geometry_launch(&geo, count, launch);
}

/* templates/generic.cu declares the argument with the same layout: no padding may differ. */
_Static_assert(sizeof(tj_generic_params_t) == 296,
               "tj_generic_params_t is 296 bytes in generic.cu");
_Static_assert(offsetof(tj_generic_params_t, words) == 24 &&
                   offsetof(tj_generic_params_t, ndims) == 28 &&
                   offsetof(tj_generic_params_t, word) == 32 &&
                   offsetof(tj_generic_params_t, wide) == 36 &&
                   offsetof(tj_generic_params_t, bias) == 40 &&
                   offsetof(tj_generic_params_t, stride) == 48 &&
                   offsetof(tj_generic_params_t, dims) == 56 &&
                   sizeof(((tj_generic_params_t *)0)->dims[0]) == 16,
               "tj_generic_params_t has the layout of generic.cu");

int tj_gen_generic_words_per_thread(int word)
{
    /* The JIT kernels' reason holds here too: a narrow word costs as many instructions as a wide
     * one, so the trip's setup is shared by several. */
    return (int)unroll_of(word);
}

tj_status_t tj_gen_generic_source(int word, char **source)
{
    const tj_template_t *tmpl = find_template("generic.cu");
    text_t t = {0};
    char word_s[8], trip_s[16];
    tj_status_t status;

    if (!valid_word(word))
        return TJ_ERR_INVALID;
    if (tmpl == NULL) {
        tj_log_error("kernel template generic.cu is missing from the library");
        return TJ_ERR_INVALID;
    }
    snprintf(word_s, sizeof(word_s), "%d", word);
    snprintf(trip_s, sizeof(trip_s), "%du", tj_gen_generic_words_per_thread(word));
    const subst_t subst[] = {
        {"WORD", word_s}, {"WORD_TYPE", word_type(word)}, {"TRIP_WORDS", trip_s}};
    if ((status = fill(&t, tmpl->text, subst, TJ_ARRAY_SIZE(subst))) != TJ_OK) {
        free(t.buf);
        return status;
    }
    *source = t.buf;
    return TJ_OK;
}

/* Word indices of one object below this fit the generic kernels' 32-bit arithmetic, with room
 * for the grid-stride step. */
#define GENERIC_WORDS_LIMIT ((int64_t)1 << 31)

bool tj_gen_generic_usable(const tj_block_t *block, int word)
{
    return valid_block(block) && block->size / effective_word(block, word) < GENERIC_WORDS_LIMIT;
}

/* Division of q < 2^31 by c (2 <= c < 2^31) as a multiply-high and a shift (Granlund and
 * Montgomery, N = 31): l = ceil(log2 c), magic = ceil(2^(31 + l) / c) < 2^32, and q / c is
 * (q * magic) >> (31 + l), the multiply-high's 32 bits and a shift of l - 1. */
static void divider(uint64_t c, unsigned *magic, unsigned *shift)
{
    unsigned l = 0;
    while (((uint64_t)1 << l) < c)
        l++;
    *magic = (unsigned)((((uint64_t)1 << (31 + l)) + c - 1) / c);
    *shift = l - 1;
}

void tj_gen_generic_params(const tj_block_t *block, int word, tj_generic_params_t *params)
{
    dim_t dims[TJ_BLOCK_MAX_DIMS];
    tj_generic_params_t p;
    uint64_t below_count = 1;
    int n;

    memset(&p, 0, sizeof(p));
    p.ndims = 1;
    if (!tj_gen_generic_usable(block, word)) {
        *params = p; /* no words: the kernels do nothing */
        return;
    }
    word = effective_word(block, word);
    n = merge_dims(block, word, dims);
    /* Offsets count from the object's lowest byte: 32 bits hold them where its highest word
     * starts within 4 GiB of it. The differences are exact in unsigned arithmetic. */
    p.wide = (uint64_t)block->hi - (uint64_t)block->lo - (uint64_t)word > UINT32_MAX;
    p.start = block->lo;
    p.extent = block->extent;
    p.size = block->size;
    p.words = (unsigned)(block->size / word);
    p.word = word;
    p.bias = (long long)((uint64_t)block->start - (uint64_t)block->lo);
    p.stride = n > 0 ? dims[0].stride : word;
    /* Each product of counts divides the words of an object: each is below 2^31. */
    for (int d = 1; d < n; d++) {
        below_count *= (uint64_t)dims[d - 1].count;
        divider(below_count, &p.dims[d - 1].magic, &p.dims[d - 1].shift);
        p.dims[d - 1].weight =
            (long long)((uint64_t)dims[d].stride -
                        (uint64_t)dims[d - 1].count * (uint64_t)dims[d - 1].stride);
    }
    p.ndims = n > 0 ? n : 1;
    *params = p;
}

void tj_gen_generic_launch(const tj_block_t *block, int word, int64_t count, tj_launch_t *launch)
{
    int64_t threads;
    unsigned bx = 1;
    tj_launch_t l;

    if (!valid_block(block)) {
        launch_one(launch);
        return;
    }
    word = effective_word(block, word);
    /* Threads one object needs; x is a power of two up to the whole thread block, y holds as
     * many objects as fit beside it. */
    threads = ceil_div(block->size / word, tj_gen_generic_words_per_thread(word));
    while (bx < BLOCK_THREADS && bx < threads)
        bx *= 2;
    l.block[0] = bx;
    l.block[1] = BLOCK_THREADS / bx;
    l.block[2] = 1;
    l.grid[0] = (unsigned)TJ_MIN(ceil_div(threads, bx), GRID_X_MAX);
    l.grid[1] = (unsigned)TJ_MIN(ceil_div(TJ_MAX(count, 1), l.block[1]), GRID_YZ_MAX);
    l.grid[2] = 1;
    *launch = l;
}

static uint64_t template_hash;
static pthread_once_t template_hash_once = PTHREAD_ONCE_INIT;

static void hash_templates(void)
{
    XXH3_state_t state;

    XXH3_64bits_reset(&state);
    for (size_t i = 0; i < tj_templates_count; i++) {
        /* The NUL after each part keeps ("ab", "c") apart from ("a", "bc"). */
        XXH3_64bits_update(&state, tj_templates[i].name, strlen(tj_templates[i].name) + 1);
        XXH3_64bits_update(&state, tj_templates[i].text, tj_templates[i].len + 1);
    }
    template_hash = XXH3_64bits_digest(&state);
}

uint64_t tj_gen_template_hash(void)
{
    /* Every kernel key includes it: hash the templates once, not on every lookup. */
    pthread_once(&template_hash_once, hash_templates);
    return template_hash;
}

/* ---- fused kernels -------------------------------------------------------------------------- */

/* Thread blocks one member of a fused launch may have: with TJ_FUSED_MAX members the flattened
 * grid stays below 2^31. */
#define FUSED_MEMBER_BLOCKS ((int64_t)1 << 25)
#define FUSED_GX_MAX        ((int64_t)1 << 20)

/* templates/fused.cu declares the argument with the same layout: no padding may differ. */
_Static_assert(sizeof(tj_fused_entry_t) == 40, "tj_fused_entry_t is 40 bytes in fused.cu");
_Static_assert((TJ_FUSED_MAX & (TJ_FUSED_MAX - 1)) == 0,
               "fused.cu's binary search halves TJ_FUSED_MAX");
_Static_assert(sizeof(tj_fused_args_t) == 40 * TJ_FUSED_MAX + 8,
               "tj_fused_args_t has the layout of fused.cu");

/* The thread blocks across the words of one object of a fused member (the x extent of its
 * grid): a constant of its block, baked into its case. */
static unsigned fused_gx(const shape_t *shape)
{
    return (unsigned)TJ_MIN(ceil_div(shape->words, shape->span), FUSED_GX_MAX);
}

/* One leaf of the fused kernel's tree: the body of templates/strided.cu for block @p s and its
 * word. */
static void emit_case(text_t *t, int s, const tj_block_t *block, int word, bool pack)
{
    text_t dims_text = {0}, offset_text = {0};
    char start[48], extent[48];
    dim_t dims[TJ_BLOCK_MAX_DIMS];
    shape_t shape;
    bool index32;
    int n;

    shape_of(block->size / word, word, &shape);
    index32 = shape.words <= INDEX32_LIMIT;
    n = merge_dims(block, word, dims);
    emit_dimensions(&dims_text, dims, n, index32 ? "u" : "ull");
    emit_offset(&offset_text, dims, n, "i");
    format_i64(start, sizeof(start), block->start);
    format_i64(extent, sizeof(extent), block->extent);
    if (dims_text.failed || offset_text.failed) {
        t->failed = true;
        goto out;
    }
    text_printf(t, "    { /* block %d, W = %d */\n", s, word);
    text_printf(t, "    typedef %s word_t;\n", word_type(word));
    text_printf(t, "    %sword_t *packed = (%sword_t *)packed_bytes;\n", pack ? "" : "const ",
                pack ? "" : "const ");
    text_printf(t, "    typedef %s index_t;\n", index32 ? "unsigned int" : "unsigned long long");
    text_printf(t, "    const long long START = %s;\n    const long long EXTENT = %s;\n", start,
                extent);
    text_printf(t, "    const index_t WORDS = %" PRId64 "%s;\n", shape.words,
                index32 ? "u" : "ull");
    text_printf(t, "    const unsigned OBJECTS = %uu;\n    const unsigned SPAN = %uu;\n",
                shape.objects, shape.span);
    text_printf(t, "    const unsigned GX = %uu;\n", fused_gx(&shape));
    text_append(t, dims_text.buf, dims_text.len);
    /* The member's blocks are GX * gy (tj_gen_fused_launch): by < gy needs no test. */
    text_printf(t, "\n    const unsigned bx = local %% GX;\n"
                   "    const unsigned by = local / GX;\n");
    /* A launch has at most BLOCK_THREADS threads per block: with a span that wide, every thread
     * has a word of the object and nothing is left to test. */
    if (shape.objects == 1 && shape.span == BLOCK_THREADS)
        text_printf(t, "    const unsigned lane = threadIdx.x, slot = 0;\n");
    else
        text_printf(t, "    const unsigned lane = threadIdx.x %% SPAN;\n"
                       "    const unsigned slot = threadIdx.x / SPAN;\n"
                       "    if (slot >= OBJECTS)\n        return;\n");
    if (shape.objects > 1) {
        /* As templates/strided.cu with several objects per thread block: SPAN is the object. */
        text_printf(t, "    if (bx != 0)\n        return;\n    const index_t i = lane;\n");
        text_append(t, offset_text.buf, offset_text.len);
        text_printf(t, "\n#pragma unroll 1\n"
                       "    for (long long k = (long long)by * OBJECTS + slot; k < count;\n"
                       "         k += (long long)gy * OBJECTS) {\n"
                       "        const long long base = START + k * EXTENT;\n");
    } else {
        text_printf(t, "#pragma unroll 1\n"
                       "    for (long long k = (long long)by + slot; k < count; k += gy) {\n"
                       "        const long long base = START + k * EXTENT;\n"
                       "#pragma unroll 1\n"
                       "        for (index_t i = (index_t)bx * SPAN + lane; i < WORDS;\n"
                       "             i += (index_t)GX * SPAN) {\n");
        text_append(t, offset_text.buf, offset_text.len);
        text_printf(t, "\n");
    }
    text_printf(t, "%s\n%s    }\n    return;\n    }\n",
                pack ? "            packed[k * WORDS + i] = *(const word_t *)(typed + (base + "
                       "off));"
                     : "            *(word_t *)(typed + (base + off)) = packed[k * WORDS + i];",
                shape.objects > 1 ? "" : "        }\n");
out:
    free(offset_text.buf);
    free(dims_text.buf);
}

/* The tree of tests that leads each member to its block's code: blocks [lo, hi), in order. */
static void emit_tree(text_t *t, int lo, int hi, const tj_block_t *blocks, const int *words,
                      bool pack)
{
    int mid = lo + (hi - lo) / 2;

    if (hi - lo == 1) {
        emit_case(t, lo, &blocks[lo], words[lo], pack);
        return;
    }
    text_printf(t, "    if (shape < %d) {\n", mid);
    emit_tree(t, lo, mid, blocks, words, pack);
    text_printf(t, "    } else {\n");
    emit_tree(t, mid, hi, blocks, words, pack);
    text_printf(t, "    }\n");
}

/* Whether @p words[s] is a word of blocks[s], for each of the @p n blocks. */
static bool valid_fused(const tj_block_t *blocks, const int *words, int n)
{
    for (int s = 0; s < n; s++)
        if (!valid_block(&blocks[s]) || !valid_word(words[s]) || blocks[s].word % words[s] != 0 ||
            blocks[s].counts[0] % words[s] != 0)
            return false;
    return true;
}

tj_status_t tj_gen_fused_source(const tj_block_t *blocks, const int *words, int n, tj_dir_t dir,
                                const char *name, char **source)
{
    text_t t = {0}, cases = {0}, comment = {0};
    const tj_template_t *tmpl = find_template("fused.cu");
    char shapes[16], max[16], block_text[1024];
    bool pack = dir == TJ_DIR_PACK;
    tj_status_t status;

    if (blocks == NULL || words == NULL || n < 1 || n > TJ_FUSED_MAX || !valid_name(name) ||
        (dir != TJ_DIR_PACK && dir != TJ_DIR_UNPACK)) {
        tj_log_error("cannot generate fused kernel %s: invalid block count %d or name",
                     valid_name(name) ? name : "(bad name)", n);
        return TJ_ERR_INVALID;
    }
    if (!valid_fused(blocks, words, n)) {
        tj_log_error("cannot generate fused kernel %s: a block is invalid for its word", name);
        return TJ_ERR_INVALID;
    }
    if (tmpl == NULL) {
        tj_log_error("kernel template fused.cu is missing from the library");
        return TJ_ERR_INVALID;
    }
    for (int s = 0; s < n; s++) {
        tj_block_format(&blocks[s], block_text, sizeof(block_text));
        text_printf(&comment, " *   block %d: W=%d %s%s", s, words[s], block_text,
                    s + 1 < n ? "\n" : "");
    }
    emit_tree(&cases, 0, n, blocks, words, pack);
    if (cases.failed || comment.failed) {
        status = TJ_ERR_NOMEM;
        goto out;
    }
    snprintf(shapes, sizeof(shapes), "%d", n);
    snprintf(max, sizeof(max), "%d", TJ_FUSED_MAX);

    const subst_t subst[] = {
        {"NAME", name},
        {"DIRECTION", pack ? "pack" : "unpack"},
        {"SHAPES", shapes},
        {"BLOCKS", comment.buf},
        {"MAX", max},
        {"POINTERS", pack ? "    const char *typed = (const char *)src + e->typed;\n"
                            "    char *packed_bytes = (char *)dst + e->packed;"
                          : "    char *typed = (char *)dst + e->typed;\n"
                            "    const char *packed_bytes = (const char *)src + e->packed;"},
        {"CASES", cases.buf},
    };
    if ((status = fill(&t, tmpl->text, subst, TJ_ARRAY_SIZE(subst))) != TJ_OK)
        goto out;
    *source = t.buf;
    t.buf = NULL;

out:
    free(comment.buf);
    free(cases.buf);
    free(t.buf);
    if (status == TJ_ERR_NOMEM)
        tj_log_error("out of memory generating fused kernel %s", name);
    return status;
}

tj_status_t tj_gen_fused_launch(const tj_block_t *blocks, const int *words, int nblocks,
                                const tj_fused_member_t *members, int nmembers,
                                tj_fused_args_t *args, tj_launch_t *launch)
{
    tj_fused_args_t a;
    unsigned threads = 32;
    int64_t first = 0;

    if (blocks == NULL || words == NULL || members == NULL || nblocks < 1 ||
        nblocks > TJ_FUSED_MAX || nmembers < 1 || nmembers > TJ_FUSED_MAX ||
        !valid_fused(blocks, words, nblocks))
        return TJ_ERR_INVALID;
    for (int s = 0; s < nblocks; s++) {
        shape_t shape;
        shape_of(blocks[s].size / words[s], words[s], &shape);
        threads = TJ_MAX(threads, shape.threads);
    }
    memset(&a, 0, sizeof(a));
    for (int i = 0; i < nmembers; i++) {
        const tj_fused_member_t *mb = &members[i];
        shape_t shape;
        int64_t gx, gy;
        if (mb->shape < 0 || mb->shape >= nblocks || mb->count < 0)
            return TJ_ERR_INVALID;
        shape_of(blocks[mb->shape].size / words[mb->shape], words[mb->shape], &shape);
        gx = fused_gx(&shape);
        gy = TJ_MIN(ceil_div(TJ_MAX(mb->count, 1), shape.objects), GRID_YZ_MAX);
        gy = TJ_MAX(1, TJ_MIN(gy, FUSED_MEMBER_BLOCKS / gx));
        a.m[i].typed = mb->typed;
        a.m[i].packed = mb->packed;
        a.m[i].count = mb->count;
        a.m[i].first = (unsigned)first;
        a.m[i].gx = (unsigned)gx;
        a.m[i].gy = (unsigned)gy;
        a.m[i].shape = mb->shape;
        first += gx * gy;
    }
    /* The kernel's binary search reads every entry: those past the last member start after
     * every thread block. */
    for (int i = nmembers; i < TJ_FUSED_MAX; i++)
        a.m[i].first = 0xffffffffu;
    a.n = nmembers;
    launch->grid[0] = (unsigned)first;
    launch->grid[1] = launch->grid[2] = 1;
    launch->block[0] = threads;
    launch->block[1] = launch->block[2] = 1;
    *args = a;
    return TJ_OK;
}

/* ---- shared with the generators of other templates (jit/gen_internal.h) --------------------- */

tj_status_t tj_gen_fill(const char *template_name, const tj_gen_subst_t *subst, size_t n,
                        char **source)
{
    const tj_template_t *tmpl = find_template(template_name);
    subst_t *s = calloc(n > 0 ? n : 1, sizeof(*s));
    text_t t = {0};
    tj_status_t status;

    if (tmpl == NULL) {
        free(s);
        tj_log_error("kernel template %s is missing from the library", template_name);
        return TJ_ERR_INVALID;
    }
    if (s == NULL)
        return TJ_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        s[i].key = subst[i].key;
        s[i].value = subst[i].value;
    }
    status = fill(&t, tmpl->text, s, n);
    free(s);
    if (status != TJ_OK) {
        free(t.buf);
        return status;
    }
    *source = t.buf;
    return TJ_OK;
}

const char *tj_gen_word_type(int word)
{
    return word_type(word);
}

void tj_gen_literal(char *buf, size_t len, int64_t v)
{
    format_i64(buf, len, v);
}

bool tj_gen_valid_name(const char *name)
{
    return valid_name(name);
}
