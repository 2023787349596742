/* SPDX-License-Identifier: BSD-3-Clause */
/* The parts of the kernel cache's store shared by its files (store.c: folders, trust, open and
 * close; entry.c: entries; manifest.c: the manifest; walk.c: maintenance walks; lock.c: compile
 * locks; trim.c: trimming). Not for use outside cache/. */
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
#include "cache/hashset.h"
#include "cache/store.h"
#include "util/log.h"

#define MAX_COMPONENT   128
#define MANIFEST_NAME   "manifest.txt"
#define TMP_NAME        "tmp"
#define ENTRY_SUFFIX    ".bin"
#define SOURCE_SUFFIX   ".cu"
#define LOCK_SUFFIX     ".lock"
#define HEX_LEN         32
#define FILE_NAME_SPACE 48

struct tj_store {
    char *dir;
    int root_fd;
    tj_store_mode_t mode;
    atomic_uint tmp_seq;
    atomic_flag warned; /* one warning per store about untrusted folders or failed writes */
    pthread_mutex_t manifest_lock;
    off_t manifest_seen; /* bytes of the file whose lines are in manifest_lines */
    ino_t manifest_ino;  /* the file they were read from (it may be removed and made again) */
    tj_hashset_t manifest_lines; /* the lines this store knows the file holds */
};

/* Paths built for messages only: a path too long for the buffer is cut and ends in "~". */
#define MESSAGE_PATH(_buf, ...)                                                                    \
    do {                                                                                           \
        if (snprintf((_buf), sizeof(_buf), __VA_ARGS__) >= (int)sizeof(_buf))                      \
            (_buf)[sizeof(_buf) - 2] = '~';                                                        \
    } while (0)

/* Warn about a real problem once per store (and once per job: the ranks of a job share their
 * cache folders) and at debug level afterwards, so that a broken cache folder does not print one
 * line per kernel or per rank. */
#define STORE_WARN(_store, _fmt, ...)                                                              \
    do {                                                                                           \
        tj_store_note(_fmt, __VA_ARGS__);                                                          \
        if (!atomic_flag_test_and_set(&(_store)->warned))                                          \
            tj_log_warn_job(_fmt, __VA_ARGS__);                                                    \
        else                                                                                       \
            tj_log_debug(_fmt, __VA_ARGS__);                                                       \
    } while (0)

/* A path component we create ourselves: letters, digits, '.', '_', '-', never "." or "..". */
bool tj_store_valid_component(const char *s);
/* A toolchain name must also not collide with the files the root itself holds. */
bool tj_store_valid_toolchain(const char *s);
/* Only the owner may have written a file or folder that the cache trusts: the user, or for a
 * SHARED store also root; and neither group nor others may write it. */
bool tj_store_trusts(const tj_store_t *store, const struct stat *st);
/* Remember the last problem this thread met in the store, in words, for a caller that must say
 * why (tj_store_last_problem). STORE_WARN notes every problem it reports. */
void tj_store_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Why @p store does not trust @p st, in words, with what to do about it (for messages). */
void tj_store_distrust_reason(const tj_store_t *store, const struct stat *st, const char *path,
                              char *buf, size_t len);
/* A 32-digit lowercase hex name followed by @p suffix. */
bool tj_store_is_hex_name(const char *name, const char *suffix);
/* write() until everything is out: retries after signals and short writes. */
bool tj_store_write_all(int fd, const void *buf, size_t len);
/* pread() exactly @p len bytes at @p off; a file that ends early fails with errno 0. */
bool tj_store_pread_all(int fd, void *buf, size_t len, off_t off);
void tj_store_close_fd(int fd);
/* Open the file @p name of @p dir_fd for reading without following a symbolic link, and without
 * updating its access time where the system allows (O_NOATIME: files of one's own), so that
 * maintenance walks do not make every entry look just used to trimming. */
int tj_store_open_quietly(int dir_fd, const char *name);
/* Open (and with @p create first make) the folder @p name below @p parent, refusing symbolic
 * links and folders that others could have written. @p where names the parent for messages. */
tj_status_t tj_store_open_dir(tj_store_t *store, int parent, const char *where, const char *name,
                              bool create, int *out);
/* Open DIR/<toolchain>/<arch>, creating the levels when asked. */
tj_status_t tj_store_open_arch_dir(tj_store_t *store, const char *toolchain, const char *arch,
                                   bool create, int *out);
/* Zeroed memory of @p size bytes; NULL after logging that the cache is out of memory for
 * @p what. */
void *tj_store_alloc(size_t size, const char *what);
/* TJ_ERR_INVALID, warned, for a toolchain or arch that makes no folder name. */
tj_status_t tj_store_check_place(const char *toolchain, const char *arch);
/* The file name of @p key in its folder (its hash in hex, then @p suffix, into @p name of
 * FILE_NAME_SPACE bytes) and that folder, DIR/<toolchain>/<arch>, opened (created when asked)
 * into *arch_fd. */
tj_status_t tj_store_key_place(tj_store_t *store, const char *toolchain, const char *arch,
                               const char *key, const char *suffix, bool create, int *arch_fd,
                               char *name);

/* Move the file @p name of folder @p dir_fd (the folder @p where, for messages) out of the way,
 * but only if it is still the file @p judged (same device and inode, and with @p content, @p len
 * bytes, when not NULL: a number freed by a removal may be given to the next file made): it is
 * renamed into tmp/ first, which only one of several processes doing the same can win, and put
 * back (with link, which never replaces a file) when what was renamed turns out to be another
 * file that arrived meanwhile. TJ_OK: removed; TJ_ERR_NOT_FOUND: already gone or replaced
 * (nothing removed); TJ_ERR_IO after a warning that names the file. */
tj_status_t tj_store_remove_judged(tj_store_t *store, int dir_fd, const char *where,
                                   const char *name, const struct stat *judged, const void *content,
                                   size_t len);

/* Validate the open entry @p fd (entry.c); see there. When it does not validate, @p why (may be
 * NULL) receives the reason in words. */
tj_status_t tj_entry_read(const tj_store_t *store, int fd, const char *path, const char *key,
                          const char *hex, void **image, size_t *image_len, off_t *size, char *why,
                          size_t why_len);
/* The key text of the open entry @p fd, after checking its header and lengths against the file
 * (not its checksum: for trimming, which needs the key, not the image). *key is malloc'd. */
tj_status_t tj_entry_read_key(int fd, char **key);

/* Call @p fn for each <toolchain>/<arch> folder of the store (walk.c); with @p prune, remove
 * toolchain folders left empty afterwards. Refused folders are counted in *walk and skipped. */
tj_status_t tj_walk_arch_dirs(tj_store_t *store,
                              tj_status_t (*fn)(tj_store_t *store, int tc_fd, int arch_fd,
                                                const char *arch, const char *where, void *arg),
                              void *arg, bool prune, long *walk);

/* Whether the lock file <hex>.lock in @p arch_fd is held by a live process (lock.c). */
bool tj_lock_is_live(tj_store_t *store, int arch_fd, const char *hex);

/* Rewrite the manifest without the lines whose hashes are in @p drop (manifest.c); *dropped
 * counts the lines removed. */
tj_status_t tj_manifest_drop(tj_store_t *store, const tj_hashset_t *drop, long *dropped);

#endif /* TJ_CACHE_STORE_INTERNAL_H */
