/* SPDX-License-Identifier: BSD-3-Clause */
/* The on-disk kernel cache's store: its folders, what it trusts, opening and closing it.
 *
 * Layout under the root: <toolchain>/<arch>/<hash>.bin (entries, entry.c), <hash>.cu (sources),
 * tmp/ (files being written), manifest.txt (manifest.c); walk.c holds the maintenance walks.
 * Every file is untrusted input: a cached kernel is code that will run in the user's process,
 * so anything that does not validate completely is a miss, and files or folders that someone
 * else could have written are refused. All paths below the root are opened relative to a
 * descriptor without following symbolic links. */
#include "cache/store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/state.h"
#include "cache/store_internal.h"
#include "util/common.h"

/* --- small helpers ------------------------------------------------------------------------- */

/* A path component we create ourselves: letters, digits, '.', '_', '-', never "." or "..". */
bool tj_store_valid_component(const char *s)
{
    size_t n;

    if (s == NULL)
        return false;
    for (n = 0; s[n] != '\0'; n++) {
        char c = s[n];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        if (!ok || n >= MAX_COMPONENT)
            return false;
    }
    return n > 0 && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* A toolchain name must also not collide with the files the root itself holds. */
bool tj_store_valid_toolchain(const char *s)
{
    return tj_store_valid_component(s) && strcmp(s, TMP_NAME) != 0 && strcmp(s, MANIFEST_NAME) != 0;
}

/* Only the owner may have written a file or folder that the cache trusts. Root may already
 * replace anything the process runs, so a shared cache may be root's as well as the user's. */
bool tj_store_trusts(const tj_store_t *store, const struct stat *st)
{
    bool owner = st->st_uid == geteuid() || (store->mode == TJ_STORE_SHARED && st->st_uid == 0);
    return owner && (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

bool tj_store_is_hex_name(const char *name, const char *suffix)
{
    size_t n = strlen(name);

    if (n != HEX_LEN + strlen(suffix) || strcmp(name + HEX_LEN, suffix) != 0)
        return false;
    for (size_t i = 0; i < HEX_LEN; i++)
        if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
            return false;
    return true;
}

/* write() until everything is out: retries after signals and short writes. */
bool tj_store_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        p += n;
        len -= (size_t)n;
    }
    return true;
}

/* pread() exactly @p len bytes at @p off; a file that ends early fails with errno 0. */
bool tj_store_pread_all(int fd, void *buf, size_t len, off_t off)
{
    char *p = buf;

    while (len > 0) {
        ssize_t n = pread(fd, p, len, off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        if (n == 0) {
            errno = 0;
            return false;
        }
        p += n;
        len -= (size_t)n;
        off += n;
    }
    return true;
}

void tj_store_distrust_reason(const tj_store_t *store, const struct stat *st, const char *path,
                              char *buf, size_t len)
{
    unsigned mode = (unsigned)(st->st_mode & 07777);

    /* Say which of the two rules failed: the fix differs (another directory or chown, chmod). */
    if (store->mode == TJ_STORE_SHARED && st->st_uid != geteuid() && st->st_uid != 0)
        snprintf(buf, len,
                 "owned by uid %u, neither you (uid %u) nor root; a cached kernel runs in your "
                 "process, so a shared cache must be root's or yours: remove it from "
                 "TYPEJIT_CACHE_PATH or chown -R root %s",
                 (unsigned)st->st_uid, (unsigned)geteuid(), path);
    else if (st->st_uid != geteuid() && store->mode != TJ_STORE_SHARED)
        snprintf(buf, len,
                 "owned by uid %u, not by you (uid %u); a cached kernel runs in your process, "
                 "so the cache must be yours: use another TYPEJIT_CACHE_DIR or chown %s",
                 (unsigned)st->st_uid, (unsigned)geteuid(), path);
    else
        snprintf(buf, len,
                 "writable by %s (mode %03o); a cached kernel runs in your process: chmod go-w %s",
                 (st->st_mode & S_IWGRP) && (st->st_mode & S_IWOTH) ? "group and others"
                 : (st->st_mode & S_IWGRP)                          ? "its group"
                                                                    : "others",
                 mode, path);
}

void tj_store_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tj_cache_thread.store.last_problem, sizeof(tj_cache_thread.store.last_problem), fmt,
              ap);
    va_end(ap);
}

const char *tj_store_last_problem(void)
{
    return tj_cache_thread.store.last_problem;
}

void tj_store_close_fd(int fd)
{
    if (fd >= 0)
        close(fd);
}

int tj_store_open_quietly(int dir_fd, const char *name)
{
    const int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    int fd = openat(dir_fd, name, flags | O_NOATIME);

    if (fd < 0 && errno == EPERM)
        fd = openat(dir_fd, name, flags);
    return fd;
}

/* Open (and with @p create first make) the folder @p name below @p parent, refusing symbolic
 * links and folders that others could have written. @p where names the parent for messages. */
tj_status_t tj_store_open_dir(tj_store_t *store, int parent, const char *where, const char *name,
                              bool create, int *out)
{
    tj_status_t status = TJ_OK;
    bool made = false;
    struct stat st;
    int fd;

    if (create) {
        if (mkdirat(parent, name, 0700) == 0)
            made = true;
        else if (errno != EEXIST) {
            STORE_WARN(store, "cache: cannot create %s/%s: %s", where, name, strerror(errno));
            return TJ_ERR_IO;
        }
    }
    fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return TJ_ERR_NOT_FOUND;
        if (errno == ELOOP || errno == ENOTDIR) {
            STORE_WARN(store, "cache: not using %s/%s: not a directory (or a symbolic link)", where,
                       name);
            return TJ_ERR_UNTRUSTED;
        }
        STORE_WARN(store, "cache: cannot open %s/%s: %s", where, name, strerror(errno));
        return TJ_ERR_IO;
    }
    /* The umask may have taken bits that the owner needs; others never get any. */
    if (made && fchmod(fd, 0700) != 0) {
        STORE_WARN(store, "cache: cannot chmod %s/%s: %s", where, name, strerror(errno));
        status = TJ_ERR_IO;
        goto out_close;
    }
    if (fstat(fd, &st) != 0) {
        STORE_WARN(store, "cache: cannot stat %s/%s: %s", where, name, strerror(errno));
        status = TJ_ERR_IO;
        goto out_close;
    }
    if (!tj_store_trusts(store, &st)) {
        char path[PATH_MAX], why[PATH_MAX + 160];
        MESSAGE_PATH(path, "%s/%s", where, name);
        tj_store_distrust_reason(store, &st, path, why, sizeof(why));
        STORE_WARN(store, "cache: not using %s: %s", path, why);
        status = TJ_ERR_UNTRUSTED;
        goto out_close;
    }
    *out = fd;
    return TJ_OK;

out_close:
    close(fd);
    return status;
}

/* Open DIR/<toolchain>/<arch>, creating the levels when asked. */
tj_status_t tj_store_open_arch_dir(tj_store_t *store, const char *toolchain, const char *arch,
                                   bool create, int *out)
{
    char where[PATH_MAX];
    tj_status_t status;
    int tc_fd = -1;

    status = tj_store_open_dir(store, store->root_fd, store->dir, toolchain, create, &tc_fd);
    if (status != TJ_OK)
        return status;
    MESSAGE_PATH(where, "%s/%s", store->dir, toolchain);
    status = tj_store_open_dir(store, tc_fd, where, arch, create, out);
    close(tc_fd);
    return status;
}

void *tj_store_alloc(size_t size, const char *what)
{
    void *p = calloc(1, size);

    if (p == NULL)
        tj_log_error("cache: out of memory for %s", what);
    return p;
}

tj_status_t tj_store_check_place(const char *toolchain, const char *arch)
{
    if (!tj_store_valid_toolchain(toolchain) || !tj_store_valid_component(arch)) {
        tj_log_warn("cache: invalid toolchain or arch name: only letters, digits, '.', '_' and "
                    "'-' make a folder name");
        return TJ_ERR_INVALID;
    }
    return TJ_OK;
}

tj_status_t tj_store_key_place(tj_store_t *store, const char *toolchain, const char *arch,
                               const char *key, const char *suffix, bool create, int *arch_fd,
                               char *name)
{
    tj_status_t status = tj_store_check_place(toolchain, arch);

    if (status != TJ_OK)
        return status;
    tj_hash_hex(tj_hash_bytes(key, strlen(key)), name);
    strcat(name, suffix);
    return tj_store_open_arch_dir(store, toolchain, arch, create, arch_fd);
}

/* Move @p name of @p dir_fd out of the way if it is still the file @p judged; see
 * store_internal.h. */
/* Whether the file @p name of @p dir_fd holds exactly @p len bytes @p content. */
static bool holds(int dir_fd, const char *name, const void *content, size_t len)
{
    char buf[1024];
    bool same = false;
    struct stat st;
    int fd;

    if (len > sizeof(buf) || (fd = tj_store_open_quietly(dir_fd, name)) < 0)
        return false;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size == len)
        same = tj_store_pread_all(fd, buf, len, 0) && memcmp(buf, content, len) == 0;
    close(fd);
    return same;
}

tj_status_t tj_store_remove_judged(tj_store_t *store, int dir_fd, const char *where,
                                   const char *name, const struct stat *judged, const void *content,
                                   size_t len)
{
    char moved[FILE_NAME_SPACE + 64];
    tj_status_t status = TJ_OK;
    struct stat st;
    int tmp_fd;

    status = tj_store_open_dir(store, store->root_fd, store->dir, TMP_NAME, true, &tmp_fd);
    if (status != TJ_OK)
        return status;
    snprintf(moved, sizeof(moved), "%.*s.removed.%ld.%u", FILE_NAME_SPACE - 1, name, (long)getpid(),
             atomic_fetch_add(&store->tmp_seq, 1));
    /* Of several processes renaming the same name, one gets the file, the others ENOENT. */
    if (renameat(dir_fd, name, tmp_fd, moved) != 0) {
        if (errno == ENOENT)
            status = TJ_ERR_NOT_FOUND;
        else {
            STORE_WARN(store, "cache: cannot remove %s/%s: %s", where, name, strerror(errno));
            status = TJ_ERR_IO;
        }
        goto out_tmp;
    }
    if (fstatat(tmp_fd, moved, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        (st.st_ino != judged->st_ino || st.st_dev != judged->st_dev ||
         (content != NULL && !holds(tmp_fd, moved, content, len)))) {
        /* A new file took the name between the judging and the rename: it is not ours to
         * remove. link() puts it back unless yet another file has the name by now; either way
         * nothing that another process relies on for correctness is lost (an entry is
         * recompiled, a lock's holder finds its lock gone when it unlocks). */
        if (linkat(tmp_fd, moved, dir_fd, name, 0) != 0 && errno != EEXIST)
            tj_log_info("cache: cannot put %s/%s back: %s", where, name, strerror(errno));
        status = TJ_ERR_NOT_FOUND;
    }
    unlinkat(tmp_fd, moved, 0);
out_tmp:
    close(tmp_fd);
    return status;
}

/* --- open and close ------------------------------------------------------------------------ */

/* mkdir -p with mode 0700. Failures on the way are left for the final open to report: an
 * ancestor may exist without our being allowed to create or even see it. */
static tj_status_t make_dirs(const char *dir)
{
    char path[PATH_MAX];
    size_t n = strlen(dir);

    memcpy(path, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        if (path[i - 1] == '/')
            continue;
        path[i] = '\0';
        /* chmod undoes whatever the umask took from the owner of a folder we just made. */
        if (mkdir(path, 0700) == 0)
            chmod(path, 0700);
        else if (i == n && errno != EEXIST) {
            tj_log_warn_job("cache: cannot create %s: %s", path, strerror(errno));
            return TJ_ERR_IO;
        }
        path[i] = dir[i];
    }
    return TJ_OK;
}

tj_status_t tj_store_open(const char *dir, tj_store_mode_t mode, tj_store_t **store)
{
    tj_status_t status = TJ_OK;
    tj_store_t *s;
    struct stat st;
    int tmp_fd;

    if (dir == NULL || dir[0] == '\0' || strlen(dir) >= PATH_MAX || store == NULL ||
        (mode != TJ_STORE_RW && mode != TJ_STORE_RO && mode != TJ_STORE_SHARED))
        return TJ_ERR_INVALID;
    if (mode == TJ_STORE_RW && (status = make_dirs(dir)) != TJ_OK)
        return status;

    s = calloc(1, sizeof(*s));
    if (s == NULL || (s->dir = strdup(dir)) == NULL) {
        tj_log_error("cache: out of memory opening %s", dir);
        status = TJ_ERR_NOMEM;
        goto out_free;
    }
    s->mode = mode;
    atomic_init(&s->tmp_seq, 0);
    atomic_flag_clear(&s->warned);
    s->root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->root_fd < 0) {
        if (errno == ENOENT && mode != TJ_STORE_RW) {
            status = TJ_ERR_NOT_FOUND; /* nothing was ever cached: a normal state */
        } else {
            tj_log_warn_job("cache: cannot open %s: %s", dir, strerror(errno));
            tj_store_note("cannot open %s: %s", dir, strerror(errno));
            status = TJ_ERR_IO;
        }
        goto out_free;
    }
    if (fstat(s->root_fd, &st) != 0) {
        tj_log_warn_job("cache: cannot stat %s: %s", dir, strerror(errno));
        status = TJ_ERR_IO;
        goto out_root;
    }
    if (!tj_store_trusts(s, &st)) {
        char why[PATH_MAX + 160];
        tj_store_distrust_reason(s, &st, dir, why, sizeof(why));
        tj_log_warn_job("cache: not using %s: %s", dir, why);
        tj_store_note("%s: %s", dir, why);
        status = TJ_ERR_UNTRUSTED;
        goto out_root;
    }
    /* A writer needs tmp/ on the same file system; check it now so that a bad one is refused
     * here, once, rather than on every save. */
    if (mode == TJ_STORE_RW) {
        status = tj_store_open_dir(s, s->root_fd, dir, TMP_NAME, true, &tmp_fd);
        if (status != TJ_OK)
            goto out_root;
        close(tmp_fd);
    }
    if (pthread_mutex_init(&s->manifest_lock, NULL) != 0) {
        tj_log_error("cache: cannot create a mutex");
        status = TJ_ERR_NOMEM;
        goto out_root;
    }
    *store = s;
    return TJ_OK;

out_root:
    close(s->root_fd);
out_free:
    if (s != NULL)
        free(s->dir);
    free(s);
    return status;
}

void tj_store_close(tj_store_t *store)
{
    if (store == NULL)
        return;
    tj_hashset_clear(&store->manifest_lines);
    pthread_mutex_destroy(&store->manifest_lock);
    close(store->root_fd);
    free(store->dir);
    free(store);
}

tj_status_t tj_store_probe_write(tj_store_t *store)
{
    char name[64];
    tj_status_t status;
    int tmp_fd, fd;

    if (store == NULL || store->mode != TJ_STORE_RW)
        return TJ_ERR_INVALID;
    status = tj_store_open_dir(store, store->root_fd, store->dir, TMP_NAME, true, &tmp_fd);
    if (status != TJ_OK)
        return status;
    snprintf(name, sizeof(name), "probe.%ld.%u", (long)getpid(),
             atomic_fetch_add(&store->tmp_seq, 1));
    fd = openat(tmp_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        tj_store_note("cannot create a file in %s/" TMP_NAME ": %s", store->dir, strerror(errno));
        status = TJ_ERR_IO;
    } else {
        close(fd);
        unlinkat(tmp_fd, name, 0);
        /* The root takes the toolchain levels and the manifest's replacements. */
        if (faccessat(store->root_fd, ".", W_OK | X_OK, AT_EACCESS) != 0) {
            tj_store_note("cannot write in %s: %s", store->dir, strerror(errno));
            status = TJ_ERR_IO;
        }
    }
    close(tmp_fd);
    return status;
}

const char *tj_store_dir(const tj_store_t *store)
{
    return store->dir;
}
