/* The `typejit` command: warm the kernel cache ahead of a job (no GPU needed), inspect what
 * typejit makes of a type, and maintain the cache. */
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache/hash.h"
#include "cache/store.h"
#include "jit/gen.h"
#include "jit/nvrtc.h"
#include "send/kernels.h"
#include "type/translate.h"
#include "typedesc.h"
#include "util/common.h"
#include "util/config.h"
#include "util/log.h"

#define MAX_ARCHS 16

static const char *usage_main =
    "usage: typejit COMMAND [OPTIONS]\n"
    "\n"
    "commands:\n"
    "  warm      compile the kernels of type descriptions or of the cache's manifest\n"
    "  inspect   show the IR, canonical block, word, cache key and kernel source of a type\n"
    "  cache     stats | verify | clear the kernel cache\n"
    "  version   print the typejit version\n"
    "\n"
    "`typejit COMMAND --help` describes each command.\n";

static const char *usage_warm =
    "usage: typejit warm [--arch sm_90,sm_80,...] [--jobs N] [--cache-dir DIR] [FILE...]\n"
    "\n"
    "Compile the pack and unpack kernels of every type described in FILEs (one type description\n"
    "a line, `#` comments), or, without FILE, every kernel listed in the cache's manifest (the\n"
    "kernels earlier runs needed). Needs NVRTC, no GPU. Kernels already cached are not compiled\n"
    "again.\n"
    "\n"
    "  --arch LIST      targets, comma-separated (default: TYPEJIT_ARCH, else sm_90; with no FILE\n"
    "                   the manifest's own targets, plus LIST when given)\n"
    "  --jobs N         compile N kernels at once (default: the number of CPUs)\n"
    "  --cache-dir DIR  the cache to fill (default: TYPEJIT_CACHE_DIR, else\n"
    "                   $XDG_CACHE_HOME/typejit, else ~/.cache/typejit)\n";

static const char *usage_inspect =
    "usage: typejit inspect [--arch sm_XX] [--word W] [--unpack] [--no-source] 'TYPE'\n"
    "\n"
    "Print the type's IR as translated and after the canonical passes, its strided block, word\n"
    "size W, whether its objects overlap, the cache key and hash of its kernel, and the generated\n"
    "CUDA source. Needs no GPU; the key needs NVRTC.\n"
    "\n"
    "  --arch sm_XX   target of the key (default: TYPEJIT_ARCH, else sm_90)\n"
    "  --word W       a narrower word than the block allows (1, 2, 4, 8 or 16)\n"
    "  --unpack       the unpack kernel instead of the pack kernel\n"
    "  --no-source    leave the source out\n";

static const char *usage_cache =
    "usage: typejit cache stats|verify|clear [--cache-dir DIR]\n"
    "\n"
    "  stats    number and size of entries, saved sources, manifest lines\n"
    "  verify   validate every entry and delete those that fail (exit status 1 if any did)\n"
    "  clear    delete every entry, source, temporary file and the manifest\n";

static bool wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return true;
    return false;
}

static const char *cache_dir(const char *given)
{
    return given != NULL ? given : tj_config()->cache_dir;
}

/* --- warm ---------------------------------------------------------------------------------- */

typedef struct {
    tj_block_t block;
    int word;
    tj_dir_t dir;
    char target[32];
} item_t;

typedef struct {
    item_t *items;
    int n, cap;
    atomic_int next, done, compiled, cached, failed;
    bool progress;
    pthread_mutex_t print_lock;
} work_t;

static int add_item(work_t *w, const tj_block_t *b, int word, tj_dir_t dir, const char *target)
{
    for (int i = 0; i < w->n; i++)
        if (w->items[i].word == word && w->items[i].dir == dir &&
            strcmp(w->items[i].target, target) == 0 && tj_block_equal(&w->items[i].block, b))
            return 0;
    if (w->n == w->cap) {
        int cap = w->cap ? 2 * w->cap : 64;
        item_t *grown = realloc(w->items, (size_t)cap * sizeof(*grown));
        if (grown == NULL)
            return -1;
        w->items = grown;
        w->cap = cap;
    }
    item_t *it = &w->items[w->n++];
    it->block = *b;
    it->word = word;
    it->dir = dir;
    snprintf(it->target, sizeof(it->target), "%s", target);
    return 0;
}

typedef struct {
    work_t *work;
    char (*archs)[32];
    int narchs;
    const char *file;
    int errors;
} file_ctx_t;

static int warm_line(int line, const char *text, void *arg)
{
    file_ctx_t *ctx = arg;
    MPI_Datatype type;
    tj_block_t block;
    char err[256];
    tj_status_t st;

    if (tj_typedesc_parse(text, &type, err, sizeof(err)) != TJ_OK) {
        fprintf(stderr, "typejit warm: %s:%d: %s\n", ctx->file, line, err);
        ctx->errors++;
        return 0;
    }
    st = tj_translate_block(type, &block, NULL);
    PMPI_Type_free(&type);
    if (st != TJ_OK) {
        fprintf(stderr, "typejit warm: %s:%d: %s: no kernel needed (system MPI)\n", ctx->file, line,
                tj_status_string(st));
        return 0;
    }
    for (int a = 0; a < ctx->narchs; a++) {
        if (add_item(ctx->work, &block, block.word, TJ_DIR_PACK, ctx->archs[a]) != 0 ||
            add_item(ctx->work, &block, block.word, TJ_DIR_UNPACK, ctx->archs[a]) != 0)
            return -1;
    }
    return 0;
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
    tj_block_t block;
    tj_dir_t dir;
    char target[32];
    int word;

    if (tj_kernels_manifest_parse(line, &block, &word, &dir, target, sizeof(target)) != TJ_OK) {
        ctx->bad++;
        return;
    }
    add_item(ctx->work, &block, word, dir, target);
    for (int a = 0; ctx->extra_archs && a < ctx->narchs; a++)
        add_item(ctx->work, &block, word, dir, ctx->archs[a]);
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
        if (i >= w->n)
            return NULL;
        item_t *it = &w->items[i];
        if (tj_kernels_get(&it->block, it->word, it->dir, it->target, &k, &origin) != TJ_OK)
            atomic_fetch_add(&w->failed, 1);
        else if (origin == TJ_FROM_COMPILE)
            atomic_fetch_add(&w->compiled, 1);
        else
            atomic_fetch_add(&w->cached, 1);
        atomic_fetch_add(&w->done, 1);
        if (w->progress)
            draw_progress(w);
    }
}

static int split_archs(const char *list, char (*archs)[32], int max)
{
    int n = 0;
    const char *s = list;
    while (*s && n < max) {
        size_t len = strcspn(s, ",");
        if (len == 0 || len >= 32 || (strncmp(s, "sm_", 3) != 0 && strncmp(s, "compute_", 8) != 0))
            return -1;
        memcpy(archs[n], s, len);
        archs[n++][len] = '\0';
        s += len;
        if (*s == ',')
            s++;
    }
    return n;
}

static int cmd_warm(int argc, char **argv)
{
    char archs[MAX_ARCHS][32];
    int narchs = 0, jobs = (int)sysconf(_SC_NPROCESSORS_ONLN), nfiles = 0, errors = 0;
    const char *dir = NULL, *files[256];
    work_t w = {0};
    struct timespec t0, t1;

    if (wants_help(argc, argv)) {
        fputs(usage_warm, stdout);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--arch") == 0 && i + 1 < argc) {
            if ((narchs = split_archs(argv[++i], archs, MAX_ARCHS)) <= 0) {
                fprintf(stderr,
                        "typejit warm: --arch wants sm_XX or compute_XX, comma-separated\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc) {
            jobs = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--cache-dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "typejit warm: unknown option %s\n%s", argv[i], usage_warm);
            return 2;
        } else if (nfiles < (int)TJ_ARRAY_SIZE(files)) {
            files[nfiles++] = argv[i];
        }
    }
    if (jobs < 1)
        jobs = 1;
    if (tj_nvrtc_load() != TJ_OK) {
        fprintf(stderr, "typejit warm: NVRTC is not available: nothing can be compiled\n");
        return 1;
    }
    if (cache_dir(dir)[0] == '\0') {
        fprintf(stderr, "typejit warm: no cache directory: set TYPEJIT_CACHE_DIR or HOME\n");
        return 1;
    }
    tj_kernels_set_store(cache_dir(dir), 0);
    pthread_mutex_init(&w.print_lock, NULL);

    if (nfiles > 0) {
        if (narchs == 0)
            narchs =
                split_archs(tj_config()->arch[0] ? tj_config()->arch : "sm_90", archs, MAX_ARCHS);
        for (int f = 0; f < nfiles; f++) {
            file_ctx_t ctx = {&w, archs, narchs, files[f], 0};
            if (tj_typedesc_each_line(files[f], warm_line, &ctx) != TJ_OK) {
                fprintf(stderr, "typejit warm: cannot read %s\n", files[f]);
                return 1;
            }
            errors += ctx.errors;
        }
    } else {
        tj_store_t *store;
        manifest_ctx_t ctx = {&w, archs, narchs, narchs > 0, 0};
        if (tj_store_open(cache_dir(dir), TJ_STORE_RO, &store) != TJ_OK) {
            printf("typejit warm: no manifest in %s: nothing to do\n", cache_dir(dir));
            return 0;
        }
        tj_store_manifest_read(store, manifest_line, &ctx);
        tj_store_close(store);
        if (ctx.bad > 0)
            fprintf(stderr, "typejit warm: skipped %d malformed manifest lines\n", ctx.bad);
    }

    w.progress = isatty(STDERR_FILENO) && w.n > 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t tid[64];
    int nt = jobs < 64 ? jobs : 64;
    for (int t = 0; t < nt; t++)
        pthread_create(&tid[t], NULL, warm_worker, &w);
    for (int t = 0; t < nt; t++)
        pthread_join(tid[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (w.progress)
        fputc('\n', stderr);
    printf("typejit warm: %d kernels: %d compiled, %d already cached, %d failed (%.2f s, cache "
           "%s)\n",
           w.n, atomic_load(&w.compiled), atomic_load(&w.cached), atomic_load(&w.failed),
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec),
           cache_dir(dir));
    free(w.items);
    return atomic_load(&w.failed) > 0 || errors > 0 ? 1 : 0;
}

/* --- inspect ------------------------------------------------------------------------------- */

static int cmd_inspect(int argc, char **argv)
{
    const char *text = NULL, *arch = NULL;
    int word = 0;
    bool unpack = false, source = true;
    MPI_Datatype type;
    tj_ir_t ir, canon;
    tj_block_t block;
    char err[256], buf[4096], target[32];
    MPI_Aint lb, extent, tlb, textent;
    MPI_Count size;
    tj_status_t st;

    if (wants_help(argc, argv)) {
        fputs(usage_inspect, stdout);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--arch") == 0 && i + 1 < argc)
            arch = argv[++i];
        else if (strcmp(argv[i], "--word") == 0 && i + 1 < argc)
            word = atoi(argv[++i]);
        else if (strcmp(argv[i], "--unpack") == 0)
            unpack = true;
        else if (strcmp(argv[i], "--no-source") == 0)
            source = false;
        else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "typejit inspect: unknown option %s\n%s", argv[i], usage_inspect);
            return 2;
        } else
            text = argv[i];
    }
    if (text == NULL) {
        fputs(usage_inspect, stderr);
        return 2;
    }
    if (tj_typedesc_parse(text, &type, err, sizeof(err)) != TJ_OK) {
        fprintf(stderr, "typejit inspect: %s\n", err);
        return 1;
    }
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &tlb, &textent);
    PMPI_Type_size_x(type, &size);
    printf("type:       %s\n", text);
    printf("mpi:        size=%lld lb=%lld extent=%lld true_lb=%lld true_extent=%lld\n",
           (long long)size, (long long)lb, (long long)extent, (long long)tlb, (long long)textent);
    if ((st = tj_translate_ir(type, &ir)) == TJ_OK) {
        tj_ir_format(&ir, buf, sizeof(buf));
        printf("ir:         %s\n", buf);
    }
    st = tj_translate_block(type, &block, &canon);
    PMPI_Type_free(&type);
    if (st != TJ_OK) {
        printf("strided:    no (%s): the system MPI packs this type\n", tj_status_string(st));
        return 0;
    }
    tj_ir_format(&canon, buf, sizeof(buf));
    printf("canonical:  %s\n", buf);
    tj_block_format(&block, buf, sizeof(buf));
    printf("block:      %s\n", buf);
    printf("dimensions: %d\nword:       W=%d\nfootprint:  [%lld, %lld) per object, %s\n",
           block.ndims, block.word, (long long)block.lo, (long long)block.hi,
           block.disjoint ? "no byte addressed twice" : "overlapping (unpack is staged)");
    if (word == 0)
        word = block.word;
    if ((word != 1 && word != 2 && word != 4 && word != 8 && word != 16) || block.word % word) {
        fprintf(stderr, "typejit inspect: --word %d does not divide W=%d\n", word, block.word);
        return 2;
    }
    snprintf(target, sizeof(target), "%s",
             arch                   ? arch
             : tj_config()->arch[0] ? tj_config()->arch
                                    : "sm_90");
    tj_dir_t dir = unpack ? TJ_DIR_UNPACK : TJ_DIR_PACK;
    if (tj_nvrtc_load() == TJ_OK) {
        int n = tj_kernels_key(&block, word, dir, target, buf, sizeof(buf));
        if (n > 0 && (size_t)n < sizeof(buf)) {
            char hex[33];
            tj_hash_hex(tj_hash_bytes(buf, (size_t)n), hex);
            printf("key hash:   %s\nkey:\n%s", hex, buf);
        }
    } else {
        printf("key:        (NVRTC not available)\n");
    }
    if (source) {
        char *src;
        if (tj_gen_source(&block, word, dir, unpack ? "tj_unpack" : "tj_pack", &src) == TJ_OK) {
            printf("source:\n%s", src);
            free(src);
        }
    }
    return 0;
}

/* --- cache --------------------------------------------------------------------------------- */

static void count_line(const char *line, void *arg)
{
    (void)line;
    (*(long *)arg)++;
}

static int cmd_cache(int argc, char **argv)
{
    const char *dir = NULL, *what = NULL;
    tj_store_t *store;
    tj_store_stats_t stats;
    long lines = 0;
    tj_status_t st;

    if (wants_help(argc, argv)) {
        fputs(usage_cache, stdout);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--cache-dir") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (what == NULL && argv[i][0] != '-')
            what = argv[i];
        else {
            fprintf(stderr, "typejit cache: unexpected %s\n%s", argv[i], usage_cache);
            return 2;
        }
    }
    if (what == NULL ||
        (strcmp(what, "stats") && strcmp(what, "verify") && strcmp(what, "clear"))) {
        fputs(usage_cache, stderr);
        return 2;
    }
    st = tj_store_open(cache_dir(dir), strcmp(what, "stats") == 0 ? TJ_STORE_RO : TJ_STORE_RW,
                       &store);
    if (st == TJ_ERR_NOT_FOUND) {
        printf("cache %s: empty (no directory)\n", cache_dir(dir));
        return 0;
    }
    if (st != TJ_OK) {
        fprintf(stderr, "typejit cache: cannot open %s: %s\n", cache_dir(dir),
                tj_status_string(st));
        return 1;
    }
    if (strcmp(what, "clear") == 0) {
        st = tj_store_clear(store);
        printf("cache %s: %s\n", cache_dir(dir), st == TJ_OK ? "cleared" : tj_status_string(st));
        tj_store_close(store);
        return st == TJ_OK ? 0 : 1;
    }
    st = tj_store_stats(store, strcmp(what, "verify") == 0, &stats);
    tj_store_manifest_read(store, count_line, &lines);
    tj_store_close(store);
    if (st != TJ_OK) {
        fprintf(stderr, "typejit cache: %s\n", tj_status_string(st));
        return 1;
    }
    printf("cache %s: %ld entries, %ld bytes, %ld invalid%s, %ld sources, %ld manifest lines\n",
           cache_dir(dir), stats.entries, stats.bytes, stats.invalid,
           strcmp(what, "verify") == 0 ? " (deleted)" : "", stats.sources, lines);
    return strcmp(what, "verify") == 0 && stats.invalid > 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
    int rc;

    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(usage_main, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) {
        printf("typejit %s\n", tj_version());
        return 0;
    }
    if (strcmp(argv[1], "warm") && strcmp(argv[1], "inspect") && strcmp(argv[1], "cache")) {
        fprintf(stderr, "typejit: unknown command %s\n%s", argv[1], usage_main);
        return 2;
    }
    /* Type descriptions are built with MPI's constructors: a singleton MPI, no launcher. */
    PMPI_Init(NULL, NULL);
    if (strcmp(argv[1], "warm") == 0)
        rc = cmd_warm(argc - 1, argv + 1);
    else if (strcmp(argv[1], "inspect") == 0)
        rc = cmd_inspect(argc - 1, argv + 1);
    else
        rc = cmd_cache(argc - 1, argv + 1);
    tj_kernels_finalize();
    PMPI_Finalize();
    return rc;
}
