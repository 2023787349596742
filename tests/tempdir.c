/* SPDX-License-Identifier: BSD-3-Clause */
/* Test folders under /tmp. */
#include "tempdir.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

void tempdir_make(const char *name, char *path, size_t len)
{
    REQUIRE((size_t)snprintf(path, len, "/tmp/tj-%s-XXXXXX", name) < len);
    REQUIRE(mkdtemp(path) != NULL);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

bool tempdir_remove(const char *path)
{
    return nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0;
}
