/* SPDX-License-Identifier: BSD-3-Clause */
/* Counters and their "key=value" text. */
#include "util/stats.h"

#include <stdio.h>

#include "typejit.h"

_Atomic uint64_t tj_stats_counters[TJ_STAT_COUNT];

static const char *const stat_names[TJ_STAT_COUNT] = {
#define TJ_STAT_NAME(_name) #_name,
    TJ_STATS_LIST(TJ_STAT_NAME)
#undef TJ_STAT_NAME
};

uint64_t tj_stats_get(tj_stat_t which)
{
    return atomic_load_explicit(&tj_stats_counters[which], memory_order_relaxed);
}

void tj_stats_reset(void)
{
    for (int i = 0; i < TJ_STAT_COUNT; i++)
        atomic_store_explicit(&tj_stats_counters[i], 0, memory_order_relaxed);
}

int tj_stats_format(char *buf, size_t len)
{
    size_t used = 0;
    int total = 0;

    if (len > 0)
        buf[0] = '\0';
    for (int i = 0; i < TJ_STAT_COUNT; i++) {
        int n = snprintf(len > used ? buf + used : NULL, len > used ? len - used : 0, "%s%s=%llu",
                         i ? " " : "", stat_names[i], (unsigned long long)tj_stats_get(i));
        if (n < 0)
            return n;
        total += n;
        used += (size_t)n;
    }
    return total;
}
