/* SPDX-License-Identifier: BSD-3-Clause */
/* Trimming the kernel cache: the most recently used entries are kept, valid, and everything
 * older goes; the manifest keeps exactly the lines of kernels still cached (and lines it never
 * had an entry for); entries with a live compile lock stay; a load marks an entry used;
 * TYPEJIT_CACHE_MAX_SIZE trims once per process. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/entry.h"
#include "cache/hash.h"
#include "cache/lock.h"
#include "cache/manifest.h"
#include "cache/store.h"
#include "cache/trim.h"
#include "cache/walk.h"
#include "check.h"
#include "tempdir.h"
#include "util/config.h"

#define TC     "nvrtc-13.0"
#define TC_OLD "nvrtc-12.4"
#define ARCH   "sm_90"
#define NKEYS  20
#define IMAGE  1000

static char base[64];
static char root[256];

/* A key in the form of src/kernels/key.c's (header lines, a blank line, the source), and the
 * manifest line of the same kernel, which the key carries. The source holds a line that looks
 * like a header line: only the header counts. */
static void key_of(int i, char *key, size_t klen, char *line, size_t llen)
{
    snprintf(line, llen, ARCH " %s W=8 start=0 extent=4096 counts=%d,16 strides=1,256",
             i % 2 ? "unpack" : "pack", i + 1);
    snprintf(key, klen,
             "typejit kernel 2\nnvrtc=13.0 build=x\noptions=-default-device\ntarget=" ARCH
             "\nfunction=tj_pack\nmanifest=%s\n\n"
             "manifest=" ARCH " pack W=8 start=0 extent=8 counts=8 strides=1\n"
             "extern \"C\" __global__ void tj_pack(void *dst, const void *src, long long n) {}\n",
             line);
}

static void entry_path(const char *tc, const char *key, const char *suffix, char *out, size_t size)
{
    char hex[33];

    tj_hash_hex(tj_hash_bytes(key, strlen(key)), hex);
    snprintf(out, size, "%s/%s/%s/%s%s", root, tc, ARCH, hex, suffix);
}

/* Set the access and modification times of @p path to @p atime and @p mtime seconds ago. */
static void age(const char *path, long atime, long mtime)
{
    struct timespec t[2];
    time_t now = time(NULL);

    t[0].tv_sec = now - atime;
    t[1].tv_sec = now - mtime;
    t[0].tv_nsec = t[1].tv_nsec = 0;
    REQUIRE(utimensat(AT_FDCWD, path, t, 0) == 0);
}

static long manifest_has(const char *line)
{
    char path[300], buf[8192];
    long n = 0;
    FILE *f;

    snprintf(path, sizeof(path), "%s/manifest.txt", root);
    if ((f = fopen(path, "r")) == NULL)
        return 0;
    while (fgets(buf, sizeof(buf), f) != NULL) {
        buf[strcspn(buf, "\n")] = '\0';
        n += strcmp(buf, line) == 0;
    }
    fclose(f);
    return n;
}

static bool loads(tj_store_t *s, const char *tc, const char *key)
{
    void *img = NULL;
    size_t len = 0;
    tj_status_t st = tj_store_load(s, tc, ARCH, key, &img, &len);

    free(img);
    return st == TJ_OK && len == IMAGE;
}

/* NKEYS entries, entry i last used i minutes ago (so 0 is the newest), each with its manifest
 * line; a source beside the even ones; and a manifest line with no entry at all. */
static long long fill(tj_store_t *s)
{
    char key[1024], line[512], path[512];
    static char image[IMAGE];
    long long bytes = 0;
    struct stat st;

    memset(image, 0x5a, sizeof(image));
    for (int i = 0; i < NKEYS; i++) {
        key_of(i, key, sizeof(key), line, sizeof(line));
        REQUIRE(tj_store_save(s, TC, ARCH, key, image, IMAGE, i % 2 ? NULL : "// src") == TJ_OK);
        REQUIRE(tj_store_manifest_add(s, line) == TJ_OK);
        entry_path(TC, key, ".bin", path, sizeof(path));
        /* Even entries: the access time tells (later than the write); odd ones: on a noatime
         * mount, the modification time (the access time is older). */
        if (i % 2 == 0)
            age(path, 60 * i + 30, 100000);
        else
            age(path, 100000, 60 * i + 30);
        REQUIRE(stat(path, &st) == 0);
        bytes += st.st_size;
        if (i % 2 == 0) {
            entry_path(TC, key, ".cu", path, sizeof(path));
            REQUIRE(stat(path, &st) == 0);
            bytes += st.st_size;
        }
    }
    REQUIRE(tj_store_manifest_add(s, ARCH " pack W=8 start=0 extent=64 counts=8 strides=1") ==
            TJ_OK);
    return bytes;
}

static void check_after(tj_store_t *s, int keep)
{
    char key[1024], line[512], path[512];
    tj_store_stats_t stats;

    for (int i = 0; i < NKEYS; i++) {
        key_of(i, key, sizeof(key), line, sizeof(line));
        entry_path(TC, key, ".cu", path, sizeof(path));
        if (i < keep) {
            CHECK(loads(s, TC, key));
            CHECK_EQ_INT(manifest_has(line), 1);
            CHECK(i % 2 == 1 || access(path, F_OK) == 0);
        } else {
            CHECK(!loads(s, TC, key));
            CHECK_EQ_INT(manifest_has(line), 0);
            CHECK(access(path, F_OK) != 0); /* its source went with it */
        }
    }
    CHECK_EQ_INT(manifest_has(ARCH " pack W=8 start=0 extent=64 counts=8 strides=1"), 1);
    memset(&stats, 0, sizeof(stats));
    CHECK_EQ_INT(tj_store_stats(s, false, &stats), TJ_OK);
    CHECK_EQ_INT(stats.entries, keep);
    CHECK_EQ_INT(stats.invalid, 0);
}

static void test_lru(void)
{
    tj_store_t *s = NULL;
    tj_store_trim_t r;
    long long total, per;
    long lines, distinct;

    REQUIRE(tj_store_open(root, TJ_STORE_RW, &s) == TJ_OK);
    total = fill(s);
    per = total / NKEYS; /* about one entry (sources make even ones larger) */

    /* Large enough for everything: nothing goes. */
    CHECK_EQ_INT(tj_store_trim(s, total, &r), TJ_OK);
    CHECK_EQ_INT(r.removed, 0);
    CHECK_EQ_INT(r.kept, NKEYS);
    CHECK_EQ_INT(r.kept_bytes, total);
    CHECK_EQ_INT(r.lines_dropped, 0);

    /* Room for 12 entries: the 12 used last stay, whatever clock told (atime or mtime). */
    CHECK_EQ_INT(tj_store_trim(s, 12 * per + per / 2, &r), TJ_OK);
    CHECK_EQ_INT(r.kept, 12);
    CHECK_EQ_INT(r.removed, NKEYS - 12);
    CHECK_EQ_INT(r.lines_dropped, NKEYS - 12);
    CHECK(r.kept_bytes <= 12 * per + per / 2);
    CHECK_EQ_INT(r.kept_bytes + r.freed, total);
    check_after(s, 12);
    CHECK_EQ_INT(tj_store_manifest_count(s, &lines, &distinct), TJ_OK);
    CHECK_EQ_INT(lines, 13);

    /* A line this store knew and trim dropped can be added again. */
    {
        char key[1024], line[512];
        key_of(NKEYS - 1, key, sizeof(key), line, sizeof(line));
        CHECK_EQ_INT(tj_store_manifest_add(s, line), TJ_OK);
        CHECK_EQ_INT(manifest_has(line), 1);
    }
    CHECK_EQ_INT(tj_store_clear(s), TJ_OK);
    tj_store_close(s);
}

/* A load marks the entry used, so that it outlives older ones. */
static void test_load_touches(void)
{
    char key[1024], line[512], path[512];
    tj_store_t *s = NULL;
    tj_store_trim_t r;
    struct stat st;

    REQUIRE(tj_store_open(root, TJ_STORE_RW, &s) == TJ_OK);
    (void)fill(s);
    key_of(NKEYS - 1, key, sizeof(key), line, sizeof(line)); /* the oldest */
    entry_path(TC, key, ".bin", path, sizeof(path));
    CHECK(loads(s, TC, key));
    REQUIRE(stat(path, &st) == 0);
    CHECK(st.st_atime >= time(NULL) - 5);
    CHECK_EQ_INT(tj_store_trim(s, 3000, &r), TJ_OK); /* about two entries */
    CHECK(loads(s, TC, key));
    CHECK_EQ_INT(manifest_has(line), 1);
    key_of(0, key, sizeof(key), line, sizeof(line));
    CHECK(loads(s, TC, key));
    CHECK_EQ_INT(r.kept, 2);
    /* Trimming to nothing removes everything (the walk reads keys without touching atimes). */
    CHECK_EQ_INT(tj_store_trim(s, 0, &r), TJ_OK);
    CHECK_EQ_INT(r.kept, 0);
    CHECK_EQ_INT(r.kept_bytes, 0);
    CHECK_EQ_INT(manifest_has(line), 0);
    CHECK_EQ_INT(tj_store_clear(s), TJ_OK);
    tj_store_close(s);
}

/* A live lock keeps its entry; an invalid entry goes first; a kernel left in another toolchain
 * keeps its manifest line. */
static void test_locked_invalid_toolchains(void)
{
    char key[1024], line[512], path[512], key1[1024], line1[512];
    static char image[IMAGE];
    tj_store_t *s = NULL;
    tj_store_lock_t *l = NULL;
    tj_store_trim_t r;
    FILE *f;

    REQUIRE(tj_store_open(root, TJ_STORE_RW, &s) == TJ_OK);
    (void)fill(s);
    /* The oldest entry is being recompiled by a live process (this one). */
    key_of(NKEYS - 1, key, sizeof(key), line, sizeof(line));
    REQUIRE(tj_store_lock(s, TC, ARCH, key, &l) == TJ_OK);
    /* The newest entry is damaged. */
    key_of(0, key1, sizeof(key1), line1, sizeof(line1));
    entry_path(TC, key1, ".bin", path, sizeof(path));
    REQUIRE((f = fopen(path, "r+")) != NULL);
    fputs("JUNK", f);
    fclose(f);
    /* Entry 1 exists for an older toolchain too, used long ago. */
    memset(image, 1, sizeof(image));
    {
        char k1[1024], l1[512];
        key_of(1, k1, sizeof(k1), l1, sizeof(l1));
        REQUIRE(tj_store_save(s, TC_OLD, ARCH, k1, image, IMAGE, NULL) == TJ_OK);
        entry_path(TC_OLD, k1, ".bin", path, sizeof(path));
        age(path, 1000000, 1000000);
    }
    CHECK_EQ_INT(tj_store_trim(s, 5500, &r), TJ_OK);
    CHECK(loads(s, TC, key)); /* locked: kept though oldest */
    CHECK_EQ_INT(manifest_has(line), 1);
    CHECK_EQ_INT(r.busy, 1);
    CHECK(access(path, F_OK) != 0); /* the old toolchain's copy went */
    {
        char k1[1024], l1[512];
        key_of(1, k1, sizeof(k1), l1, sizeof(l1));
        CHECK(loads(s, TC, k1));           /* the current one stayed */
        CHECK_EQ_INT(manifest_has(l1), 1); /* and so did its line */
    }
    entry_path(TC, key1, ".bin", path, sizeof(path));
    CHECK(access(path, F_OK) != 0); /* the damaged one went first */
    tj_store_unlock(l);
    {
        tj_store_stats_t stats;
        memset(&stats, 0, sizeof(stats));
        CHECK_EQ_INT(tj_store_stats(s, false, &stats), TJ_OK);
        CHECK_EQ_INT(stats.invalid, 0);
        CHECK_EQ_INT(stats.entries, r.kept);
    }
    CHECK_EQ_INT(tj_store_clear(s), TJ_OK);
    tj_store_close(s);
}

/* TYPEJIT_CACHE_MAX_SIZE: the first call trims to 90% of it, later calls do nothing. */
static void test_if_needed(void)
{
    tj_store_t *s = NULL;
    tj_config_t cfg = *tj_config();
    tj_store_stats_t stats;
    long long total;

    REQUIRE(tj_store_open(root, TJ_STORE_RW, &s) == TJ_OK);
    total = fill(s);
    cfg.cache_max_size = total / 2;
    tj_config_set(&cfg);
    CHECK_EQ_INT(tj_store_trim_if_needed(s), TJ_OK);
    memset(&stats, 0, sizeof(stats));
    CHECK_EQ_INT(tj_store_stats(s, false, &stats), TJ_OK);
    CHECK(stats.bytes <= total / 2 / 100 * 90);
    CHECK(stats.entries >= NKEYS / 2 - 3 && stats.entries < NKEYS / 2);
    check_after(s, (int)stats.entries);
    /* Once per process. */
    cfg.cache_max_size = 1;
    tj_config_set(&cfg);
    CHECK_EQ_INT(tj_store_trim_if_needed(s), TJ_OK);
    memset(&stats, 0, sizeof(stats));
    CHECK_EQ_INT(tj_store_stats(s, false, &stats), TJ_OK);
    CHECK(stats.entries > 0);
    cfg.cache_max_size = 0;
    tj_config_set(&cfg);
    tj_store_close(s);
}

int main(void)
{
    tempdir_make("trim", base, sizeof(base));
    snprintf(root, sizeof(root), "%s/cache", base);

    test_lru();
    test_load_touches();
    test_locked_invalid_toolchains();
    test_if_needed();

    CHECK(tempdir_remove(base));
    CHECK_DONE();
}
