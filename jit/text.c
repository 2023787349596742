/* SPDX-License-Identifier: BSD-3-Clause */
/* A growing NUL-terminated text: the CUDA source a generator writes piece by piece, a manifest
 * line. */
#include "jit/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tj_text_append(text_t *t, const char *s, size_t n)
{
    if (t->failed)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *buf = realloc(t->buf, cap);
        if (buf == NULL) {
            t->failed = true;
            return;
        }
        t->buf = buf;
        t->cap = cap;
    }
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

void tj_text_printf(text_t *t, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0) {
        t->failed = true;
        return;
    }
    if ((size_t)n < sizeof(small)) {
        tj_text_append(t, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (big == NULL) {
        t->failed = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    tj_text_append(t, big, (size_t)n);
    free(big);
}

int tj_text_finish(text_t *t, char *buf, size_t len)
{
    int n = t->failed ? -1 : snprintf(buf, len, "%s", t->buf != NULL ? t->buf : "");

    free(t->buf);
    t->buf = NULL;
    return n;
}
