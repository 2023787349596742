/* SPDX-License-Identifier: BSD-3-Clause */
/* What the test double's two on-disk caches (host-compiled kernels, kernel.c; NVRTC results,
 * nvrtc_cache.c) share: the hash that names their files and the creation of their folder. */
#ifndef TJ_TESTS_FAKECUDA_FILES_H
#define TJ_TESTS_FAKECUDA_FILES_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#define FC_FNV1A_START 0xcbf29ce484222325ull

/* 64-bit FNV-1a of @p n bytes, continuing from @p h (FC_FNV1A_START to begin). */
static inline uint64_t fc_fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* mkdir -p; 0 when the folder exists afterwards. */
static inline int fc_mkdirs(const char *dir)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return -1;
    for (char *p = path + 1; *p != '\0'; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(path, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

#endif /* TJ_TESTS_FAKECUDA_FILES_H */
