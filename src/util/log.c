/* SPDX-License-Identifier: BSD-3-Clause */
/* Logging: one formatted line per message, written with a single write(2) so that lines from
 * several ranks or threads do not interleave. */
#include "util/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

void tj_log_set_level(tj_log_level_t level)
{
    tj_util_state.log.level = (int)level;
}

void tj_log_set_rank(int rank)
{
    tj_util_state.log.rank = rank;
}

static const char *level_name(tj_log_level_t level)
{
    switch (level) {
    case TJ_LOG_ERROR:
        return "error";
    case TJ_LOG_WARN:
        return "warning";
    case TJ_LOG_INFO:
        return "info";
    case TJ_LOG_DEBUG:
        return "debug";
    default:
        return "";
    }
}

/* One line: the prefix, then @p text. */
static void write_line(tj_log_level_t level, const char *file, int line, const char *text)
{
    char msg[2048];
    size_t n;
    int written;

    if (tj_util_state.log.rank >= 0)
        written = snprintf(msg, sizeof(msg), "typejit[%d]: %s: ", tj_util_state.log.rank,
                           level_name(level));
    else
        written = snprintf(msg, sizeof(msg), "typejit: %s: ", level_name(level));
    n = written > 0 ? (size_t)written : 0;

    written = snprintf(msg + n, sizeof(msg) - n, "%s", text);
    if (written > 0)
        n += (size_t)written;
    if (n > sizeof(msg) - 2)
        n = sizeof(msg) - 2;

    /* Debug lines carry their origin; the others state their cause in words. */
    if (level == TJ_LOG_DEBUG) {
        const char *base = strrchr(file, '/');
        written = snprintf(msg + n, sizeof(msg) - n, " (%s:%d)", base ? base + 1 : file, line);
        if (written > 0)
            n += (size_t)written;
        if (n > sizeof(msg) - 2)
            n = sizeof(msg) - 2;
    }
    msg[n++] = '\n';
    ssize_t rc = write(STDERR_FILENO, msg, n);
    (void)rc; /* Nothing sensible to do when stderr itself fails. */
}

/* The message of @p fmt and @p ap at @p level, whose caller checked the level; @p job: only the
 * first process of the job that says it says it at that level (tj_log_write_job), the others at
 * debug level, which is checked here. */
static void write_message(tj_log_level_t level, const char *file, int line, bool job,
                          const char *fmt, va_list ap)
{
    char text[2048];

    vsnprintf(text, sizeof(text), fmt, ap);
    if (job && !tj_log_first_in_job(text))
        level = TJ_LOG_DEBUG;
    if (!job || tj_log_level() >= (int)level)
        write_line(level, file, line, text);
}

void tj_log_write(tj_log_level_t level, const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    write_message(level, file, line, false, fmt, ap);
    va_end(ap);
}

/* --- once per job --------------------------------------------------------------------------- */

/* Claims held for the job (their sockets stay open until the process ends); beyond this many,
 * texts are said without one. */
#define MAX_CLAIMS 64

/* The job this process belongs to, as the launcher names it; false when none does (a tool, a
 * singleton): then the process is its own job. */
static bool job_name(char *buf, size_t len)
{
    const char *ns = getenv("PMIX_NAMESPACE");
    const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
    const char *uuid = getenv("I_MPI_HYDRA_UUID");

    if (ns != NULL && ns[0] != '\0')
        snprintf(buf, len, "%s", ns);
    else if (job != NULL && job[0] != '\0')
        snprintf(buf, len, "slurm-%s.%s", job, step != NULL ? step : "");
    else if (uuid != NULL && uuid[0] != '\0')
        snprintf(buf, len, "hydra-%s", uuid);
    else if (getenv("PMI_FD") != NULL && getenv("PMI_RANK") != NULL)
        /* MPICH's Hydra names no job; its proxy on this node starts the processes of one job
         * and of no other, so their parent names it. */
        snprintf(buf, len, "hydra-%ld", (long)getppid());
    else
        return false;
    return true;
}

static uint64_t text_hash(const char *text)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h;
}

/* Whether no other process of the job on this node has claimed @p hash: the name is bound in
 * the abstract namespace (sun_path[0] = '\0': no file, freed with the socket), and the socket is
 * kept. */
static bool claim(const char *job, uint64_t hash)
{
    struct sockaddr_un addr;
    int fd, n;

    if (tj_util_state.log.nclaims >= MAX_CLAIMS ||
        (fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
        return true;
    memset(&addr, 0, sizeof(addr));
    addr.sun_family = AF_UNIX;
    n = snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "typejit-%u-%.60s-%016llx",
                 (unsigned)getuid(), job, (unsigned long long)hash);
    if (n < 0)
        n = 0;
    if ((size_t)n > sizeof(addr.sun_path) - 1)
        n = (int)sizeof(addr.sun_path) - 1;
    if (bind(fd, (struct sockaddr *)&addr,
             (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) == 0) {
        tj_util_state.log.nclaims++; /* kept open: the claim lasts as long as this process */
        return true;
    }
    close(fd);
    return errno != EADDRINUSE;
}

bool tj_log_first_in_job(const char *text)
{
    uint64_t h = text_hash(text);
    char job[64];
    bool first = true;

    pthread_mutex_lock(&tj_util_state.log.claim_lock);
    for (int i = 0; i < tj_util_state.log.nsaid && first; i++)
        first = tj_util_state.log.said[i] != h;
    if (first) {
        if (tj_util_state.log.nsaid < TJ_LOG_MAX_SAID)
            tj_util_state.log.said[tj_util_state.log.nsaid++] = h;
        /* Only processes a launcher started together share a job; others are their own. */
        if (job_name(job, sizeof(job)))
            first = claim(job, h);
    }
    pthread_mutex_unlock(&tj_util_state.log.claim_lock);
    return first;
}

void tj_log_write_job(tj_log_level_t level, const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    write_message(level, file, line, true, fmt, ap);
    va_end(ap);
}
