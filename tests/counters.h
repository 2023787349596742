/* SPDX-License-Identifier: BSD-3-Clause */
/* The preloaded library's counters, read as an application would: tj_stats_format, found with
 * dlsym, so that test programs need not link typejit. */
#ifndef TJ_TESTS_COUNTERS_H
#define TJ_TESTS_COUNTERS_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of counter @p key in this process; -1 without the library (or without the key). */
static inline long tj_counter(const char *key)
{
    int (*fmt)(char *, size_t) =
        (int (*)(char *, size_t))(uintptr_t)dlsym(RTLD_DEFAULT, "tj_stats_format");
    char text[4096] = " ", pat[64];
    const char *at;

    if (fmt == NULL)
        return -1;
    fmt(text + 1, sizeof(text) - 1); /* " key=value key=value ...": every key follows a space */
    snprintf(pat, sizeof(pat), " %s=", key);
    at = strstr(text, pat);
    return at != NULL ? atol(at + strlen(pat)) : -1;
}

#endif /* TJ_TESTS_COUNTERS_H */
