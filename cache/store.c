/* The on-disk kernel cache: validated entries, atomic writes through a temp folder, the manifest.
 *
 * Layout under the root: <toolchain>/<arch>/<hash>.bin (entries), <hash>.cu (sources), tmp/
 * (files being written), manifest.txt. Every file is untrusted input: a cached kernel is code
 * that will run in the user's process, so anything that does not validate completely is a miss,
 * and files or folders that someone else could have written are refused. All paths below the
 * root are opened relative to a descriptor without following symbolic links. */
#include "cache/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* uthash must never exit() inside the library: a failed allocation sets the `oom` flag that each
 * function adding to a table declares, and the element is simply not added. */
#define HASH_NONFATAL_OOM         1
#define uthash_nonfatal_oom(_elt) (oom = true)
#include <uthash.h>

#include "cache/hash.h"
#include "util/common.h"
#include "util/log.h"

#define ENTRY_MAGIC     "TJKCACHE"
#define MAX_IMAGE_LEN   ((uint64_t)256 << 20)
#define MAX_KEY_LEN     ((uint32_t)1 << 20)
#define MAX_MANIFEST    ((size_t)64 << 20)
#define MAX_COMPONENT   128
#define MANIFEST_NAME   "manifest.txt"
#define TMP_NAME        "tmp"
#define TMP_ATTEMPTS    16
#define ENTRY_SUFFIX    ".bin"
#define SOURCE_SUFFIX   ".cu"
#define HEX_LEN         32
#define FILE_NAME_SPACE 48

/* The fixed header at the start of every entry, in the host's byte order. */
typedef struct {
    char magic[8];
    uint32_t format_version;
    uint32_t key_len;
    uint64_t image_len;
    uint64_t checksum; /* XXH3_64 over the key bytes, then the image bytes */
} entry_header_t;

_Static_assert(sizeof(entry_header_t) == 32, "the entry header has no padding");

/* One manifest line already known to this store, by hash. */
typedef struct {
    tj_hash_t hash;
    UT_hash_handle hh;
} line_entry_t;

struct tj_store {
    char *dir;
    int root_fd;
    tj_store_mode_t mode;
    atomic_uint tmp_seq;
    atomic_flag warned; /* one warning per store about untrusted folders or failed writes */
    pthread_mutex_t manifest_lock;
    bool manifest_loaded; /* the lines of the file have been read into manifest_lines */
    line_entry_t *manifest_lines;
};

/* --- small helpers ------------------------------------------------------------------------- */

/* A path component we create ourselves: letters, digits, '.', '_', '-', never "." or "..". */
static bool valid_component(const char *s)
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
static bool valid_toolchain(const char *s)
{
    return valid_component(s) && strcmp(s, TMP_NAME) != 0 && strcmp(s, MANIFEST_NAME) != 0;
}

/* Only the owner may have written a file or folder that the cache trusts. */
static bool trusted(const struct stat *st)
{
    return st->st_uid == geteuid() && (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

static bool is_hex_name(const char *name, const char *suffix)
{
    size_t n = strlen(name);

    if (n != HEX_LEN + strlen(suffix) || strcmp(name + HEX_LEN, suffix) != 0)
        return false;
    for (size_t i = 0; i < HEX_LEN; i++)
        if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
            return false;
    return true;
}

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

/* write() until everything is out: retries after signals and short writes. */
static bool write_all(int fd, const void *buf, size_t len)
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
static bool pread_all(int fd, void *buf, size_t len, off_t off)
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

/* Paths built for messages only: a path too long for the buffer is cut and ends in "~". */
#define MESSAGE_PATH(_buf, ...)                                                                    \
    do {                                                                                           \
        if (snprintf((_buf), sizeof(_buf), __VA_ARGS__) >= (int)sizeof(_buf))                      \
            (_buf)[sizeof(_buf) - 2] = '~';                                                        \
    } while (0)

static void close_fd(int fd)
{
    if (fd >= 0)
        close(fd);
}

/* Warn about a real problem once per store and at debug level afterwards, so that a broken cache
 * folder does not print one line per kernel. */
#define STORE_WARN(_store, _fmt, ...)                                                              \
    do {                                                                                           \
        if (!atomic_flag_test_and_set(&(_store)->warned))                                          \
            tj_log_warn(_fmt, __VA_ARGS__);                                                        \
        else                                                                                       \
            tj_log_debug(_fmt, __VA_ARGS__);                                                       \
    } while (0)

/* Open (and with @p create first make) the folder @p name below @p parent, refusing symbolic
 * links and folders that others could have written. @p where names the parent for messages. */
static tj_status_t open_dir(tj_store_t *store, int parent, const char *where, const char *name,
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
    if (!trusted(&st)) {
        STORE_WARN(store,
                   "cache: not using %s/%s: owned by uid %u with mode %03o; a cache folder must "
                   "belong to you and not be writable by others",
                   where, name, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
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
static tj_status_t open_arch_dir(tj_store_t *store, const char *toolchain, const char *arch,
                                 bool create, int *out)
{
    char where[PATH_MAX];
    tj_status_t status;
    int tc_fd = -1;

    status = open_dir(store, store->root_fd, store->dir, toolchain, create, &tc_fd);
    if (status != TJ_OK)
        return status;
    MESSAGE_PATH(where, "%s/%s", store->dir, toolchain);
    status = open_dir(store, tc_fd, where, arch, create, out);
    close(tc_fd);
    return status;
}

/* --- entries ------------------------------------------------------------------------------- */

/* Validate the open entry @p fd. With @p key, the stored key must be exactly that text; without,
 * the stored key must hash to the file name @p hex (the walk over the store knows no keys). On
 * success the image is returned when @p image is not NULL, and the file size in @p size. */
static tj_status_t read_entry(int fd, const char *path, const char *key, const char *hex,
                              void **image, size_t *image_len, off_t *size)
{
    tj_status_t status = TJ_OK;
    const char *why = NULL;
    entry_header_t h;
    XXH3_state_t xs;
    struct stat st;
    uint64_t total;
    char *kbuf = NULL, *ibuf = NULL;

    if (fstat(fd, &st) != 0) {
        tj_log_info("cache: cannot stat %s: %s", path, strerror(errno));
        return TJ_ERR_IO;
    }
    if (!S_ISREG(st.st_mode)) {
        why = "not a regular file";
        status = TJ_ERR_CORRUPT;
        goto out_invalid;
    }
    if (!trusted(&st)) {
        tj_log_info("cache: ignoring %s: owned by uid %u with mode %03o", path, (unsigned)st.st_uid,
                    (unsigned)(st.st_mode & 07777));
        return TJ_ERR_UNTRUSTED;
    }
    status = TJ_ERR_CORRUPT;
    if ((uint64_t)st.st_size < sizeof(h) || !pread_all(fd, &h, sizeof(h), 0)) {
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
    if (!pread_all(fd, kbuf, h.key_len, (off_t)sizeof(h))) {
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
    if (!pread_all(fd, ibuf, (size_t)h.image_len, (off_t)(sizeof(h) + h.key_len))) {
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
    tj_log_info("cache: ignoring %s: %s", path, why);
out_free:
    free(ibuf);
    free(kbuf);
    return status;
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
    if (!valid_toolchain(toolchain) || !valid_component(arch)) {
        tj_log_warn("cache: invalid toolchain or arch name: only letters, digits, '.', '_' and "
                    "'-' make a folder name");
        return TJ_ERR_INVALID;
    }
    tj_hash_hex(tj_hash_bytes(key, strlen(key)), name);
    strcat(name, ENTRY_SUFFIX);

    status = open_arch_dir(store, toolchain, arch, false, &arch_fd);
    if (status != TJ_OK)
        return status;
    MESSAGE_PATH(path, "%s/%s/%s/%s", store->dir, toolchain, arch, name);
    fd = openat(arch_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            status = TJ_ERR_NOT_FOUND;
        } else if (errno == ELOOP) {
            tj_log_info("cache: ignoring %s: a symbolic link", path);
            status = TJ_ERR_UNTRUSTED;
        } else {
            tj_log_info("cache: cannot open %s: %s", path, strerror(errno));
            status = TJ_ERR_CORRUPT;
        }
        goto out_arch;
    }
    status = read_entry(fd, path, key, NULL, image, len, &size);
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
        if (!write_all(fd, bufs[i], lens[i]))
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
    close_fd(fd);
    unlinkat(tmp_fd, tmp_name, 0);
    return status;
}

tj_status_t tj_store_save(tj_store_t *store, const char *toolchain, const char *arch,
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
    if (!valid_toolchain(toolchain) || !valid_component(arch)) {
        tj_log_warn("cache: invalid toolchain or arch name: only letters, digits, '.', '_' and "
                    "'-' make a folder name");
        return TJ_ERR_INVALID;
    }
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

    status = open_arch_dir(store, toolchain, arch, true, &arch_fd);
    if (status != TJ_OK)
        return status;
    status = open_dir(store, store->root_fd, store->dir, TMP_NAME, true, &tmp_fd);
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
            tj_log_warn("cache: cannot create %s: %s", path, strerror(errno));
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
        (mode != TJ_STORE_RW && mode != TJ_STORE_RO))
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
        if (errno == ENOENT && mode == TJ_STORE_RO) {
            status = TJ_ERR_NOT_FOUND; /* nothing was ever cached: a normal state */
        } else {
            tj_log_warn("cache: cannot open %s: %s", dir, strerror(errno));
            status = TJ_ERR_IO;
        }
        goto out_free;
    }
    if (fstat(s->root_fd, &st) != 0) {
        tj_log_warn("cache: cannot stat %s: %s", dir, strerror(errno));
        status = TJ_ERR_IO;
        goto out_root;
    }
    if (!trusted(&st)) {
        tj_log_warn("cache: not using %s: owned by uid %u with mode %03o; a cache directory "
                    "must belong to you and not be writable by others (chmod 700)",
                    dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        status = TJ_ERR_UNTRUSTED;
        goto out_root;
    }
    /* A writer needs tmp/ on the same file system; check it now so that a bad one is refused
     * here, once, rather than on every save. */
    if (mode == TJ_STORE_RW) {
        status = open_dir(s, s->root_fd, dir, TMP_NAME, true, &tmp_fd);
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

static void free_lines(line_entry_t **set)
{
    line_entry_t *e, *tmp;

    HASH_ITER(hh, *set, e, tmp)
    {
        HASH_DEL(*set, e);
        free(e);
    }
}

void tj_store_close(tj_store_t *store)
{
    if (store == NULL)
        return;
    free_lines(&store->manifest_lines);
    pthread_mutex_destroy(&store->manifest_lock);
    close(store->root_fd);
    free(store->dir);
    free(store);
}

const char *tj_store_dir(const tj_store_t *store)
{
    return store->dir;
}

/* --- manifest ------------------------------------------------------------------------------ */

/* Add @p hash to @p set; *added tells whether it was new. */
static tj_status_t set_add(line_entry_t **set, tj_hash_t hash, bool *added)
{
    line_entry_t *e;
    bool oom = false;

    HASH_FIND(hh, *set, &hash, sizeof(hash), e);
    if (e != NULL) {
        *added = false;
        return TJ_OK;
    }
    e = calloc(1, sizeof(*e));
    if (e == NULL)
        goto out_oom;
    e->hash = hash;
    HASH_ADD(hh, *set, hash, sizeof(e->hash), e);
    if (oom) {
        free(e);
        goto out_oom;
    }
    *added = true;
    return TJ_OK;

out_oom:
    tj_log_error("cache: out of memory for the manifest");
    return TJ_ERR_NOMEM;
}

/* Read the whole manifest into a NUL-terminated buffer; TJ_ERR_NOT_FOUND when there is none. */
static tj_status_t manifest_slurp(tj_store_t *store, char **text, size_t *len)
{
    tj_status_t status = TJ_OK;
    size_t cap = 0, n = 0;
    char *buf = NULL;
    struct stat st;
    int fd;

    fd = openat(store->root_fd, MANIFEST_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return TJ_ERR_NOT_FOUND;
        STORE_WARN(store, "cache: cannot open %s/" MANIFEST_NAME ": %s", store->dir,
                   strerror(errno));
        return errno == ELOOP ? TJ_ERR_UNTRUSTED : TJ_ERR_IO;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !trusted(&st)) {
        STORE_WARN(store,
                   "cache: not using %s/" MANIFEST_NAME ": not a regular file of yours that "
                   "only you can write",
                   store->dir);
        status = TJ_ERR_UNTRUSTED;
        goto out_close;
    }
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
out_close:
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
    bool added;
    return set_add(arg, tj_hash_bytes(line, n), &added);
}

typedef struct {
    line_entry_t *seen;
    void (*fn)(const char *line, void *arg);
    void *arg;
} read_ctx_t;

static tj_status_t deliver_line(const char *line, size_t n, void *arg)
{
    read_ctx_t *ctx = arg;
    tj_status_t status;
    bool added;

    status = set_add(&ctx->seen, tj_hash_bytes(line, n), &added);
    if (status == TJ_OK && added)
        ctx->fn(line, ctx->arg);
    return status;
}

tj_status_t tj_store_manifest_read(tj_store_t *store, void (*fn)(const char *line, void *arg),
                                   void *arg)
{
    read_ctx_t ctx = {NULL, fn, arg};
    tj_status_t status;
    size_t len;
    char *text;

    if (store == NULL || fn == NULL)
        return TJ_ERR_INVALID;
    status = manifest_slurp(store, &text, &len);
    if (status != TJ_OK)
        return status;
    status = each_line(text, len, deliver_line, &ctx);
    free_lines(&ctx.seen);
    free(text);
    return status;
}

/* Open the manifest for appending. A file we create gets mode 0600 whatever the umask; one that
 * exists must be a regular file of ours that only we can write. */
static tj_status_t manifest_open_append(tj_store_t *store, int *out)
{
    const int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    struct stat st;
    int fd;

    fd = openat(store->root_fd, MANIFEST_NAME, flags | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) {
        fchmod(fd, 0600);
        *out = fd;
        return TJ_OK;
    }
    if (errno == EEXIST)
        fd = openat(store->root_fd, MANIFEST_NAME, flags);
    if (fd < 0) {
        STORE_WARN(store, "cache: cannot open %s/" MANIFEST_NAME ": %s", store->dir,
                   strerror(errno));
        return errno == ELOOP ? TJ_ERR_UNTRUSTED : TJ_ERR_IO;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !trusted(&st)) {
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

tj_status_t tj_store_manifest_add(tj_store_t *store, const char *line)
{
    char buf[TJ_STORE_LINE_MAX + 1];
    tj_status_t status = TJ_OK;
    tj_hash_t hash;
    line_entry_t *e;
    size_t n;
    bool added;
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
    /* The lines already in the file count as added, so that a program run again does not make
     * the manifest grow. */
    if (!store->manifest_loaded) {
        char *text;
        size_t len;
        status = manifest_slurp(store, &text, &len);
        if (status == TJ_OK) {
            status = each_line(text, len, remember_line, &store->manifest_lines);
            free(text);
        } else if (status == TJ_ERR_NOT_FOUND) {
            status = TJ_OK;
        }
        if (status != TJ_OK)
            goto out_unlock;
        store->manifest_loaded = true;
    }
    HASH_FIND(hh, store->manifest_lines, &hash, sizeof(hash), e);
    if (e != NULL)
        goto out_unlock;

    status = manifest_open_append(store, &fd);
    if (status != TJ_OK)
        goto out_unlock;
    /* One write() of the whole line: O_APPEND writers on one host do not interleave it. */
    memcpy(buf, line, n);
    buf[n] = '\n';
    if (!write_all(fd, buf, n + 1)) {
        STORE_WARN(store, "cache: cannot append to %s/" MANIFEST_NAME ": %s", store->dir,
                   strerror(errno));
        status = TJ_ERR_IO;
        goto out_close;
    }
    status = set_add(&store->manifest_lines, hash, &added);

out_close:
    close(fd);
out_unlock:
    pthread_mutex_unlock(&store->manifest_lock);
    return status;
}

/* --- maintenance --------------------------------------------------------------------------- */

/* Open a directory stream on @p fd without taking the descriptor away from the caller. */
static DIR *open_stream(int fd)
{
    int copy = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d;

    if (copy < 0)
        return NULL;
    d = fdopendir(copy);
    if (d == NULL)
        close(copy);
    return d;
}

typedef struct {
    bool remove_invalid;
    tj_store_stats_t stats;
} stats_ctx_t;

/* Count (and when asked, delete) what one arch folder holds. */
static tj_status_t stats_arch(tj_store_t *store, int arch_fd, const char *where, stats_ctx_t *ctx)
{
    tj_status_t status = TJ_OK;
    struct dirent *de;
    DIR *d;

    d = open_stream(arch_fd);
    if (d == NULL) {
        STORE_WARN(store, "cache: cannot list %s: %s", where, strerror(errno));
        return TJ_ERR_IO;
    }
    while ((de = readdir(d)) != NULL) {
        char path[PATH_MAX];
        struct stat st;
        off_t size;
        int fd;

        if (is_hex_name(de->d_name, SOURCE_SUFFIX)) {
            if (fstatat(arch_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                ctx->stats.sources++;
                ctx->stats.bytes += (long)st.st_size;
            }
            continue;
        }
        if (!is_hex_name(de->d_name, ENTRY_SUFFIX))
            continue;
        MESSAGE_PATH(path, "%s/%s", where, de->d_name);
        fd = openat(arch_fd, de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
            continue; /* removed while we looked */
        if (fd >= 0) {
            tj_status_t st_entry = read_entry(fd, path, NULL, de->d_name, NULL, NULL, &size);
            if (st_entry == TJ_OK) {
                ctx->stats.entries++;
                ctx->stats.bytes += (long)size;
                close(fd);
                continue;
            }
            if (st_entry == TJ_ERR_NOMEM || st_entry == TJ_ERR_IO) {
                /* Not a verdict on the entry: count nothing, report the failure. */
                close(fd);
                if (status == TJ_OK)
                    status = st_entry;
                continue;
            }
        } else {
            tj_log_info("cache: ignoring %s: %s", path, strerror(errno));
        }
        ctx->stats.invalid++;
        if (ctx->remove_invalid) {
            struct stat now, then;
            /* Delete only the file we judged: a writer may have renamed a good one over it. */
            bool same = fstatat(arch_fd, de->d_name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
                        (fd < 0 || (fstat(fd, &then) == 0 && then.st_ino == now.st_ino &&
                                    then.st_dev == now.st_dev));
            if (same && unlinkat(arch_fd, de->d_name, 0) != 0 && errno != ENOENT) {
                STORE_WARN(store, "cache: cannot remove %s: %s", path, strerror(errno));
                if (status == TJ_OK)
                    status = TJ_ERR_IO;
            }
        }
        close_fd(fd);
    }
    closedir(d);
    return status;
}

/* Call @p fn for each <toolchain>/<arch> folder of the store; with @p prune, remove toolchain
 * folders left empty afterwards. Folders that are refused have been warned about and are
 * skipped. A failure in one folder does not stop the walk; the first one is returned. */
static tj_status_t each_arch_dir(tj_store_t *store,
                                 tj_status_t (*fn)(tj_store_t *store, int tc_fd, int arch_fd,
                                                   const char *arch, const char *where, void *arg),
                                 void *arg, bool prune)
{
    tj_status_t status = TJ_OK;
    struct dirent *tc;
    DIR *root;

    root = open_stream(store->root_fd);
    if (root == NULL) {
        STORE_WARN(store, "cache: cannot list %s: %s", store->dir, strerror(errno));
        return TJ_ERR_IO;
    }
    while ((tc = readdir(root)) != NULL) {
        char where[PATH_MAX];
        struct dirent *ar;
        int tc_fd;
        DIR *d;

        if (!valid_toolchain(tc->d_name) ||
            open_dir(store, store->root_fd, store->dir, tc->d_name, false, &tc_fd) != TJ_OK)
            continue;
        MESSAGE_PATH(where, "%s/%s", store->dir, tc->d_name);
        d = open_stream(tc_fd);
        if (d == NULL) {
            STORE_WARN(store, "cache: cannot list %s: %s", where, strerror(errno));
            close(tc_fd);
            if (status == TJ_OK)
                status = TJ_ERR_IO;
            continue;
        }
        while ((ar = readdir(d)) != NULL) {
            char arch_where[PATH_MAX];
            tj_status_t st;
            int arch_fd;

            if (!valid_component(ar->d_name) ||
                open_dir(store, tc_fd, where, ar->d_name, false, &arch_fd) != TJ_OK)
                continue;
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

static tj_status_t stats_visit(tj_store_t *store, int tc_fd, int arch_fd, const char *arch,
                               const char *where, void *arg)
{
    (void)tc_fd;
    (void)arch;
    return stats_arch(store, arch_fd, where, arg);
}

tj_status_t tj_store_stats(tj_store_t *store, bool remove_invalid, tj_store_stats_t *stats)
{
    stats_ctx_t ctx;
    tj_status_t status;

    if (store == NULL || stats == NULL)
        return TJ_ERR_INVALID;
    if (remove_invalid && store->mode != TJ_STORE_RW)
        return TJ_ERR_UNSUPPORTED;
    memset(&ctx, 0, sizeof(ctx));
    ctx.remove_invalid = remove_invalid;
    status = each_arch_dir(store, stats_visit, &ctx, false);
    if (status == TJ_OK)
        *stats = ctx.stats;
    return status;
}

/* Unlink the files of folder @p fd for which @p match says yes (NULL: every non-folder). */
static tj_status_t remove_files(tj_store_t *store, int fd, const char *where,
                                bool (*match)(const char *name))
{
    tj_status_t status = TJ_OK;
    struct dirent *de;
    DIR *d;

    d = open_stream(fd);
    if (d == NULL) {
        STORE_WARN(store, "cache: cannot list %s: %s", where, strerror(errno));
        return TJ_ERR_IO;
    }
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (match != NULL && !match(de->d_name))
            continue;
        if (unlinkat(fd, de->d_name, 0) != 0 && errno != ENOENT && errno != EISDIR) {
            STORE_WARN(store, "cache: cannot remove %s/%s: %s", where, de->d_name, strerror(errno));
            status = TJ_ERR_IO;
        }
    }
    closedir(d);
    return status;
}

static bool is_cache_file(const char *name)
{
    return is_hex_name(name, ENTRY_SUFFIX) || is_hex_name(name, SOURCE_SUFFIX);
}

static tj_status_t clear_visit(tj_store_t *store, int tc_fd, int arch_fd, const char *arch,
                               const char *where, void *arg)
{
    tj_status_t status = remove_files(store, arch_fd, where, is_cache_file);

    (void)arg;
    /* An emptied folder goes too; one that holds something else stays (ENOTEMPTY). */
    unlinkat(tc_fd, arch, AT_REMOVEDIR);
    return status;
}

tj_status_t tj_store_clear(tj_store_t *store)
{
    tj_status_t status, st_tmp = TJ_OK;
    char where[PATH_MAX];
    int tmp_fd;

    if (store == NULL)
        return TJ_ERR_INVALID;
    if (store->mode != TJ_STORE_RW)
        return TJ_ERR_UNSUPPORTED;
    status = each_arch_dir(store, clear_visit, NULL, true);

    MESSAGE_PATH(where, "%s/" TMP_NAME, store->dir);
    if (open_dir(store, store->root_fd, store->dir, TMP_NAME, false, &tmp_fd) == TJ_OK) {
        st_tmp = remove_files(store, tmp_fd, where, NULL);
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
    free_lines(&store->manifest_lines);
    store->manifest_loaded = false;
    pthread_mutex_unlock(&store->manifest_lock);
    return status;
}
