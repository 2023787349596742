/* SPDX-License-Identifier: BSD-3-Clause */
/* A program of an installed typejit: prints the library's version through the public API. */
#include <stdio.h>

#include <typejit.h>

int main(void)
{
    printf("typejit %s\n", tj_version());
    return 0;
}
