/* SPDX-License-Identifier: BSD-3-Clause */
/* A fresh folder for a test, and its removal with everything in it. */
#ifndef TJ_TESTS_TEMPDIR_H
#define TJ_TESTS_TEMPDIR_H

#include <stdbool.h>
#include <stddef.h>

/* Make a new folder /tmp/tj-NAME-XXXXXX (mode 0700) and write its path into @p path; the test
 * stops when it cannot. */
void tempdir_make(const char *name, char *path, size_t len);

/* Remove @p path and everything below it, links removed, never followed. True when all went. */
bool tempdir_remove(const char *path);

#endif /* TJ_TESTS_TEMPDIR_H */
