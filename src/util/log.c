/* Logging: one formatted line per message, written with a single write(2) so that lines from
 * several ranks or threads do not interleave. */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int tj_log_level = TJ_LOG_WARN;
static int log_rank = -1;

void tj_log_set_level(tj_log_level_t level)
{
    tj_log_level = (int)level;
}

void tj_log_set_rank(int rank)
{
    log_rank = rank;
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

void tj_log_write(tj_log_level_t level, const char *file, int line, const char *fmt, ...)
{
    char msg[2048];
    size_t n;
    int written;
    va_list ap;

    if (log_rank >= 0)
        written = snprintf(msg, sizeof(msg), "typejit[%d]: %s: ", log_rank, level_name(level));
    else
        written = snprintf(msg, sizeof(msg), "typejit: %s: ", level_name(level));
    n = written > 0 ? (size_t)written : 0;

    va_start(ap, fmt);
    written = vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
    va_end(ap);
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
