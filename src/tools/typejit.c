/* The `typejit` command: warm the kernel cache ahead of a job (no GPU needed), inspect what
 * typejit makes of a type, and maintain the cache. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache/entry.h"
#include "cache/hash.h"
#include "cache/manifest.h"
#include "cache/store.h"
#include "cache/trim.h"
#include "cache/walk.h"
#include "jit/gen.h"
#include "jit/nvrtc.h"
#include "kernels/key.h"
#include "kernels/supply.h"
#include "measure.h"
#include "options.h"
#include "type/flatten.h"
#include "type/translate.h"
#include "typedesc.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/config.h"
#include "util/log.h"

#define MAX_ARCHS 16
#define MAX_JOBS  1024 /* compile threads; NVRTC holds a few hundred MB each at most */

static const char *usage_main =
    "usage: typejit COMMAND [OPTIONS]\n"
    "\n"
    "commands:\n"
    "  warm      compile the kernels of type descriptions or of the cache's manifest\n"
    "  inspect   show the IR, canonical block, word, cache key and kernel source of a type\n"
    "  cache     stats | list | verify | clear | trim the kernel cache (no MPI needed)\n"
    "  measure   time this machine for the send methods' model (mpirun -np 2 typejit measure)\n"
    "  version   print the typejit version\n"
    "\n"
    "`typejit COMMAND --help` describes each command.\n";

static const char *usage_warm =
    "usage: typejit warm [--arch sm_90,sm_80,...] [--all-words] [--jobs N] [--cache-dir DIR]\n"
    "                    [FILE...]\n"
    "\n"
    "Compile the kernels the runtime launches for every type described in FILEs (one type\n"
    "description a line, `#` comments; a line fused(T1, T2, ...) names the members of one fused\n"
    "launch), or, without FILE, every kernel listed in the cache's manifest (the kernels earlier\n"
    "runs needed). Needs NVRTC, no GPU. Kernels already cached are not compiled again. A kernel\n"
    "compiled but not stored counts as failed; exit status 1 if any failed or a line did not\n"
    "parse. Refused when TYPEJIT_CACHE is ro or off.\n"
    "\n"
    "  --arch LIST      targets, comma-separated (default: TYPEJIT_ARCH, else sm_90; with no FILE\n"
    "                   the manifest's own targets, plus LIST when given)\n"
    "  --all-words      with FILEs, also the kernels of every narrower word (buffers or packed\n"
    "                   positions not aligned to the type's word W)\n"
    "  --jobs N         compile N kernels at once, 1 to 1024 (default: the number of CPUs)\n"
    "  --cache-dir DIR  the cache to fill (default: TYPEJIT_CACHE_DIR, else\n"
    "                   $XDG_CACHE_HOME/typejit, else ~/.cache/typejit)\n";

static const char *usage_inspect =
    "usage: typejit inspect [--arch sm_XX] [--word W] [--unpack] [--no-source] 'TYPE'\n"
    "\n"
    "Print the type's IR as translated and after the canonical passes, its strided block, word\n"
    "size W, whether its objects overlap, and the kernel the runtime launches for it: the block\n"
    "moved to start 0 (launched at the start), its cache key (header lines, then the source) and\n"
    "hash, and its CUDA source. Needs no GPU; the key needs NVRTC.\n"
    "\n"
    "  --arch sm_XX   target of the key (default: TYPEJIT_ARCH, else sm_90)\n"
    "  --word W       a narrower word than the block allows (1, 2, 4, 8 or 16)\n"
    "  --unpack       the unpack kernel instead of the pack kernel\n"
    "  --no-source    leave the source out\n";

static const char *usage_cache =
    "usage: typejit cache stats|list|verify|clear [--cache-dir DIR]\n"
    "       typejit cache trim [--max-size SIZE] [--cache-dir DIR]\n"
    "\n"
    "  stats    number and size of entries, saved sources, manifest lines (and how many are\n"
    "           distinct); entries that fail validation are named, with why\n"
    "  list     one line per entry, least recently used first: hash, folder, bytes, last use,\n"
    "           and what kernel it holds (or why it is invalid)\n"
    "  verify   validate every entry and delete those that fail (exit status 1 if any did)\n"
    "  clear    delete every entry, source, temporary file and the manifest\n"
    "  trim     delete the least recently used entries (and their manifest lines) until entries\n"
    "           and sources take at most SIZE (default: TYPEJIT_CACHE_MAX_SIZE); entries being\n"
    "           compiled by a running process stay (exit status 1 if that leaves it larger)\n"
    "\n"
    "SIZE is a whole number of bytes, optionally followed by K, M, G or T (powers of 1024):\n"
    "500M, 2G. Exit status 1 when a command could not do all it says: a folder it may not look\n"
    "into (not yours, or writable by others), a file it could not delete.\n";

static const char *usage_version = "usage: typejit version\n"
                                   "\n"
                                   "Print the typejit version.\n";

static bool wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return true;
    return false;
}

/* A whole decimal number in [min, max] for option @p opt, or false after saying what is wrong. */
static bool option_number(const char *cmd, const char *opt, const char *text, long min, long max,
                          long *out)
{
    if (tj_config_parse_long(text, min, max, out))
        return true;
    fprintf(stderr, "typejit %s: %s wants a whole number from %ld to %ld, not \"%s\"\n", cmd, opt,
            min, max, text);
    return false;
}

/* A target this NVRTC can compile for, or false after one line that says why not (a malformed
 * name, or an arch this NVRTC dropped or never had). Without NVRTC only the form is checked. */
static bool target_ok(const char *cmd, const char *arch)
{
    char why[256];

    if (!tj_config_arch_valid(arch)) {
        fprintf(stderr,
                "typejit %s: \"%s\" is not a target: write sm_XX or compute_XX, XX the compute "
                "capability (sm_90, compute_80, sm_90a)\n",
                cmd, arch);
        return false;
    }
    if (tj_nvrtc_check_target(arch, why, sizeof(why)) == TJ_ERR_UNSUPPORTED) {
        fprintf(stderr, "typejit %s: %s\n", cmd, why);
        return false;
    }
    return true;
}

/* Why a translation did not give a strided block, in words: the translation's own reason (it
 * must be the calling thread's last translation), else the status. */
static const char *why_not(tj_status_t st)
{
    return st == TJ_ERR_NOT_STRIDED ? tj_reason_string(tj_translate_reason())
                                    : tj_status_string(st);
}

static const char *cache_dir(const char *given)
{
    return given != NULL ? given : tj_config()->cache_dir;
}

/* --- warm ---------------------------------------------------------------------------------- */

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
    bool serial;
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
    if (it->kind == TJ_KERNEL_PARTS)
        return it->serial == spec->serial && it->layout->hash[0] == spec->layout->hash[0] &&
               it->layout->hash[1] == spec->layout->hash[1];
    for (int i = 0; i < it->nblocks; i++) {
        tj_block_t b = tj_block_at_zero(&spec->blocks[i]);
        if (!tj_block_equal(&it->blocks[i], &b) ||
            (it->words != NULL && it->words[i] != tj_spec_block_word(spec, i)))
            return false;
    }
    return true;
}

/* Add the kernel of @p spec unless it is there already (the supply moves blocks to start 0: so
 * do the items). */
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
        (spec->kind == TJ_KERNEL_FUSED &&
         (it->words = malloc((size_t)spec->nblocks * sizeof(int))) == NULL)) {
        free(it->blocks);
        return -1;
    }
    it->layout = spec->kind == TJ_KERNEL_PARTS ? tj_layout_hold(spec->layout) : NULL;
    it->serial = spec->serial;
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
    bool serial =
        spec.kind == TJ_KERNEL_PARTS && !tj_layout_disjoint((tj_layout_t *)spec.layout, 1);

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

/* The kernels of @p spec (a parts kernel) at its word and, with @p all_words, every narrower
 * one. */
static int add_kernels(work_t *w, tj_kernel_spec_t spec, char (*archs)[32], int narchs,
                       bool all_words)
{
    for (int word = spec.word; word >= 1; word /= 2) {
        spec.word = word;
        if (add_spec(w, spec, archs, narchs) != 0)
            return -1;
        if (!all_words)
            break;
    }
    return 0;
}

/* The kernels of @p block the runtime launches (tj_block_words): those of aligned buffers, one
 * object or several; with @p all_words those of every alignment. */
static int add_block_kernels(work_t *w, const tj_block_t *block, char (*archs)[32], int narchs,
                             bool all_words)
{
    tj_words_t words[TJ_BLOCK_WORDS_MAX];
    int n = all_words ? tj_block_words_all(block, words) : tj_block_words_aligned(block, words);

    for (int i = 0; i < n; i++)
        if (add_spec(w, tj_spec_words(block, words[i], TJ_DIR_PACK, ""), archs, narchs) != 0)
            return -1;
    return 0;
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

/* The kernels the runtime launches for a type: its block's or its layout's (@p layout, whose
 * reference this takes), and for a block whose objects may overlap the serial unpack of the
 * block as a layout of one part. */
static int add_type_kernels(file_ctx_t *ctx, const tj_block_t *block, tj_layout_t *layout)
{
    int rc;

    if (layout == NULL) {
        rc = add_block_kernels(ctx->work, block, ctx->archs, ctx->narchs, ctx->all_words);
        if (rc != 0 || tj_block_disjoint(block, 2))
            return rc;
        if (tj_layout_from_block(block, block->size, &layout) != TJ_OK)
            return -1;
    }
    rc = add_kernels(ctx->work, tj_spec_parts(layout, layout->word, TJ_DIR_PACK, false, ""),
                     ctx->archs, ctx->narchs, ctx->all_words);
    tj_layout_release(layout);
    return rc;
}

/* The fused kernels of a set of strided members (@p blocks at start 0, @p n of them) the
 * runtime launches: every member's word from its own launch (tj_block_words, without edges), for
 * members of one object each and of several, their packed bytes one after the other (a
 * collective's) or each at an aligned address (the sends of a Startall, each in a staging
 * buffer of its own), the typed buffer aligned; with @p all_words, typed and consecutive packed
 * buffers of every alignment too. Members of equal blocks and words share a shape. */
static int add_fused_kernels(file_ctx_t *ctx, const tj_block_t *blocks, int n)
{
    int spread = ctx->all_words ? 16 : 1;

    for (int64_t count = 1; count <= 2; count++)
        for (int apart = 0; apart < 2; apart++)
            for (int t = 0; t < spread; t++)
                for (int p = 0; p < (apart ? 1 : spread); p++) {
                    tj_block_t shapes[TJ_FUSED_MAX];
                    int words[TJ_FUSED_MAX], nshapes = 0;
                    int64_t packed = p;
                    for (int m = 0; m < n; m++) {
                        tj_words_t w = tj_block_words(&blocks[m], count,
                                                      (uintptr_t)blocks[m].start + (uintptr_t)t,
                                                      (uintptr_t)(apart ? 0 : packed));
                        int word = w.edge != 0 ? w.edge : w.word, s = 0;
                        tj_block_t b = tj_block_at_zero(&blocks[m]);
                        while (s < nshapes && !(tj_block_equal(&shapes[s], &b) && words[s] == word))
                            s++;
                        if (s == nshapes) {
                            shapes[nshapes] = b;
                            words[nshapes++] = word;
                        }
                        packed += blocks[m].size * count;
                    }
                    if (add_spec(ctx->work, tj_spec_fused(shapes, words, nshapes, TJ_DIR_PACK, ""),
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
    int rc = 0;
    bool all_strided = true;

    for (int m = 0; m < n && rc == 0; m++) {
        tj_layout_t *layout;
        tj_reason_t why;
        tj_status_t st = tj_flatten_form(types[m], &blocks[m], &layout, &why);
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
            rc = add_type_kernels(ctx, &blocks[m], layout);
            all_strided = false;
            continue;
        }
        rc = add_type_kernels(ctx, &blocks[m], NULL);
    }
    if (rc == 0 && all_strided)
        rc = add_fused_kernels(ctx, blocks, n);
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
    int n = 0, rc;
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
    return add_type_kernels(ctx, &block, layout);
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
        item_t *it = &w->items[i];
        tj_kernel_spec_t spec = {.kind = it->kind,
                                 .blocks = it->blocks,
                                 .nblocks = it->nblocks,
                                 .word = it->word,
                                 .edge = it->edge,
                                 .words = it->words,
                                 .dir = it->dir,
                                 .target = it->target,
                                 .layout = it->layout,
                                 .serial = it->serial};
        tj_store_save_report(&saved, &failed);
        if (tj_supply_get(&spec, TJ_SUPPLY_COMPILE, &k, &origin) != TJ_OK) {
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

/* Split a comma-separated list of targets, each checked by target_ok; -1 after a message. */
static int split_archs(const char *cmd, const char *list, char (*archs)[32], int max)
{
    int n = 0;
    const char *s = list;

    if (*s == '\0') {
        fprintf(stderr, "typejit %s: --arch needs at least one target\n", cmd);
        return -1;
    }
    while (*s) {
        size_t len = strcspn(s, ",");
        if (n == max) {
            fprintf(stderr, "typejit %s: more than %d targets\n", cmd, max);
            return -1;
        }
        if (len == 0 || len >= 32) {
            fprintf(stderr, "typejit %s: --arch wants sm_XX or compute_XX, comma-separated\n", cmd);
            return -1;
        }
        memcpy(archs[n], s, len);
        archs[n][len] = '\0';
        if (!target_ok(cmd, archs[n]))
            return -1;
        n++;
        s += len;
        if (*s == ',' && *++s == '\0') {
            fprintf(stderr, "typejit %s: --arch list ends in a comma\n", cmd);
            return -1;
        }
    }
    return n;
}

/* The store warns about each problem it meets; where this command reports the problem itself
 * (tj_store_last_problem), the store's warning would say it twice. At the default level the
 * store is quiet in between; TYPEJIT_LOG=info or debug still shows everything. */
static int loud_level = -1;

static void store_quiet(void)
{
    if (tj_log_level == TJ_LOG_WARN) {
        loud_level = tj_log_level;
        tj_log_set_level(TJ_LOG_ERROR);
    }
}

static void store_loud(void)
{
    if (loud_level >= 0)
        tj_log_set_level((tj_log_level_t)loud_level);
    loud_level = -1;
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
    store_quiet();
    st = tj_store_open(dir, TJ_STORE_RW, &store);
    if (st == TJ_OK && (st = tj_store_probe_write(store)) != TJ_OK)
        tj_store_close(store);
    store_loud();
    if (st != TJ_OK) {
        fprintf(stderr, "typejit warm: cannot store kernels in %s: %s\n", dir,
                tj_store_last_problem()[0] ? tj_store_last_problem() : tj_status_string(st));
        return false;
    }
    tj_store_close(store);
    return true;
}

static int cmd_warm(int argc, char **argv)
{
    char archs[MAX_ARCHS][32];
    int narchs = 0, nfiles = 0, errors = 0, nt, rc = 1;
    bool all_words = false;
    long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    const char *dir = NULL, *value, **files = NULL;
    work_t w = {0};
    pthread_t *tid = NULL;
    double t0, t1;

    if (wants_help(argc, argv)) {
        fputs(usage_warm, stdout);
        return 0;
    }
    files = calloc((size_t)argc, sizeof(*files));
    if (files == NULL)
        return 1;
    for (int i = 1; i < argc; i++) {
        if (tj_opt_value("warm", argc, argv, &i, "--arch", &value)) {
            if (value == NULL || (narchs = split_archs("warm", value, archs, MAX_ARCHS)) <= 0)
                goto out_usage;
        } else if (strcmp(argv[i], "--all-words") == 0) {
            all_words = true;
        } else if (tj_opt_value("warm", argc, argv, &i, "--jobs", &value)) {
            if (value == NULL || !option_number("warm", "--jobs", value, 1, MAX_JOBS, &jobs))
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
    if (cache_dir(dir)[0] == '\0') {
        fprintf(stderr, "typejit warm: no cache directory: set TYPEJIT_CACHE_DIR or HOME\n");
        goto out_free;
    }
    if (tj_nvrtc_load() != TJ_OK) {
        fprintf(stderr, "typejit warm: NVRTC is not available: nothing can be compiled\n");
        goto out_free;
    }
    if (!cache_writable(cache_dir(dir)))
        goto out_free;
    tj_supply_set_store(cache_dir(dir), 0);
    pthread_mutex_init(&w.print_lock, NULL);

    /* The time reported covers reading the descriptions too. */
    t0 = tj_clock_seconds();
    if (nfiles > 0) {
        if (narchs == 0) {
            const char *def = tj_config()->arch[0] ? tj_config()->arch : "sm_90";
            if ((narchs = split_archs("warm", def, archs, MAX_ARCHS)) <= 0)
                goto out_free;
        }
        for (int f = 0; f < nfiles; f++) {
            file_ctx_t ctx = {&w, archs, narchs, all_words, files[f], 0};
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
        if (tj_store_open(cache_dir(dir), TJ_STORE_RO, &store) != TJ_OK) {
            printf("typejit warm: no manifest in %s: nothing to do\n", cache_dir(dir));
            rc = 0;
            goto out_free;
        }
        tj_store_manifest_read(store, manifest_line, &ctx);
        tj_store_close(store);
        if (ctx.bad > 0)
            fprintf(stderr, "typejit warm: skipped %d malformed manifest lines\n", ctx.bad);
    }

    w.progress = isatty(STDERR_FILENO) && w.n > 0;
    store_quiet(); /* a kernel not stored is reported below, with why */
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
    store_loud();
    if (w.progress)
        fputc('\n', stderr);
    if (atomic_load(&w.unstored) > 0)
        fprintf(stderr, "typejit warm: %d compiled kernels were not stored: %s\n",
                atomic_load(&w.unstored), w.why_unstored);
    printf("typejit warm: %d kernels: %d compiled, %d already cached, %d failed (%.2f s, cache "
           "%s)\n",
           w.n, atomic_load(&w.compiled), atomic_load(&w.cached), atomic_load(&w.failed), t1 - t0,
           cache_dir(dir));
    rc = atomic_load(&w.failed) > 0 || errors > 0 ? 1 : 0;
out_free:
    free(tid);
    free_items(&w);
    free(files);
    return rc;
out_usage:
    free(files);
    return 2;
}

/* --- inspect ------------------------------------------------------------------------------- */

/* One line of inspect's launch words: "W=16 with edges of 4 bytes for one object (aligned
 * buffers)". */
static void print_launch(const char *head, const char *what, tj_words_t w)
{
    if (w.edge != 0)
        printf("%sW=%d with edges of %d bytes%s (aligned buffers)\n", head, w.word, w.edge, what);
    else
        printf("%sW=%d%s (aligned buffers)\n", head, w.word, what);
}

static int cmd_inspect(int argc, char **argv)
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
    tj_reason_t fwhy = TJ_REASON_NONE;
    bool from_layout = false;
    tj_status_t st, st_ir, fst = TJ_ERR_NOT_STRIDED;

    if (wants_help(argc, argv)) {
        fputs(usage_inspect, stdout);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        const char *value;
        bool bad = false;
        long w;
        if (tj_opt_value("inspect", argc, argv, &i, "--arch", &arch)) {
            if (arch == NULL || !target_ok("inspect", arch))
                return 2;
        } else if (tj_opt_value("inspect", argc, argv, &i, "--word", &value)) {
            if (value == NULL || !option_number("inspect", "--word", value, 1, 16, &w))
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
    st_ir = tj_translate_ir(type, &ir);
    st = tj_translate_block(type, &block, &canon);
    why = why_not(st);
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
    if (layout != NULL && word == 0)
        word = layout->word;
    if ((st == TJ_OK || from_layout) && words.edge == 0 && block.word % word) {
        fprintf(stderr, "typejit inspect: --word %d does not divide W=%d of this type\n", word,
                block.word);
        return 2;
    }
    if (layout != NULL && layout->word % word) {
        fprintf(stderr, "typejit inspect: --word %d does not divide W=%d of this type\n", word,
                layout->word);
        tj_layout_release(layout);
        return 2;
    }
    snprintf(target, sizeof(target), "%s",
             arch                   ? arch
             : tj_config()->arch[0] ? tj_config()->arch
                                    : "sm_90");
    if ((st == TJ_OK || from_layout || layout != NULL) && arch == NULL &&
        !target_ok("inspect", target)) {
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
        for (int64_t p = 0; p < layout->nparts && p < 8; p++)
            printf("part %-5lld at %lld, %lld bytes, shape %d\n", (long long)p,
                   (long long)layout->disp[p], (long long)(layout->pre[p + 1] - layout->pre[p]),
                   layout->shape != NULL ? layout->shape[p] : 0);
        if (layout->nparts > 8)
            printf("(%lld more parts)\n", (long long)(layout->nparts - 8));
        printf("word:       W=%d\nfootprint:  %s\n", layout->word,
               disjoint && many ? "no byte addressed twice"
               : disjoint       ? "objects overlap (an unpack of several runs serially, in "
                                  "typemap order)"
                                : "overlapping (unpack runs serially, in typemap order)");
        spec = tj_spec_parts(layout, word, dir, unpack && !disjoint, target);
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
        if (tj_block_words_aligned(&block, launch_words) == 1)
            print_launch("launch:     ", "", launch_words[0]);
        else {
            print_launch("launch:     ", " for one object", launch_words[0]);
            print_launch("            ", " for several", launch_words[1]);
        }
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

/* --- cache --------------------------------------------------------------------------------- */

/* What a walk could not see or do, after its counts: one line, and the reason the store gave. */
static void report_walk_problem(const char *cmd, const tj_store_stats_t *stats, tj_status_t st)
{
    const char *why = tj_store_last_problem();

    if (stats->skipped > 0)
        fprintf(stderr, "typejit cache %s: %ld folder%s not %s: %s\n", cmd, stats->skipped,
                stats->skipped == 1 ? "" : "s", strcmp(cmd, "clear") == 0 ? "cleared" : "counted",
                why[0] ? why : "refused");
    else
        fprintf(stderr, "typejit cache %s: %s\n", cmd, why[0] ? why : tj_status_string(st));
}

/* Entries that fail validation, named with why: at most MAX_INVALID_SHOWN lines. */
#define MAX_INVALID_SHOWN 20

typedef struct {
    char lines[MAX_INVALID_SHOWN][PATH_MAX + 300];
    int n, more;
} invalid_t;

static void note_invalid(const tj_store_item_t *item, void *arg)
{
    invalid_t *inv = arg;

    if (item->invalid == NULL)
        return;
    if (inv->n == MAX_INVALID_SHOWN) {
        inv->more++;
        return;
    }
    snprintf(inv->lines[inv->n++], sizeof(inv->lines[0]), "%s/%s: %s", item->folder, item->name,
             item->invalid);
}

static void print_invalid(const char *cmd, const invalid_t *inv)
{
    for (int i = 0; i < inv->n; i++)
        printf("typejit cache %s: invalid entry %s\n", cmd, inv->lines[i]);
    if (inv->more > 0)
        printf("typejit cache %s: %d more invalid entries not shown\n", cmd, inv->more);
}

typedef struct {
    char *line;
    long long last_use;
} listed_t;

typedef struct {
    listed_t *items;
    size_t n, cap;
    bool oom;
} list_t;

static void list_item(const tj_store_item_t *item, void *arg)
{
    list_t *l = arg;
    char what[2048], when[32], line[PATH_MAX + 2400];
    struct tm tm;
    time_t t = (time_t)item->last_use;
    const char *slash = strrchr(item->folder, '/');
    const char *tc_end = slash, *tc = item->folder;
    int n;

    if (l->oom)
        return;
    if (item->key != NULL)
        tj_key_describe(item->key, what, sizeof(what));
    else
        snprintf(what, sizeof(what), "invalid: %s", item->invalid);
    /* The folder is DIR/TOOLCHAIN/ARCH: show TOOLCHAIN/ARCH. */
    if (slash != NULL) {
        for (const char *p = item->folder; p < tc_end; p++)
            if (*p == '/')
                tc = p + 1;
    }
    gmtime_r(&t, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    n = snprintf(line, sizeof(line), "%.32s %s %lld %s %s%s", item->name, tc, item->bytes, when,
                 what, item->source ? " (source saved)" : "");
    if (n < 0)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        listed_t *grown = realloc(l->items, cap * sizeof(*grown));
        if (grown == NULL) {
            l->oom = true;
            return;
        }
        l->items = grown;
        l->cap = cap;
    }
    if ((l->items[l->n].line = strdup(line)) == NULL) {
        l->oom = true;
        return;
    }
    l->items[l->n++].last_use = item->last_use;
}

static int by_use(const void *a, const void *b)
{
    const listed_t *x = a, *y = b;
    if (x->last_use != y->last_use)
        return x->last_use < y->last_use ? -1 : 1;
    return strcmp(x->line, y->line);
}

/* One line per entry, least recently used first (the order trim removes them in). */
static int cache_list(tj_store_t *store)
{
    list_t l = {NULL, 0, 0, false};
    tj_store_stats_t stats;
    long skipped = 0;
    tj_status_t st = tj_store_list(store, list_item, &l, &skipped);
    int rc = 0;

    qsort(l.items, l.n, sizeof(*l.items), by_use);
    for (size_t i = 0; i < l.n; i++) {
        printf("%s\n", l.items[i].line);
        free(l.items[i].line);
    }
    free(l.items);
    if (l.oom) {
        fprintf(stderr, "typejit cache list: out of memory\n");
        rc = 1;
    }
    if (st != TJ_OK) {
        memset(&stats, 0, sizeof(stats));
        stats.skipped = skipped;
        report_walk_problem("list", &stats, st);
        rc = 1;
    }
    return rc;
}

static int cache_clear(tj_store_t *store, const char *dir)
{
    tj_store_stats_t left;
    tj_status_t st = tj_store_clear(store), st_left;

    /* Say "cleared" only when nothing is left; else what is left, and why. */
    memset(&left, 0, sizeof(left));
    st_left = tj_store_stats(store, false, &left);
    if (st == TJ_OK && st_left == TJ_OK && left.entries + left.invalid + left.sources == 0) {
        printf("cache %s: cleared\n", dir);
        return 0;
    }
    printf("cache %s: not cleared: %ld entries, %ld invalid, %ld sources left%s\n", dir,
           left.entries, left.invalid, left.sources,
           left.skipped > 0 ? ", and folders that could not be looked into" : "");
    if (left.invalid > 0) {
        invalid_t invalid;
        memset(&invalid, 0, sizeof(invalid));
        tj_store_list(store, note_invalid, &invalid, NULL);
        print_invalid("clear", &invalid);
    }
    if (st != TJ_OK)
        report_walk_problem("clear", &left, st);
    else if (st_left != TJ_OK)
        report_walk_problem("clear", &left, st_left);
    return 1;
}

/* Trim to @p max bytes and say what was removed and what is left. */
static int cache_trim(tj_store_t *store, const char *dir, long long max)
{
    tj_store_trim_t r;
    tj_status_t st = tj_store_trim(store, max, &r);
    int rc = 0;

    printf("cache %s: removed %ld entries (%lld bytes), %ld manifest lines; %ld entries left "
           "(%lld bytes, at most %lld wanted)\n",
           dir, r.removed, r.freed, r.lines_dropped, r.kept, r.kept_bytes, max);
    if (r.kept_bytes > max && r.busy > 0) {
        fprintf(stderr,
                "typejit cache trim: still %lld bytes over: %ld entries are being compiled or "
                "written by running processes\n",
                r.kept_bytes - max, r.busy);
        rc = 1;
    } else if (r.kept_bytes > max) {
        rc = 1; /* entries that could not be removed: the store's reason follows */
    }
    if (st != TJ_OK) {
        tj_store_stats_t stats;
        memset(&stats, 0, sizeof(stats));
        stats.skipped = r.skipped;
        report_walk_problem("trim", &stats, st);
        rc = 1;
    }
    return rc;
}

static int cmd_cache(int argc, char **argv)
{
    const char *dir = NULL, *what = NULL, *size = NULL;
    long long max = tj_config()->cache_max_size;
    tj_store_t *store;
    tj_store_stats_t stats;
    invalid_t invalid;
    long lines = 0, distinct = 0;
    bool verify;
    tj_status_t st, st_manifest;
    int rc;

    if (wants_help(argc, argv)) {
        fputs(usage_cache, stdout);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        if (tj_opt_value("cache", argc, argv, &i, "--cache-dir", &dir)) {
            if (dir == NULL)
                return 2;
        } else if (tj_opt_value("cache", argc, argv, &i, "--max-size", &size)) {
            if (size == NULL)
                return 2;
            if (!tj_config_parse_size(size, &max)) {
                fprintf(stderr,
                        "typejit cache: --max-size wants a size such as 500M or 2G (a whole "
                        "number of bytes, optionally followed by K, M, G or T), not \"%s\"\n",
                        size);
                return 2;
            }
        } else if (what == NULL && argv[i][0] != '-')
            what = argv[i];
        else {
            fprintf(stderr, "typejit cache: unexpected %s\n%s", argv[i], usage_cache);
            return 2;
        }
    }
    if (what == NULL) {
        fprintf(stderr, "typejit cache: no subcommand given\n%s", usage_cache);
        return 2;
    }
    if (strcmp(what, "stats") && strcmp(what, "list") && strcmp(what, "verify") &&
        strcmp(what, "clear") && strcmp(what, "trim")) {
        fprintf(stderr,
                "typejit cache: unknown subcommand %s (stats, list, verify, clear or trim)\n%s",
                what, usage_cache);
        return 2;
    }
    if (size != NULL && strcmp(what, "trim") != 0) {
        fprintf(stderr, "typejit cache %s: --max-size is for trim only\n", what);
        return 2;
    }
    if (strcmp(what, "trim") == 0 && size == NULL && max <= 0) {
        fprintf(stderr, "typejit cache trim: how large may the cache be? give --max-size SIZE "
                        "(or set TYPEJIT_CACHE_MAX_SIZE)\n");
        return 2;
    }
    if (cache_dir(dir)[0] == '\0') {
        fprintf(stderr, "typejit cache: no cache directory: set TYPEJIT_CACHE_DIR or HOME\n");
        return 1;
    }
    /* stats and list only read: a missing cache is not created for them. */
    store_quiet(); /* every problem is reported below, once */
    st = tj_store_open(cache_dir(dir),
                       strcmp(what, "stats") == 0 || strcmp(what, "list") == 0 ? TJ_STORE_RO
                                                                               : TJ_STORE_RW,
                       &store);
    if (st == TJ_ERR_NOT_FOUND) {
        printf("cache %s: empty (no directory)\n", cache_dir(dir));
        return 0;
    }
    if (st != TJ_OK) {
        fprintf(stderr, "typejit cache %s: cannot use %s: %s\n", what, cache_dir(dir),
                tj_store_last_problem()[0] ? tj_store_last_problem() : tj_status_string(st));
        return 1;
    }
    if (strcmp(what, "clear") == 0 || strcmp(what, "trim") == 0 || strcmp(what, "list") == 0) {
        rc = strcmp(what, "clear") == 0  ? cache_clear(store, cache_dir(dir))
             : strcmp(what, "trim") == 0 ? cache_trim(store, cache_dir(dir), max)
                                         : cache_list(store);
        tj_store_close(store);
        return rc;
    }
    verify = strcmp(what, "verify") == 0;
    memset(&stats, 0, sizeof(stats));
    memset(&invalid, 0, sizeof(invalid));
    /* Named before verify deletes them. */
    tj_store_list(store, note_invalid, &invalid, NULL);
    st = tj_store_stats(store, verify, &stats);
    st_manifest = tj_store_manifest_count(store, &lines, &distinct);
    tj_store_close(store);
    if (verify)
        printf("cache %s: %ld entries, %ld bytes, %ld invalid (%ld deleted), %ld sources, "
               "%ld manifest lines (%ld distinct)\n",
               cache_dir(dir), stats.entries, stats.bytes, stats.invalid, stats.removed,
               stats.sources, lines, distinct);
    else
        printf("cache %s: %ld entries, %ld bytes, %ld invalid, %ld sources, %ld manifest lines "
               "(%ld distinct)\n",
               cache_dir(dir), stats.entries, stats.bytes, stats.invalid, stats.sources, lines,
               distinct);
    print_invalid(what, &invalid);
    rc = 0;
    if (st != TJ_OK) {
        report_walk_problem(what, &stats, st);
        rc = 1;
    }
    if (st_manifest != TJ_OK) {
        fprintf(stderr, "typejit cache %s: manifest not read: %s\n", what,
                tj_store_last_problem()[0] ? tj_store_last_problem()
                                           : tj_status_string(st_manifest));
        rc = 1;
    }
    return verify && stats.invalid > 0 ? 1 : rc;
}

int main(int argc, char **argv)
{
    int rc;

    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(usage_main, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    /* Settings warnings are collected while the library parses them; a tool says them now. */
    (void)tj_config();
    tj_config_flush_warnings(-1);
    if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) {
        if (wants_help(argc - 1, argv + 1)) {
            fputs(usage_version, stdout);
            return 0;
        }
        if (argc > 2) {
            fprintf(stderr, "typejit version: unexpected %s\n%s", argv[2], usage_version);
            return 2;
        }
        printf("typejit %s\n", tj_version());
        return 0;
    }
    if (strcmp(argv[1], "warm") && strcmp(argv[1], "inspect") && strcmp(argv[1], "cache") &&
        strcmp(argv[1], "measure")) {
        fprintf(stderr, "typejit: unknown command %s\n%s", argv[1], usage_main);
        return 2;
    }
    /* Cache maintenance touches files only: no MPI, so that it runs anywhere, fast, and cannot
     * fail for want of a launcher. */
    if (strcmp(argv[1], "cache") == 0) {
        rc = cmd_cache(argc - 1, argv + 1);
        tj_supply_finalize();
        return rc;
    }
    /* Type descriptions are built with MPI's constructors, and measure times the MPI: a
     * singleton MPI, no launcher needed. */
    PMPI_Init(NULL, NULL);
    if (strcmp(argv[1], "warm") == 0)
        rc = cmd_warm(argc - 1, argv + 1);
    else if (strcmp(argv[1], "inspect") == 0)
        rc = cmd_inspect(argc - 1, argv + 1);
    else
        rc = tj_measure_run(argc - 1, argv + 1);
    tj_supply_finalize();
    PMPI_Finalize();
    return rc;
}
