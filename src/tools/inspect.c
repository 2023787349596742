/* SPDX-License-Identifier: BSD-3-Clause */
/* `typejit inspect`: what typejit makes of one type: its IR before and after the canonical passes,
 * its strided block or layout, its word, and the kernel the runtime launches for it, with its
 * cache key and source. */
#include "inspect.h"

#include <ctype.h>
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/hash.h"
#include "jit/gen.h"
#include "jit/nvrtc.h"
#include "kernels/key.h"
#include "kernels/lookup.h"
#include "options.h"
#include "type/element.h"
#include "type/flatten.h"
#include "type/layout_words.h"
#include "type/translate.h"
#include "typedesc.h"
#include "util/config.h"

/* Why a translation did not give a strided block, in words: the translation's own reason
 * @p reason, else the status. */
static const char *why_not(tj_status_t st, tj_reason_t reason)
{
    return st == TJ_ERR_NOT_STRIDED ? tj_reason_string(reason) : tj_status_string(st);
}

static const char *usage_inspect =
    "usage: typejit inspect [--arch sm_XX] [--word W] [--unpack] [--no-source] 'TYPE'\n"
    "\n"
    "Print the type's IR as translated and after the canonical passes, its strided block, word\n"
    "size W, the words of its launches on buffers and packed positions aligned to its elements,\n"
    "whether its objects overlap, and the kernel the runtime launches for it: the block\n"
    "moved to start 0 (launched at the start), its cache key (header lines, then the source) and\n"
    "hash, and its CUDA source. Needs no GPU; the key needs NVRTC.\n"
    "\n"
    "  --arch sm_XX   target of the key (default: TYPEJIT_ARCH, else sm_90)\n"
    "  --word W       a narrower word than the block allows (1, 2, 4, 8 or 16)\n"
    "  --unpack       the unpack kernel instead of the pack kernel\n"
    "  --no-source    leave the source out\n";

/* Whether @p w is among the @p n words of @p list. */
static bool listed(const tj_words_offsets_t *list, int n, tj_words_t w)
{
    for (int i = 0; i < n; i++)
        if (list[i].words.word == w.word && list[i].words.edge == w.edge)
            return true;
    return false;
}

/* One line of inspect's launch words and the first placement that selects them: "W=16 with
 * edges of 4 bytes for one object (aligned buffers)", "W=8 (typed buffer at 16n+8)". */
static void print_launch(const char *head, const char *what, const tj_words_offsets_t *at)
{
    char edges[48] = "", place[80];

    if (at->words.edge != 0)
        snprintf(edges, sizeof(edges), " with edges of %d bytes", at->words.edge);
    if (at->typed_offset == 0 && at->packed_offset == 0)
        snprintf(place, sizeof(place), "aligned buffers");
    else if (at->packed_offset == 0)
        snprintf(place, sizeof(place), "typed buffer at 16n+%d", at->typed_offset);
    else if (at->typed_offset == 0)
        snprintf(place, sizeof(place), "packed bytes at 16n+%d", at->packed_offset);
    else
        snprintf(place, sizeof(place), "typed buffer at 16n+%d, packed bytes at 16n+%d",
                 at->typed_offset, at->packed_offset);
    printf("%sW=%d%s%s (%s)\n", head, at->words.word, edges, what, place);
}

/* The words of the launches of @p block on typed buffers and packed positions at multiples of
 * @p align (tj_block_words_aligned_to), one object and several: each once, with the first
 * placement that selects it, "for one object" or "for several" where only those take it. */
static void print_launches(const tj_block_t *block, int align)
{
    tj_words_offsets_t one[TJ_BLOCK_WORDS_MAX], several[TJ_BLOCK_WORDS_MAX];
    int n1 = tj_block_words_aligned_to(block, 1, align, one);
    int n2 = tj_block_words_aligned_to(block, 2, align, several);
    const char *head = "launch:     ";

    for (int i = 0; i < n1; i++, head = "            ")
        print_launch(head, listed(several, n2, one[i].words) ? "" : " for one object", &one[i]);
    for (int i = 0; i < n2; i++)
        if (!listed(one, n1, several[i].words))
            print_launch(head, " for several", &several[i]);
}

/* The words the kernel (@p word, @p one) of the baked layout @p l moves part @p part in (every
 * part's with -1), a bit each. */
static int layout_words(const tj_layout_t *l, int word, bool one, int64_t part)
{
    int64_t n = tj_layout_segments(l, word, one, NULL, 0);
    tj_layout_segment_t *seg = malloc((size_t)(n > 0 ? n : 1) * sizeof(*seg));
    int mask = 0;

    if (seg != NULL) {
        tj_layout_segments(l, word, one, seg, n);
        for (int64_t i = 0; i < n; i++)
            if (part < 0 || seg[i].part == part)
                mask |= seg[i].word;
    }
    free(seg);
    return mask != 0 ? mask : word;
}

/* "16, 4 and 1": the words of @p mask, widest first. */
static void format_words(int mask, char *buf, size_t len)
{
    size_t used = 0;
    bool first = true;

    buf[0] = '\0';
    for (int w = 16; w >= 1; w /= 2) {
        int k;
        if ((mask & w) == 0)
            continue;
        k = snprintf(buf + used, len - used, "%s%d",
                     first                   ? ""
                     : (mask & (w - 1)) != 0 ? ", "
                                             : " and ",
                     w);
        if (k < 0 || (size_t)k >= len - used)
            return;
        used += (size_t)k;
        first = false;
    }
}

/* ", words of 16 and 8" after a part's line, for a baked layout's kernel. */
static void print_part_words(const tj_layout_t *l, int word, bool one, int64_t part)
{
    char buf[64];

    if (l->baked) {
        format_words(layout_words(l, word, one, part), buf, sizeof(buf));
        printf(", words of %s", buf);
    }
    printf("\n");
}

/* The launch lines of a layout, its kernels of aligned buffers: "W=4, parts in words of 4 and 1
 * for one object (aligned buffers)", then "W=1 for several ...". */
static void print_layout_launch(const tj_layout_t *l)
{
    int words[2];
    bool one[2];
    int n = tj_layout_launch_words_aligned(l, words, one);

    for (int i = n - 1; i >= 0; i--) {
        int mask = l->baked ? layout_words(l, words[i], one[i], -1) : words[i];
        bool several = (mask & (mask - 1)) != 0;
        char buf[64] = "";
        if (several)
            format_words(mask, buf, sizeof(buf));
        printf("%sW=%d%s%s%s (aligned buffers)\n", i == n - 1 ? "launch:     " : "            ",
               words[i], several ? ", parts in words of " : "", buf,
               n == 1   ? ""
               : one[i] ? " for one object"
                        : " for several");
    }
}

int tj_inspect_run(int argc, char **argv)
{
    const char *text = NULL, *arch = NULL;
    int word = 0;
    tj_words_t words = {0, 0}, launch_words[2];
    bool unpack = false, source = true;
    MPI_Datatype type;
    tj_ir_t ir, canon;
    tj_block_t block;
    char err[256], buf[4096], target[32], *src, *key;
    tj_kernel_spec_t spec;
    MPI_Aint lb, extent, tlb, textent;
    MPI_Count size;
    const char *why;
    tj_layout_t *layout = NULL;
    tj_reason_t reason = TJ_REASON_NONE, fwhy = TJ_REASON_NONE;
    bool from_layout = false, one = false;
    int align;
    tj_status_t st, st_ir, fst = TJ_ERR_NOT_STRIDED;

    if (tj_opt_help(argc, argv)) {
        fputs(usage_inspect, stdout);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        const char *value;
        bool bad = false;
        long w;
        if (tj_opt_value("inspect", argc, argv, &i, "--arch", &arch)) {
            if (arch == NULL || !tj_opt_target("inspect", arch))
                return 2;
        } else if (tj_opt_value("inspect", argc, argv, &i, "--word", &value)) {
            if (value == NULL || !tj_opt_number("inspect", "--word", value, 1, 16, &w))
                return 2;
            if (w != 1 && w != 2 && w != 4 && w != 8 && w != 16) {
                fprintf(stderr, "typejit inspect: --word is 1, 2, 4, 8 or 16, not %ld\n", w);
                return 2;
            }
            word = (int)w;
        } else if (tj_opt_flag("inspect", argv, i, "--unpack", &bad)) {
            if (bad)
                return 2;
            unpack = true;
        } else if (tj_opt_flag("inspect", argv, i, "--no-source", &bad)) {
            if (bad)
                return 2;
            source = false;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0' && argv[i][1] != '{' &&
                   !isdigit((unsigned char)argv[i][1])) {
            fprintf(stderr, "typejit inspect: unknown option %s\n%s", argv[i], usage_inspect);
            return 2;
        } else if (text != NULL) {
            fprintf(stderr,
                    "typejit inspect: one TYPE at a time: got \"%s\" and \"%s\" (quote a "
                    "description that holds spaces)\n",
                    text, argv[i]);
            return 2;
        } else
            text = argv[i];
    }
    if (text == NULL) {
        fprintf(stderr, "typejit inspect: no TYPE given\n%s", usage_inspect);
        return 2;
    }
    if (tj_typedesc_parse(text, &type, err, sizeof(err)) != TJ_OK) {
        fprintf(stderr, "typejit inspect: %s\n", err);
        return 1;
    }
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &tlb, &textent);
    PMPI_Type_size_x(type, &size);
    align = tj_type_alignment(type);
    st_ir = tj_translate_ir(type, &ir, &reason);
    st = tj_translate_block_why(type, &block, &canon, &reason);
    why = why_not(st, reason);
    /* Not one strided block: what a commit makes of it, its layout (or its block, found
     * through its layout). */
    if (st == TJ_ERR_NOT_STRIDED &&
        (fst = tj_flatten_form(type, &block, &layout, &fwhy)) == TJ_OK && layout == NULL)
        from_layout = true;
    PMPI_Type_free(&type);
    /* Every usage error before the first line of output. */
    /* Without --word, the kernel of one object on aligned buffers, as the runtime launches it. */
    if ((st == TJ_OK || from_layout) && word == 0) {
        tj_block_words_aligned(&block, launch_words);
        words = launch_words[0];
        word = words.word;
    } else {
        words.word = word;
    }
    if ((st == TJ_OK || from_layout) && words.edge == 0 && block.word % word) {
        fprintf(stderr, "typejit inspect: --word %d does not divide W=%d of this type\n", word,
                block.word);
        return 2;
    }
    if (layout != NULL && !layout->baked && word != 0 && layout->word % word) {
        fprintf(stderr, "typejit inspect: --word %d does not divide W=%d of this type\n", word,
                layout->word);
        tj_layout_release(layout);
        return 2;
    }
    /* A layout's: the kernel of one object on buffers aligned to 16 bytes, or to --word. */
    if (layout != NULL)
        word = tj_layout_launch_word(layout, 1, (uintptr_t)(word != 0 ? word : 16), 0, &one);
    snprintf(target, sizeof(target), "%s",
             arch                   ? arch
             : tj_config()->arch[0] ? tj_config()->arch
                                    : "sm_90");
    if ((st == TJ_OK || from_layout || layout != NULL) && arch == NULL &&
        !tj_opt_target("inspect", target)) {
        tj_layout_release(layout);
        return 2;
    }

    printf("type:       %s\n", text);
    printf("mpi:        size=%lld lb=%lld extent=%lld true_lb=%lld true_extent=%lld\n",
           (long long)size, (long long)lb, (long long)extent, (long long)tlb, (long long)textent);
    if (st_ir == TJ_OK) {
        tj_ir_format(&ir, buf, sizeof(buf));
        printf("ir:         %s\n", buf);
    }
    tj_dir_t dir = unpack ? TJ_DIR_UNPACK : TJ_DIR_PACK;
    if (layout != NULL) {
        bool disjoint = tj_layout_disjoint(layout, 1), many = tj_layout_disjoint(layout, 2);
        printf("strided:    no (%s): a layout of strided parts\n", why);
        tj_layout_format(layout, buf, sizeof(buf));
        printf("layout:     %s\n", buf);
        for (int d = 0; d < layout->nframe; d++)
            printf("frame %-4d %lld elements, %lld bytes apart\n", d, (long long)layout->fcounts[d],
                   (long long)layout->fstrides[d]);
        for (int sh = 0; sh < layout->nshapes; sh++) {
            if (tj_layout_is_run(&layout->shapes[sh]))
                snprintf(buf, sizeof(buf), "contiguous runs");
            else
                tj_block_format(&layout->shapes[sh], buf, sizeof(buf));
            printf("shape %-4d %s\n", sh, buf);
        }
        for (int64_t p = 0; p < layout->nparts && p < 8; p++) {
            printf("part %-5lld at %lld, %lld bytes, shape %d", (long long)p,
                   (long long)layout->disp[p], (long long)(layout->pre[p + 1] - layout->pre[p]),
                   layout->shape != NULL ? layout->shape[p] : 0);
            print_part_words(layout, word, one, p);
        }
        if (layout->nparts > 8)
            printf("(%lld more parts)\n", (long long)(layout->nparts - 8));
        printf("word:       W=%d\n", layout->word);
        print_layout_launch(layout);
        printf("footprint:  %s\n", disjoint && many ? "no byte addressed twice"
                                   : disjoint
                                       ? "objects overlap (an unpack of several runs serially, in "
                                         "typemap order)"
                                       : "overlapping (unpack runs serially, in typemap order)");
        spec = tj_spec_parts(layout, word, one, dir, unpack && !disjoint, target);
    } else if (st != TJ_OK && !from_layout) {
        if (st == TJ_ERR_NOT_STRIDED && fst == TJ_ERR_NOT_STRIDED)
            printf("strided:    no (%s): the system MPI packs this type (%s)\n", why,
                   tj_reason_string(fwhy));
        else
            printf("strided:    no (%s): the system MPI packs this type\n", why);
        return 0;
    } else {
        if (from_layout) {
            printf("strided:    yes, through its layout (%s)\n", why);
        } else {
            tj_ir_format(&canon, buf, sizeof(buf));
            printf("canonical:  %s\n", buf);
        }
        tj_block_format(&block, buf, sizeof(buf));
        printf("block:      %s\n", buf);
        printf("dimensions: %d\nword:       W=%d\n", block.ndims, block.word);
        printf("alignment:  %d (of the elements)\n", align);
        print_launches(&block, align);
        printf("footprint:  [%lld, %lld) per object, %s\n", (long long)block.lo,
               (long long)block.hi,
               block.disjoint ? "no byte addressed twice"
                              : "overlapping (unpack runs serially, in typemap order)");
        spec = tj_spec_words(&block, words, dir, target);
    }
    if (tj_kernel_source(&spec, &src) != TJ_OK) {
        tj_layout_release(layout);
        return 1;
    }
    if (tj_nvrtc_load() == TJ_OK && (key = tj_key_text(&spec, src)) != NULL) {
        char hex[33], *end = strstr(key, "\n\n");
        tj_hash_hex(tj_hash_bytes(key, strlen(key)), hex);
        /* The key is its header lines, a blank line, then the source printed below. */
        printf("key hash:   %s\nkey:\n%.*s\n(then the source)\n", hex,
               end != NULL ? (int)(end - key) : (int)strlen(key), key);
        free(key);
    } else {
        printf("key:        (NVRTC not available)\n");
    }
    tj_layout_release(layout);
    if (source)
        printf("source:\n%s", src);
    free(src);
    return 0;
}
