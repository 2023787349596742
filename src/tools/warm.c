/* SPDX-License-Identifier: BSD-3-Clause */
/* `typejit warm`: compile the kernels of type descriptions, or of the cache's manifest, into the
 * kernel cache ahead of a job, for one or many targets, without a GPU. */
#include "type/layout_builder.h"
#include "warm.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "cache/entry.h"
#include "cache/manifest.h"
#include "cache/store.h"
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
#include "util/clock.h"
#include "util/config.h"

#define MAX_ARCHS 16
#define MAX_JOBS  1024 /* compile threads; NVRTC holds a few hundred MB each at most */

static const char *usage_warm =
    "usage: typejit warm [--arch sm_90,sm_80,...] [--all-words] [--jobs N] [--cache-dir DIR]\n"
    "                    [FILE...]\n"
    "\n"
    "Compile the kernels the runtime launches for every type described in FILEs (one type\n"
    "description a line, `#` comments; a line fused(T1, T2, ...) names the members of one fused\n"
    "launch), on buffers and packed positions at any multiple of the alignment of the type's\n"
    "elements, or, without FILE, every kernel listed in the cache's manifest (the kernels\n"
    "earlier runs needed). Needs NVRTC, no GPU. Kernels already cached are not compiled again.\n"
    "A kernel compiled but not stored counts as failed; exit status 1 if any failed or a line\n"
    "did not parse. Refused when TYPEJIT_CACHE is ro or off.\n"
    "\n"
    "  --arch LIST      targets, comma-separated (default: TYPEJIT_ARCH, else sm_90; with no FILE\n"
    "                   the manifest's own targets, plus LIST when given)\n"
    "  --all-words      with FILEs, also the kernels of buffers and packed positions not\n"
    "                   aligned to the types' elements (every narrower word)\n"
    "  --jobs N         compile N kernels at once, 1 to 1024 (default: the number of CPUs)\n"
    "  --cache-dir DIR  the cache to fill (default: TYPEJIT_CACHE_DIR, else\n"
    "                   $XDG_CACHE_HOME/typejit, else ~/.cache/typejit)\n";

/* One kernel to warm: a spec with its own copy of the blocks, or a reference to its layout. */
typedef struct {
    tj_kernel_kind_t kind;
    tj_block_t *blocks;
    int *words; /* FUSED: each block's */
    int nblocks;
    int word, edge;
    tj_dir_t dir;
    char target[32];
    tj_layout_t *layout;
    bool serial, one_object;
} item_t;

typedef struct {
    item_t *items;
    int n, cap;
    atomic_int next, done, compiled, cached, failed, unstored;
    bool progress;
    pthread_mutex_t print_lock;
    char why_unstored[512]; /* the first reason a compiled kernel was not stored */
} work_t;

static bool same_item(const item_t *it, const tj_kernel_spec_t *spec)
{
    if (it->kind != spec->kind || it->word != spec->word || it->edge != spec->edge ||
        it->dir != spec->dir || it->nblocks != spec->nblocks ||
        strcmp(it->target, spec->target) != 0)
        return false;
    if (it->layout != NULL)
        return it->serial == spec->serial && it->one_object == spec->one_object &&
               it->layout->hash[0] == spec->layout->hash[0] &&
               it->layout->hash[1] == spec->layout->hash[1];
    for (int i = 0; i < it->nblocks; i++) {
        tj_block_t b = tj_block_at_zero(&spec->blocks[i]);
        if (!tj_block_equal(&it->blocks[i], &b) ||
            (it->words != NULL && it->words[i] != tj_spec_block_word(spec, i)))
            return false;
    }
    return true;
}

/* Add the kernel of @p spec unless it is there already (the kernel lookup moves blocks to start 0:
 * so do the items). */
static int add_item(work_t *w, const tj_kernel_spec_t *spec)
{
    item_t *it;

    for (int i = 0; i < w->n; i++)
        if (same_item(&w->items[i], spec))
            return 0;
    if (w->n == w->cap) {
        int cap = w->cap ? 2 * w->cap : 64;
        item_t *grown = realloc(w->items, (size_t)cap * sizeof(*grown));
        if (grown == NULL)
            return -1;
        w->items = grown;
        w->cap = cap;
    }
    it = &w->items[w->n];
    it->words = NULL;
    if ((it->blocks = malloc((size_t)(spec->nblocks > 0 ? spec->nblocks : 1) *
                             sizeof(tj_block_t))) == NULL ||
        (spec->words != NULL &&
         (it->words = malloc((size_t)spec->nblocks * sizeof(int))) == NULL)) {
        free(it->blocks);
        return -1;
    }
    it->layout = tj_layout_hold(spec->layout);
    it->serial = spec->serial;
    it->one_object = spec->one_object;
    for (int i = 0; i < spec->nblocks; i++) {
        it->blocks[i] = tj_block_at_zero(&spec->blocks[i]);
        if (it->words != NULL)
            it->words[i] = tj_spec_block_word(spec, i);
    }
    it->kind = spec->kind;
    it->nblocks = spec->nblocks;
    it->word = spec->word;
    it->edge = spec->edge;
    it->dir = spec->dir;
    snprintf(it->target, sizeof(it->target), "%s", spec->target);
    w->n++;
    return 0;
}

/* The pack and unpack kernels of @p spec for each of @p narchs targets; for a layout whose bytes
 * overlap also the serial unpack kernel the runtime unpacks it with. */
static int add_spec(work_t *w, tj_kernel_spec_t spec, char (*archs)[32], int narchs)
{
    bool serial = spec.layout != NULL && !tj_layout_disjoint((tj_layout_t *)spec.layout, 1);

    for (int a = 0; a < narchs; a++)
        for (int d = 0; d < 2 + serial; d++) {
            spec.dir = d == 0 ? TJ_DIR_PACK : TJ_DIR_UNPACK;
            spec.serial = d == 2;
            spec.target = archs[a];
            if (add_item(w, &spec) != 0)
                return -1;
        }
    return 0;
}

/* The parts kernels of @p layout the runtime launches (tj_layout_launch_word), one object and
 * several: those of typed buffers and packed positions at multiples of @p align from a 16-byte
 * boundary; with @p all_words those of every alignment. */
static int add_layout_kernels(work_t *w, const tj_layout_t *layout, int align, char (*archs)[32],
                              int narchs, bool all_words)
{
    int words[11], n = 0, low = all_words ? 1 : tj_block_word_at(16, (uintptr_t)align);
    bool one[11];

    for (int typed = 16; typed >= low; typed /= 2)
        for (int packed = 16; packed >= low; packed /= 2)
            for (int64_t count = 2; count >= 1; count--) {
                int i = 0;
                /* An address of exactly that alignment: a multiple of it off a multiple of 16. */
                words[n] = tj_layout_launch_word(layout, count, (uintptr_t)(typed % 16),
                                                 (uintptr_t)(packed % 16), &one[n]);
                while (i < n && (words[i] != words[n] || one[i] != one[n]))
                    i++;
                n += i == n && n < 10;
            }
    for (int i = 0; i < n; i++)
        if (add_spec(w, tj_spec_parts(layout, words[i], one[i], TJ_DIR_PACK, false, ""), archs,
                     narchs) != 0)
            return -1;
    return 0;
}

/* The kernels of @p block the runtime launches (tj_block_words), one object or several: those
 * of typed buffers and packed positions at multiples of @p align from a 16-byte boundary
 * (tj_block_words_aligned_to); with @p all_words those of every alignment. */
static int add_block_kernels(work_t *w, const tj_block_t *block, int align, char (*archs)[32],
                             int narchs, bool all_words)
{
    tj_words_t words[TJ_BLOCK_WORDS_MAX];
    int n = tj_block_words_all(block, all_words ? 1 : align, words);

    for (int i = 0; i < n; i++)
        if (add_spec(w, tj_spec_words(block, words[i], TJ_DIR_PACK, ""), archs, narchs) != 0)
            return -1;
    return 0;
}

static tj_kernel_spec_t item_spec(const item_t *it)
{
    return (tj_kernel_spec_t){.kind = it->kind,
                              .blocks = it->blocks,
                              .nblocks = it->nblocks,
                              .word = it->word,
                              .edge = it->edge,
                              .words = it->words,
                              .dir = it->dir,
                              .target = it->target,
                              .layout = it->layout,
                              .serial = it->serial,
                              .one_object = it->one_object};
}

/* How many kernels of @p more are not among those of @p w. */
static int left_out(const work_t *w, const work_t *more)
{
    int n = 0;

    for (int j = 0; j < more->n; j++) {
        tj_kernel_spec_t spec = item_spec(&more->items[j]);
        int i = 0;
        while (i < w->n && !same_item(&w->items[i], &spec))
            i++;
        n += i == w->n;
    }
    return n;
}

static void free_items(work_t *w)
{
    for (int i = 0; i < w->n; i++) {
        free(w->items[i].blocks);
        free(w->items[i].words);
        tj_layout_release(w->items[i].layout);
    }
    free(w->items);
}

/* Errors shown per file; a binary file given by mistake would otherwise print one per line. */
#define MAX_SHOWN_ERRORS 10

typedef struct {
    work_t *work;
    work_t *more; /* without --all-words: the kernels it would compile, to say what is left out */
    char (*archs)[32];
    int narchs;
    bool all_words;
    const char *file;
    int errors;
} file_ctx_t;

static void line_error(file_ctx_t *ctx, int line, const char *what)
{
    if (ctx->errors++ < MAX_SHOWN_ERRORS)
        fprintf(stderr, "typejit warm: %s:%d: %s\n", ctx->file, line, what);
}

/* Into @p w, the kernels of a type: of its @p block (NULL for a layout), and of @p layout (NULL
 * for a block whose objects do not overlap). */
static int type_kernels(file_ctx_t *ctx, work_t *w, bool all_words, const tj_block_t *block,
                        tj_layout_t *layout, int align)
{
    if (block != NULL &&
        add_block_kernels(w, block, align, ctx->archs, ctx->narchs, all_words) != 0)
        return -1;
    if (layout == NULL)
        return 0;
    return add_layout_kernels(w, layout, align, ctx->archs, ctx->narchs, all_words);
}

/* The kernels the runtime launches for a type whose placements keep @p align (tj_type_alignment):
 * its block's or its layout's (@p layout, whose reference this takes), and for a block whose
 * objects may overlap the serial unpack of the block as a layout of one part. */
static int add_type_kernels(file_ctx_t *ctx, const tj_block_t *block, tj_layout_t *layout,
                            int align)
{
    const tj_block_t *strided = layout == NULL ? block : NULL;
    int rc;

    if (layout == NULL && !tj_block_disjoint(block, 2) &&
        tj_layout_builder_from_block(block, block->size, &layout) != TJ_OK)
        return -1;
    rc = type_kernels(ctx, ctx->work, ctx->all_words, strided, layout, align);
    if (rc == 0 && ctx->more != NULL)
        rc = type_kernels(ctx, ctx->more, true, strided, layout, align);
    tj_layout_release(layout);
    return rc;
}

/* Into @p w, the fused kernels of a set of strided members (@p blocks, @p n of them) the
 * runtime launches: every member's word from its own launch (tj_block_words, without edges), for
 * members of one object each and of several, their packed bytes one after the other from the
 * start of typejit's staging (a collective's) or each at the start of a staging buffer of its
 * own (the sends of a Startall), the typed buffer at multiples of @p align from a 16-byte
 * boundary (each member then lies its block's start further on); with @p all_words typed
 * buffers and consecutive packed bytes of every alignment. Members of equal blocks and words
 * share a shape. */
static int add_fused_kernels(file_ctx_t *ctx, work_t *w, bool all_words, const tj_block_t *blocks,
                             int n, int align)
{
    int step = all_words ? 1 : tj_block_word_at(16, (uintptr_t)align);

    for (int64_t count = 1; count <= 2; count++)
        for (int apart = 0; apart < 2; apart++)
            for (int t = 0; t < 16; t += step)
                for (int p = 0; p < (all_words && !apart ? 16 : 1); p++) {
                    tj_block_t shapes[TJ_FUSED_MAX];
                    int words[TJ_FUSED_MAX], nshapes = 0;
                    int64_t packed = p;
                    for (int m = 0; m < n; m++) {
                        tj_words_t mw = tj_block_words(&blocks[m], count,
                                                       (uintptr_t)blocks[m].start + (uintptr_t)t,
                                                       (uintptr_t)(apart ? 0 : packed));
                        int word = mw.edge != 0 ? mw.edge : mw.word, s = 0;
                        tj_block_t b = tj_block_at_zero(&blocks[m]);
                        while (s < nshapes && !(tj_block_equal(&shapes[s], &b) && words[s] == word))
                            s++;
                        if (s == nshapes) {
                            shapes[nshapes] = b;
                            words[nshapes++] = word;
                        }
                        packed += blocks[m].size * count;
                    }
                    if (add_spec(w, tj_spec_fused(shapes, words, nshapes, TJ_DIR_PACK, ""),
                                 ctx->archs, ctx->narchs) != 0)
                        return -1;
                }
    return 0;
}

/* A fused set: the single kernels of its strided members, and the fused kernels the runtime
 * builds for them all when every member is strided (add_fused_kernels). */
static int warm_fused(file_ctx_t *ctx, int line, MPI_Datatype *types, int n)
{
    tj_block_t blocks[TJ_FUSED_MAX];
    int rc = 0, least = 16;
    bool all_strided = true;

    for (int m = 0; m < n && rc == 0; m++) {
        tj_layout_t *layout;
        tj_reason_t why;
        int align = tj_type_alignment(types[m]);
        tj_status_t st = tj_flatten_form(types[m], &blocks[m], &layout, &why);

        if (align < least)
            least = align;
        if (st != TJ_OK) {
            fprintf(stderr,
                    "typejit warm: %s:%d: member %d: %s: no kernel needed, and the runtime moves "
                    "this set member by member\n",
                    ctx->file, line, m + 1,
                    st == TJ_ERR_NOT_STRIDED ? tj_reason_string(why) : tj_status_string(st));
            all_strided = false;
            continue;
        }
        if (layout != NULL) {
            /* Moved member by member, each by its parts kernel. */
            fprintf(stderr,
                    "typejit warm: %s:%d: member %d is not strided: the runtime moves this set "
                    "member by member\n",
                    ctx->file, line, m + 1);
            rc = add_type_kernels(ctx, &blocks[m], layout, align);
            all_strided = false;
            continue;
        }
        rc = add_type_kernels(ctx, &blocks[m], NULL, align);
    }
    if (rc == 0 && all_strided)
        rc = add_fused_kernels(ctx, ctx->work, ctx->all_words, blocks, n, least);
    if (rc == 0 && all_strided && ctx->more != NULL)
        rc = add_fused_kernels(ctx, ctx->more, true, blocks, n, least);
    return rc;
}

static int warm_line(int line, const char *text, void *arg)
{
    file_ctx_t *ctx = arg;
    MPI_Datatype type, members[TJ_FUSED_MAX];
    tj_block_t block;
    tj_layout_t *layout;
    tj_reason_t why;
    char err[256];
    int n = 0, rc, align;
    tj_status_t st;

    if (text == NULL) {
        line_error(ctx, line, "holds a NUL byte (not a text file of type descriptions?)");
        return 0;
    }
    st = tj_typedesc_parse_fused(text, members, TJ_FUSED_MAX, &n, err, sizeof(err));
    if (st == TJ_OK) {
        rc = warm_fused(ctx, line, members, n);
        for (int m = 0; m < n; m++)
            PMPI_Type_free(&members[m]);
        return rc;
    }
    if (st != TJ_ERR_NOT_FOUND) {
        line_error(ctx, line, err);
        return 0;
    }
    if (tj_typedesc_parse(text, &type, err, sizeof(err)) != TJ_OK) {
        line_error(ctx, line, err);
        return 0;
    }
    align = tj_type_alignment(type);
    st = tj_flatten_form(type, &block, &layout, &why);
    PMPI_Type_free(&type);
    if (st != TJ_OK) {
        fprintf(stderr,
                "typejit warm: %s:%d: neither strided nor a layout (%s): no kernel needed (system "
                "MPI)\n",
                ctx->file, line,
                st == TJ_ERR_NOT_STRIDED ? tj_reason_string(why) : tj_status_string(st));
        return 0;
    }
    return add_type_kernels(ctx, &block, layout, align);
}

typedef struct {
    work_t *work;
    char (*archs)[32];
    int narchs;
    bool extra_archs;
    int bad;
} manifest_ctx_t;

static void manifest_line(const char *line, void *arg)
{
    manifest_ctx_t *ctx = arg;
    tj_spec_line_t parsed;
    tj_kernel_spec_t spec;

    if (tj_key_manifest_parse(line, &parsed) != TJ_OK) {
        ctx->bad++;
        return;
    }
    spec = tj_key_line_spec(&parsed);
    add_item(ctx->work, &spec);
    for (int a = 0; ctx->extra_archs && a < ctx->narchs; a++) {
        spec.target = ctx->archs[a];
        add_item(ctx->work, &spec);
    }
    tj_key_line_release(&parsed);
}

static void draw_progress(work_t *w)
{
    int done = atomic_load(&w->done), width = 40, fill = w->n ? done * width / w->n : width;
    char bar[64];
    memset(bar, '=', (size_t)fill);
    memset(bar + fill, ' ', (size_t)(width - fill));
    bar[width] = '\0';
    pthread_mutex_lock(&w->print_lock);
    fprintf(stderr, "\r[%s] %d/%d", bar, done, w->n);
    fflush(stderr);
    pthread_mutex_unlock(&w->print_lock);
}

static void *warm_worker(void *arg)
{
    work_t *w = arg;
    for (;;) {
        int i = atomic_fetch_add(&w->next, 1);
        tj_kernel_t *k;
        tj_origin_t origin;
        long saved, failed;
        if (i >= w->n)
            return NULL;
        tj_kernel_spec_t spec = item_spec(&w->items[i]);
        tj_store_save_report(&saved, &failed);
        if (tj_lookup_kernel(&spec, TJ_LOOKUP_COMPILE, &k, &origin) != TJ_OK) {
            atomic_fetch_add(&w->failed, 1);
        } else if (origin == TJ_FROM_COMPILE) {
            /* Warming is for the cache: a kernel compiled but not stored is a failure. */
            tj_store_save_report(&saved, &failed);
            if (saved > 0) {
                atomic_fetch_add(&w->compiled, 1);
            } else {
                atomic_fetch_add(&w->failed, 1);
                pthread_mutex_lock(&w->print_lock);
                if (atomic_fetch_add(&w->unstored, 1) == 0)
                    snprintf(w->why_unstored, sizeof(w->why_unstored), "%s",
                             tj_store_last_problem()[0] ? tj_store_last_problem()
                                                        : "the cache was not written");
                pthread_mutex_unlock(&w->print_lock);
            }
        } else {
            atomic_fetch_add(&w->cached, 1);
        }
        atomic_fetch_add(&w->done, 1);
        if (w->progress)
            draw_progress(w);
    }
}

/* Warming exists to fill the cache: refuse up front when it could store nothing, with why. */
static bool cache_writable(const char *dir)
{
    tj_store_t *store;
    tj_status_t st;

    if (tj_config()->cache != TJ_CACHE_RW) {
        fprintf(stderr,
                "typejit warm: TYPEJIT_CACHE=%s: the cache is %s, so warming would store "
                "nothing; unset TYPEJIT_CACHE (or set it to rw) to fill %s\n",
                tj_config()->cache == TJ_CACHE_RO ? "ro" : "off",
                tj_config()->cache == TJ_CACHE_RO ? "read only" : "not used", dir);
        return false;
    }
    tj_cache_quiet();
    st = tj_store_open(dir, TJ_STORE_RW, &store);
    if (st == TJ_OK && (st = tj_store_probe_write(store)) != TJ_OK)
        tj_store_close(store);
    tj_cache_loud();
    if (st != TJ_OK) {
        fprintf(stderr, "typejit warm: cannot store kernels in %s: %s\n", dir,
                tj_store_last_problem()[0] ? tj_store_last_problem() : tj_status_string(st));
        return false;
    }
    tj_store_close(store);
    return true;
}

int tj_warm_run(int argc, char **argv)
{
    char archs[MAX_ARCHS][32];
    int narchs = 0, nfiles = 0, errors = 0, nt, rc = 1, left;
    bool all_words = false;
    long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    const char *dir = NULL, *value, **files = NULL;
    work_t w = {0}, more = {0};
    pthread_t *tid = NULL;
    double t0, t1;

    if (tj_opt_help(argc, argv)) {
        fputs(usage_warm, stdout);
        return 0;
    }
    files = calloc((size_t)argc, sizeof(*files));
    if (files == NULL)
        return 1;
    for (int i = 1; i < argc; i++) {
        if (tj_opt_value("warm", argc, argv, &i, "--arch", &value)) {
            if (value == NULL || (narchs = tj_opt_targets("warm", value, archs, MAX_ARCHS)) <= 0)
                goto out_usage;
        } else if (strcmp(argv[i], "--all-words") == 0) {
            all_words = true;
        } else if (tj_opt_value("warm", argc, argv, &i, "--jobs", &value)) {
            if (value == NULL || !tj_opt_number("warm", "--jobs", value, 1, MAX_JOBS, &jobs))
                goto out_usage;
        } else if (tj_opt_value("warm", argc, argv, &i, "--cache-dir", &dir)) {
            if (dir == NULL)
                goto out_usage;
            if (dir[0] == '\0') {
                fprintf(stderr, "typejit warm: --cache-dir needs a directory, not \"\"\n");
                goto out_usage;
            }
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "typejit warm: unknown option %s\n%s", argv[i], usage_warm);
            goto out_usage;
        } else {
            files[nfiles++] = argv[i];
        }
    }
    if (jobs < 1)
        jobs = 1;
    if (all_words && nfiles == 0) {
        fprintf(stderr, "typejit warm: --all-words is for FILEs of type descriptions (the manifest "
                        "lists every word the runtime needed)\n");
        goto out_usage;
    }
    if (tj_opt_cache_dir(dir)[0] == '\0') {
        fprintf(stderr, "typejit warm: no cache directory: set TYPEJIT_CACHE_DIR or HOME\n");
        goto out_free;
    }
    if (tj_nvrtc_load() != TJ_OK) {
        fprintf(stderr, "typejit warm: NVRTC is not available: nothing can be compiled\n");
        goto out_free;
    }
    if (!cache_writable(tj_opt_cache_dir(dir)))
        goto out_free;
    tj_lookup_set_store(tj_opt_cache_dir(dir), 0);
    pthread_mutex_init(&w.print_lock, NULL);

    /* The time reported covers reading the descriptions too. */
    t0 = tj_clock_seconds();
    if (nfiles > 0) {
        if (narchs == 0) {
            const char *def = tj_config()->arch[0] ? tj_config()->arch : "sm_90";
            if ((narchs = tj_opt_targets("warm", def, archs, MAX_ARCHS)) <= 0)
                goto out_free;
        }
        for (int f = 0; f < nfiles; f++) {
            file_ctx_t ctx = {&w, all_words ? NULL : &more, archs, narchs, all_words, files[f], 0};
            if (tj_typedesc_each_line(files[f], warm_line, &ctx) != TJ_OK) {
                /* The other files are still warmed; the exit status says this one failed. */
                fprintf(stderr, "typejit warm: cannot read %s: %s\n", files[f],
                        errno ? strerror(errno) : "read error");
                errors++;
                continue;
            }
            if (ctx.errors > MAX_SHOWN_ERRORS)
                fprintf(stderr, "typejit warm: %s: %d more lines with errors not shown\n", files[f],
                        ctx.errors - MAX_SHOWN_ERRORS);
            errors += ctx.errors;
        }
    } else {
        tj_store_t *store;
        manifest_ctx_t ctx = {&w, archs, narchs, narchs > 0, 0};
        if (tj_store_open(tj_opt_cache_dir(dir), TJ_STORE_RO, &store) != TJ_OK) {
            printf("typejit warm: no manifest in %s: nothing to do\n", tj_opt_cache_dir(dir));
            rc = 0;
            goto out_free;
        }
        tj_store_manifest_read(store, manifest_line, &ctx);
        tj_store_close(store);
        if (ctx.bad > 0)
            fprintf(stderr, "typejit warm: skipped %d malformed manifest lines\n", ctx.bad);
    }

    w.progress = isatty(STDERR_FILENO) && w.n > 0;
    tj_cache_quiet(); /* a kernel not stored is reported below, with why */
    nt = (int)(jobs < w.n ? jobs : w.n);
    tid = calloc(nt > 0 ? (size_t)nt : 1, sizeof(*tid));
    if (tid == NULL)
        goto out_free;
    for (int t = 0; t < nt; t++)
        if (pthread_create(&tid[t], NULL, warm_worker, &w) != 0) {
            nt = t; /* the threads started do all the work */
            if (nt == 0)
                warm_worker(&w);
            break;
        }
    for (int t = 0; t < nt; t++)
        pthread_join(tid[t], NULL);
    t1 = tj_clock_seconds();
    tj_cache_loud();
    if (w.progress)
        fputc('\n', stderr);
    if (atomic_load(&w.unstored) > 0)
        fprintf(stderr, "typejit warm: %d compiled kernels were not stored: %s\n",
                atomic_load(&w.unstored), w.why_unstored);
    if (more.n > 0 && (left = left_out(&w, &more)) > 0)
        printf("typejit warm: not compiled: %d kernels of launches on buffers or packed positions "
               "not aligned to their types' elements (--all-words compiles them)\n",
               left);
    printf("typejit warm: %d kernels: %d compiled, %d already cached, %d failed (%.2f s, cache "
           "%s)\n",
           w.n, atomic_load(&w.compiled), atomic_load(&w.cached), atomic_load(&w.failed), t1 - t0,
           tj_opt_cache_dir(dir));
    rc = atomic_load(&w.failed) > 0 || errors > 0 ? 1 : 0;
out_free:
    free(tid);
    free_items(&w);
    free_items(&more);
    free(files);
    return rc;
out_usage:
    free(files);
    return 2;
}
