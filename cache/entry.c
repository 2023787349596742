/* SPDX-License-Identifier: BSD-3-Clause */
/* Kernel cache entries: validation on load, atomic writes through tmp/ on save.
 *
 * An entry is a fixed header (magic, format version, key and image lengths, checksum), the full
 * key text and the image; anything that does not validate completely is a miss. */
#include "cache/entry.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "cache/state.h"
#include "cache/store_internal.h"
#include "util/common.h"

#define ENTRY_MAGIC   "TJKCACHE"
#define MAX_IMAGE_LEN ((uint64_t)256 << 20)
#define MAX_KEY_LEN   ((uint32_t)1 << 20)
#define TMP_ATTEMPTS  16
/* Seconds between two updates of an entry's access time by loads. */
#define TOUCH_INTERVAL 60

/* The fixed header at the start of every entry, in the host's byte order. */
typedef struct {
    char magic[8];
    uint32_t format_version;
    uint32_t key_len;
    uint64_t image_len;
    uint64_t checksum; /* XXH3_64 over the key bytes, then the image bytes */
} entry_header_t;

_Static_assert(sizeof(entry_header_t) == 32, "the entry header has no padding");

/* Validate the open entry @p fd. With @p key, the stored key must be exactly that text; without,
 * the stored key must hash to the file name @p hex (the walk over the store knows no keys). On
 * success the image is returned when @p image is not NULL, and the file size in @p size. */
tj_status_t tj_entry_read(const tj_store_t *store, int fd, const char *path, const char *key,
                          const char *hex, void **image, size_t *image_len, off_t *size,
                          char *why_out, size_t why_len)
{
    tj_status_t status = TJ_OK;
    const char *why = NULL;
    entry_header_t h;
    XXH3_state_t xs;
    struct stat st;
    uint64_t total;
    char *kbuf = NULL, *ibuf = NULL;

    if (fstat(fd, &st) != 0) {
        if (why_out != NULL)
            snprintf(why_out, why_len, "cannot stat it: %s", strerror(errno));
        tj_log_info_job("cache: cannot stat %s: %s", path, strerror(errno));
        return TJ_ERR_IO;
    }
    if (!S_ISREG(st.st_mode)) {
        why = "not a regular file";
        status = TJ_ERR_CORRUPT;
        goto out_invalid;
    }
    if (!tj_store_trusts(store, &st)) {
        if (why_out != NULL)
            snprintf(why_out, why_len, "owned by uid %u with mode %03o: not trusted",
                     (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        tj_log_info_job("cache: ignoring %s: owned by uid %u with mode %03o", path,
                        (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        return TJ_ERR_UNTRUSTED;
    }
    status = TJ_ERR_CORRUPT;
    if ((uint64_t)st.st_size < sizeof(h) || !tj_store_pread_all(fd, &h, sizeof(h), 0)) {
        why = "shorter than its header";
        goto out_invalid;
    }
    if (memcmp(h.magic, ENTRY_MAGIC, sizeof(h.magic)) != 0) {
        why = "bad magic";
        goto out_invalid;
    }
    if (h.format_version != TJ_STORE_FORMAT_VERSION) {
        why = "other format version";
        goto out_invalid;
    }
    if (h.key_len > MAX_KEY_LEN || h.image_len > MAX_IMAGE_LEN) {
        why = "implausible lengths";
        goto out_invalid;
    }
    if (__builtin_add_overflow((uint64_t)sizeof(h), (uint64_t)h.key_len, &total) ||
        __builtin_add_overflow(total, h.image_len, &total) || total != (uint64_t)st.st_size) {
        why = "lengths do not match the file size";
        goto out_invalid;
    }
    if (key != NULL && strlen(key) != h.key_len) {
        why = "entry for another key";
        goto out_invalid;
    }
    kbuf = malloc((size_t)h.key_len + 1);
    ibuf = malloc(h.image_len > 0 ? (size_t)h.image_len : 1);
    if (kbuf == NULL || ibuf == NULL) {
        tj_log_error("cache: out of memory reading %s", path);
        status = TJ_ERR_NOMEM;
        goto out_free;
    }
    if (!tj_store_pread_all(fd, kbuf, h.key_len, (off_t)sizeof(h))) {
        why = "cannot read the key";
        goto out_invalid;
    }
    kbuf[h.key_len] = '\0';
    if (key != NULL && memcmp(kbuf, key, h.key_len) != 0) {
        why = "entry for another key";
        goto out_invalid;
    }
    if (key == NULL) {
        char name[HEX_LEN + 1];
        tj_hash_hex(tj_hash_bytes(kbuf, h.key_len), name);
        if (memcmp(name, hex, HEX_LEN) != 0) {
            why = "entry for another key";
            goto out_invalid;
        }
    }
    if (!tj_store_pread_all(fd, ibuf, (size_t)h.image_len, (off_t)(sizeof(h) + h.key_len))) {
        why = "cannot read the image";
        goto out_invalid;
    }
    XXH3_64bits_reset(&xs);
    XXH3_64bits_update(&xs, kbuf, h.key_len);
    XXH3_64bits_update(&xs, ibuf, (size_t)h.image_len);
    if (XXH3_64bits_digest(&xs) != h.checksum) {
        why = "checksum mismatch";
        goto out_invalid;
    }
    free(kbuf);
    if (image != NULL) {
        *image = ibuf;
        *image_len = (size_t)h.image_len;
    } else {
        free(ibuf);
    }
    *size = st.st_size;
    return TJ_OK;

out_invalid:
    if (why_out != NULL)
        snprintf(why_out, why_len, "%s", why);
    tj_log_info_job("cache: ignoring %s: %s", path, why);
out_free:
    free(ibuf);
    free(kbuf);
    return status;
}

/* Trimming removes the entries used least recently, judged by their access time. Mounts with
 * noatime never update it and relatime rarely, so a load sets it explicitly; at most once a
 * minute per entry, so that the ranks of a job loading one kernel do not all write. */
static void touch(int fd)
{
    struct timespec now, times[2];
    struct stat st;

    if (fstat(fd, &st) != 0 || clock_gettime(CLOCK_REALTIME, &now) != 0)
        return;
    if (st.st_atim.tv_sec > now.tv_sec - TOUCH_INTERVAL && st.st_atim.tv_sec <= now.tv_sec)
        return;
    times[0].tv_sec = 0;
    times[0].tv_nsec = UTIME_NOW;
    times[1].tv_sec = 0;
    times[1].tv_nsec = UTIME_OMIT;
    /* A failure (a read-only mount) only makes trimming less exact. */
    (void)futimens(fd, times);
}

tj_status_t tj_entry_read_key(int fd, char **key)
{
    entry_header_t h;
    struct stat st;
    uint64_t total;
    char *kbuf;

    if (fstat(fd, &st) != 0)
        return TJ_ERR_IO;
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof(h) ||
        !tj_store_pread_all(fd, &h, sizeof(h), 0) ||
        memcmp(h.magic, ENTRY_MAGIC, sizeof(h.magic)) != 0 ||
        h.format_version != TJ_STORE_FORMAT_VERSION || h.key_len > MAX_KEY_LEN ||
        h.image_len > MAX_IMAGE_LEN ||
        __builtin_add_overflow((uint64_t)sizeof(h), (uint64_t)h.key_len, &total) ||
        __builtin_add_overflow(total, h.image_len, &total) || total != (uint64_t)st.st_size)
        return TJ_ERR_CORRUPT;
    kbuf = malloc((size_t)h.key_len + 1);
    if (kbuf == NULL) {
        tj_log_error("cache: out of memory reading a key");
        return TJ_ERR_NOMEM;
    }
    if (!tj_store_pread_all(fd, kbuf, h.key_len, (off_t)sizeof(h))) {
        free(kbuf);
        return TJ_ERR_CORRUPT;
    }
    kbuf[h.key_len] = '\0';
    *key = kbuf;
    return TJ_OK;
}

tj_status_t tj_store_load(tj_store_t *store, const char *toolchain, const char *arch,
                          const char *key, void **image, size_t *len)
{
    char name[FILE_NAME_SPACE], path[PATH_MAX];
    tj_status_t status;
    int arch_fd = -1, fd;
    off_t size;

    if (store == NULL || key == NULL || image == NULL || len == NULL)
        return TJ_ERR_INVALID;
    status = tj_store_key_place(store, toolchain, arch, key, ENTRY_SUFFIX, false, &arch_fd, name);
    if (status != TJ_OK)
        return status;
    MESSAGE_PATH(path, "%s/%s/%s/%s", store->dir, toolchain, arch, name);
    fd = openat(arch_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            status = TJ_ERR_NOT_FOUND;
        } else if (errno == ELOOP) {
            tj_log_info_job("cache: ignoring %s: a symbolic link", path);
            status = TJ_ERR_UNTRUSTED;
        } else {
            tj_log_info("cache: cannot open %s: %s", path, strerror(errno));
            status = TJ_ERR_CORRUPT;
        }
        goto out_arch;
    }
    status = tj_entry_read(store, fd, path, key, NULL, image, len, &size, NULL, 0);
    if (status == TJ_OK && store->mode == TJ_STORE_RW)
        touch(fd);
    close(fd);
out_arch:
    close(arch_fd);
    return status;
}

/* Write the pieces to a new file in tmp/ and rename it to @p dest_name in @p dest_fd. */
static tj_status_t write_file(tj_store_t *store, int tmp_fd, int dest_fd, const char *dest_name,
                              const void *const *bufs, const size_t *lens, int nbufs)
{
    char tmp_name[FILE_NAME_SPACE + 64];
    tj_status_t status = TJ_OK;
    struct timespec ts;
    int fd = -1;

    /* The pid and a per-store counter separate writers on one host; the clock separates hosts
     * sharing a home directory, and O_EXCL settles whatever collision is left. */
    clock_gettime(CLOCK_REALTIME, &ts);
    for (int attempt = 0; attempt < TMP_ATTEMPTS && fd < 0; attempt++) {
        snprintf(tmp_name, sizeof(tmp_name), "%s.%ld.%u.%lx", dest_name, (long)getpid(),
                 atomic_fetch_add(&store->tmp_seq, 1), (unsigned long)ts.tv_nsec + attempt);
        fd = openat(tmp_fd, tmp_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        STORE_WARN(store, "cache: cannot create a file in %s/" TMP_NAME ": %s", store->dir,
                   strerror(errno));
        return TJ_ERR_IO;
    }
    /* The umask may have removed the owner's read bit, which later loads need. */
    if (fchmod(fd, 0600) != 0)
        goto out_errno;
    for (int i = 0; i < nbufs; i++)
        if (!tj_store_write_all(fd, bufs[i], lens[i]))
            goto out_errno;
    /* close() is where some file systems report a failed write. */
    if (close(fd) != 0) {
        fd = -1;
        goto out_errno;
    }
    fd = -1;
    if (renameat(tmp_fd, tmp_name, dest_fd, dest_name) != 0)
        goto out_errno;
    return TJ_OK;

out_errno:
    STORE_WARN(store, "cache: cannot write %s/" TMP_NAME "/%s: %s", store->dir, tmp_name,
               strerror(errno));
    status = TJ_ERR_IO;
    tj_store_close_fd(fd);
    unlinkat(tmp_fd, tmp_name, 0);
    return status;
}

static tj_status_t save_entry(tj_store_t *store, const char *toolchain, const char *arch,
                              const char *key, const void *image, size_t len, const char *source)
{
    char name[FILE_NAME_SPACE];
    tj_status_t status;
    entry_header_t h;
    XXH3_state_t xs;
    int arch_fd = -1, tmp_fd = -1;
    size_t key_len;

    if (store == NULL || key == NULL || (image == NULL && len > 0))
        return TJ_ERR_INVALID;
    if ((status = tj_store_check_place(toolchain, arch)) != TJ_OK)
        return status;
    if (store->mode != TJ_STORE_RW)
        return TJ_ERR_UNSUPPORTED;
    key_len = strlen(key);
    if (key_len > MAX_KEY_LEN || (uint64_t)len > MAX_IMAGE_LEN) {
        tj_log_warn("cache: not saving an entry with a %zu-byte key and a %zu-byte image: too "
                    "large",
                    key_len, len);
        return TJ_ERR_INVALID;
    }

    memset(&h, 0, sizeof(h));
    memcpy(h.magic, ENTRY_MAGIC, sizeof(h.magic));
    h.format_version = TJ_STORE_FORMAT_VERSION;
    h.key_len = (uint32_t)key_len;
    h.image_len = len;
    XXH3_64bits_reset(&xs);
    XXH3_64bits_update(&xs, key, key_len);
    XXH3_64bits_update(&xs, len > 0 ? image : (const void *)"", len);
    h.checksum = XXH3_64bits_digest(&xs);

    status = tj_store_open_arch_dir(store, toolchain, arch, true, &arch_fd);
    if (status != TJ_OK)
        return status;
    status = tj_store_open_dir(store, store->root_fd, store->dir, TMP_NAME, true, &tmp_fd);
    if (status != TJ_OK)
        goto out_arch;

    tj_hash_hex(tj_hash_bytes(key, key_len), name);
    if (source != NULL) {
        const void *bufs[] = {source};
        size_t lens[] = {strlen(source)};
        strcpy(name + HEX_LEN, SOURCE_SUFFIX);
        status = write_file(store, tmp_fd, arch_fd, name, bufs, lens, 1);
        if (status != TJ_OK)
            goto out_tmp;
    }
    {
        const void *bufs[] = {&h, key, image};
        size_t lens[] = {sizeof(h), key_len, len};
        strcpy(name + HEX_LEN, ENTRY_SUFFIX);
        status = write_file(store, tmp_fd, arch_fd, name, bufs, lens, len > 0 ? 3 : 2);
    }

out_tmp:
    close(tmp_fd);
out_arch:
    close(arch_fd);
    return status;
}

tj_status_t tj_store_save(tj_store_t *store, const char *toolchain, const char *arch,
                          const char *key, const void *image, size_t len, const char *source)
{
    tj_status_t status = save_entry(store, toolchain, arch, key, image, len, source);

    if (status == TJ_OK)
        tj_cache_thread.entry.saves_done++;
    else {
        tj_cache_thread.entry.saves_failed++;
        if (status == TJ_ERR_UNSUPPORTED)
            tj_store_note("%s is open read-only", store != NULL ? store->dir : "the cache");
    }
    return status;
}

void tj_store_save_report(long *saved, long *failed)
{
    *saved = tj_cache_thread.entry.saves_done;
    *failed = tj_cache_thread.entry.saves_failed;
    tj_cache_thread.entry.saves_done = tj_cache_thread.entry.saves_failed = 0;
}
