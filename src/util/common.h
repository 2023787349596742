/* SPDX-License-Identifier: BSD-3-Clause */
/* Small helpers shared by every layer: array sizes, branch hints, the visibility of a layer's
 * state, overflow-checked arithmetic. */
#ifndef TJ_UTIL_COMMON_H
#define TJ_UTIL_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#define TJ_ARRAY_SIZE(_a) (sizeof(_a) / sizeof((_a)[0]))
#define TJ_LIKELY(_x)     __builtin_expect(!!(_x), 1)
#define TJ_UNLIKELY(_x)   __builtin_expect(!!(_x), 0)
#define TJ_MIN(_a, _b)    ((_a) < (_b) ? (_a) : (_b))
#define TJ_MAX(_a, _b)    ((_a) > (_b) ? (_a) : (_b))
/* A parenthesised list of a macro's arguments, without its parentheses: TJ_UNPAREN (a, b). */
#define TJ_UNPAREN(...) __VA_ARGS__
/* On the declaration of a layer's state, shared by the layer's own files only: not exported, and
 * reached without the global offset table, as a static variable is (-fvisibility=hidden applies
 * to definitions, not to extern declarations). */
#define TJ_LOCAL __attribute__((visibility("hidden")))

/* Checked 64-bit arithmetic: each returns false when the exact result does not fit. */
static inline bool tj_mul64(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

static inline bool tj_add64(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

static inline int64_t tj_abs64(int64_t v)
{
    return v < 0 ? -v : v;
}

#endif /* TJ_UTIL_COMMON_H */
