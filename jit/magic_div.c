/* SPDX-License-Identifier: BSD-3-Clause */
/* Division by a constant as a multiply-high and a shift: the magic numbers the generic kernels
 * divide a word index by. */
#include <stdint.h>

#include "jit/gen_internal.h"

void tj_gen_magic_divider(uint64_t c, unsigned *magic, unsigned *shift)
{
    unsigned l = 0;
    while (((uint64_t)1 << l) < c)
        l++;
    *magic = (unsigned)((((uint64_t)1 << (31 + l)) + c - 1) / c);
    *shift = l - 1;
}
