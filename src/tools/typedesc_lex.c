/* SPDX-License-Identifier: BSD-3-Clause */
/* The tokens of a type description (white space and comments, words, expected characters) and
 * its errors, reported at their line and column. */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "typedesc_internal.h"
#include "util/log.h"

tj_status_t tj_typedesc_fail(parser_t *ps, const char *at, tj_status_t status, const char *fmt, ...)
{
    char msg[384];
    const char *line_start = ps->text;
    int line = 1;
    va_list ap;

    for (const char *q = ps->text; q < at; q++)
        if (*q == '\n') {
            line++;
            line_start = q + 1;
        }
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (ps->err != NULL && ps->errlen > 0) {
        if (line > 1)
            snprintf(ps->err, ps->errlen, "line %d, column %d: %s", line,
                     (int)(at - line_start) + 1, msg);
        else
            snprintf(ps->err, ps->errlen, "column %d: %s", (int)(at - line_start) + 1, msg);
    }
    if (status == TJ_ERR_NOMEM)
        tj_log_error("type description: %s", msg);
    else
        tj_log_debug("type description: %s", msg);
    return status;
}

tj_status_t tj_typedesc_fail_mpi(parser_t *ps, const char *at, int rc, const char *call)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (PMPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof(msg), "MPI error %d", rc);
    return tj_typedesc_fail(ps, at, TJ_ERR_MPI, "%s rejected the arguments: %s", call, msg);
}

bool tj_typedesc_is_word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

const char *tj_typedesc_found(const char *p, char *buf, size_t len)
{
    if (*p == '\0')
        return "end of text";
    if (*p == '\n')
        return "end of line";
    if (tj_typedesc_is_word_char(*p)) {
        int n = 0;
        while (n < 24 && tj_typedesc_is_word_char(p[n]))
            n++;
        snprintf(buf, len, "'%.*s%s'", n, p, tj_typedesc_is_word_char(p[n]) ? "..." : "");
    } else if (isprint((unsigned char)*p)) {
        snprintf(buf, len, "'%c'", *p);
    } else {
        snprintf(buf, len, "byte 0x%02x", (unsigned)(unsigned char)*p);
    }
    return buf;
}

void tj_typedesc_skip_space(parser_t *ps)
{
    for (;;) {
        while (isspace((unsigned char)*ps->p))
            ps->p++;
        if (*ps->p != '#')
            return;
        while (*ps->p != '\0' && *ps->p != '\n')
            ps->p++;
    }
}

tj_status_t tj_typedesc_expect(parser_t *ps, char c, const char *context)
{
    char buf[48];

    tj_typedesc_skip_space(ps);
    if (*ps->p != c)
        return tj_typedesc_fail(ps, ps->p, TJ_ERR_PARSE, "expected '%c' %s, found %s", c, context,
                                tj_typedesc_found(ps->p, buf, sizeof(buf)));
    ps->p++;
    return TJ_OK;
}

int tj_typedesc_read_word(parser_t *ps, char out[MAX_WORD])
{
    int n = 0;

    while (tj_typedesc_is_word_char(ps->p[n])) {
        if (n < MAX_WORD - 1)
            out[n] = (char)toupper((unsigned char)ps->p[n]);
        n++;
    }
    out[n < MAX_WORD - 1 ? n : MAX_WORD - 1] = '\0';
    ps->p += n;
    return n;
}

const char *tj_typedesc_strip_prefix(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(s, prefix, n) == 0 ? s + n : s;
}
