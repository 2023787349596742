/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-kernel compile locks of the kernel cache: lock files created with O_EXCL, stale ones
 * detected and broken, and waiting for the entry another process is compiling.
 *
 * A lock is an optimisation, never a condition of correctness: entries are written through tmp/
 * and rename, so two processes compiling the same kernel only waste one compile. Hence every
 * doubt is built towards progress: a lock whose holder cannot be shown alive is broken, a
 * waiter gives up after its timeout, and nothing ever blocks without a bound. */
#include "cache/lock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache/entry.h"
#include "cache/store_internal.h"
#include "util/clock.h"
#include "util/common.h"

/* A lock file without its contents is being written; it is stale once this old. */
#define PARTIAL_STALE_S 10
/* Tries to create the lock file, each after breaking a stale one that stood in the way. */
#define LOCK_ATTEMPTS 4
#define LOCK_TEXT_MAX 512
#define POLL_FIRST_MS 1
#define POLL_MAX_MS   100

struct tj_store_lock {
    tj_store_t *store;
    int arch_fd;
    char name[FILE_NAME_SPACE];
    char where[PATH_MAX];     /* its folder, for messages */
    struct stat st;           /* the lock file this lock created */
    char text[LOCK_TEXT_MAX]; /* and what it wrote there */
    size_t len;
};

/* Who holds a lock: enough to tell, on the same host, whether that process still runs. */
typedef struct {
    char host[256];
    char boot[64];  /* /proc/sys/kernel/random/boot_id: pids of another boot mean nothing */
    char pidns[64]; /* /proc/self/ns/pid: pids of another namespace mean nothing here */
    long pid;
    unsigned long long start; /* process start time, clock ticks after boot (/proc/PID/stat) */
    long long created;
} owner_t;

typedef enum { LOCK_GONE, LOCK_LIVE, LOCK_STALE } verdict_t;

/* Read a short text file into @p buf without its trailing newline; "" when unreadable. */
static void read_small(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");

    buf[0] = '\0';
    if (f == NULL)
        return;
    if (fgets(buf, (int)len, f) == NULL)
        buf[0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

/* Start time of process @p pid (field 22 of /proc/PID/stat); 0 when unknown. *zombie says
 * whether it has exited and waits to be reaped (state Z or X): a holder that is dead already.
 * The command name in parentheses may hold spaces and parentheses, so fields are counted after
 * the last ')'. */
static unsigned long long start_time(long pid, bool *zombie)
{
    char path[64], buf[1024], *p;
    unsigned long long start = 0;
    FILE *f;
    size_t n;

    *zombie = false;
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    if ((f = fopen(path, "re")) == NULL)
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    if ((p = strrchr(buf, ')')) == NULL)
        return 0;
    p++;
    *zombie = p[0] == ' ' && (p[1] == 'Z' || p[1] == 'X');
    /* p is at the space before field 3; fields 3 to 21 come before the start time. */
    for (int field = 3; field < 22 && p != NULL; field++)
        p = strchr(p + 1, ' ');
    if (p == NULL || sscanf(p, " %llu", &start) != 1)
        return 0;
    return start;
}

static void owner_self(owner_t *o)
{
    bool zombie;
    ssize_t n;

    memset(o, 0, sizeof(*o));
    if (gethostname(o->host, sizeof(o->host) - 1) != 0)
        o->host[0] = '\0';
    /* A name that the lock text could not hold is cut where it would break a line. */
    o->host[strcspn(o->host, "\n ")] = '\0';
    read_small("/proc/sys/kernel/random/boot_id", o->boot, sizeof(o->boot));
    n = readlink("/proc/self/ns/pid", o->pidns, sizeof(o->pidns) - 1);
    o->pidns[n > 0 ? n : 0] = '\0';
    o->pid = (long)getpid();
    o->start = start_time(o->pid, &zombie);
    o->created = (long long)time(NULL);
}

static int owner_format(const owner_t *o, char *buf, size_t len)
{
    return snprintf(buf, len,
                    "typejit compile lock\nhost=%s\nboot=%s\npidns=%s\npid=%ld\nstart=%llu\n"
                    "created=%lld\n",
                    o->host, o->boot, o->pidns, o->pid, o->start, o->created);
}

/* The value of "NAME=" on its own line of @p text, copied into @p out; false when absent. */
static bool field(const char *text, const char *name, char *out, size_t len)
{
    size_t n = strlen(name);

    for (const char *p = text; p != NULL && *p != '\0'; p = strchr(p, '\n'), p = p ? p + 1 : p) {
        if (strncmp(p, name, n) == 0 && p[n] == '=') {
            size_t v = strcspn(p + n + 1, "\n");
            if (v >= len)
                return false;
            memcpy(out, p + n + 1, v);
            out[v] = '\0';
            return true;
        }
    }
    return false;
}

static bool owner_parse(const char *text, owner_t *o)
{
    char num[32];

    memset(o, 0, sizeof(*o));
    if (strncmp(text, "typejit compile lock\n", 21) != 0 ||
        !field(text, "host", o->host, sizeof(o->host)) ||
        !field(text, "boot", o->boot, sizeof(o->boot)) ||
        !field(text, "pidns", o->pidns, sizeof(o->pidns)) || !field(text, "pid", num, sizeof(num)))
        return false;
    o->pid = strtol(num, NULL, 10);
    if (o->pid <= 0 || !field(text, "start", num, sizeof(num)))
        return false;
    o->start = strtoull(num, NULL, 10);
    /* The text ends with its last line: a lock cut short while being written has no "created". */
    if (!field(text, "created", num, sizeof(num)))
        return false;
    o->created = strtoll(num, NULL, 10);
    return true;
}

/* Whether the process @p o names, on this host, is still the one that took the lock. */
static bool holder_alive(const owner_t *o, const owner_t *self)
{
    unsigned long long now_start;
    bool zombie;

    if (o->boot[0] != '\0' && self->boot[0] != '\0' && strcmp(o->boot, self->boot) != 0)
        return false; /* written before the host rebooted */
    if (kill((pid_t)o->pid, 0) != 0 && errno == ESRCH)
        return false;
    /* The pid runs; it is the holder only if it started when the holder did. */
    now_start = start_time(o->pid, &zombie);
    if (zombie)
        return false; /* killed, and its parent has not reaped it yet */
    return now_start == 0 || o->start == 0 || now_start == o->start;
}

/* Judge the lock file @p name in @p arch_fd; for a stale one, *st and @p text (LOCK_TEXT_MAX
 * bytes) are the file judged and what it holds (to break exactly that one), *why says why. */
static verdict_t judge(tj_store_t *store, int arch_fd, const char *name, struct stat *st,
                       char *text, char *why, size_t why_len)
{
    owner_t o, self;
    ssize_t n;
    long long age;
    int fd;

    fd = openat(arch_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return LOCK_GONE;
        /* A symbolic link, or something unreadable: not a lock typejit wrote. */
        if (fstatat(arch_fd, name, st, AT_SYMLINK_NOFOLLOW) != 0)
            return LOCK_GONE;
        snprintf(why, why_len, "it cannot be read (%s)", strerror(errno));
        text[0] = '\0';
        return LOCK_STALE;
    }
    if (fstat(fd, st) != 0) {
        close(fd);
        return LOCK_GONE;
    }
    text[0] = '\0';
    if (!S_ISREG(st->st_mode) || !tj_store_trusts(store, st)) {
        close(fd);
        snprintf(why, why_len, "not a regular file of yours that only you can write");
        return LOCK_STALE;
    }
    n = pread(fd, text, LOCK_TEXT_MAX - 1, 0);
    close(fd);
    text[n > 0 ? n : 0] = '\0';
    age = (long long)time(NULL) - (long long)st->st_mtim.tv_sec;
    if (!owner_parse(text, &o)) {
        /* Created but not yet written, or its writer died in between. */
        if (age < PARTIAL_STALE_S)
            return LOCK_LIVE;
        snprintf(why, why_len, "incomplete and %lld s old", age);
        return LOCK_STALE;
    }
    owner_self(&self);
    if (strcmp(o.host, self.host) == 0 && strcmp(o.pidns, self.pidns) == 0) {
        if (holder_alive(&o, &self))
            return LOCK_LIVE;
        snprintf(why, why_len, "its holder, pid %ld on this host, is gone", o.pid);
        return LOCK_STALE;
    }
    /* Another host (or pid namespace): its processes cannot be asked, only the age tells. */
    if (age <= TJ_STORE_LOCK_REMOTE_STALE_S)
        return LOCK_LIVE;
    snprintf(why, why_len, "written by pid %ld on %.64s %lld s ago", o.pid,
             o.host[0] ? o.host : "?", age);
    return LOCK_STALE;
}

/* Break the stale lock @p name (the file @p judged, holding @p text), saying why at info
 * level. */
static void break_lock(tj_store_t *store, int arch_fd, const char *toolchain, const char *arch,
                       const char *name, const struct stat *judged, const char *text,
                       const char *why)
{
    char where[PATH_MAX];

    MESSAGE_PATH(where, "%s/%s/%s", store->dir, toolchain, arch);
    /* An unreadable lock can only be matched by its inode. */
    if (tj_store_remove_judged(store, arch_fd, where, name, judged, text[0] ? text : NULL,
                               strlen(text)) == TJ_OK)
        tj_log_info("cache: broke the stale lock %s/%s: %s", where, name, why);
}

tj_status_t tj_store_lock(tj_store_t *store, const char *toolchain, const char *arch,
                          const char *key, tj_store_lock_t **lock)
{
    char text[LOCK_TEXT_MAX], why[256];
    tj_status_t status = TJ_ERR_BUSY;
    tj_store_lock_t *l;
    owner_t self;
    struct stat st;
    int len;

    if (store == NULL || key == NULL || lock == NULL)
        return TJ_ERR_INVALID;
    if (store->mode != TJ_STORE_RW)
        return TJ_ERR_UNSUPPORTED;
    if ((l = tj_store_alloc(sizeof(*l), "a lock")) == NULL)
        return TJ_ERR_NOMEM;
    l->store = store;
    MESSAGE_PATH(l->where, "%s/%s/%s", store->dir, toolchain, arch);
    status =
        tj_store_key_place(store, toolchain, arch, key, LOCK_SUFFIX, true, &l->arch_fd, l->name);
    if (status != TJ_OK)
        goto out_free;
    owner_self(&self);
    len = owner_format(&self, l->text, sizeof(l->text));
    l->len = (size_t)len;
    status = TJ_ERR_BUSY;
    for (int attempt = 0; attempt < LOCK_ATTEMPTS; attempt++) {
        int fd =
            openat(l->arch_fd, l->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            /* One write: a reader sees the whole text or an incomplete one (judged young). */
            bool ok = fchmod(fd, 0600) == 0 && tj_store_write_all(fd, l->text, l->len) &&
                      fstat(fd, &l->st) == 0;
            if (close(fd) != 0)
                ok = false;
            if (!ok) {
                STORE_WARN(store, "cache: cannot write the lock %s/%s/%s/%s: %s", store->dir,
                           toolchain, arch, l->name, strerror(errno));
                unlinkat(l->arch_fd, l->name, 0);
                status = TJ_ERR_IO;
                goto out_close;
            }
            *lock = l;
            return TJ_OK;
        }
        if (errno != EEXIST) {
            STORE_WARN(store, "cache: cannot create the lock %s/%s/%s/%s: %s", store->dir,
                       toolchain, arch, l->name, strerror(errno));
            status = TJ_ERR_IO;
            goto out_close;
        }
        switch (judge(store, l->arch_fd, l->name, &st, text, why, sizeof(why))) {
        case LOCK_LIVE:
            goto out_close;
        case LOCK_STALE:
            break_lock(store, l->arch_fd, toolchain, arch, l->name, &st, text, why);
            break;
        case LOCK_GONE:
            break;
        }
    }
    /* Still taken after breaking stale locks: others are racing for it, one of them won. */

out_close:
    close(l->arch_fd);
out_free:
    free(l);
    return status;
}

void tj_store_unlock(tj_store_lock_t *lock)
{
    if (lock == NULL)
        return;
    /* Remove only our own file: one broken as stale (wrongly: a clock far off) and taken by
     * another process is that process's now. */
    if (tj_store_remove_judged(lock->store, lock->arch_fd, lock->where, lock->name, &lock->st,
                               lock->text, lock->len) == TJ_ERR_NOT_FOUND)
        tj_log_debug("cache: the lock %s was not ours any more when released", lock->name);
    close(lock->arch_fd);
    free(lock);
}

bool tj_lock_is_live(tj_store_t *store, int arch_fd, const char *hex)
{
    char name[FILE_NAME_SPACE], why[256], text[LOCK_TEXT_MAX];
    struct stat st;

    snprintf(name, sizeof(name), "%.*s" LOCK_SUFFIX, HEX_LEN, hex);
    return judge(store, arch_fd, name, &st, text, why, sizeof(why)) == LOCK_LIVE;
}

tj_status_t tj_store_wait(tj_store_t *store, const char *toolchain, const char *arch,
                          const char *key, long timeout_ms, void **image, size_t *len)
{
    char name[FILE_NAME_SPACE], why[256], text[LOCK_TEXT_MAX];
    long long deadline;
    long pause = POLL_FIRST_MS;
    tj_status_t status;
    struct stat st;
    int arch_fd = -1;

    if (store == NULL || key == NULL || image == NULL || len == NULL || timeout_ms < 0)
        return TJ_ERR_INVALID;
    deadline = tj_clock_ms() + timeout_ms;
    for (;;) {
        verdict_t v;
        long long left;

        status = tj_store_load(store, toolchain, arch, key, image, len);
        if (status == TJ_OK || status == TJ_ERR_INVALID || status == TJ_ERR_NOMEM)
            break;
        if (arch_fd < 0 && (status = tj_store_key_place(store, toolchain, arch, key, LOCK_SUFFIX,
                                                        false, &arch_fd, name)) != TJ_OK) {
            /* No folder yet: no lock either (a holder makes the folder before its lock). */
            if (status == TJ_ERR_NOT_FOUND)
                status = tj_store_load(store, toolchain, arch, key, image, len);
            break;
        }
        v = judge(store, arch_fd, name, &st, text, why, sizeof(why));
        if (v != LOCK_LIVE) {
            /* The holder may have saved and unlocked between the load and the look at its lock:
             * one more load replaces it. */
            status = tj_store_load(store, toolchain, arch, key, image, len);
            if (status != TJ_OK && status != TJ_ERR_INVALID && status != TJ_ERR_NOMEM)
                status = TJ_ERR_NOT_FOUND;
            break;
        }
        left = deadline - tj_clock_ms();
        if (left <= 0) {
            status = TJ_ERR_BUSY;
            break;
        }
        tj_clock_sleep_ms(pause < left ? pause : (long)left);
        pause = pause * 2 > POLL_MAX_MS ? POLL_MAX_MS : pause * 2;
    }
    tj_store_close_fd(arch_fd);
    return status;
}
