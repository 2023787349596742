/* SPDX-License-Identifier: BSD-3-Clause */
/* The search path of shared read-only caches (TYPEJIT_CACHE_PATH): the user's store first, then
 * the path in order, the first valid entry wins; an untrusted folder is refused, a missing one
 * skipped; nothing is ever written to a shared store. Also the parsing of the two settings. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/entry.h"
#include "cache/hash.h"
#include "cache/lock.h"
#include "cache/set.h"
#include "cache/store.h"
#include "cache/trim.h"
#include "check.h"
#include "tempdir.h"
#include "util/config.h"

#define TC   "nvrtc-13.0"
#define ARCH "sm_90"

static char base[64];

static void dir_of(const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", base, name);
}

/* Save @p image under @p key in the store at folder @p name (made RW for the purpose). */
static void put(const char *name, const char *key, const char *image)
{
    char dir[256];
    tj_store_t *s = NULL;

    dir_of(name, dir, sizeof(dir));
    REQUIRE(tj_store_open(dir, TJ_STORE_RW, &s) == TJ_OK);
    REQUIRE(tj_store_save(s, TC, ARCH, key, image, strlen(image), NULL) == TJ_OK);
    tj_store_close(s);
}

static void entry_path(const char *name, const char *key, char *out, size_t size)
{
    char hex[33];

    tj_hash_hex(tj_hash_bytes(key, strlen(key)), hex);
    snprintf(out, size, "%s/%s/%s/%s/%s.bin", base, name, TC, ARCH, hex);
}

/* Load @p key through @p set: the image as a string, or NULL on a miss. */
static char *get(tj_store_set_t *set, const char *key)
{
    void *img = NULL;
    size_t len = 0;
    char *s;

    if (tj_store_set_load(set, TC, ARCH, key, &img, &len) != TJ_OK)
        return NULL;
    s = malloc(len + 1);
    REQUIRE(s != NULL);
    memcpy(s, img, len);
    s[len] = '\0';
    free(img);
    return s;
}

static void check_get(tj_store_set_t *set, const char *key, const char *want)
{
    char *got = get(set, key);

    if (want == NULL)
        CHECK(got == NULL);
    else if (got == NULL || strcmp(got, want) != 0) {
        fprintf(stderr, "key \"%s\": got \"%s\", want \"%s\"\n", key, got ? got : "(miss)", want);
        CHECK(!"the right store answers");
    }
    free(got);
}

static void test_order(void)
{
    char own_dir[256], path[1200], a[256], b[256], c[256], entry[512];
    tj_store_t *own = NULL;
    tj_store_set_t *set = NULL;

    put("own", "k-own", "own");
    put("own", "k-all", "own");
    put("a", "k-all", "a");
    put("a", "k-ab", "a");
    put("b", "k-ab", "b");
    put("b", "k-b", "b");
    put("a", "k-bad-in-a", "a");
    put("b", "k-bad-in-a", "b");
    /* A damaged entry in a is a miss there; b's copy answers. */
    entry_path("a", "k-bad-in-a", entry, sizeof(entry));
    {
        FILE *f = fopen(entry, "r+");
        REQUIRE(f != NULL);
        fseek(f, -1, SEEK_END);
        fputc('X', f);
        fclose(f);
    }
    dir_of("own", own_dir, sizeof(own_dir));
    dir_of("a", a, sizeof(a));
    dir_of("b", b, sizeof(b));
    dir_of("missing", c, sizeof(c));
    REQUIRE(tj_store_open(own_dir, TJ_STORE_RW, &own) == TJ_OK);
    /* Empty elements, a missing folder and the own folder again are all skipped. */
    snprintf(path, sizeof(path), "::%s:%s:%s:%s:", c, own_dir, a, b);
    REQUIRE(tj_store_set_open(own, path, &set) == TJ_OK);
    CHECK_EQ_INT(tj_store_set_shared(set), 2);
    check_get(set, "k-own", "own");
    check_get(set, "k-all", "own"); /* the user's own store first */
    check_get(set, "k-ab", "a");    /* then the path in order */
    check_get(set, "k-b", "b");
    check_get(set, "k-bad-in-a", "b");
    check_get(set, "k-none", NULL);
    tj_store_set_close(set);

    /* The other order. */
    snprintf(path, sizeof(path), "%s:%s", b, a);
    REQUIRE(tj_store_set_open(own, path, &set) == TJ_OK);
    check_get(set, "k-ab", "b");
    check_get(set, "k-all", "own");
    tj_store_set_close(set);

    /* No own store (TYPEJIT_CACHE=off): the path alone. */
    snprintf(path, sizeof(path), "%s", a);
    REQUIRE(tj_store_set_open(NULL, path, &set) == TJ_OK);
    check_get(set, "k-all", "a");
    check_get(set, "k-own", NULL);
    tj_store_set_close(set);
    /* No path: the own store alone, exactly as tj_store_load. */
    REQUIRE(tj_store_set_open(own, NULL, &set) == TJ_OK);
    CHECK_EQ_INT(tj_store_set_shared(set), 0);
    check_get(set, "k-own", "own");
    check_get(set, "k-ab", NULL);
    tj_store_set_close(set);
    tj_store_close(own);
}

/* The shared stores of the search path @p path: @p shared of them trusted, and key k answered
 * by the entry @p want. */
static void check_trust(const char *path, int shared, const char *want)
{
    tj_store_set_t *set = NULL;

    REQUIRE(tj_store_set_open(NULL, path, &set) == TJ_OK);
    CHECK_EQ_INT(tj_store_set_shared(set), shared);
    check_get(set, "k", want);
    tj_store_set_close(set);
}

static void test_trust(void)
{
    char a[256], b[256], path[600], tc[300];
    tj_store_t *s = NULL;

    put("ta", "k", "ta");
    put("tb", "k", "tb");
    dir_of("ta", a, sizeof(a));
    dir_of("tb", b, sizeof(b));
    snprintf(path, sizeof(path), "%s:%s", a, b);

    /* A folder others can write is refused (one warning): the next one answers. */
    REQUIRE(chmod(a, 0777) == 0);
    check_trust(path, 1, "tb");
    REQUIRE(chmod(a, 0700) == 0);

    /* The same below the root: the level is refused when searched, the entry is a miss. */
    snprintf(tc, sizeof(tc), "%s/%s", a, TC);
    REQUIRE(chmod(tc, 0770) == 0);
    check_trust(path, 2, "tb");
    REQUIRE(chmod(tc, 0700) == 0);

    /* Another user's cache (not root's) is refused; root's would be trusted. */
    if (geteuid() == 0) {
        REQUIRE(chown(a, 65534, 65534) == 0);
        check_trust(path, 1, "tb");
        REQUIRE(chown(a, 0, 0) == 0);
    }
    check_trust(path, 2, "ta");

    /* A shared store is read only: no saves, no locks, no trimming. */
    REQUIRE(tj_store_open(a, TJ_STORE_SHARED, &s) == TJ_OK);
    CHECK_EQ_INT(tj_store_save(s, TC, ARCH, "x", "x", 1, NULL), TJ_ERR_UNSUPPORTED);
    {
        tj_store_lock_t *l = NULL;
        tj_store_trim_t r;
        CHECK_EQ_INT(tj_store_lock(s, TC, ARCH, "x", &l), TJ_ERR_UNSUPPORTED);
        CHECK_EQ_INT(tj_store_trim(s, 0, &r), TJ_ERR_UNSUPPORTED);
    }
    tj_store_close(s);
    {
        char missing[300];
        dir_of("nowhere", missing, sizeof(missing));
        CHECK_EQ_INT(tj_store_open(missing, TJ_STORE_SHARED, &s), TJ_ERR_NOT_FOUND);
    }
}

static void test_settings(void)
{
    tj_config_t cfg;
    long long v = -1;

    CHECK(tj_config_parse_size("0", &v) && v == 0);
    CHECK(tj_config_parse_size("1024", &v) && v == 1024);
    CHECK(tj_config_parse_size("10k", &v) && v == 10240);
    CHECK(tj_config_parse_size("500M", &v) && v == 500LL << 20);
    CHECK(tj_config_parse_size("2G", &v) && v == 2LL << 30);
    CHECK(tj_config_parse_size("3t", &v) && v == 3LL << 40);
    v = 7;
    const char *bad[] = {"",         "-1",  "abc",  "2x", "2GB",
                         " 2G",      "2G ", "1.5G", "G",  "99999999999999999999",
                         "4194304T", "+5"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (tj_config_parse_size(bad[i], &v)) {
            fprintf(stderr, "size \"%s\" accepted\n", bad[i]);
            CHECK(!"malformed sizes are refused");
        }
    }
    CHECK_EQ_INT(v, 7);

    setenv("TYPEJIT_CACHE_PATH", ":/site/typejit:relative/dir::/opt/cache:", 1);
    setenv("TYPEJIT_CACHE_MAX_SIZE", "2G", 1);
    tj_config_parse(&cfg);
    CHECK(strcmp(cfg.cache_path, "/site/typejit:/opt/cache") == 0);
    CHECK_EQ_INT(cfg.cache_max_size, 2LL << 30);
    setenv("TYPEJIT_CACHE_MAX_SIZE", "lots", 1);
    unsetenv("TYPEJIT_CACHE_PATH");
    tj_config_parse(&cfg);
    CHECK_EQ_INT(cfg.cache_max_size, 0);
    CHECK(cfg.cache_path[0] == '\0');
    unsetenv("TYPEJIT_CACHE_MAX_SIZE");

    /* TYPEJIT_CACHE_DIR as TYPEJIT_CACHE_PATH: a relative folder is refused (one warning), the
     * default taken instead; an absolute one is used as given. */
    {
        const char *xdg = getenv("XDG_CACHE_HOME");
        char *saved = xdg != NULL ? strdup(xdg) : NULL;
        setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
        setenv("TYPEJIT_CACHE_DIR", "relative/cache", 1);
        tj_config_parse(&cfg);
        CHECK(strcmp(cfg.cache_dir, "/xdg/cache/typejit") == 0);
        setenv("TYPEJIT_CACHE_DIR", "/abs/cache", 1);
        tj_config_parse(&cfg);
        CHECK(strcmp(cfg.cache_dir, "/abs/cache") == 0);
        unsetenv("TYPEJIT_CACHE_DIR");
        if (saved != NULL)
            setenv("XDG_CACHE_HOME", saved, 1);
        else
            unsetenv("XDG_CACHE_HOME");
        free(saved);
    }
    tj_config_flush_warnings(-1); /* the three warnings above, on stderr */
}

int main(void)
{
    tempdir_make("set", base, sizeof(base));

    test_order();
    test_trust();
    test_settings();

    CHECK(tempdir_remove(base));
    CHECK_DONE();
}
