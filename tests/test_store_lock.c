/* SPDX-License-Identifier: BSD-3-Clause */
/* Compile locks of the kernel cache across real processes: exclusion, a killed holder whose
 * lock the next taker breaks, forged stale and live locks (pid reused, another host, cut short),
 * waiting that returns when the entry appears or the holder dies, the bounded wait, and eight
 * processes that between them compile each kernel exactly once. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache/entry.h"
#include "cache/hash.h"
#include "cache/lock.h"
#include "cache/store.h"
#include "check.h"
#include "tempdir.h"
#include "util/clock.h"

#define TC     "nvrtc-13.0"
#define ARCH   "sm_90"
#define NPROC  8
#define NKEYS  12
#define WAIT_S 20

static char base[64];
static char root[256];

static void lock_path(const char *key, char *out, size_t size)
{
    char hex[33];

    tj_hash_hex(tj_hash_bytes(key, strlen(key)), hex);
    snprintf(out, size, "%s/%s/%s/%s.lock", root, TC, ARCH, hex);
}

static tj_store_t *open_rw(void)
{
    tj_store_t *s = NULL;
    REQUIRE(tj_store_open(root, TJ_STORE_RW, &s) == TJ_OK);
    return s;
}

/* A child that takes the lock of @p key, tells the parent through @p fd, then does @p what:
 * 'k' waits to be killed, 'x' exits without unlocking, 's' sleeps @p ms, saves and unlocks,
 * 'u' sleeps @p ms and unlocks without saving. */
static pid_t holder(const char *key, char what, long ms)
{
    int p[2];
    pid_t pid;
    char c;

    REQUIRE(pipe(p) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        tj_store_t *s = open_rw();
        tj_store_lock_t *l = NULL;
        close(p[0]);
        if (tj_store_lock(s, TC, ARCH, key, &l) != TJ_OK)
            _exit(3);
        c = 'L';
        if (write(p[1], &c, 1) != 1)
            _exit(4);
        if (what == 'k')
            for (;;)
                pause();
        if (what == 'x')
            _exit(0); /* a crash while compiling: the lock file stays */
        tj_clock_sleep_ms(ms);
        if (what == 's' && tj_store_save(s, TC, ARCH, key, key, strlen(key), NULL) != TJ_OK)
            _exit(5);
        tj_store_unlock(l);
        tj_store_close(s);
        _exit(0);
    }
    close(p[1]);
    REQUIRE(read(p[0], &c, 1) == 1 && c == 'L');
    close(p[0]);
    return pid;
}

static int reap(pid_t pid)
{
    int status;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void write_file(const char *path, const char *text, time_t mtime)
{
    struct timespec times[2];
    int fd;

    /* A new file each time, as another process taking the lock makes. */
    unlink(path);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);

    REQUIRE(fd >= 0);
    REQUIRE(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    if (mtime != 0) {
        times[0].tv_sec = times[1].tv_sec = mtime;
        times[0].tv_nsec = times[1].tv_nsec = 0;
        REQUIRE(utimensat(AT_FDCWD, path, times, 0) == 0);
    }
}

static void test_exclusion(void)
{
    tj_store_t *s = open_rw();
    tj_store_lock_t *l = NULL, *l2 = NULL;
    const char *key = "exclusion";
    char path[512];
    struct stat st;
    pid_t pid;

    /* Another process holds it: busy, in this process and in a third one. */
    pid = holder(key, 'u', 300);
    CHECK_EQ_INT(tj_store_lock(s, TC, ARCH, key, &l), TJ_ERR_BUSY);
    CHECK(l == NULL);
    CHECK_EQ_INT(reap(pid), 0);
    /* Released: ours now, with its contents; a second take (another thread) is busy. */
    REQUIRE(tj_store_lock(s, TC, ARCH, key, &l) == TJ_OK);
    lock_path(key, path, sizeof(path));
    REQUIRE(stat(path, &st) == 0);
    CHECK_EQ_INT(st.st_mode & 0777, 0600);
    CHECK_EQ_INT(tj_store_lock(s, TC, ARCH, key, &l2), TJ_ERR_BUSY);
    {
        FILE *f = fopen(path, "r");
        char text[512] = "", want[64];
        REQUIRE(f != NULL);
        CHECK(fread(text, 1, sizeof(text) - 1, f) > 0);
        fclose(f);
        snprintf(want, sizeof(want), "\npid=%ld\n", (long)getpid());
        CHECK(strncmp(text, "typejit compile lock\nhost=", 26) == 0);
        CHECK(strstr(text, want) != NULL);
        CHECK(strstr(text, "\nstart=") != NULL && strstr(text, "\ncreated=") != NULL);
        CHECK(strstr(text, "\nboot=") != NULL && strstr(text, "\npidns=") != NULL);
    }
    tj_store_unlock(l);
    CHECK(stat(path, &st) != 0 && errno == ENOENT);
    /* A read-only store never locks. */
    {
        tj_store_t *ro = NULL;
        REQUIRE(tj_store_open(root, TJ_STORE_RO, &ro) == TJ_OK);
        CHECK_EQ_INT(tj_store_lock(ro, TC, ARCH, key, &l2), TJ_ERR_UNSUPPORTED);
        tj_store_close(ro);
    }
    tj_store_close(s);
}

/* A holder SIGKILLed, and one that exits without unlocking: the next taker breaks the lock. */
static void test_dead_holders(void)
{
    tj_store_t *s = open_rw();
    tj_store_lock_t *l = NULL;
    const char *key = "dead holder";
    char path[512], tmp[512];
    struct stat st;
    pid_t pid;

    lock_path(key, path, sizeof(path));
    pid = holder(key, 'k', 0);
    CHECK_EQ_INT(tj_store_lock(s, TC, ARCH, key, &l), TJ_ERR_BUSY);
    REQUIRE(kill(pid, SIGKILL) == 0);
    CHECK_EQ_INT(reap(pid), 128 + SIGKILL);
    CHECK(stat(path, &st) == 0); /* the killed holder left its lock */
    REQUIRE(tj_store_lock(s, TC, ARCH, key, &l) == TJ_OK);
    tj_store_unlock(l);

    pid = holder(key, 'x', 0);
    CHECK_EQ_INT(reap(pid), 0);
    CHECK(stat(path, &st) == 0);
    REQUIRE(tj_store_lock(s, TC, ARCH, key, &l) == TJ_OK);
    tj_store_unlock(l);
    /* Breaking leaves nothing behind in tmp/. */
    snprintf(tmp, sizeof(tmp), "%s/tmp", root);
    {
        int n = 0;
        char cmd[600];
        FILE *f;
        snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", tmp);
        f = popen(cmd, "r");
        REQUIRE(f != NULL && fscanf(f, "%d", &n) == 1);
        pclose(f);
        CHECK_EQ_INT(n, 0);
    }
    tj_store_close(s);
}

/* Locks written by hand: every way a lock can be stale, and the ways it must be taken as live. */
static void test_forged(void)
{
    tj_store_t *s = open_rw();
    tj_store_lock_t *l = NULL;
    const char *key = "forged";
    char path[512], text[512], host[256] = "", boot[64] = "", ns[64] = "";
    FILE *f;
    ssize_t n;
    time_t now = time(NULL);

    /* The folders exist once a lock was taken. */
    REQUIRE(tj_store_lock(s, TC, ARCH, key, &l) == TJ_OK);
    tj_store_unlock(l);
    lock_path(key, path, sizeof(path));
    gethostname(host, sizeof(host) - 1);
    if ((f = fopen("/proc/sys/kernel/random/boot_id", "r")) != NULL) {
        if (fgets(boot, sizeof(boot), f) == NULL)
            boot[0] = '\0';
        boot[strcspn(boot, "\n")] = '\0';
        fclose(f);
    }
    n = readlink("/proc/self/ns/pid", ns, sizeof(ns) - 1);
    ns[n > 0 ? n : 0] = '\0';

#define FORGE(_host, _boot, _pid, _start, _mtime)                                                  \
    do {                                                                                           \
        snprintf(text, sizeof(text),                                                               \
                 "typejit compile lock\nhost=%s\nboot=%s\npidns=%s\npid=%ld\nstart=%llu\n"         \
                 "created=%lld\n",                                                                 \
                 _host, _boot, ns, (long)(_pid), (unsigned long long)(_start), (long long)now);    \
        write_file(path, text, _mtime);                                                            \
    } while (0)

    /* This process, with its pid alive and start time unknown to the forger (0): live. */
    FORGE(host, boot, getpid(), 0, 0);
    CHECK_EQ_INT(tj_store_lock(s, TC, ARCH, key, &l), TJ_ERR_BUSY);
    /* Our pid, but a start time that is not ours: the pid was reused, stale. */
    FORGE(host, boot, getpid(), 1, 0);
    REQUIRE(tj_store_lock(s, TC, ARCH, key, &l) == TJ_OK);
    tj_store_unlock(l);
    /* Written before the host rebooted: stale. */
    FORGE(host, "00000000-0000-0000-0000-000000000000", getpid(), 0, 0);
    REQUIRE(tj_store_lock(s, TC, ARCH, key, &l) == TJ_OK);
    tj_store_unlock(l);
    /* Another host, written a minute ago: live (its holder cannot be asked). */
    FORGE("elsewhere.example", boot, 1, 1, now - 60);
    CHECK_EQ_INT(tj_store_lock(s, TC, ARCH, key, &l), TJ_ERR_BUSY);
    /* Another host, eleven minutes ago: stale. */
    FORGE("elsewhere.example", boot, 1, 1, now - TJ_STORE_LOCK_REMOTE_STALE_S - 60);
    REQUIRE(tj_store_lock(s, TC, ARCH, key, &l) == TJ_OK);
    tj_store_unlock(l);
    /* Created but not yet written: live while young, stale when old. */
    write_file(path, "", 0);
    CHECK_EQ_INT(tj_store_lock(s, TC, ARCH, key, &l), TJ_ERR_BUSY);
    write_file(path, "typejit compile lock\nhost=", now - 60);
    REQUIRE(tj_store_lock(s, TC, ARCH, key, &l) == TJ_OK);
    /* Released after someone broke it and took it: the new holder's file stays. */
    FORGE(host, boot, getpid(), 0, 0);
    tj_store_unlock(l);
    CHECK(access(path, F_OK) == 0);
    unlink(path);
#undef FORGE
    tj_store_close(s);
}

static void test_wait(void)
{
    tj_store_t *s = open_rw();
    const char *key = "waited for";
    void *img = NULL;
    size_t len = 0;
    long long t0, dt;
    pid_t pid;

    /* The holder saves after 300 ms: the wait returns the entry soon after. */
    pid = holder(key, 's', 300);
    t0 = tj_clock_ms();
    CHECK_EQ_INT(tj_store_wait(s, TC, ARCH, key, WAIT_S * 1000, &img, &len), TJ_OK);
    dt = tj_clock_ms() - t0;
    CHECK(dt >= 200 && dt < 5000);
    CHECK(len == strlen(key) && img != NULL && memcmp(img, key, len) == 0);
    free(img);
    CHECK_EQ_INT(reap(pid), 0);

    /* The holder gives up without an entry: NOT_FOUND, so that the waiter compiles. */
    pid = holder("given up", 'u', 200);
    t0 = tj_clock_ms();
    CHECK_EQ_INT(tj_store_wait(s, TC, ARCH, "given up", WAIT_S * 1000, &img, &len),
                 TJ_ERR_NOT_FOUND);
    CHECK(tj_clock_ms() - t0 < 5000);
    CHECK_EQ_INT(reap(pid), 0);

    /* The timeout bounds the wait on a holder that never finishes. */
    pid = holder("never", 'k', 0);
    t0 = tj_clock_ms();
    CHECK_EQ_INT(tj_store_wait(s, TC, ARCH, "never", 300, &img, &len), TJ_ERR_BUSY);
    dt = tj_clock_ms() - t0;
    CHECK(dt >= 290 && dt < 1500);
    CHECK_EQ_INT(tj_store_wait(s, TC, ARCH, "never", 0, &img, &len), TJ_ERR_BUSY);
    /* Killed while others wait: the waiter sees its lock stale and returns. */
    if (fork() == 0) {
        tj_clock_sleep_ms(300);
        kill(pid, SIGKILL);
        _exit(0);
    }
    t0 = tj_clock_ms();
    CHECK_EQ_INT(tj_store_wait(s, TC, ARCH, "never", WAIT_S * 1000, &img, &len), TJ_ERR_NOT_FOUND);
    CHECK(tj_clock_ms() - t0 < 5000);
    CHECK_EQ_INT(reap(pid), 128 + SIGKILL);
    while (wait(NULL) > 0)
        ;
    /* No lock and no entry: at once. */
    CHECK_EQ_INT(tj_store_wait(s, TC, ARCH, "nobody", WAIT_S * 1000, &img, &len), TJ_ERR_NOT_FOUND);
    tj_store_close(s);
}

/* What src/kernels/lookup.c does in sync mode, with a "compile" that takes 50 ms and is counted
 * in a file: NPROC processes released at once each want all NKEYS kernels. */
static int get_kernel(tj_store_t *s, const char *key, int count_fd)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        tj_store_lock_t *l = NULL;
        void *img = NULL;
        size_t len;
        tj_status_t st;

        if (tj_store_load(s, TC, ARCH, key, &img, &len) == TJ_OK)
            goto out_check;
        st = tj_store_lock(s, TC, ARCH, key, &l);
        if (st == TJ_ERR_BUSY) {
            st = tj_store_wait(s, TC, ARCH, key, WAIT_S * 1000, &img, &len);
            if (st == TJ_OK)
                goto out_check;
            if (st == TJ_ERR_NOT_FOUND)
                continue; /* the holder gave up: take the lock ourselves */
            return 1;     /* a timeout: never in this test */
        }
        if (st != TJ_OK)
            return 1;
        /* Stored by someone between our load and our lock? */
        if (tj_store_load(s, TC, ARCH, key, &img, &len) == TJ_OK) {
            tj_store_unlock(l);
            goto out_check;
        }
        tj_clock_sleep_ms(50);
        if (write(count_fd, "c", 1) != 1 ||
            tj_store_save(s, TC, ARCH, key, key, strlen(key), NULL) != TJ_OK)
            return 1;
        tj_store_unlock(l);
        return 0;
    out_check:
        st = len == strlen(key) && memcmp(img, key, len) == 0 ? TJ_OK : TJ_ERR_CORRUPT;
        free(img);
        return st == TJ_OK ? 0 : 1;
    }
    return 1;
}

static void test_once_per_kernel(void)
{
    char count_path[300], key[64];
    int start[2], count_fd;
    pid_t pids[NPROC];
    struct stat st;

    snprintf(count_path, sizeof(count_path), "%s/compiles", base);
    count_fd = open(count_path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0600);
    REQUIRE(count_fd >= 0 && pipe(start) == 0);
    for (int p = 0; p < NPROC; p++) {
        pids[p] = fork();
        REQUIRE(pids[p] >= 0);
        if (pids[p] == 0) {
            tj_store_t *s;
            int bad = 0;
            char c;
            close(start[1]);
            while (read(start[0], &c, 1) < 0 && errno == EINTR)
                ;
            s = open_rw();
            for (int k = 0; k < NKEYS; k++) {
                snprintf(key, sizeof(key), "kernel %d", (k + p) % NKEYS);
                bad += get_kernel(s, key, count_fd);
            }
            tj_store_close(s);
            _exit(bad ? 1 : 0);
        }
    }
    close(start[0]);
    close(start[1]); /* go */
    for (int p = 0; p < NPROC; p++)
        CHECK_EQ_INT(reap(pids[p]), 0);
    close(count_fd);
    REQUIRE(stat(count_path, &st) == 0);
    CHECK_EQ_INT(st.st_size, NKEYS); /* each kernel compiled exactly once */
}

int main(void)
{
    tempdir_make("lock", base, sizeof(base));
    snprintf(root, sizeof(root), "%s/cache", base);

    test_exclusion();
    test_dead_holders();
    test_forged();
    test_wait();
    test_once_per_kernel();

    CHECK(tempdir_remove(base));
    CHECK_DONE();
}
