/* SPDX-License-Identifier: BSD-3-Clause */
/* The manifest of the kernel cache: one line per kernel a run needed, appended once, read back
 * by `typejit warm`. */
#include "cache/manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "cache/store_internal.h"
#include "util/common.h"

#define MAX_MANIFEST ((size_t)64 << 20)
/* Times an appender takes the lock again after the file was replaced under it. */
#define MANIFEST_REOPENS 8

/* A manifest line is well formed when it is non-blank printable ASCII of bounded length. */
static bool line_ok(const char *line, size_t len)
{
    bool blank = true;

    if (len == 0 || len > TJ_STORE_LINE_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)line[i];
        if (c < 0x20 || c > 0x7e)
            return false;
        if (c != ' ')
            blank = false;
    }
    return !blank;
}

/* Open the manifest with @p flags (O_NOFOLLOW, O_NONBLOCK and O_CLOEXEC added), creating it with
 * @p create: mode 0600 whatever the umask. One that exists must be a regular file of the store's
 * owner that only the owner can write. TJ_ERR_NOT_FOUND when there is none and @p create is
 * false (silently); other failures are warned about. @p st (may be NULL) gets its status. */
static tj_status_t manifest_open(tj_store_t *store, int flags, bool create, int *out,
                                 struct stat *st)
{
    const int always = O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    struct stat own;
    int fd = -1;

    if (st == NULL)
        st = &own;
    if (create) {
        fd = openat(store->root_fd, MANIFEST_NAME, flags | always | O_CREAT | O_EXCL, 0600);
        if (fd >= 0)
            fchmod(fd, 0600);
    }
    if (fd < 0 && (!create || errno == EEXIST))
        fd = openat(store->root_fd, MANIFEST_NAME, flags | always);
    if (fd < 0) {
        if (errno == ENOENT && !create)
            return TJ_ERR_NOT_FOUND;
        STORE_WARN(store, "cache: cannot open %s/" MANIFEST_NAME ": %s", store->dir,
                   strerror(errno));
        return errno == ELOOP ? TJ_ERR_UNTRUSTED : TJ_ERR_IO;
    }
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode) || !tj_store_trusts(store, st)) {
        STORE_WARN(store,
                   "cache: not using %s/" MANIFEST_NAME ": not a regular file of yours that "
                   "only you can write",
                   store->dir);
        close(fd);
        return TJ_ERR_UNTRUSTED;
    }
    *out = fd;
    return TJ_OK;
}

/* Read the whole manifest into a NUL-terminated buffer; TJ_ERR_NOT_FOUND when there is none. */
static tj_status_t manifest_slurp(tj_store_t *store, char **text, size_t *len)
{
    tj_status_t status = TJ_OK;
    size_t cap = 0, n = 0;
    char *buf = NULL;
    struct stat st;
    int fd;

    if ((status = manifest_open(store, O_RDONLY, false, &fd, &st)) != TJ_OK)
        return status;
    /* Read to the end rather than to st_size: other processes may be appending. The buffer
     * always has one byte more than `cap` for the terminating NUL. */
    for (;;) {
        ssize_t got;
        if (n == cap) {
            char *grown;
            if (cap >= MAX_MANIFEST) {
                STORE_WARN(store, "cache: not using %s/" MANIFEST_NAME ": larger than %zu bytes",
                           store->dir, MAX_MANIFEST);
                status = TJ_ERR_CORRUPT;
                goto out_free;
            }
            cap = cap == 0 ? TJ_MIN((size_t)st.st_size, MAX_MANIFEST) + 4096 : cap * 2;
            cap = TJ_MIN(cap, MAX_MANIFEST);
            grown = realloc(buf, cap + 1);
            if (grown == NULL) {
                tj_log_error("cache: out of memory reading the manifest");
                status = TJ_ERR_NOMEM;
                goto out_free;
            }
            buf = grown;
        }
        got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            STORE_WARN(store, "cache: cannot read %s/" MANIFEST_NAME ": %s", store->dir,
                       strerror(errno));
            status = TJ_ERR_IO;
            goto out_free;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    buf[n] = '\0';
    close(fd);
    *text = buf;
    *len = n;
    return TJ_OK;

out_free:
    free(buf);
    close(fd);
    return status;
}

/* Call @p fn on each well-formed line of @p text, which is modified in place. A last line
 * without its newline is accepted: people edit manifests by hand. */
static tj_status_t each_line(char *text, size_t len,
                             tj_status_t (*fn)(const char *line, size_t n, void *arg), void *arg)
{
    size_t pos = 0;

    while (pos < len) {
        char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        text[end] = '\0';
        if (line_ok(text + pos, end - pos)) {
            tj_status_t status = fn(text + pos, end - pos, arg);
            if (status != TJ_OK)
                return status;
        }
        pos = end + 1;
    }
    return TJ_OK;
}

static tj_status_t remember_line(const char *line, size_t n, void *arg)
{
    return tj_hashset_add(arg, tj_hash_bytes(line, n), NULL);
}

typedef struct {
    tj_hashset_t seen;
    void (*fn)(const char *line, void *arg);
    void *arg;
} read_ctx_t;

static tj_status_t deliver_line(const char *line, size_t n, void *arg)
{
    read_ctx_t *ctx = arg;
    tj_status_t status;
    bool added;

    status = tj_hashset_add(&ctx->seen, tj_hash_bytes(line, n), &added);
    if (status == TJ_OK && added)
        ctx->fn(line, ctx->arg);
    return status;
}

tj_status_t tj_store_manifest_read(tj_store_t *store, void (*fn)(const char *line, void *arg),
                                   void *arg)
{
    read_ctx_t ctx = {{NULL}, fn, arg};
    tj_status_t status;
    size_t len;
    char *text;

    if (store == NULL || fn == NULL)
        return TJ_ERR_INVALID;
    status = manifest_slurp(store, &text, &len);
    if (status != TJ_OK)
        return status;
    status = each_line(text, len, deliver_line, &ctx);
    tj_hashset_clear(&ctx.seen);
    free(text);
    return status;
}

/* Open the manifest for appending and take its file lock. Trimming replaces the file by another
 * (rename, under the lock of the old one): a lock taken on a file that no longer has the name is
 * let go and taken again on the new one, so that no line is appended to a file nobody reads. */
static tj_status_t manifest_lock(tj_store_t *store, int *out)
{
    struct stat mine, named;
    tj_status_t status;
    int fd;

    for (int attempt = 0; attempt < MANIFEST_REOPENS; attempt++) {
        if ((status = manifest_open(store, O_RDWR | O_APPEND, true, &fd, NULL)) != TJ_OK)
            return status;
        while (flock(fd, LOCK_EX) != 0) {
            if (errno != EINTR) {
                STORE_WARN(store, "cache: cannot lock %s/" MANIFEST_NAME ": %s", store->dir,
                           strerror(errno));
                close(fd);
                return TJ_ERR_IO;
            }
        }
        if (fstat(fd, &mine) == 0 &&
            fstatat(store->root_fd, MANIFEST_NAME, &named, AT_SYMLINK_NOFOLLOW) == 0 &&
            mine.st_ino == named.st_ino && mine.st_dev == named.st_dev) {
            *out = fd;
            return TJ_OK;
        }
        close(fd);
    }
    STORE_WARN(store, "cache: %s/" MANIFEST_NAME " keeps being replaced; not appending to it",
               store->dir);
    return TJ_ERR_IO;
}

/* Read the lines other writers appended since this store last looked (from manifest_seen to the
 * end of the file) into the store's set. The caller holds the file lock, so no writer is half
 * way through a line; a file shorter than what was seen was cleared or replaced, and is read
 * again from the start. *ends_in_newline tells whether the file is empty or ends a line. */
static tj_status_t catch_up(tj_store_t *store, int fd, bool *ends_in_newline)
{
    tj_status_t status = TJ_OK;
    struct stat st;
    size_t len;
    char *text;

    if (fstat(fd, &st) != 0) {
        STORE_WARN(store, "cache: cannot stat %s/" MANIFEST_NAME ": %s", store->dir,
                   strerror(errno));
        return TJ_ERR_IO;
    }
    if (st.st_size < store->manifest_seen || st.st_ino != store->manifest_ino) {
        tj_hashset_clear(&store->manifest_lines);
        store->manifest_seen = 0;
        store->manifest_ino = st.st_ino;
    }
    *ends_in_newline = true;
    if (st.st_size == store->manifest_seen)
        return TJ_OK;
    if ((size_t)(st.st_size - store->manifest_seen) > MAX_MANIFEST) {
        STORE_WARN(store, "cache: not using %s/" MANIFEST_NAME ": larger than %zu bytes",
                   store->dir, MAX_MANIFEST);
        return TJ_ERR_CORRUPT;
    }
    len = (size_t)(st.st_size - store->manifest_seen);
    text = malloc(len + 1);
    if (text == NULL) {
        tj_log_error("cache: out of memory reading the manifest");
        return TJ_ERR_NOMEM;
    }
    if (!tj_store_pread_all(fd, text, len, store->manifest_seen)) {
        STORE_WARN(store, "cache: cannot read %s/" MANIFEST_NAME ": %s", store->dir,
                   errno ? strerror(errno) : "it shrank while being read");
        free(text);
        return TJ_ERR_IO;
    }
    text[len] = '\0';
    *ends_in_newline = text[len - 1] == '\n';
    status = each_line(text, len, remember_line, &store->manifest_lines);
    if (status == TJ_OK)
        store->manifest_seen = st.st_size;
    free(text);
    return status;
}

tj_status_t tj_store_manifest_add(tj_store_t *store, const char *line)
{
    char buf[TJ_STORE_LINE_MAX + 2];
    tj_status_t status = TJ_OK;
    tj_hash_t hash;
    struct stat st;
    size_t n, at = 0;
    bool newline_ended;
    int fd = -1;

    if (store == NULL || line == NULL)
        return TJ_ERR_INVALID;
    n = strlen(line);
    if (!line_ok(line, n)) {
        tj_log_warn("cache: refusing a manifest line that is blank, longer than %d bytes or not "
                    "printable",
                    TJ_STORE_LINE_MAX);
        return TJ_ERR_INVALID;
    }
    if (store->mode != TJ_STORE_RW)
        return TJ_ERR_UNSUPPORTED;
    hash = tj_hash_bytes(line, n);

    pthread_mutex_lock(&store->manifest_lock);
    /* Lines this store has seen, in the file or added by itself, are not added again. */
    if (tj_hashset_has(&store->manifest_lines, hash))
        goto out_unlock;
    /* Other processes append too (concurrent `typejit warm`s, the ranks of a job): under the
     * file lock, read what they added since this store last looked, so that a line goes into
     * the file once. flock is advisory; a writer that ignores it can only cause a duplicate
     * line, which readers skip. */
    status = manifest_lock(store, &fd);
    if (status != TJ_OK)
        goto out_unlock;
    if ((status = catch_up(store, fd, &newline_ended)) != TJ_OK)
        goto out_close;
    if (tj_hashset_has(&store->manifest_lines, hash))
        goto out_close;
    /* A last line written by hand without its newline must not swallow this one. */
    if (!newline_ended)
        buf[at++] = '\n';
    memcpy(buf + at, line, n);
    buf[at + n] = '\n';
    /* One write() of the whole line: O_APPEND writers on one host do not interleave it. */
    if (!tj_store_write_all(fd, buf, at + n + 1)) {
        STORE_WARN(store, "cache: cannot append to %s/" MANIFEST_NAME ": %s", store->dir,
                   strerror(errno));
        status = TJ_ERR_IO;
        goto out_close;
    }
    status = tj_hashset_add(&store->manifest_lines, hash, NULL);
    if (fstat(fd, &st) == 0)
        store->manifest_seen = st.st_size;

out_close:
    close(fd); /* releases the lock */
out_unlock:
    pthread_mutex_unlock(&store->manifest_lock);
    return status;
}

typedef struct {
    long lines;
    tj_hashset_t seen;
} count_ctx_t;

static tj_status_t count_line(const char *line, size_t n, void *arg)
{
    count_ctx_t *ctx = arg;

    ctx->lines++;
    return tj_hashset_add(&ctx->seen, tj_hash_bytes(line, n), NULL);
}

tj_status_t tj_store_manifest_count(tj_store_t *store, long *lines, long *distinct)
{
    count_ctx_t ctx = {0, {NULL}};
    tj_status_t status;
    size_t len;
    char *text;

    if (store == NULL || lines == NULL || distinct == NULL)
        return TJ_ERR_INVALID;
    status = manifest_slurp(store, &text, &len);
    if (status == TJ_ERR_NOT_FOUND) {
        *lines = *distinct = 0;
        return TJ_OK;
    }
    if (status != TJ_OK)
        return status;
    status = each_line(text, len, count_line, &ctx);
    if (status == TJ_OK) {
        *lines = ctx.lines;
        *distinct = tj_hashset_count(&ctx.seen);
    }
    tj_hashset_clear(&ctx.seen);
    free(text);
    return status;
}

/* Write @p len bytes of @p text to a new file in tmp/ and rename it over the manifest. */
static tj_status_t manifest_replace(tj_store_t *store, const char *text, size_t len)
{
    char name[64];
    tj_status_t status;
    int tmp_fd, fd;

    status = tj_store_open_dir(store, store->root_fd, store->dir, TMP_NAME, true, &tmp_fd);
    if (status != TJ_OK)
        return status;
    snprintf(name, sizeof(name), MANIFEST_NAME ".%ld.%u", (long)getpid(),
             atomic_fetch_add(&store->tmp_seq, 1));
    fd = openat(tmp_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        goto out_errno;
    if (fchmod(fd, 0600) != 0 || !tj_store_write_all(fd, text, len)) {
        close(fd);
        goto out_unlink;
    }
    if (close(fd) != 0 || renameat(tmp_fd, name, store->root_fd, MANIFEST_NAME) != 0)
        goto out_unlink;
    close(tmp_fd);
    return TJ_OK;

out_unlink:
    unlinkat(tmp_fd, name, 0);
out_errno:
    STORE_WARN(store, "cache: cannot rewrite %s/" MANIFEST_NAME ": %s", store->dir,
               strerror(errno));
    close(tmp_fd);
    return TJ_ERR_IO;
}

tj_status_t tj_manifest_drop(tj_store_t *store, const tj_hashset_t *drop, long *dropped)
{
    tj_status_t status = TJ_OK;
    size_t len, pos = 0, kept = 0;
    struct stat st;
    char *text = NULL;
    long n = 0;
    int fd = -1;

    *dropped = 0;
    if (tj_hashset_count(drop) == 0 || store->mode != TJ_STORE_RW)
        return TJ_OK;
    if (fstatat(store->root_fd, MANIFEST_NAME, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
        return TJ_OK;
    pthread_mutex_lock(&store->manifest_lock);
    /* Under the file lock no appender is half way through a line, and those waiting for the
     * lock take it again on the new file (manifest_lock). */
    if ((status = manifest_lock(store, &fd)) != TJ_OK)
        goto out_unlock;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size > MAX_MANIFEST) {
        STORE_WARN(store, "cache: not rewriting %s/" MANIFEST_NAME ": %s", store->dir,
                   (size_t)st.st_size > MAX_MANIFEST ? "too large" : strerror(errno));
        status = TJ_ERR_IO;
        goto out_close;
    }
    len = (size_t)st.st_size;
    text = malloc(len + 1);
    if (text == NULL) {
        tj_log_error("cache: out of memory rewriting the manifest");
        status = TJ_ERR_NOMEM;
        goto out_close;
    }
    if (!tj_store_pread_all(fd, text, len, 0)) {
        STORE_WARN(store, "cache: cannot read %s/" MANIFEST_NAME ": %s", store->dir,
                   errno ? strerror(errno) : "it shrank while being read");
        status = TJ_ERR_IO;
        goto out_free;
    }
    /* Keep every line, well formed or not, except the ones to drop; compact in place. */
    while (pos < len) {
        char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len, next = nl ? end + 1 : len;
        tj_hash_t hash = tj_hash_bytes(text + pos, end - pos);

        if (tj_hashset_has(drop, hash) && line_ok(text + pos, end - pos))
            n++;
        else {
            memmove(text + kept, text + pos, next - pos);
            kept += next - pos;
        }
        pos = next;
    }
    if (n > 0 && (status = manifest_replace(store, text, kept)) == TJ_OK) {
        *dropped = n;
        /* This store forgets the lines it knew, so that it may add a dropped one again. */
        tj_hashset_clear(&store->manifest_lines);
        store->manifest_seen = 0;
    }
out_free:
    free(text);
out_close:
    close(fd);
out_unlock:
    pthread_mutex_unlock(&store->manifest_lock);
    return status;
}
