/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-kernel compile locks of the kernel cache: of the processes sharing a cache, the first to
 * miss a kernel compiles it; the others wait for its entry or use the generic kernel meanwhile. */
#ifndef TJ_CACHE_LOCK_H
#define TJ_CACHE_LOCK_H

#include <stddef.h>

#include "typejit.h"

typedef struct tj_store tj_store_t;
typedef struct tj_store_lock tj_store_lock_t;

/* A lock written on another host (whose processes cannot be asked whether they live) is stale
 * once its file is this many seconds old: far beyond any kernel's compile time. */
#define TJ_STORE_LOCK_REMOTE_STALE_S 600

/* How long a process that must have the kernel now (sync mode) waits for another's compile of
 * it: a cold NVRTC compile takes about 50 ms, so this only bounds a holder that hangs. */
#define TJ_STORE_WAIT_DEFAULT_MS 30000

/* Take the compile lock of @p key: the file <hash>.lock beside where the entry goes, created
 * with O_EXCL and holding the owner's host, boot id, pid namespace, pid, process start time and
 * the creation time. TJ_OK: *lock is held; the caller loads the entry once more (another process
 * may have stored it just before), else compiles, saves and unlocks. TJ_ERR_BUSY: a live process
 * holds it (tj_store_wait, or the generic kernel meanwhile). A stale lock (its holder on this
 * host dead, or its pid now another process; from another host, older than
 * TJ_STORE_LOCK_REMOTE_STALE_S) is broken and the lock taken. A RO store never locks:
 * TJ_ERR_UNSUPPORTED. Other errors (TJ_ERR_IO, TJ_ERR_UNTRUSTED) mean no lock: compile anyway. */
tj_status_t tj_store_lock(tj_store_t *store, const char *toolchain, const char *arch,
                          const char *key, tj_store_lock_t **lock);

/* Release a lock from tj_store_lock (NULL: nothing). The lock file is removed only if it is
 * still this lock's own file. */
void tj_store_unlock(tj_store_lock_t *lock);

/* Wait, polling with a backoff from 1 to 100 ms, for the entry of @p key that another process is
 * compiling. TJ_OK: the entry validated, *image (malloc'd) and *len are set. TJ_ERR_NOT_FOUND:
 * the lock is gone or stale and there is no entry (the holder failed or died): take the lock and
 * compile. TJ_ERR_BUSY: @p timeout_ms passed and a live process still holds the lock: compile
 * without the lock (the entry is replaced atomically; nothing is lost, the compile is done
 * twice). Returns within @p timeout_ms plus one poll. Works on RO stores too. */
tj_status_t tj_store_wait(tj_store_t *store, const char *toolchain, const char *arch,
                          const char *key, long timeout_ms, void **image, size_t *len);

#endif /* TJ_CACHE_LOCK_H */
