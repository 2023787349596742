/* SPDX-License-Identifier: BSD-3-Clause */
/* Minimal assertions for the tests: each failure prints the expression, file and line. */
#ifndef TJ_TESTS_CHECK_H
#define TJ_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int check_failures __attribute__((unused));

#define CHECK(_cond)                                                                               \
    do {                                                                                           \
        if (!(_cond)) {                                                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #_cond);              \
            check_failures++;                                                                      \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_INT(_a, _b)                                                                       \
    do {                                                                                           \
        long long _va = (long long)(_a), _vb = (long long)(_b);                                    \
        if (_va != _vb) {                                                                          \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", __FILE__, __LINE__,  \
                    #_a, #_b, _va, _vb);                                                           \
            check_failures++;                                                                      \
        }                                                                                          \
    } while (0)

/* Fatal form: stop the test at the first failure when later steps depend on it. */
#define REQUIRE(_cond)                                                                             \
    do {                                                                                           \
        if (!(_cond)) {                                                                            \
            fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #_cond);            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_DONE()                                                                               \
    do {                                                                                           \
        if (check_failures) {                                                                      \
            fprintf(stderr, "%d check(s) failed\n", check_failures);                               \
            return 1;                                                                              \
        }                                                                                          \
        printf("ok\n");                                                                            \
        return 0;                                                                                  \
    } while (0)

#endif /* TJ_TESTS_CHECK_H */
