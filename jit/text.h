/* SPDX-License-Identifier: BSD-3-Clause */
/* A growing NUL-terminated text: the CUDA source a generator writes piece by piece, a manifest
 * line. */
#ifndef TJ_JIT_TEXT_H
#define TJ_JIT_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* A growing NUL-terminated string; `failed` records an allocation failure. */
typedef struct {
    char *buf;
    size_t len, cap;
    bool failed;
} text_t;

/* Appends @p n bytes of @p s. An allocation failure sets t->failed; nothing is appended from then
 * on. */
void tj_text_append(text_t *t, const char *s, size_t n);

/* Appends the printf-formatted text, as tj_text_append. */
void tj_text_printf(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copies the text into @p buf as snprintf does and frees it: returns its length (the length
 * needed, when @p len is too small), or -1 when an allocation failed. */
int tj_text_finish(text_t *t, char *buf, size_t len);

#endif /* TJ_JIT_TEXT_H */
