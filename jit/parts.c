/* SPDX-License-Identifier: BSD-3-Clause */
/* Kernel generation for layouts: fills templates/parts.cu with a layout's frame, shapes and, when
 * small, its part table; builds the part table a larger layout's kernel reads from device
 * memory. */
#include "jit/parts.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit/gen_internal.h"
#include "type/layout_words.h"
#include "util/common.h"
#include "util/log.h"

#define BLOCK_THREADS 256
#define ITEMS         4 /* words per thread per thread block's chunk: templates/parts.cu */
#define GRID_X_MAX    2147483647LL

static bool valid_word(int word)
{
    return word == 1 || word == 2 || word == 4 || word == 8 || word == 16;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/* A list of values as C++ initialisers, eight a line. */
static void put_list(FILE *f, const char *type, const char *name, const char *what, int64_t n,
                     const int64_t *v64, const uint8_t *v8)
{
    fprintf(f, "/* %s */\nstatic __device__ const %s %s[] = {", what, type, name);
    for (int64_t i = 0; i < n; i++) {
        char lit[48];
        if (v8 != NULL)
            snprintf(lit, sizeof(lit), "%u", (unsigned)v8[i]);
        else
            tj_gen_literal(lit, sizeof(lit), v64[i]);
        fprintf(f, "%s%s%s", i % 8 == 0 ? "\n    " : " ", lit, i + 1 < n ? "," : "");
    }
    fprintf(f, "\n};\n");
}

/* The statements that add shape @p s's offset of byte q of a part to `off`. */
static void put_shape(FILE *f, const tj_block_t *sh, const char *ind)
{
    char lit[48];

    if (tj_layout_is_run(sh)) {
        fprintf(f, "%soff += q; /* a run */\n", ind);
        return;
    }
    fprintf(
        f, "%s/* %" PRId64 " bytes a repetition, %" PRId64 " apart; runs of %" PRId64 " bytes */\n",
        ind, sh->size, sh->extent, sh->counts[0]);
    fprintf(f, "%sconst long long rep = q / %" PRId64 "LL;\n", ind, sh->size);
    tj_gen_literal(lit, sizeof(lit), sh->extent);
    fprintf(f, "%sconst long long r = q - rep * %" PRId64 "LL;\n", ind, sh->size);
    if (sh->ndims == 1) {
        fprintf(f, "%soff += rep * %s + r;\n", ind, lit);
        return;
    }
    fprintf(f, "%slong long row = r / %" PRId64 "LL;\n", ind, sh->counts[0]);
    fprintf(f, "%soff += rep * %s + (r - row * %" PRId64 "LL);\n", ind, lit, sh->counts[0]);
    for (int d = 1; d < sh->ndims; d++) {
        tj_gen_literal(lit, sizeof(lit), sh->strides[d]);
        if (d + 1 < sh->ndims) {
            fprintf(f, "%soff += (row %% %" PRId64 "LL) * %s;\n", ind, sh->counts[d], lit);
            fprintf(f, "%srow /= %" PRId64 "LL;\n", ind, sh->counts[d]);
        } else {
            fprintf(f, "%soff += row * %s;\n", ind, lit);
        }
    }
}

/* The substitution texts of the template that put_texts writes, each through a stream of its
 * own. */
enum {
    TEXT_TABLE,
    TEXT_CONSTANTS,
    TEXT_POINTERS,
    TEXT_FRAME,
    TEXT_SHAPES,
    TEXT_LAYOUT,
    TEXT_COPY,
    TEXTS
};

typedef struct {
    char *text[TEXTS];
    size_t len[TEXTS];
} texts_t;

static void texts_free(texts_t *t)
{
    for (int i = 0; i < TEXTS; i++)
        free(t->text[i]);
}

/* The segments of a baked layout's kernel (type/layout_words.h), with their tables. */
typedef struct {
    int64_t n;
    tj_layout_segment_t *seg;
    /* Units before each segment (n + 1); its typed and packed byte. One allocation, at pre. */
    int64_t *pre, *disp, *at;
    uint8_t *shape, *wlog; /* one allocation, at shape */
    int words;             /* the words used, a bit each */
    int64_t units;         /* of one frame element */
} plan_t;

static void plan_free(plan_t *pl)
{
    free(pl->seg);
    free(pl->pre);
    free(pl->shape);
}

static bool plan_make(const tj_layout_t *l, int word, bool one, plan_t *pl)
{
    int64_t n = tj_layout_segments(l, word, one, NULL, 0);

    memset(pl, 0, sizeof(*pl));
    pl->n = n;
    pl->seg = malloc((size_t)n * sizeof(*pl->seg));
    pl->pre = malloc((size_t)(3 * n + 1) * sizeof(int64_t));
    pl->shape = malloc((size_t)(2 * n));
    if (pl->seg == NULL || pl->pre == NULL || pl->shape == NULL)
        return false;
    pl->disp = pl->pre + n + 1;
    pl->at = pl->disp + n;
    pl->wlog = pl->shape + n;
    tj_layout_segments(l, word, one, pl->seg, n);
    pl->pre[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        const tj_layout_segment_t *sg = &pl->seg[i];
        int lg = 0;
        while ((1 << lg) < sg->word)
            lg++;
        pl->pre[i + 1] = pl->pre[i] + sg->len / sg->word;
        pl->disp[i] = l->disp[sg->part] + sg->at;
        pl->at[i] = l->pre[sg->part] + sg->at;
        pl->shape[i] = l->shape != NULL ? l->shape[sg->part] : 0;
        pl->wlog[i] = (uint8_t)lg;
        pl->words |= sg->word;
    }
    pl->units = pl->pre[n];
    return true;
}

/* The statement moving one unit of @p w bytes from `in` to `out`. */
static void put_move(FILE *f, const char *ind, int w)
{
    fprintf(f, "%s*(%s *)out = *(const %s *)in;\n", ind, tj_gen_word_type(w), tj_gen_word_type(w));
}

/* The statements that move unit g: one word of W bytes, or of its segment's word. */
static void put_copy(FILE *f, const plan_t *pl, bool pack)
{
    const char *ind = "            ";
    int narrowest = pl->words & -pl->words;

    if (pl->seg == NULL || pl->words == narrowest) {
        fprintf(f, "%s%s", ind,
                pack ? "packed[g] = *(const word_t *)(typed + off);"
                     : "*(word_t *)(typed + off) = packed[g];");
        return;
    }
    fprintf(f, "%s{\n", ind);
    fprintf(f, "%s    /* The unit's packed byte: its frame element's, its segment's, its own. */\n",
            ind);
    fprintf(f, "%s    const long long pk = (long long)e * FBYTES + at[p] + q;\n", ind);
    fprintf(f, "%s    char *const out = %s;\n", ind, pack ? "packed + pk" : "typed + off");
    fprintf(f, "%s    const char *const in = %s;\n", ind, pack ? "typed + off" : "packed + pk");
    fprintf(f, "%s    switch (wl) {\n", ind);
    for (int w = 16; w > narrowest; w /= 2) {
        int lg = 0;
        if ((pl->words & w) == 0)
            continue;
        while ((1 << lg) < w)
            lg++;
        fprintf(f, "%s    case %d:\n", ind, lg);
        put_move(f, "                    ", w);
        fprintf(f, "%s        break;\n", ind);
    }
    fprintf(f, "%s    default:\n", ind);
    put_move(f, "                    ", narrowest);
    fprintf(f, "%s        break;\n%s    }\n%s}", ind, ind, ind);
}

static bool put_texts(const tj_layout_t *l, const plan_t *pl, int word, tj_dir_t dir,
                      const char *name, texts_t *t)
{
    FILE *f[TEXTS];
    bool pack = dir == TJ_DIR_PACK, ok = true, multi = pl->seg != NULL && pl->words != word;
    int64_t elems = tj_layout_elements(l);
    char lit[48], arr[256];

    for (int i = 0; i < TEXTS; i++)
        if ((f[i] = open_memstream(&t->text[i], &t->len[i])) == NULL)
            ok = false;
    if (!ok) {
        for (int i = 0; i < TEXTS; i++)
            if (f[i] != NULL)
                fclose(f[i]);
        return false;
    }
    /* The segment table, in the source or (the parts) from device memory. */
    if (l->baked) {
        snprintf(arr, sizeof(arr), "%s_pre", name);
        put_list(f[TEXT_TABLE], "long long", arr, "units of the frame element before each segment",
                 pl->n + 1, pl->pre, NULL);
        snprintf(arr, sizeof(arr), "%s_disp", name);
        put_list(f[TEXT_TABLE], "long long", arr,
                 "byte displacement of each segment in its frame element", pl->n, pl->disp, NULL);
        if (l->nshapes > 1) {
            snprintf(arr, sizeof(arr), "%s_shape", name);
            put_list(f[TEXT_TABLE], "unsigned char", arr, "shape of each segment", pl->n, NULL,
                     pl->shape);
        }
        if (multi) {
            snprintf(arr, sizeof(arr), "%s_at", name);
            put_list(f[TEXT_TABLE], "long long", arr,
                     "packed byte of each segment in its frame element", pl->n, pl->at, NULL);
            snprintf(arr, sizeof(arr), "%s_wlog", name);
            put_list(f[TEXT_TABLE], "unsigned char", arr, "log2 of each segment's word", pl->n,
                     NULL, pl->wlog);
        }
        tj_gen_literal(lit, sizeof(lit), l->extent);
        fprintf(f[TEXT_CONSTANTS],
                "    /* Units of one frame element and of one object; frame elements of one\n"
                "     * object; segments of one frame element; what pre counts per unit; bytes\n"
                "     * from one object to the next. */\n"
                "    const unsigned long long FUNITS = %" PRId64 "ull;\n"
                "    const unsigned long long ELEMS = %" PRId64 "ull;\n"
                "    const unsigned long long OUNITS = FUNITS * ELEMS;\n"
                "    const long long SEGMENTS = %" PRId64 "LL;\n"
                "    const long long PRE_SCALE = 1;\n"
                "    const long long EXTENT = %s;",
                pl->units, elems, pl->n, lit);
        if (multi)
            fprintf(f[TEXT_CONSTANTS],
                    "\n    /* Packed bytes of one frame element. */\n"
                    "    const long long FBYTES = %" PRId64 "LL;",
                    l->pre[l->nparts]);
        fprintf(f[TEXT_POINTERS],
                "    const long long *pre = %s_pre;\n"
                "    const long long *disp = %s_disp;\n",
                name, name);
        if (l->nshapes > 1)
            fprintf(f[TEXT_POINTERS], "    const unsigned char *shape = %s_shape;\n", name);
        if (multi)
            fprintf(f[TEXT_POINTERS],
                    "    const long long *at = %s_at;\n"
                    "    const unsigned char *wlog = %s_wlog;\n",
                    name, name);
    } else {
        fprintf(
            f[TEXT_CONSTANTS],
            "    /* Units (words) of one frame element and of one object; frame elements of one\n"
            "     * object; segments (parts) of one frame element; what pre counts per unit\n"
            "     * (bytes); bytes from one object to the next. */\n"
            "    const unsigned long long FUNITS = (unsigned long long)args.fbytes / "
            "sizeof(word_t);\n"
            "    const unsigned long long ELEMS = %" PRId64 "ull;\n"
            "    const unsigned long long OUNITS = FUNITS * ELEMS;\n"
            "    const long long SEGMENTS = args.parts;\n"
            "    const long long PRE_SCALE = (long long)sizeof(word_t);\n"
            "    const long long EXTENT = args.extent;",
            elems);
        /* The displacements start at the next multiple of 8 after the offsets. */
        fprintf(f[TEXT_POINTERS],
                "    const pre_t *pre = (const pre_t *)args.table;\n"
                "    const disp_t *disp =\n"
                "        (const disp_t *)((const char *)args.table +\n"
                "                         ((args.parts + 1) * (long long)sizeof(pre_t) + 7) / 8 "
                "* 8);\n");
        if (l->nshapes > 1)
            fprintf(f[TEXT_POINTERS],
                    "    const unsigned char *shape = (const unsigned char *)(disp + "
                    "args.parts);\n");
    }
    if (multi)
        fprintf(f[TEXT_POINTERS], "%s",
                pack ? "    const char *typed = (const char *)src;\n"
                       "    char *packed = (char *)dst;"
                     : "    char *typed = (char *)dst;\n"
                       "    const char *packed = (const char *)src;");
    else
        fprintf(f[TEXT_POINTERS], "%s",
                pack ? "    const char *typed = (const char *)src;\n"
                       "    word_t *packed = (word_t *)dst;"
                     : "    char *typed = (char *)dst;\n"
                       "    const word_t *packed = (const word_t *)src;");
    /* The frame element's offset: digits of its index, dimension 0 fastest. */
    if (l->nframe > 0) {
        const char *ind = "            ";
        fprintf(f[TEXT_FRAME], "%s/* The frame element's offset, dimension 0 fastest. */\n", ind);
        fprintf(f[TEXT_FRAME], "%sunsigned long long fe = e - k * ELEMS;\n", ind);
        for (int d = 0; d < l->nframe; d++) {
            tj_gen_literal(lit, sizeof(lit), l->fstrides[d]);
            if (d + 1 < l->nframe) {
                fprintf(f[TEXT_FRAME], "%soff += (long long)(fe %% %" PRId64 "ull) * %s;\n", ind,
                        l->fcounts[d], lit);
                fprintf(f[TEXT_FRAME], "%sfe /= %" PRId64 "ull;\n", ind, l->fcounts[d]);
            } else {
                fprintf(f[TEXT_FRAME], "%soff += (long long)fe * %s;", ind, lit);
            }
        }
    }
    /* The place of byte q in the part's shape. */
    if (l->nshapes == 1) {
        fprintf(f[TEXT_SHAPES], "            {\n");
        put_shape(f[TEXT_SHAPES], &l->shapes[0], "                ");
        fprintf(f[TEXT_SHAPES], "            }");
    } else {
        fprintf(f[TEXT_SHAPES], "            switch (shape[p]) {\n");
        for (int s = 0; s < l->nshapes; s++) {
            fprintf(f[TEXT_SHAPES], "            case %d: {\n", s);
            put_shape(f[TEXT_SHAPES], &l->shapes[s], "                ");
            fprintf(f[TEXT_SHAPES], "                break;\n            }\n");
        }
        fprintf(f[TEXT_SHAPES], "            default:\n                break;\n            }");
    }
    /* The comment's description of the layout: only what the kernel depends on, so that every
     * layout sharing a kernel (those of one frame and shapes over a device table) has the same
     * source and so the same entry in the disk cache. */
    if (l->baked)
        fprintf(f[TEXT_LAYOUT], "%" PRId64 " parts of %d shapes, %" PRId64 " segments", l->nparts,
                l->nshapes, pl->n);
    else
        fprintf(f[TEXT_LAYOUT], "parts of %d shapes in a device table", l->nshapes);
    if (l->nframe > 0) {
        fprintf(f[TEXT_LAYOUT], ", frame");
        for (int d = 0; d < l->nframe; d++)
            fprintf(f[TEXT_LAYOUT], " %" PRId64 "x%" PRId64, l->fcounts[d], l->fstrides[d]);
    }
    for (int s = 0; s < l->nshapes; s++) {
        char block[1024];
        if (tj_layout_is_run(&l->shapes[s])) {
            fprintf(f[TEXT_LAYOUT], "\n *   shape %d: runs", s);
            continue;
        }
        tj_block_format(&l->shapes[s], block, sizeof(block));
        fprintf(f[TEXT_LAYOUT], "\n *   shape %d: %s", s, block);
    }
    put_copy(f[TEXT_COPY], pl, pack);
    for (int i = 0; i < TEXTS; i++)
        if (f[i] != NULL && fclose(f[i]) != 0)
            ok = false;
    return ok;
}

tj_status_t tj_gen_parts_source(const tj_layout_t *l, int word, bool one, tj_dir_t dir,
                                const char *name, char **source)
{
    texts_t t = {0};
    plan_t pl = {0};
    char note[128], words_note[128], offset[160];
    bool multi;
    tj_status_t st;

    if (l == NULL || !l->finished || (l->baked && l->nparts < 1) || !valid_word(word) ||
        !tj_layout_kernel_word(l, word, one) || (dir != TJ_DIR_PACK && dir != TJ_DIR_UNPACK) ||
        !tj_gen_valid_name(name)) {
        tj_log_error("cannot generate parts kernel %s: invalid layout, word %d or name",
                     name != NULL && tj_gen_valid_name(name) ? name : "(bad name)", word);
        return TJ_ERR_INVALID;
    }
    if ((l->baked && !plan_make(l, word, one, &pl)) || !put_texts(l, &pl, word, dir, name, &t)) {
        plan_free(&pl);
        texts_free(&t);
        tj_log_error("out of memory generating kernel %s", name);
        return TJ_ERR_NOMEM;
    }
    multi = l->baked && pl.words != word;
    if (!multi) {
        snprintf(words_note, sizeof(words_note), "W = %d bytes per load and store", word);
    } else {
        /* "words of 16, 4 and 1 bytes": the widest first. */
        int n = snprintf(words_note, sizeof(words_note), "words of");
        for (int w = 16; w >= 1; w /= 2) {
            if ((pl.words & w) == 0)
                continue;
            n += snprintf(words_note + n, sizeof(words_note) - (size_t)n, "%s %d",
                          w == word                   ? ""
                          : (pl.words & (w - 1)) != 0 ? ","
                                                      : " and",
                          w);
        }
        snprintf(words_note + n, sizeof(words_note) - (size_t)n,
                 " bytes, each segment's own (W = %d, the widest)", word);
    }
    if (l->baked)
        snprintf(note, sizeof(note), "the segment table is baked in below%s.",
                 one ? ", for a launch of one object" : "");
    else
        snprintf(note, sizeof(note), "the part table is read from device memory (args.table).");
    if (!l->baked)
        snprintf(offset, sizeof(offset),
                 "            const long long q = jb - (long long)pre[p]; /* bytes into it */");
    else if (!multi)
        snprintf(offset, sizeof(offset),
                 "            const long long q = (jb - (long long)pre[p]) * "
                 "(long long)sizeof(word_t); /* bytes into it */");
    else
        snprintf(offset, sizeof(offset),
                 "            const unsigned wl = wlog[p];\n"
                 "            const long long q = (jb - (long long)pre[p]) << wl; /* bytes into "
                 "it */");
    const tj_gen_subst_t subst[] = {
        {"NAME", name},
        {"DIRECTION", dir == TJ_DIR_PACK ? "pack" : "unpack"},
        {"LAYOUT", t.text[TEXT_LAYOUT]},
        {"WORDS_NOTE", words_note},
        {"TABLE_NOTE", note},
        {"TABLE", t.text[TEXT_TABLE]},
        {"WORD_TYPE", tj_gen_word_type(word)},
        {"PRE_TYPE", l->baked            ? "long long"
                     : l->pre_bytes == 4 ? "unsigned int"
                                         : "long long"},
        {"DISP_TYPE", l->baked             ? "long long"
                      : l->disp_bytes == 4 ? "int"
                                           : "long long"},
        {"CONSTANTS", t.text[TEXT_CONSTANTS]},
        {"POINTERS", t.text[TEXT_POINTERS]},
        {"FRAME", t.text[TEXT_FRAME]},
        {"SHAPES", t.text[TEXT_SHAPES]},
        {"OFFSET", offset},
        {"ELEMENT",
         l->baked ? "            /* The unit's frame element and its unit in it (constant "
                    "divisors). */\n"
                    "            const unsigned long long e = g / FUNITS;\n"
                    "            const unsigned long long ju = g - e * FUNITS;"
                  : "            /* The unit's frame element and its unit in it: from the chunk's\n"
                    "             * first unit's when an element is longer than a chunk (at most\n"
                    "             * one step), else by a division. */\n"
                    "            unsigned long long e, ju;\n"
                    "            if (FUNITS >= chunk) {\n"
                    "                ju = r0 + (g - c0);\n"
                    "                e = e0;\n"
                    "                if (ju >= FUNITS) {\n"
                    "                    ju -= FUNITS;\n"
                    "                    e++;\n"
                    "                }\n"
                    "            } else {\n"
                    "                e = g / FUNITS;\n"
                    "                ju = g - e * FUNITS;\n"
                    "            }"},
        {"COPY", t.text[TEXT_COPY]},
    };
    st = tj_gen_fill("parts.cu", subst, TJ_ARRAY_SIZE(subst), source);
    plan_free(&pl);
    texts_free(&t);
    return st;
}

void tj_gen_parts_launch(const tj_layout_t *l, int word, bool one, int64_t count, bool serial,
                         tj_launch_t *launch)
{
    int64_t total = 0;
    tj_launch_t g = {{1, 1, 1}, {1, 1, 1}};

    if (!serial && l != NULL && valid_word(word) && l->size > 0 &&
        !__builtin_mul_overflow(TJ_MAX(count, 1), tj_layout_kernel_units(l, word, one), &total)) {
        g.block[0] = BLOCK_THREADS;
        g.grid[0] = (unsigned)TJ_MIN(ceil_div(total, (int64_t)BLOCK_THREADS * ITEMS), GRID_X_MAX);
    }
    *launch = g;
}

void tj_gen_parts_args(const tj_layout_t *l, uint64_t table, tj_parts_args_t *args)
{
    memset(args, 0, sizeof(*args));
    args->table = l->baked ? 0 : table;
    args->parts = l->nparts;
    args->fbytes = l->pre[l->nparts];
    args->obytes = l->size;
    args->extent = l->extent;
}

static size_t disp_at(const tj_layout_t *l)
{
    return ((size_t)(l->nparts + 1) * (size_t)l->pre_bytes + 7) / 8 * 8;
}

size_t tj_gen_parts_table_bytes(const tj_layout_t *l)
{
    return disp_at(l) + (size_t)l->nparts * (size_t)l->disp_bytes +
           (l->nshapes > 1 ? (size_t)l->nparts : 0);
}

void tj_gen_parts_table(const tj_layout_t *l, void *buf)
{
    char *b = buf, *d = b + disp_at(l);

    for (int64_t p = 0; p <= l->nparts; p++) {
        if (l->pre_bytes == 4) {
            uint32_t v = (uint32_t)l->pre[p];
            memcpy(b + 4 * p, &v, 4);
        } else {
            memcpy(b + 8 * p, &l->pre[p], 8);
        }
    }
    memset(b + (size_t)(l->nparts + 1) * (size_t)l->pre_bytes, 0,
           disp_at(l) - (size_t)(l->nparts + 1) * (size_t)l->pre_bytes);
    for (int64_t p = 0; p < l->nparts; p++) {
        if (l->disp_bytes == 4) {
            int32_t v = (int32_t)l->disp[p];
            memcpy(d + 4 * p, &v, 4);
        } else {
            memcpy(d + 8 * p, &l->disp[p], 8);
        }
    }
    if (l->nshapes > 1)
        memcpy(d + (size_t)l->nparts * (size_t)l->disp_bytes, l->shape, (size_t)l->nparts);
}
