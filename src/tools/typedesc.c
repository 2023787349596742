/* SPDX-License-Identifier: BSD-3-Clause */
/* Type descriptions parsed into committed MPI datatypes (one type, or the members of a fused set)
 * with MPI's errors returned rather than fatal meanwhile, and files of descriptions read line by
 * line. */
#include "typedesc.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "typedesc_internal.h"
#include "util/log.h"

/* Errors of type constructors go to MPI_COMM_WORLD's handler (MPI-3) or MPI_COMM_SELF's (MPI-4);
 * both are switched to MPI_ERRORS_RETURN so that a rejected argument comes back as a status. */
typedef struct {
    MPI_Errhandler world, self;
} handlers_t;

static void errors_return(handlers_t *h)
{
    PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &h->world);
    PMPI_Comm_get_errhandler(MPI_COMM_SELF, &h->self);
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
}

static void errors_restore(handlers_t *h)
{
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, h->self);
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, h->world);
    PMPI_Errhandler_free(&h->self);
    PMPI_Errhandler_free(&h->world);
}

tj_status_t tj_typedesc_parse(const char *text, MPI_Datatype *type, char *err, size_t errlen)
{
    parser_t ps = {text, text, err, errlen};
    node_t node = {MPI_DATATYPE_NULL, false, NULL, NULL};
    handlers_t saved;
    char buf[48];
    int initialized = 0, finalized = 0, rc;
    tj_status_t status;

    if (text == NULL || type == NULL) {
        tj_log_error("type description: no text or no output handle");
        return TJ_ERR_INVALID;
    }
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized || finalized)
        return tj_typedesc_fail(&ps, text, TJ_ERR_INVALID, "MPI is not initialised");

    errors_return(&saved);
    if ((status = tj_typedesc_parse_type(&ps, 0, &node)) != TJ_OK)
        goto out_restore;
    tj_typedesc_skip_space(&ps);
    if (*ps.p != '\0') {
        status = tj_typedesc_fail(&ps, ps.p, TJ_ERR_PARSE, "unexpected %s after the type",
                                  tj_typedesc_found(ps.p, buf, sizeof(buf)));
        goto out_release;
    }
    /* A bare named type is duplicated so that the caller can free every result alike. */
    if (!node.owned) {
        MPI_Datatype named = node.type;
        if ((rc = PMPI_Type_dup(named, &node.type)) != MPI_SUCCESS) {
            status = tj_typedesc_fail_mpi(&ps, text, rc, "MPI_Type_dup");
            goto out_restore;
        }
        node.owned = true;
    }
    if ((rc = PMPI_Type_commit(&node.type)) != MPI_SUCCESS) {
        status = tj_typedesc_fail_mpi(&ps, text, rc, "MPI_Type_commit");
        goto out_release;
    }
    *type = node.type;
    node.owned = false;
out_release:
    tj_typedesc_release(&node);
out_restore:
    errors_restore(&saved);
    return status;
}

tj_status_t tj_typedesc_parse_fused(const char *text, MPI_Datatype *types, int max, int *n,
                                    char *err, size_t errlen)
{
    parser_t ps = {text, text, err, errlen};
    node_t nodes[TJ_TYPEDESC_FUSED_MAX];
    handlers_t saved;
    char word[MAX_WORD], buf[48];
    const char *at;
    int count = 0, initialized = 0, finalized = 0, rc;
    tj_status_t status = TJ_OK;

    if (text == NULL || types == NULL || n == NULL || max < 2 || max > TJ_TYPEDESC_FUSED_MAX) {
        tj_log_error("type description: bad arguments for a fused set");
        return TJ_ERR_INVALID;
    }
    tj_typedesc_skip_space(&ps);
    at = ps.p;
    if (!tj_typedesc_is_word_char(*ps.p) || tj_typedesc_read_word(&ps, word) != 5 ||
        strcasecmp(word, "fused") != 0)
        return TJ_ERR_NOT_FOUND;
    tj_typedesc_skip_space(&ps);
    if (*ps.p != '(')
        return TJ_ERR_NOT_FOUND;
    ps.p++;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized || finalized)
        return tj_typedesc_fail(&ps, text, TJ_ERR_INVALID, "MPI is not initialised");
    errors_return(&saved);
    for (;;) {
        if (count == max) {
            status = tj_typedesc_fail(&ps, ps.p, TJ_ERR_PARSE, "a fused set has at most %d members",
                                      max);
            goto out_release;
        }
        nodes[count] = (node_t){MPI_DATATYPE_NULL, false, NULL, NULL};
        if ((status = tj_typedesc_parse_type(&ps, 1, &nodes[count])) != TJ_OK)
            goto out_release;
        count++;
        tj_typedesc_skip_space(&ps);
        if (*ps.p == ')') {
            ps.p++;
            break;
        }
        if (*ps.p != ',') {
            status = tj_typedesc_fail(&ps, ps.p, TJ_ERR_PARSE,
                                      "expected ',' or ')' in the members of fused(, found %s",
                                      tj_typedesc_found(ps.p, buf, sizeof(buf)));
            goto out_release;
        }
        ps.p++;
    }
    tj_typedesc_skip_space(&ps);
    if (*ps.p != '\0') {
        status = tj_typedesc_fail(&ps, ps.p, TJ_ERR_PARSE, "unexpected %s after the fused set",
                                  tj_typedesc_found(ps.p, buf, sizeof(buf)));
        goto out_release;
    }
    if (count < 2) {
        status = tj_typedesc_fail(&ps, at, TJ_ERR_PARSE, "a fused set has at least 2 members");
        goto out_release;
    }
    /* As tj_typedesc_parse: every result is a committed type of the caller's. */
    for (int i = 0; i < count; i++) {
        if (!nodes[i].owned) {
            MPI_Datatype named = nodes[i].type;
            if ((rc = PMPI_Type_dup(named, &nodes[i].type)) != MPI_SUCCESS) {
                nodes[i].type = MPI_DATATYPE_NULL;
                status = tj_typedesc_fail_mpi(&ps, text, rc, "MPI_Type_dup");
                goto out_release;
            }
            nodes[i].owned = true;
        }
        if ((rc = PMPI_Type_commit(&nodes[i].type)) != MPI_SUCCESS) {
            status = tj_typedesc_fail_mpi(&ps, text, rc, "MPI_Type_commit");
            goto out_release;
        }
    }
    for (int i = 0; i < count; i++)
        types[i] = nodes[i].type;
    *n = count;
    count = 0;
out_release:
    for (int i = 0; i < count; i++)
        tj_typedesc_release(&nodes[i]);
    errors_restore(&saved);
    return status;
}

tj_status_t tj_typedesc_each_line(const char *path,
                                  int (*fn)(int line, const char *text, void *arg), void *arg)
{
    FILE *f;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int number = 0;
    bool stopped = false;
    tj_status_t status = TJ_OK;

    if (path == NULL || fn == NULL) {
        tj_log_error("type descriptions: no path or no callback");
        return TJ_ERR_INVALID;
    }
    if ((f = fopen(path, "r")) == NULL) {
        int err = errno;
        tj_log_debug("type descriptions: cannot open %s: %s", path, strerror(err));
        errno = err;
        return TJ_ERR_IO;
    }
    while (!stopped && (len = getline(&line, &cap, f)) >= 0) {
        char *hash = memchr(line, '#', (size_t)len);
        size_t n = hash != NULL ? (size_t)(hash - line) : (size_t)len;
        size_t first = 0;

        number++;
        /* A NUL byte would end the text early and hide the rest of the line: say so. */
        if (memchr(line, '\0', n) != NULL) {
            stopped = fn(number, NULL, arg) != 0;
            continue;
        }
        /* Trailing white space (the newline among it) goes; leading white space stays so that
         * a parser's columns still match the file. */
        while (n > 0 && isspace((unsigned char)line[n - 1]))
            n--;
        line[n] = '\0';
        while (first < n && isspace((unsigned char)line[first]))
            first++;
        if (first == n)
            continue;
        stopped = fn(number, line, arg) != 0;
    }
    int err = errno;
    if (!stopped && ferror(f)) {
        tj_log_debug("type descriptions: cannot read %s: %s", path, strerror(err));
        status = TJ_ERR_IO;
    }
    free(line);
    fclose(f);
    errno = err; /* the caller may say why reading failed */
    return status;
}
