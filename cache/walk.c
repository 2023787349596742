/* SPDX-License-Identifier: BSD-3-Clause */
/* Maintenance walks over the kernel cache: statistics, verification, clearing. */
#include "cache/walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/store_internal.h"
#include "util/common.h"

/* A folder, or a symbolic link standing where a folder of the layout should be (refused when
 * opened, so counted); other files beside the layout are none of the walk's business. */
static bool is_folder(int parent, const char *name)
{
    struct stat st;
    return fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
           (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode));
}

/* A folder of the layout the walk could not enter: counted, and the walk's status says so,
 * because whatever it holds was neither counted nor removed. A folder removed meanwhile is not
 * refused. */
static void refused(long *walk, tj_status_t why, tj_status_t *status)
{
    if (why == TJ_ERR_NOT_FOUND)
        return;
    (*walk)++;
    if (*status == TJ_OK)
        *status = why;
}

/* A directory stream on the folder @p fd, which stays the caller's; NULL after a warning that
 * names the folder @p where. */
static DIR *list_folder(tj_store_t *store, int fd, const char *where)
{
    int copy = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = copy >= 0 ? fdopendir(copy) : NULL;

    if (d == NULL) {
        STORE_WARN(store, "cache: cannot list %s: %s", where, strerror(errno));
        tj_store_close_fd(copy);
    }
    return d;
}

/* What a walk does with the file @p name of the folder @p dir_fd (the folder @p where, for
 * messages). */
typedef tj_status_t (*file_fn_t)(tj_store_t *store, int dir_fd, const char *where, const char *name,
                                 void *arg);

/* Call @p fn for each name in the folder @p fd but "." and ".."; a failure does not stop the
 * walk, the first one is returned. */
static tj_status_t walk_files(tj_store_t *store, int fd, const char *where, file_fn_t fn, void *arg)
{
    tj_status_t status = TJ_OK, st;
    struct dirent *de;
    DIR *d;

    if ((d = list_folder(store, fd, where)) == NULL)
        return TJ_ERR_IO;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if ((st = fn(store, fd, where, de->d_name, arg)) != TJ_OK && status == TJ_OK)
            status = st;
    }
    closedir(d);
    return status;
}

/* A walk of every file of every arch folder (tj_walk_arch_dirs with files_visit). */
typedef struct {
    file_fn_t fn;
    void *arg;
} files_walk_t;

static tj_status_t files_visit(tj_store_t *store, int tc_fd, int arch_fd, const char *arch,
                               const char *where, void *arg)
{
    const files_walk_t *w = arg;

    (void)tc_fd;
    (void)arch;
    return walk_files(store, arch_fd, where, w->fn, w->arg);
}

typedef struct {
    bool remove_invalid;
    tj_store_stats_t stats;
} stats_ctx_t;

/* Count (and when asked, delete) the file @p name of an arch folder. */
static tj_status_t stats_file(tj_store_t *store, int arch_fd, const char *where, const char *name,
                              void *arg)
{
    stats_ctx_t *ctx = arg;
    tj_status_t status = TJ_OK;
    char path[PATH_MAX];
    struct stat st;
    off_t size;
    int fd;

    if (tj_store_is_hex_name(name, SOURCE_SUFFIX)) {
        if (fstatat(arch_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            ctx->stats.sources++;
            ctx->stats.bytes += (long)st.st_size;
        }
        return TJ_OK;
    }
    if (!tj_store_is_hex_name(name, ENTRY_SUFFIX))
        return TJ_OK;
    MESSAGE_PATH(path, "%s/%s", where, name);
    fd = tj_store_open_quietly(arch_fd, name);
    if (fd < 0 && errno == ENOENT)
        return TJ_OK; /* removed while we looked */
    if (fd >= 0) {
        tj_status_t st_entry =
            tj_entry_read(store, fd, path, NULL, name, NULL, NULL, &size, NULL, 0);
        if (st_entry == TJ_OK) {
            ctx->stats.entries++;
            ctx->stats.bytes += (long)size;
            close(fd);
            return TJ_OK;
        }
        if (st_entry == TJ_ERR_NOMEM || st_entry == TJ_ERR_IO) {
            /* Not a verdict on the entry: count nothing, report the failure. */
            close(fd);
            return st_entry;
        }
    } else {
        tj_log_info("cache: ignoring %s: %s", path, strerror(errno));
    }
    ctx->stats.invalid++;
    if (ctx->remove_invalid) {
        struct stat now, then;
        /* Delete only the file we judged: a writer may have renamed a good one over it. */
        bool same = fstatat(arch_fd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
                    (fd < 0 || (fstat(fd, &then) == 0 && then.st_ino == now.st_ino &&
                                then.st_dev == now.st_dev));
        bool folder = same && S_ISDIR(now.st_mode);
        if (!same)
            ; /* replaced meanwhile: not ours to judge again */
        else if (unlinkat(arch_fd, name, folder ? AT_REMOVEDIR : 0) == 0)
            ctx->stats.removed++;
        else if (errno == ENOENT)
            ;
        else {
            /* typejit never makes a folder here; one that holds something is someone's. */
            if (folder)
                STORE_WARN(store,
                           "cache: cannot remove %s: a directory where an entry should be, "
                           "and not empty (typejit never makes one); remove it by hand",
                           path);
            else
                STORE_WARN(store, "cache: cannot remove %s: %s", path, strerror(errno));
            status = TJ_ERR_IO;
        }
    }
    tj_store_close_fd(fd);
    return status;
}

/* Call @p fn for each <toolchain>/<arch> folder of the store; with @p prune, remove toolchain
 * folders left empty afterwards. Folders that are refused have been warned about and are
 * skipped. A failure in one folder does not stop the walk; the first one is returned. */
tj_status_t tj_walk_arch_dirs(tj_store_t *store,
                              tj_status_t (*fn)(tj_store_t *store, int tc_fd, int arch_fd,
                                                const char *arch, const char *where, void *arg),
                              void *arg, bool prune, long *walk)
{
    tj_status_t status = TJ_OK;
    struct dirent *tc;
    DIR *root;

    if ((root = list_folder(store, store->root_fd, store->dir)) == NULL)
        return TJ_ERR_IO;
    while ((tc = readdir(root)) != NULL) {
        char where[PATH_MAX];
        struct dirent *ar;
        tj_status_t st_tc;
        int tc_fd;
        DIR *d;

        if (!tj_store_valid_toolchain(tc->d_name) || !is_folder(store->root_fd, tc->d_name))
            continue;
        if ((st_tc = tj_store_open_dir(store, store->root_fd, store->dir, tc->d_name, false,
                                       &tc_fd)) != TJ_OK) {
            refused(walk, st_tc, &status);
            continue;
        }
        MESSAGE_PATH(where, "%s/%s", store->dir, tc->d_name);
        d = list_folder(store, tc_fd, where);
        if (d == NULL) {
            close(tc_fd);
            if (status == TJ_OK)
                status = TJ_ERR_IO;
            continue;
        }
        while ((ar = readdir(d)) != NULL) {
            char arch_where[PATH_MAX];
            tj_status_t st;
            int arch_fd;

            if (!tj_store_valid_component(ar->d_name) || !is_folder(tc_fd, ar->d_name))
                continue;
            if ((st = tj_store_open_dir(store, tc_fd, where, ar->d_name, false, &arch_fd)) !=
                TJ_OK) {
                refused(walk, st, &status);
                continue;
            }
            MESSAGE_PATH(arch_where, "%s/%s", where, ar->d_name);
            st = fn(store, tc_fd, arch_fd, ar->d_name, arch_where, arg);
            if (status == TJ_OK)
                status = st;
            close(arch_fd);
        }
        closedir(d);
        /* ENOTEMPTY leaves a folder that still holds something. */
        if (prune)
            unlinkat(store->root_fd, tc->d_name, AT_REMOVEDIR);
        close(tc_fd);
    }
    closedir(root);
    return status;
}

tj_status_t tj_store_stats(tj_store_t *store, bool remove_invalid, tj_store_stats_t *stats)
{
    stats_ctx_t ctx;
    files_walk_t walk = {stats_file, &ctx};
    tj_status_t status;

    if (store == NULL || stats == NULL)
        return TJ_ERR_INVALID;
    if (remove_invalid && store->mode != TJ_STORE_RW)
        return TJ_ERR_UNSUPPORTED;
    memset(&ctx, 0, sizeof(ctx));
    ctx.remove_invalid = remove_invalid;
    status = tj_walk_arch_dirs(store, files_visit, &walk, false, &ctx.stats.skipped);
    /* The counts are returned with the status: they say what was seen, the status what was
     * not (refused folders, entries that could not be deleted). */
    *stats = ctx.stats;
    return status;
}

typedef struct {
    void (*fn)(const tj_store_item_t *item, void *arg);
    void *arg;
} list_ctx_t;

static long long last_use_of(const struct stat *st)
{
    return st->st_atime > st->st_mtime ? (long long)st->st_atime : (long long)st->st_mtime;
}

/* Hand the entry @p name of an arch folder to the listing's function. */
static tj_status_t list_file(tj_store_t *store, int arch_fd, const char *where, const char *name,
                             void *arg)
{
    char path[PATH_MAX], why[256] = "", source[FILE_NAME_SPACE];
    list_ctx_t *ctx = arg;
    tj_store_item_t item;
    struct stat st, cu;
    char *key = NULL;
    off_t size;
    int fd;

    if (!tj_store_is_hex_name(name, ENTRY_SUFFIX) ||
        fstatat(arch_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return TJ_OK; /* not an entry, or removed while we looked */
    memset(&item, 0, sizeof(item));
    item.folder = where;
    item.name = name;
    item.bytes = (long long)st.st_size;
    item.last_use = last_use_of(&st);
    snprintf(source, sizeof(source), "%.*s" SOURCE_SUFFIX, HEX_LEN, name);
    item.source = fstatat(arch_fd, source, &cu, AT_SYMLINK_NOFOLLOW) == 0;
    MESSAGE_PATH(path, "%s/%s", where, name);
    fd = tj_store_open_quietly(arch_fd, name);
    if (fd < 0 && errno == ENOENT)
        return TJ_OK;
    if (fd < 0)
        snprintf(why, sizeof(why), "%s",
                 errno == ELOOP        ? "a symbolic link"
                 : S_ISDIR(st.st_mode) ? "a directory"
                                       : strerror(errno));
    else if (tj_entry_read(store, fd, path, NULL, name, NULL, NULL, &size, why, sizeof(why)) ==
                 TJ_OK &&
             tj_entry_read_key(fd, &key) == TJ_OK)
        item.key = key;
    else if (why[0] == '\0')
        snprintf(why, sizeof(why), "cannot be read");
    if (item.key == NULL)
        item.invalid = why;
    ctx->fn(&item, ctx->arg);
    free(key);
    tj_store_close_fd(fd);
    return TJ_OK;
}

tj_status_t tj_store_list(tj_store_t *store, void (*fn)(const tj_store_item_t *item, void *arg),
                          void *arg, long *skipped)
{
    list_ctx_t ctx = {fn, arg};
    files_walk_t walk = {list_file, &ctx};
    long none = 0;

    if (store == NULL || fn == NULL)
        return TJ_ERR_INVALID;
    return tj_walk_arch_dirs(store, files_visit, &walk, false, skipped != NULL ? skipped : &none);
}

/* Unlink the file @p name of folder @p fd; a folder stays. */
static tj_status_t remove_file(tj_store_t *store, int fd, const char *where, const char *name,
                               void *arg)
{
    (void)arg;
    if (unlinkat(fd, name, 0) != 0 && errno != ENOENT && errno != EISDIR) {
        STORE_WARN(store, "cache: cannot remove %s/%s: %s", where, name, strerror(errno));
        return TJ_ERR_IO;
    }
    return TJ_OK;
}

/* Unlink @p name when it is an entry, a source or a lock file. Lock files go too: a live one's
 * holder finds it gone when it unlocks, which costs at most a second compile of its kernel
 * somewhere. */
static tj_status_t remove_cache_file(tj_store_t *store, int fd, const char *where, const char *name,
                                     void *arg)
{
    if (!tj_store_is_hex_name(name, ENTRY_SUFFIX) && !tj_store_is_hex_name(name, SOURCE_SUFFIX) &&
        !tj_store_is_hex_name(name, LOCK_SUFFIX))
        return TJ_OK;
    return remove_file(store, fd, where, name, arg);
}

static tj_status_t clear_visit(tj_store_t *store, int tc_fd, int arch_fd, const char *arch,
                               const char *where, void *arg)
{
    tj_status_t status = walk_files(store, arch_fd, where, remove_cache_file, NULL);

    (void)arg;
    /* An emptied folder goes too; one that holds something else stays (ENOTEMPTY). */
    unlinkat(tc_fd, arch, AT_REMOVEDIR);
    return status;
}

tj_status_t tj_store_clear(tj_store_t *store)
{
    tj_status_t status, st_tmp = TJ_OK;
    char where[PATH_MAX];
    long skipped = 0;
    int tmp_fd;

    if (store == NULL)
        return TJ_ERR_INVALID;
    if (store->mode != TJ_STORE_RW)
        return TJ_ERR_UNSUPPORTED;
    status = tj_walk_arch_dirs(store, clear_visit, NULL, true, &skipped);

    MESSAGE_PATH(where, "%s/" TMP_NAME, store->dir);
    if (tj_store_open_dir(store, store->root_fd, store->dir, TMP_NAME, false, &tmp_fd) == TJ_OK) {
        st_tmp = walk_files(store, tmp_fd, where, remove_file, NULL);
        close(tmp_fd);
    }
    if (status == TJ_OK)
        status = st_tmp;

    pthread_mutex_lock(&store->manifest_lock);
    if (unlinkat(store->root_fd, MANIFEST_NAME, 0) != 0 && errno != ENOENT) {
        STORE_WARN(store, "cache: cannot remove %s/" MANIFEST_NAME ": %s", store->dir,
                   strerror(errno));
        if (status == TJ_OK)
            status = TJ_ERR_IO;
    }
    /* What this store remembers having added is gone from the file now. */
    tj_hashset_clear(&store->manifest_lines);
    store->manifest_seen = 0;
    pthread_mutex_unlock(&store->manifest_lock);
    return status;
}
