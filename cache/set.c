/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernel caches a process reads: its own store, then the shared read-only ones of
 * TYPEJIT_CACHE_PATH. The first valid entry wins; each store validates and trusts as always. */
#include "cache/set.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cache/entry.h"
#include "cache/store_internal.h"
#include "util/common.h"

/* Folders of TYPEJIT_CACHE_PATH opened at most. */
#define MAX_SHARED 16

struct tj_store_set {
    tj_store_t *own;
    tj_store_t *shared[MAX_SHARED];
    int nshared;
};

/* Whether @p dir is the root of a store the set holds already. */
static bool known(const tj_store_set_t *set, const tj_store_t *s)
{
    struct stat a, b;

    if (fstat(s->root_fd, &a) != 0)
        return false;
    if (set->own != NULL && fstat(set->own->root_fd, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
        return true;
    for (int i = 0; i < set->nshared; i++)
        if (fstat(set->shared[i]->root_fd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
            return true;
    return false;
}

tj_status_t tj_store_set_open(tj_store_t *own, const char *path, tj_store_set_t **set)
{
    tj_store_set_t *s;
    const char *p = path != NULL ? path : "";

    if (set == NULL)
        return TJ_ERR_INVALID;
    if ((s = tj_store_alloc(sizeof(*s), "the cache path")) == NULL)
        return TJ_ERR_NOMEM;
    s->own = own;
    while (*p != '\0') {
        size_t n = strcspn(p, ":");
        char dir[PATH_MAX];
        tj_store_t *st;
        tj_status_t status;

        if (n == 0 || n >= sizeof(dir)) {
            p += n + (p[n] == ':');
            continue;
        }
        memcpy(dir, p, n);
        dir[n] = '\0';
        p += n + (p[n] == ':');
        if (s->nshared == MAX_SHARED) {
            tj_log_warn_job("cache: TYPEJIT_CACHE_PATH: only the first %d folders are used; not "
                            "searching %s",
                            MAX_SHARED, dir);
            continue;
        }
        /* tj_store_open warns about a refused folder itself, once, with the reason. */
        status = tj_store_open(dir, TJ_STORE_SHARED, &st);
        if (status == TJ_ERR_NOT_FOUND) {
            /* Named on purpose, so probably a typo or a cache not yet made: say so. */
            tj_log_warn_job("cache: TYPEJIT_CACHE_PATH names %s, which does not exist; not "
                            "searched",
                            dir);
            continue;
        }
        if (status != TJ_OK)
            continue;
        if (known(s, st)) {
            tj_store_close(st);
            continue;
        }
        s->shared[s->nshared++] = st;
    }
    *set = s;
    return TJ_OK;
}

void tj_store_set_close(tj_store_set_t *set)
{
    if (set == NULL)
        return;
    for (int i = 0; i < set->nshared; i++)
        tj_store_close(set->shared[i]);
    free(set);
}

int tj_store_set_shared(const tj_store_set_t *set)
{
    return set != NULL ? set->nshared : 0;
}

tj_status_t tj_store_set_load(tj_store_set_t *set, const char *toolchain, const char *arch,
                              const char *key, void **image, size_t *len)
{
    tj_status_t status = TJ_ERR_NOT_FOUND, st;

    if (set == NULL || key == NULL || image == NULL || len == NULL)
        return TJ_ERR_INVALID;
    if (set->own != NULL) {
        status = tj_store_load(set->own, toolchain, arch, key, image, len);
        if (status == TJ_OK || status == TJ_ERR_INVALID || status == TJ_ERR_NOMEM)
            return status;
    }
    for (int i = 0; i < set->nshared; i++) {
        st = tj_store_load(set->shared[i], toolchain, arch, key, image, len);
        if (st == TJ_OK) {
            tj_log_debug("cache: kernel from the shared cache %s", set->shared[i]->dir);
            return TJ_OK;
        }
        if (st == TJ_ERR_INVALID || st == TJ_ERR_NOMEM)
            return st;
    }
    return set->own != NULL ? status : TJ_ERR_NOT_FOUND;
}
