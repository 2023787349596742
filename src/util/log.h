/* SPDX-License-Identifier: BSD-3-Clause */
/* Logging to stderr with a "typejit[rank]:" prefix; the level comes from TYPEJIT_LOG. */
#ifndef TJ_UTIL_LOG_H
#define TJ_UTIL_LOG_H

#include <stdatomic.h>
#include <stdbool.h>

#include "util/state.h"

/* The level, read on every log macro (one load); written once when the configuration is
 * loaded. */
static inline int tj_log_level(void)
{
    return tj_util_state.log.level;
}

void tj_log_set_level(tj_log_level_t level);
/* Rank shown in the prefix; a negative rank prints "typejit:" alone (tools, before MPI_Init). */
void tj_log_set_rank(int rank);
void tj_log_write(tj_log_level_t level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A message through @p _write (tj_log_write or tj_log_write_job), formatted only when the level
 * lets it through. */
#define TJ_LOG_WITH(_write, _level, ...)                                                           \
    do {                                                                                           \
        if (tj_log_level() >= (_level))                                                            \
            _write((_level), __FILE__, __LINE__, __VA_ARGS__);                                     \
    } while (0)

#define TJ_LOG_AT(_level, ...) TJ_LOG_WITH(tj_log_write, _level, __VA_ARGS__)

#define tj_log_error(...) TJ_LOG_AT(TJ_LOG_ERROR, __VA_ARGS__)
#define tj_log_warn(...)  TJ_LOG_AT(TJ_LOG_WARN, __VA_ARGS__)
#define tj_log_info(...)  TJ_LOG_AT(TJ_LOG_INFO, __VA_ARGS__)
#define tj_log_debug(...) TJ_LOG_AT(TJ_LOG_DEBUG, __VA_ARGS__)

/* Write a message at @p level in one process of the job only: the first process on this node
 * that writes this exact text (tj_log_first_in_job); every later writer, this process included,
 * writes it at debug level. For conditions every rank of a job meets alike (a cache folder,
 * a setting, the system MPI), which would otherwise print once per rank. */
void tj_log_write_job(tj_log_level_t level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* True the first time this process asks about @p text, and then only if no other process of
 * its job on this node asked first. The job comes from the launcher's environment
 * (PMIX_NAMESPACE, else SLURM_JOB_ID and SLURM_STEP_ID; without either the process is its own
 * job and only remembers what it said); the claim is a name in the abstract socket namespace,
 * made of the user, the job and a hash of the text, held (one socket) until the process ends.
 * When no claim can be made (no socket, too many claims) the answer is true: say it rather than
 * lose it. */
bool tj_log_first_in_job(const char *text);

#define TJ_LOG_JOB(_level, ...) TJ_LOG_WITH(tj_log_write_job, _level, __VA_ARGS__)

/* Once per job, as tj_log_write_job: warnings and info lines about conditions shared by all
 * ranks. */
#define tj_log_warn_job(...) TJ_LOG_JOB(TJ_LOG_WARN, __VA_ARGS__)
#define tj_log_info_job(...) TJ_LOG_JOB(TJ_LOG_INFO, __VA_ARGS__)

/* Say a message at @p _level only the first time this call site is reached, for conditions that
 * would repeat on every call (a fallback taken on the hot path). */
#define TJ_LOG_ONCE(_level, ...)                                                                   \
    do {                                                                                           \
        static atomic_flag _tj_once = ATOMIC_FLAG_INIT;                                            \
        if (tj_log_level() >= (_level) && !atomic_flag_test_and_set(&_tj_once))                    \
            tj_log_write((_level), __FILE__, __LINE__, __VA_ARGS__);                               \
    } while (0)

/* A warning once per call site; at info level, a slower path taken on the hot path. */
#define tj_log_warn_once(...) TJ_LOG_ONCE(TJ_LOG_WARN, __VA_ARGS__)
#define tj_log_info_once(...) TJ_LOG_ONCE(TJ_LOG_INFO, __VA_ARGS__)

#endif /* TJ_UTIL_LOG_H */
