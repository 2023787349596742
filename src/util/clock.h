/* SPDX-License-Identifier: BSD-3-Clause */
/* Time: a monotonic clock, a sleep that resumes after signals, and the median of samples. One
 * header of inline functions, so that the library, its tools, the tests and the benchmarks (which
 * link only MPI, as applications do) share one copy. */
#ifndef TJ_UTIL_CLOCK_H
#define TJ_UTIL_CLOCK_H

#include <errno.h>
#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double tj_clock_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Milliseconds on the monotonic clock. */
static inline long long tj_clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sleep @p ms milliseconds, the whole time even when signals interrupt it. */
static inline void tj_clock_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static inline int tj_clock_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of the @p n samples @p v (sorted in place): the upper one of the middle two when
 * @p n is even; 0 when there are none. */
static inline double tj_median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof(*v), tj_clock_cmp_double);
    return v[n / 2];
}

#endif /* TJ_UTIL_CLOCK_H */
