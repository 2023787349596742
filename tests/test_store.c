/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the on-disk kernel cache: round trips, every kind of damaged or foreign entry
 * (each a miss that the next save repairs), read-only stores, directory and entry permissions,
 * symbolic links, path components, the manifest, stats and clear. Each run works in a fresh
 * mkdtemp folder under /tmp and removes it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/entry.h"
#include "cache/hash.h"
#include "cache/manifest.h"
#include "cache/store.h"
#include "cache/walk.h"
#include "check.h"
#include "tempdir.h"

#define TC   "nvrtc-13.0"
#define ARCH "sm_90"

static char base[64];  /* the mkdtemp folder */
static char root[256]; /* the store root inside it, created by the first RW open */

static void path_of(const char *key, const char *suffix, char *out, size_t size)
{
    char hex[33];

    tj_hash_hex(tj_hash_bytes(key, strlen(key)), hex);
    snprintf(out, size, "%s/%s/%s/%s%s", root, TC, ARCH, hex, suffix);
}

/* Deterministic image bytes for a key, so that a wrong entry cannot look right. */
static void *image_for(const char *key, size_t len)
{
    unsigned char *p = malloc(len > 0 ? len : 1);
    uint64_t x = tj_hash_bytes(key, strlen(key)).lo | 1;

    REQUIRE(p != NULL);
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (unsigned char)x;
    }
    return p;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (f == NULL)
        return NULL;
    REQUIRE(fseek(f, 0, SEEK_END) == 0);
    n = ftell(f);
    REQUIRE(n >= 0 && fseek(f, 0, SEEK_SET) == 0);
    buf = malloc((size_t)n + 1);
    REQUIRE(buf != NULL);
    REQUIRE(fread(buf, 1, (size_t)n, f) == (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Replace the contents of @p path in place (same inode, same mode and owner). */
static void overwrite(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_TRUNC);

    REQUIRE(fd >= 0);
    REQUIRE(write(fd, data, len) == (ssize_t)len);
    close(fd);
}

static void flip_byte(const char *path, long offset)
{
    size_t len;
    char *buf = slurp(path, &len);

    REQUIRE(buf != NULL);
    if (offset < 0)
        offset += (long)len;
    REQUIRE(offset >= 0 && (size_t)offset < len);
    buf[offset] ^= 0x20;
    overwrite(path, buf, len);
    free(buf);
}

static void put_u32(const char *path, long offset, uint32_t v)
{
    int fd = open(path, O_WRONLY);

    REQUIRE(fd >= 0);
    REQUIRE(pwrite(fd, &v, sizeof(v), offset) == (ssize_t)sizeof(v));
    close(fd);
}

static void truncate_to(const char *path, off_t len)
{
    REQUIRE(truncate(path, len) == 0);
}

static void save(tj_store_t *s, const char *key, size_t len, const char *source)
{
    void *img = image_for(key, len);
    CHECK_EQ_INT(tj_store_save(s, TC, ARCH, key, img, len, source), TJ_OK);
    free(img);
}

/* Load @p key and require exactly the bytes image_for() makes. */
static void expect_hit(tj_store_t *s, const char *key, size_t len)
{
    void *img = NULL, *want = image_for(key, len);
    size_t got = 0;
    tj_status_t st = tj_store_load(s, TC, ARCH, key, &img, &got);

    CHECK_EQ_INT(st, TJ_OK);
    if (st == TJ_OK) {
        CHECK_EQ_INT(got, len);
        CHECK(got == len && memcmp(img, want, len) == 0);
    }
    free(img);
    free(want);
}

static void expect_miss(tj_store_t *s, const char *key, tj_status_t want)
{
    void *img = NULL;
    size_t got = 0;

    CHECK_EQ_INT(tj_store_load(s, TC, ARCH, key, &img, &got), want);
    CHECK(img == NULL);
}

/* Files below @p dir (any depth), not counting folders. */
static long nfiles;
static int count_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)path;
    (void)st;
    (void)ftw;
    if (flag == FTW_F || flag == FTW_SL)
        nfiles++;
    return 0;
}

static long count_files(const char *dir)
{
    nfiles = 0;
    REQUIRE(nftw(dir, count_one, 16, FTW_PHYS) == 0);
    return nfiles;
}

static long count_lines(const char *path)
{
    size_t len;
    char *text = slurp(path, &len);
    long n = 0;

    if (text == NULL)
        return -1;
    for (size_t i = 0; i < len; i++)
        n += text[i] == '\n';
    free(text);
    return n;
}

/* Collects what manifest_read delivers. */
typedef struct {
    int n;
    char lines[16][128];
} lines_t;

static void collect(const char *line, void *arg)
{
    lines_t *l = arg;
    REQUIRE(l->n < 16 && strlen(line) < 128);
    strcpy(l->lines[l->n++], line);
}

static int find_line(const lines_t *l, const char *line)
{
    int hits = 0;
    for (int i = 0; i < l->n; i++)
        hits += strcmp(l->lines[i], line) == 0;
    return hits;
}

static void test_open_modes(void)
{
    tj_store_t *s = NULL;
    struct stat st;
    char nested[300];
    mode_t old;

    /* A read-only store on nothing is a normal "nothing cached" state. */
    CHECK_EQ_INT(tj_store_open(root, TJ_STORE_RO, &s), TJ_ERR_NOT_FOUND);

    /* RW creates every missing level with mode 0700, whatever the umask. */
    old = umask(0277);
    snprintf(nested, sizeof(nested), "%s/a/b/c", base);
    CHECK_EQ_INT(tj_store_open(nested, TJ_STORE_RW, &s), TJ_OK);
    umask(old);
    REQUIRE(s != NULL);
    CHECK(strcmp(tj_store_dir(s), nested) == 0);
    tj_store_close(s);
    REQUIRE(stat(nested, &st) == 0);
    CHECK(S_ISDIR(st.st_mode));
    CHECK_EQ_INT(st.st_mode & 07777, 0700);
    CHECK_EQ_INT(st.st_uid, geteuid());
    snprintf(nested, sizeof(nested), "%s/a", base);
    REQUIRE(stat(nested, &st) == 0);
    CHECK_EQ_INT(st.st_mode & 07777, 0700);

    s = NULL;
    CHECK_EQ_INT(tj_store_open(root, TJ_STORE_RW, &s), TJ_OK);
    REQUIRE(s != NULL);
    tj_store_close(s);
    REQUIRE(stat(root, &st) == 0);
    CHECK_EQ_INT(st.st_mode & 07777, 0700);

    /* A root that others may write is refused, in both modes. */
    REQUIRE(chmod(root, 0777) == 0);
    s = NULL;
    CHECK_EQ_INT(tj_store_open(root, TJ_STORE_RW, &s), TJ_ERR_UNTRUSTED);
    CHECK_EQ_INT(tj_store_open(root, TJ_STORE_RO, &s), TJ_ERR_UNTRUSTED);
    CHECK(s == NULL);
    REQUIRE(chmod(root, 0720) == 0);
    CHECK_EQ_INT(tj_store_open(root, TJ_STORE_RO, &s), TJ_ERR_UNTRUSTED);
    REQUIRE(chmod(root, 0700) == 0);

    CHECK_EQ_INT(tj_store_open("", TJ_STORE_RW, &s), TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_store_open(NULL, TJ_STORE_RW, &s), TJ_ERR_INVALID);
}

static void test_round_trip(tj_store_t *s)
{
    char path[512];
    struct stat st;
    size_t len;
    char *text;

    expect_miss(s, "key A", TJ_ERR_NOT_FOUND);
    save(s, "key A", 1000, "__global__ void a() {}\n");
    expect_hit(s, "key A", 1000);
    path_of("key A", ".bin", path, sizeof(path));
    REQUIRE(stat(path, &st) == 0);
    CHECK_EQ_INT(st.st_mode & 07777, 0600);
    CHECK_EQ_INT(st.st_size, 32 + strlen("key A") + 1000);

    path_of("key A", ".cu", path, sizeof(path));
    text = slurp(path, &len);
    CHECK(text != NULL && strcmp(text, "__global__ void a() {}\n") == 0);
    free(text);

    /* No source asked for: none written. Empty images are entries too. */
    save(s, "key B", 0, NULL);
    expect_hit(s, "key B", 0);
    path_of("key B", ".cu", path, sizeof(path));
    CHECK(access(path, F_OK) != 0);

    /* A key that differs only at the end is another entry. */
    expect_miss(s, "key A ", TJ_ERR_NOT_FOUND);
    /* Same key, other arch or toolchain: other entries. */
    {
        void *img = NULL;
        size_t n;
        CHECK_EQ_INT(tj_store_load(s, TC, "sm_80", "key A", &img, &n), TJ_ERR_NOT_FOUND);
        CHECK_EQ_INT(tj_store_load(s, "nvrtc-12.0", ARCH, "key A", &img, &n), TJ_ERR_NOT_FOUND);
    }

    /* A save over an existing entry replaces it. */
    save(s, "key A", 5000, NULL);
    expect_hit(s, "key A", 5000);
}

/* Damage the entry for "key C" in one way, check that it is a miss, then that a save repairs it. */
typedef enum { D_IMAGE, D_HEADER, D_KEY, D_TRUNC, D_EMPTY, D_MAGIC, D_VERSION, D_LONGER } damage_t;

static void test_damage(tj_store_t *s, damage_t d)
{
    const size_t len = 777;
    char path[512];

    save(s, "key C", len, NULL);
    expect_hit(s, "key C", len);
    path_of("key C", ".bin", path, sizeof(path));
    switch (d) {
    case D_IMAGE:
        flip_byte(path, -1);
        break;
    case D_HEADER:
        flip_byte(path, 24); /* the checksum */
        break;
    case D_KEY:
        flip_byte(path, 32);
        break;
    case D_TRUNC:
        truncate_to(path, 32 + 5 + 100);
        break;
    case D_EMPTY:
        truncate_to(path, 0);
        break;
    case D_MAGIC:
        flip_byte(path, 2);
        break;
    case D_VERSION:
        put_u32(path, 8, TJ_STORE_FORMAT_VERSION + 1);
        break;
    case D_LONGER:
        truncate_to(path, 32 + 5 + len + 1);
        break;
    }
    expect_miss(s, "key C", TJ_ERR_CORRUPT);
    save(s, "key C", len, NULL);
    expect_hit(s, "key C", len);
}

static void test_foreign(tj_store_t *s)
{
    char pa[512], pb[512];
    size_t len;
    char *bytes;

    save(s, "key D", 300, NULL);
    save(s, "key E", 300, NULL);
    path_of("key D", ".bin", pa, sizeof(pa));
    path_of("key E", ".bin", pb, sizeof(pb));
    bytes = slurp(pa, &len);
    REQUIRE(bytes != NULL);
    overwrite(pb, bytes, len);
    free(bytes);
    expect_miss(s, "key E", TJ_ERR_CORRUPT);
    expect_hit(s, "key D", 300);
    save(s, "key E", 300, NULL);
    expect_hit(s, "key E", 300);
}

static void test_permissions(tj_store_t *s)
{
    char path[512], other[512], tcdir[512];

    /* An entry that others could have written. */
    save(s, "key F", 400, NULL);
    path_of("key F", ".bin", path, sizeof(path));
    REQUIRE(chmod(path, 0666) == 0);
    expect_miss(s, "key F", TJ_ERR_UNTRUSTED);
    save(s, "key F", 400, NULL);
    expect_hit(s, "key F", 400);

    /* An entry that belongs to someone else (needs root to arrange). */
    if (geteuid() == 0) {
        REQUIRE(chown(path, 65534, 65534) == 0);
        expect_miss(s, "key F", TJ_ERR_UNTRUSTED);
        save(s, "key F", 400, NULL);
        expect_hit(s, "key F", 400);
    } else {
        printf("not root: skipping the foreign-owner check\n");
    }

    /* A symbolic link in place of an entry, even to a valid entry, is refused. */
    save(s, "key G", 400, NULL);
    path_of("key G", ".bin", path, sizeof(path));
    snprintf(other, sizeof(other), "%s/elsewhere.bin", base);
    REQUIRE(rename(path, other) == 0);
    REQUIRE(symlink(other, path) == 0);
    expect_miss(s, "key G", TJ_ERR_UNTRUSTED);
    save(s, "key G", 400, NULL);
    expect_hit(s, "key G", 400);
    {
        struct stat st;
        REQUIRE(lstat(path, &st) == 0);
        CHECK(S_ISREG(st.st_mode));
        CHECK(access(other, F_OK) == 0); /* the link's target was left alone */
    }

    /* A toolchain folder that others may write is refused. */
    snprintf(tcdir, sizeof(tcdir), "%s/%s", root, TC);
    REQUIRE(chmod(tcdir, 0757) == 0);
    expect_miss(s, "key G", TJ_ERR_UNTRUSTED);
    {
        void *img = image_for("key H", 10);
        CHECK_EQ_INT(tj_store_save(s, TC, ARCH, "key H", img, 10, NULL), TJ_ERR_UNTRUSTED);
        free(img);
    }
    REQUIRE(chmod(tcdir, 0700) == 0);
    expect_hit(s, "key G", 400);
}

static void test_components(tj_store_t *s)
{
    static const char *bad[] = {"../x", "a/b", "", ".", "..", "a b", "x\n", "/abs"};
    void *img = NULL;
    size_t n;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_EQ_INT(tj_store_load(s, bad[i], ARCH, "k", &img, &n), TJ_ERR_INVALID);
        CHECK_EQ_INT(tj_store_load(s, TC, bad[i], "k", &img, &n), TJ_ERR_INVALID);
        CHECK_EQ_INT(tj_store_save(s, bad[i], ARCH, "k", "x", 1, NULL), TJ_ERR_INVALID);
        CHECK_EQ_INT(tj_store_save(s, TC, bad[i], "k", "x", 1, NULL), TJ_ERR_INVALID);
    }
    CHECK_EQ_INT(tj_store_load(s, NULL, ARCH, "k", &img, &n), TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_store_save(s, TC, NULL, "k", "x", 1, NULL), TJ_ERR_INVALID);
    /* The root's own files cannot be a toolchain level. */
    CHECK_EQ_INT(tj_store_save(s, "tmp", ARCH, "k", "x", 1, NULL), TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_store_save(s, "manifest.txt", ARCH, "k", "x", 1, NULL), TJ_ERR_INVALID);
    CHECK(img == NULL);
}

static void test_read_only(void)
{
    tj_store_t *ro = NULL;
    long before = count_files(root);
    char path[512];

    CHECK_EQ_INT(tj_store_open(root, TJ_STORE_RO, &ro), TJ_OK);
    REQUIRE(ro != NULL);
    expect_hit(ro, "key A", 5000);
    {
        void *img = image_for("key RO", 10);
        CHECK_EQ_INT(tj_store_save(ro, TC, ARCH, "key RO", img, 10, "src"), TJ_ERR_UNSUPPORTED);
        free(img);
    }
    CHECK_EQ_INT(tj_store_manifest_add(ro, "ro line"), TJ_ERR_UNSUPPORTED);
    CHECK_EQ_INT(tj_store_clear(ro), TJ_ERR_UNSUPPORTED);
    {
        tj_store_stats_t st;
        CHECK_EQ_INT(tj_store_stats(ro, true, &st), TJ_ERR_UNSUPPORTED);
        CHECK_EQ_INT(tj_store_stats(ro, false, &st), TJ_OK);
    }
    tj_store_close(ro);
    path_of("key RO", ".bin", path, sizeof(path));
    CHECK(access(path, F_OK) != 0);
    CHECK_EQ_INT(count_files(root), before);
}

static void test_manifest(tj_store_t *s)
{
    /* One byte longer than the longest line the manifest takes. */
    static char more[TJ_STORE_LINE_MAX + 2];
    char path[512];
    tj_store_t *second = NULL;
    lines_t got;
    FILE *f;

    snprintf(path, sizeof(path), "%s/manifest.txt", root);
    memset(&got, 0, sizeof(got));
    CHECK_EQ_INT(tj_store_manifest_read(s, collect, &got), TJ_ERR_NOT_FOUND);

    CHECK_EQ_INT(tj_store_manifest_add(s, "block=1 W=8 pack sm_90"), TJ_OK);
    CHECK_EQ_INT(tj_store_manifest_add(s, "block=1 W=8 pack sm_90"), TJ_OK);
    CHECK_EQ_INT(count_lines(path), 1);

    /* A second store in the same process learns the line from the file. */
    CHECK_EQ_INT(tj_store_open(root, TJ_STORE_RW, &second), TJ_OK);
    REQUIRE(second != NULL);
    CHECK_EQ_INT(tj_store_manifest_add(second, "block=1 W=8 pack sm_90"), TJ_OK);
    CHECK_EQ_INT(count_lines(path), 1);
    CHECK_EQ_INT(tj_store_manifest_add(second, "block=2 W=4 unpack sm_80"), TJ_OK);
    CHECK_EQ_INT(tj_store_manifest_add(second, "block=2 W=4 unpack sm_80"), TJ_OK);
    CHECK_EQ_INT(count_lines(path), 2);
    /* A line another writer appended after this store first read the file is not appended
     * again (concurrent warms, the ranks of a job): the store catches up under the file lock. */
    CHECK_EQ_INT(tj_store_manifest_add(s, "block=4 W=2 pack sm_90"), TJ_OK);
    CHECK_EQ_INT(tj_store_manifest_add(second, "block=4 W=2 pack sm_90"), TJ_OK);
    CHECK_EQ_INT(count_lines(path), 3);
    {
        long lines = 0, distinct = 0;
        CHECK_EQ_INT(tj_store_manifest_count(second, &lines, &distinct), TJ_OK);
        CHECK_EQ_INT(lines, 3);
        CHECK_EQ_INT(distinct, 3);
    }
    tj_store_close(second);

    /* Lines the store would not write are refused. */
    CHECK_EQ_INT(tj_store_manifest_add(s, "two\nlines"), TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_store_manifest_add(s, ""), TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_store_manifest_add(s, "   "), TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_store_manifest_add(s, "tab\there"), TJ_ERR_INVALID);
    CHECK_EQ_INT(count_lines(path), 3);

    /* A file with duplicates (from other processes), blank, binary and over-long lines, and a
     * last line without its newline: the reader returns each good line once. */
    f = fopen(path, "a");
    REQUIRE(f != NULL);
    memset(more, 'x', sizeof(more) - 1);
    more[sizeof(more) - 1] = '\0';
    fprintf(f, "block=1 W=8 pack sm_90\n\n   \nbin\001ary\n%s\nblock=3 W=1 pack sm_70", more);
    fclose(f);
    CHECK_EQ_INT(tj_store_manifest_read(s, collect, &got), TJ_OK);
    CHECK_EQ_INT(got.n, 4);
    CHECK_EQ_INT(find_line(&got, "block=1 W=8 pack sm_90"), 1);
    CHECK_EQ_INT(find_line(&got, "block=2 W=4 unpack sm_80"), 1);
    CHECK_EQ_INT(find_line(&got, "block=3 W=1 pack sm_70"), 1);

    /* The next line appended starts on a line of its own, after that unterminated one. */
    CHECK_EQ_INT(tj_store_manifest_add(s, "block=5 W=1 pack sm_80"), TJ_OK);
    got.n = 0;
    CHECK_EQ_INT(tj_store_manifest_read(s, collect, &got), TJ_OK);
    CHECK_EQ_INT(got.n, 5);
    CHECK_EQ_INT(find_line(&got, "block=3 W=1 pack sm_70"), 1);
    CHECK_EQ_INT(find_line(&got, "block=5 W=1 pack sm_80"), 1);
}

static void test_stats_and_clear(tj_store_t *s)
{
    tj_store_stats_t st;
    char path[512], tmpdir[512];
    struct stat sb;
    long bytes = 0;
    lines_t got;

    CHECK_EQ_INT(tj_store_clear(s), TJ_OK);
    memset(&st, 0x55, sizeof(st));
    CHECK_EQ_INT(tj_store_stats(s, false, &st), TJ_OK);
    CHECK_EQ_INT(st.entries, 0);
    CHECK_EQ_INT(st.bytes, 0);
    CHECK_EQ_INT(st.invalid, 0);
    CHECK_EQ_INT(st.sources, 0);

    save(s, "stat 1", 100, "source one");
    save(s, "stat 2", 200, "source two!");
    save(s, "stat 3", 300, NULL);
    save(s, "stat 4", 400, NULL);
    bytes = (32 + 6 + 100) + (32 + 6 + 200) + (32 + 6 + 300) + 10 + 11;
    path_of("stat 4", ".bin", path, sizeof(path));
    flip_byte(path, -1);
    CHECK_EQ_INT(tj_store_stats(s, false, &st), TJ_OK);
    CHECK_EQ_INT(st.entries, 3);
    CHECK_EQ_INT(st.bytes, bytes);
    CHECK_EQ_INT(st.invalid, 1);
    CHECK_EQ_INT(st.sources, 2);
    CHECK(access(path, F_OK) == 0);

    /* An entry filed under the wrong name is invalid too. */
    {
        char right[512], wrong[512];
        path_of("stat 3", ".bin", right, sizeof(right));
        path_of("stat 5", ".bin", wrong, sizeof(wrong));
        REQUIRE(link(right, wrong) == 0);
    }
    CHECK_EQ_INT(tj_store_stats(s, true, &st), TJ_OK);
    CHECK_EQ_INT(st.entries, 3);
    CHECK_EQ_INT(st.invalid, 2);
    CHECK(access(path, F_OK) != 0);
    CHECK_EQ_INT(tj_store_stats(s, false, &st), TJ_OK);
    CHECK_EQ_INT(st.entries, 3);
    CHECK_EQ_INT(st.invalid, 0);
    expect_hit(s, "stat 3", 300);

    /* Clear: entries, sources, leftover temporary files and the manifest go; the root stays. */
    CHECK_EQ_INT(tj_store_manifest_add(s, "some kernel"), TJ_OK);
    snprintf(tmpdir, sizeof(tmpdir), "%s/tmp/left.over", root);
    {
        FILE *f = fopen(tmpdir, "w");
        REQUIRE(f != NULL);
        fclose(f);
    }
    CHECK_EQ_INT(tj_store_clear(s), TJ_OK);
    CHECK_EQ_INT(count_files(root), 0);
    REQUIRE(stat(root, &sb) == 0);
    CHECK(S_ISDIR(sb.st_mode));
    expect_miss(s, "stat 1", TJ_ERR_NOT_FOUND);
    memset(&got, 0, sizeof(got));
    CHECK_EQ_INT(tj_store_manifest_read(s, collect, &got), TJ_ERR_NOT_FOUND);
    CHECK_EQ_INT(tj_store_stats(s, false, &st), TJ_OK);
    CHECK_EQ_INT(st.entries + st.invalid + st.sources + st.bytes, 0);

    /* The store forgot what it had added: the manifest starts again. */
    CHECK_EQ_INT(tj_store_manifest_add(s, "some kernel"), TJ_OK);
    CHECK_EQ_INT(tj_store_manifest_read(s, collect, &got), TJ_OK);
    CHECK_EQ_INT(got.n, 1);
    save(s, "after clear", 10, NULL);
    expect_hit(s, "after clear", 10);
}

/* Open descriptors of this process, or -1 without /proc: every path must close what it opens. */
static long count_fds(void)
{
    long n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}

int main(void)
{
    tj_store_t *s = NULL;
    long fds = count_fds();
    char tmp[512];

    umask(077);
    tempdir_make("store", base, sizeof(base));
    snprintf(root, sizeof(root), "%s/cache", base);

    test_open_modes();
    REQUIRE(tj_store_open(root, TJ_STORE_RW, &s) == TJ_OK);
    test_round_trip(s);
    for (damage_t d = D_IMAGE; d <= D_LONGER; d++)
        test_damage(s, d);
    test_foreign(s);
    test_permissions(s);
    test_components(s);
    test_read_only();
    test_manifest(s);

    /* Every save went through tmp/ and left nothing behind there. */
    snprintf(tmp, sizeof(tmp), "%s/tmp", root);
    CHECK_EQ_INT(count_files(tmp), 0);

    test_stats_and_clear(s);
    tj_store_close(s);
    CHECK_EQ_INT(count_fds(), fds);

    REQUIRE(tempdir_remove(base));
    CHECK_DONE();
}
