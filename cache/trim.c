/* SPDX-License-Identifier: BSD-3-Clause */
/* Trimming the kernel cache: least recently used entries go first, the manifest keeps only the
 * lines of kernels still cached, and nothing that another process is writing or compiling is
 * removed.
 *
 * Two walks: the first notes every entry and source (size, last use, lock, manifest line), the
 * second removes those chosen, each only if it is still the file that was judged. */
#include "cache/trim.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache/manifest.h"
#include "cache/state.h"
#include "cache/store_internal.h"
#include "util/common.h"
#include "util/config.h"

/* Automatic trimming goes down to this share of TYPEJIT_CACHE_MAX_SIZE, in percent. */
#define AUTO_TRIM_PERCENT 90
/* A file in tmp/ this old was left by a writer that died; no save takes nearly as long. */
#define TMP_STALE_S 3600

/* Where an item lives and what it is called there, without its suffix. */
typedef struct {
    dev_t dev;
    ino_t dir;
    char hex[HEX_LEN];
} item_key_t;

typedef struct {
    item_key_t key;
    bool has_entry, invalid, locked, chosen;
    struct stat entry;  /* the entry file judged */
    long long bytes;    /* entry and source */
    long long last_use; /* nanoseconds since the epoch */
    tj_hash_t line;     /* hash of its manifest line, when has_line */
    bool has_line;
    UT_hash_handle hh;
} item_t;

typedef struct {
    item_t *items; /* table by key */
    tj_status_t status;
    long long total;
    bool sizes_only; /* the cheap walk of tj_store_trim_if_needed */
} trim_ctx_t;

static long long ns_of(const struct timespec *ts)
{
    return (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

/* The manifest line of a kernel, from its key text: a key's header lines (up to the first blank
 * line) may hold "manifest=LINE" (src/kernels/key.c); keys without one (fused and generic
 * kernels, keys of older versions) have no line. */
static bool line_of_key(const char *key, tj_hash_t *hash)
{
    static const char name[] = "manifest=";
    const size_t nl = sizeof(name) - 1;

    for (const char *p = key; *p != '\0' && *p != '\n';) {
        size_t len = strcspn(p, "\n");
        if (len > nl && len - nl <= TJ_STORE_LINE_MAX && strncmp(p, name, nl) == 0) {
            *hash = tj_hash_bytes(p + nl, len - nl);
            return true;
        }
        p += len + (p[len] == '\n');
    }
    return false;
}

static item_t *item_get(trim_ctx_t *ctx, const struct stat *dir, const char *hex)
{
    item_key_t k;
    item_t *it;
    bool oom = false;

    memset(&k, 0, sizeof(k));
    k.dev = dir->st_dev;
    k.dir = dir->st_ino;
    memcpy(k.hex, hex, HEX_LEN);
    HASH_FIND(hh, ctx->items, &k, sizeof(k), it);
    if (it != NULL)
        return it;
    it = calloc(1, sizeof(*it));
    if (it == NULL)
        goto out_oom;
    it->key = k;
    HASH_ADD(hh, ctx->items, key, sizeof(k), it);
    if (oom) {
        free(it);
        goto out_oom;
    }
    return it;

out_oom:
    tj_log_error("cache: out of memory trimming");
    ctx->status = TJ_ERR_NOMEM;
    return NULL;
}

/* Note the entry @p name of @p arch_fd: its size, last use, lock and manifest line. */
static void note_entry(tj_store_t *store, int arch_fd, item_t *it, const char *name,
                       const struct stat *st)
{
    char *key = NULL;
    int fd;

    it->has_entry = true;
    it->entry = *st;
    it->bytes += (long long)st->st_size;
    /* Reading the file (the key below) may set its atime: take the times first. */
    it->last_use =
        ns_of(&st->st_atim) > ns_of(&st->st_mtim) ? ns_of(&st->st_atim) : ns_of(&st->st_mtim);
    it->locked = tj_lock_is_live(store, arch_fd, name);
    fd = tj_store_open_quietly(arch_fd, name);
    if (fd < 0 || !S_ISREG(st->st_mode) || !tj_store_trusts(store, st) ||
        tj_entry_read_key(fd, &key) != TJ_OK) {
        /* Useless to any run: first to go. */
        it->invalid = true;
        it->last_use = 0;
    } else {
        char hex[HEX_LEN + 1];
        tj_hash_hex(tj_hash_bytes(key, strlen(key)), hex);
        if (memcmp(hex, name, HEX_LEN) != 0) {
            it->invalid = true;
            it->last_use = 0;
        } else
            it->has_line = line_of_key(key, &it->line);
    }
    free(key);
    tj_store_close_fd(fd);
}

static tj_status_t note_visit(tj_store_t *store, int tc_fd, int arch_fd, const char *arch,
                              const char *where, void *arg)
{
    trim_ctx_t *ctx = arg;
    struct stat dir, st;
    struct dirent *de;
    DIR *d;
    int copy;

    (void)tc_fd;
    (void)arch;
    copy = -1;
    if (fstat(arch_fd, &dir) != 0 || (copy = openat(arch_fd, ".", O_RDONLY | O_CLOEXEC)) < 0 ||
        (d = fdopendir(copy)) == NULL) {
        STORE_WARN(store, "cache: cannot list %s: %s", where, strerror(errno));
        tj_store_close_fd(copy);
        return TJ_ERR_IO;
    }
    while ((de = readdir(d)) != NULL && ctx->status == TJ_OK) {
        bool entry = tj_store_is_hex_name(de->d_name, ENTRY_SUFFIX);
        item_t *it;

        if (!entry && !tj_store_is_hex_name(de->d_name, SOURCE_SUFFIX))
            continue;
        if (fstatat(arch_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(st.st_mode))
            continue; /* gone meanwhile; a folder is for verify to report */
        ctx->total += (long long)st.st_size;
        if (ctx->sizes_only || (it = item_get(ctx, &dir, de->d_name)) == NULL)
            continue;
        if (entry)
            note_entry(store, arch_fd, it, de->d_name, &st);
        else {
            it->bytes += (long long)st.st_size;
            /* A source alone (its entry removed by verify) is as old as it is. */
            if (!it->has_entry)
                it->last_use = ns_of(&st.st_mtim);
        }
    }
    closedir(d);
    return TJ_OK;
}

typedef struct {
    trim_ctx_t *ctx;
    tj_store_trim_t *result;
    tj_hashset_t drop;
} remove_ctx_t;

/* Remove the chosen items of one arch folder. */
static tj_status_t remove_visit(tj_store_t *store, int tc_fd, int arch_fd, const char *arch,
                                const char *where, void *arg)
{
    remove_ctx_t *rc = arg;
    tj_status_t status = TJ_OK;
    struct stat dir;
    item_t *it, *tmp;

    (void)tc_fd;
    (void)arch;
    if (fstat(arch_fd, &dir) != 0)
        return TJ_OK;
    HASH_ITER(hh, rc->ctx->items, it, tmp)
    {
        char name[FILE_NAME_SPACE];
        tj_status_t st = TJ_OK;

        if (!it->chosen || it->key.dev != dir.st_dev || it->key.dir != dir.st_ino)
            continue;
        snprintf(name, sizeof(name), "%.*s" ENTRY_SUFFIX, HEX_LEN, it->key.hex);
        if (it->has_entry) {
            st = tj_store_remove_judged(store, arch_fd, where, name, &it->entry, NULL, 0);
            if (st == TJ_ERR_IO && status == TJ_OK)
                status = st;
        }
        if (st != TJ_OK && st != TJ_ERR_NOT_FOUND) {
            /* Not removed (a read-only file system, a folder we may not write): it is left,
             * and counted so. */
            it->chosen = false;
            continue;
        }
        if (it->has_entry && st == TJ_ERR_NOT_FOUND) {
            /* Replaced by a save while we looked (or removed by another trim): keep it. */
            it->chosen = false;
            continue;
        }
        snprintf(name, sizeof(name), "%.*s" SOURCE_SUFFIX, HEX_LEN, it->key.hex);
        if (unlinkat(arch_fd, name, 0) != 0 && errno != ENOENT) {
            STORE_WARN(store, "cache: cannot remove %s/%s: %s", where, name, strerror(errno));
            if (status == TJ_OK)
                status = TJ_ERR_IO;
        }
        rc->result->removed++;
        rc->result->freed += it->bytes;
        if (it->has_line && tj_hashset_add(&rc->drop, it->line, NULL) != TJ_OK && status == TJ_OK)
            status = TJ_ERR_NOMEM;
    }
    return status;
}

/* Remove what writers that died left in tmp/ (a save or a broken lock cut short). */
static void sweep_tmp(tj_store_t *store, tj_store_trim_t *result)
{
    time_t now = time(NULL);
    struct dirent *de;
    int tmp_fd, copy;
    DIR *d;

    if (tj_store_open_dir(store, store->root_fd, store->dir, TMP_NAME, false, &tmp_fd) != TJ_OK)
        return;
    if ((copy = openat(tmp_fd, ".", O_RDONLY | O_CLOEXEC)) < 0 || (d = fdopendir(copy)) == NULL) {
        tj_store_close_fd(copy);
        close(tmp_fd);
        return;
    }
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        if (fstatat(tmp_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
            st.st_mtime > now - TMP_STALE_S)
            continue;
        if (unlinkat(tmp_fd, de->d_name, 0) == 0)
            result->freed += (long long)st.st_size;
    }
    closedir(d);
    close(tmp_fd);
}

static int by_last_use(const void *a, const void *b)
{
    const item_t *x = *(item_t *const *)a, *y = *(item_t *const *)b;
    return x->last_use < y->last_use ? -1 : x->last_use > y->last_use;
}

static void free_items(item_t **items)
{
    item_t *it, *tmp;

    HASH_ITER(hh, *items, it, tmp)
    {
        HASH_DEL(*items, it);
        free(it);
    }
}

tj_status_t tj_store_trim(tj_store_t *store, long long max_bytes, tj_store_trim_t *result)
{
    trim_ctx_t ctx;
    remove_ctx_t rc;
    tj_status_t status, st_manifest = TJ_OK;
    item_t **order = NULL, *it, *tmp;
    long long total = 0;
    size_t n = 0, chosen = 0;

    if (store == NULL || result == NULL || max_bytes < 0)
        return TJ_ERR_INVALID;
    memset(result, 0, sizeof(*result));
    if (store->mode != TJ_STORE_RW)
        return TJ_ERR_UNSUPPORTED;
    memset(&ctx, 0, sizeof(ctx));
    status = tj_walk_arch_dirs(store, note_visit, &ctx, false, &result->skipped);
    if (ctx.status != TJ_OK) {
        status = ctx.status;
        goto out_free;
    }

    order = malloc((HASH_COUNT(ctx.items) + 1) * sizeof(*order));
    if (order == NULL) {
        tj_log_error("cache: out of memory trimming");
        status = TJ_ERR_NOMEM;
        goto out_free;
    }
    HASH_ITER(hh, ctx.items, it, tmp)
    {
        order[n++] = it;
        total += it->bytes;
    }
    qsort(order, n, sizeof(*order), by_last_use);
    /* Oldest first, until what is left fits; a locked entry is being compiled (or replaced)
     * by a live process and stays whatever its age. */
    for (size_t i = 0; i < n && total > max_bytes; i++) {
        if (order[i]->locked) {
            result->busy++;
            continue;
        }
        order[i]->chosen = true;
        chosen++;
        total -= order[i]->bytes;
    }

    memset(&rc, 0, sizeof(rc));
    rc.ctx = &ctx;
    rc.result = result;
    if (chosen > 0) {
        long skipped = 0;
        tj_status_t st = tj_walk_arch_dirs(store, remove_visit, &rc, false, &skipped);
        if (status == TJ_OK)
            status = st;
    }
    /* A kernel of which an entry is left (another toolchain) keeps its manifest line. */
    for (size_t i = 0; i < n; i++) {
        if (order[i]->chosen)
            continue;
        result->kept_bytes += order[i]->bytes;
        if (!order[i]->has_entry)
            continue;
        result->kept++;
        if (order[i]->has_line && !order[i]->invalid)
            tj_hashset_remove(&rc.drop, order[i]->line);
    }
    sweep_tmp(store, result);
    st_manifest = tj_manifest_drop(store, &rc.drop, &result->lines_dropped);
    if (status == TJ_OK)
        status = st_manifest;
    tj_hashset_clear(&rc.drop);

out_free:
    free(order);
    free_items(&ctx.items);
    return status;
}

tj_status_t tj_store_trim_if_needed(tj_store_t *store)
{
    long long max = tj_config()->cache_max_size;
    tj_store_trim_t result;
    trim_ctx_t ctx;
    long skipped = 0;
    tj_status_t status;

    if (store == NULL || store->mode != TJ_STORE_RW || max <= 0 ||
        atomic_flag_test_and_set(&tj_cache_state.trim.checked))
        return TJ_OK;
    memset(&ctx, 0, sizeof(ctx));
    ctx.sizes_only = true;
    status = tj_walk_arch_dirs(store, note_visit, &ctx, false, &skipped);
    if (ctx.total <= max)
        return status;
    status = tj_store_trim(store, max / 100 * AUTO_TRIM_PERCENT, &result);
    tj_log_info("cache: %s held %lld bytes, more than TYPEJIT_CACHE_MAX_SIZE=%lld: removed %ld "
                "least recently used entries (%lld bytes)",
                store->dir, ctx.total, max, result.removed, result.freed);
    return status;
}
