/* The parts of the kernel cache's store shared by its files (store.c: folders, trust, open and
 * close; entry.c: entries; manifest.c: the manifest; walk.c: maintenance walks). Not for use
 * outside cache/. */
#ifndef TJ_CACHE_STORE_INTERNAL_H
#define TJ_CACHE_STORE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* uthash must never exit() inside the library: a failed allocation sets the `oom` flag that each
 * function adding to a table declares, and the element is simply not added. */
#define HASH_NONFATAL_OOM         1
#define uthash_nonfatal_oom(_elt) (oom = true)
#include <uthash.h>

#include "cache/hash.h"
#include "cache/store.h"
#include "util/log.h"

#define MAX_COMPONENT   128
#define MANIFEST_NAME   "manifest.txt"
#define TMP_NAME        "tmp"
#define ENTRY_SUFFIX    ".bin"
#define SOURCE_SUFFIX   ".cu"
#define HEX_LEN         32
#define FILE_NAME_SPACE 48

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
    off_t manifest_seen; /* bytes of the file whose lines are in manifest_lines */
    ino_t manifest_ino;  /* the file they were read from (it may be removed and made again) */
    line_entry_t *manifest_lines;
};

/* Paths built for messages only: a path too long for the buffer is cut and ends in "~". */
#define MESSAGE_PATH(_buf, ...)                                                                    \
    do {                                                                                           \
        if (snprintf((_buf), sizeof(_buf), __VA_ARGS__) >= (int)sizeof(_buf))                      \
            (_buf)[sizeof(_buf) - 2] = '~';                                                        \
    } while (0)

/* Warn about a real problem once per store and at debug level afterwards, so that a broken cache
 * folder does not print one line per kernel. */
#define STORE_WARN(_store, _fmt, ...)                                                              \
    do {                                                                                           \
        tj_store_note(_fmt, __VA_ARGS__);                                                          \
        if (!atomic_flag_test_and_set(&(_store)->warned))                                          \
            tj_log_warn(_fmt, __VA_ARGS__);                                                        \
        else                                                                                       \
            tj_log_debug(_fmt, __VA_ARGS__);                                                       \
    } while (0)

/* A path component we create ourselves: letters, digits, '.', '_', '-', never "." or "..". */
bool tj_store_valid_component(const char *s);
/* A toolchain name must also not collide with the files the root itself holds. */
bool tj_store_valid_toolchain(const char *s);
/* Only the owner may have written a file or folder that the cache trusts. */
bool tj_store_trusted(const struct stat *st);
/* Remember the last problem this thread met in the store, in words, for a caller that must say
 * why (tj_store_last_problem). STORE_WARN notes every problem it reports. */
void tj_store_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Why @p st is not trusted, in words, with what to do about it (for messages). */
void tj_store_distrust_reason(const struct stat *st, const char *path, char *buf, size_t len);
/* A 32-digit lowercase hex name followed by @p suffix. */
bool tj_store_is_hex_name(const char *name, const char *suffix);
/* write() until everything is out: retries after signals and short writes. */
bool tj_store_write_all(int fd, const void *buf, size_t len);
/* pread() exactly @p len bytes at @p off; a file that ends early fails with errno 0. */
bool tj_store_pread_all(int fd, void *buf, size_t len, off_t off);
void tj_store_close_fd(int fd);
/* Open (and with @p create first make) the folder @p name below @p parent, refusing symbolic
 * links and folders that others could have written. @p where names the parent for messages. */
tj_status_t tj_store_open_dir(tj_store_t *store, int parent, const char *where, const char *name,
                              bool create, int *out);
/* Open DIR/<toolchain>/<arch>, creating the levels when asked. */
tj_status_t tj_store_open_arch_dir(tj_store_t *store, const char *toolchain, const char *arch,
                                   bool create, int *out);

/* Validate the open entry @p fd (entry.c); see there. */
tj_status_t tj_entry_read(int fd, const char *path, const char *key, const char *hex, void **image,
                          size_t *image_len, off_t *size);

/* Forget the manifest lines a store remembers (manifest.c). */
void tj_manifest_free_lines(line_entry_t **set);

#endif /* TJ_CACHE_STORE_INTERNAL_H */
