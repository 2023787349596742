/* SPDX-License-Identifier: BSD-3-Clause */
/* Concurrency test of the on-disk kernel cache: 8 processes released at once load, "compile",
 * save and reload the same 60 keys (images of 1 B to 300 KiB) and append the same manifest lines.
 * Every load must be a clean miss or exactly the right bytes: never torn, never corrupt. */
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache/entry.h"
#include "cache/hash.h"
#include "cache/manifest.h"
#include "cache/store.h"
#include "cache/walk.h"
#include "check.h"
#include "tempdir.h"

#define NPROC   8
#define NKEYS   60
#define NLINES  20
#define MAX_LEN (300 * 1024)
#define TC      "nvrtc-13.0"
#define ARCH    "sm_90"

static char base[64];
static char root[256];

static void key_text(int i, char *out, size_t size)
{
    /* Long keys like the real ones, differing only near the end. */
    snprintf(out, size,
             "typejit 0.1.0 template 3 nvrtc 13.0 arch sm_90 options -default-device "
             "block start=0 extent=4096 counts=8,%d strides=1,64 W=8 pack",
             i);
}

/* Image sizes from 1 byte to 300 KiB: the ends exactly, the rest spread between. */
static size_t image_len(int i)
{
    if (i == 0)
        return 1;
    if (i == 1)
        return MAX_LEN;
    return 1 + (size_t)(tj_hash_bytes(&i, sizeof(i)).lo % MAX_LEN);
}

/* The "compiler": bytes derived from the key alone, so any mix-up shows. */
static void *compile(const char *key, size_t len)
{
    unsigned char *p = malloc(len);
    uint64_t x = tj_hash_bytes(key, strlen(key)).hi | 1;

    if (p == NULL)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (unsigned char)(x >> 24);
    }
    return p;
}

/* Load @p key: TJ_ERR_NOT_FOUND, or TJ_OK with exactly the expected bytes; else a failure. */
static int check_load(tj_store_t *s, const char *key, size_t len, const void *want, bool *hit)
{
    void *img = NULL;
    size_t got = 0;
    tj_status_t st = tj_store_load(s, TC, ARCH, key, &img, &got);
    int bad = 0;

    *hit = st == TJ_OK;
    if (st == TJ_OK && (got != len || memcmp(img, want, len) != 0)) {
        fprintf(stderr, "[%d] wrong bytes for \"%s\": %zu bytes, want %zu\n", (int)getpid(), key,
                got, len);
        bad = 1;
    } else if (st != TJ_OK && st != TJ_ERR_NOT_FOUND) {
        fprintf(stderr, "[%d] load of \"%s\": %s\n", (int)getpid(), key, tj_status_string(st));
        bad = 1;
    }
    free(img);
    return bad;
}

static int child(int id, int start_fd)
{
    tj_store_t *s = NULL;
    char key[256], line[64];
    int failures = 0, misses = 0;
    ssize_t r;
    char c;

    /* Wait until the parent has forked everyone and closes the pipe. */
    do
        r = read(start_fd, &c, 1);
    while (r < 0 && errno == EINTR);
    close(start_fd);

    if (tj_store_open(root, TJ_STORE_RW, &s) != TJ_OK) {
        fprintf(stderr, "[%d] cannot open the store\n", id);
        return 1;
    }
    for (int n = 0; n < NKEYS; n++) {
        /* Each process walks the keys from a different place, so that loads meet writes. */
        int i = (n + id * NKEYS / NPROC) % NKEYS;
        size_t len = image_len(i);
        void *want;
        bool hit;

        key_text(i, key, sizeof(key));
        want = compile(key, len);
        if (want == NULL)
            return 1;
        failures += check_load(s, key, len, want, &hit);
        /* On a miss, save what we compiled; some processes also rewrite a hit, so that renames
         * over an entry meet readers of it. */
        if (!hit || (i + id) % 3 == 0) {
            misses += !hit;
            if (tj_store_save(s, TC, ARCH, key, want, len, (i % 4) ? NULL : "// source") != TJ_OK) {
                fprintf(stderr, "[%d] save of \"%s\" failed\n", id, key);
                failures++;
            }
            failures += check_load(s, key, len, want, &hit);
            if (!hit) {
                fprintf(stderr, "[%d] no hit right after saving \"%s\"\n", id, key);
                failures++;
            }
        }
        free(want);
        if (n % 3 == 0) {
            snprintf(line, sizeof(line), "kernel line %d", (n / 3 + id) % NLINES);
            if (tj_store_manifest_add(s, line) != TJ_OK)
                failures++;
        }
    }
    for (int l = 0; l < NLINES; l++) {
        snprintf(line, sizeof(line), "kernel line %d", l);
        if (tj_store_manifest_add(s, line) != TJ_OK)
            failures++;
    }
    tj_store_close(s);
    printf("process %d: %d misses, %d failures\n", id, misses, failures);
    return failures ? 1 : 0;
}

typedef struct {
    int count[NLINES];
    int other;
} seen_t;

static void seen_line(const char *line, void *arg)
{
    seen_t *seen = arg;
    int l;

    if (sscanf(line, "kernel line %d", &l) == 1 && l >= 0 && l < NLINES)
        seen->count[l]++;
    else
        seen->other++;
}

static long nfiles;
static int count_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)path;
    (void)st;
    (void)ftw;
    nfiles += flag == FTW_F || flag == FTW_SL;
    return 0;
}

int main(void)
{
    pid_t pids[NPROC];
    tj_store_t *s = NULL;
    tj_store_stats_t stats;
    seen_t seen;
    char key[256], tmp[300];
    int pipefd[2];

    umask(077);
    tempdir_make("concurrent", base, sizeof(base));
    /* The root does not exist yet: the processes race to create it too. */
    snprintf(root, sizeof(root), "%s/cache", base);

    REQUIRE(pipe(pipefd) == 0);
    fflush(stdout);
    fflush(stderr);
    for (int p = 0; p < NPROC; p++) {
        pids[p] = fork();
        REQUIRE(pids[p] >= 0);
        if (pids[p] == 0) {
            close(pipefd[1]);
            exit(child(p, pipefd[0]));
        }
    }
    close(pipefd[0]);
    close(pipefd[1]); /* go */
    for (int p = 0; p < NPROC; p++) {
        int status;
        pid_t w;
        do
            w = waitpid(pids[p], &status, 0);
        while (w < 0 && errno == EINTR);
        REQUIRE(w == pids[p]);
        CHECK(WIFEXITED(status));
        if (WIFEXITED(status))
            CHECK_EQ_INT(WEXITSTATUS(status), 0);
    }

    /* Afterwards every entry is there, valid and exact, and nothing is left in tmp/. */
    REQUIRE(tj_store_open(root, TJ_STORE_RO, &s) == TJ_OK);
    for (int i = 0; i < NKEYS; i++) {
        size_t len = image_len(i);
        void *want;
        bool hit;
        key_text(i, key, sizeof(key));
        want = compile(key, len);
        REQUIRE(want != NULL);
        CHECK_EQ_INT(check_load(s, key, len, want, &hit), 0);
        CHECK(hit);
        free(want);
    }
    CHECK_EQ_INT(tj_store_stats(s, false, &stats), TJ_OK);
    CHECK_EQ_INT(stats.entries, NKEYS);
    CHECK_EQ_INT(stats.invalid, 0);
    CHECK_EQ_INT(stats.sources, NKEYS / 4);
    snprintf(tmp, sizeof(tmp), "%s/tmp", root);
    nfiles = 0;
    REQUIRE(nftw(tmp, count_one, 8, FTW_PHYS) == 0);
    CHECK_EQ_INT(nfiles, 0);

    /* Duplicates across processes may be in the file; the reader returns each line once. */
    memset(&seen, 0, sizeof(seen));
    CHECK_EQ_INT(tj_store_manifest_read(s, seen_line, &seen), TJ_OK);
    for (int l = 0; l < NLINES; l++)
        CHECK_EQ_INT(seen.count[l], 1);
    CHECK_EQ_INT(seen.other, 0);
    tj_store_close(s);

    REQUIRE(tempdir_remove(base));
    CHECK_DONE();
}
