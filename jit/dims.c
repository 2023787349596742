/* SPDX-License-Identifier: BSD-3-Clause */
/* A block's dimensions as the kernels address them: merged, counted in words or, with edges, in
 * runs and their slots, and written as a kernel's constants and the statements of its offsets. */
#include <inttypes.h>
#include <stdint.h>

#include "jit/gen_internal.h"
#include "jit/text.h"
#include "util/common.h"

int64_t tj_gen_edge_slots(int64_t run, int word, int edge)
{
    return (run - edge + word - 1) / word + 1;
}

int tj_gen_merge_dims(const tj_block_t *block, int word, dim_t *dims)
{
    int n = 0;

    for (int d = 0; d < block->ndims; d++) {
        dim_t cur = {d == 0 ? block->counts[0] / word : block->counts[d],
                     d == 0 ? word : block->strides[d], d};
        int64_t length;
        if (cur.count == 1)
            continue;
        if (n > 0 && tj_mul64(dims[n - 1].count, dims[n - 1].stride, &length) &&
            length == cur.stride) {
            dims[n - 1].count *= cur.count; /* cannot overflow: bounded by the block's size */
            continue;
        }
        dims[n++] = cur;
    }
    return n;
}

int tj_gen_edge_dims(const tj_block_t *block, dim_t *dims)
{
    int n = tj_gen_merge_dims(block, 1, dims);
    return n > 0 && dims[0].stride == 1 && dims[0].count > 1 ? n : 0;
}

void tj_gen_emit_counts(text_t *t, const dim_t *dims, int n, const char *isuffix)
{
    char lit[48];

    for (int d = 0; d < n; d++) {
        /* The outermost digit is the quotient left over: it needs no count. */
        if (d < n - 1)
            tj_text_printf(t, "    const index_t COUNT_%d = %" PRId64 "%s;\n", dims[d].index,
                           dims[d].count, isuffix);
        else
            tj_text_printf(t, "    /* COUNT_%d = %" PRId64 " */\n", dims[d].index, dims[d].count);
        tj_gen_literal(lit, sizeof(lit), dims[d].stride);
        tj_text_printf(t, "    const long long STRIDE_%d = %s;\n", dims[d].index, lit);
    }
}

void tj_gen_emit_dimensions(text_t *t, const dim_t *dims, int n, const char *isuffix)
{
    if (n == 0) {
        tj_text_printf(t, "    /* Each object is a single word. */\n");
        return;
    }
    tj_text_printf(
        t, "    /* Dimension d has COUNT_d elements STRIDE_d bytes apart; dimension 0 counts "
           "words.\n     * Dimensions of one element are left out, and a dimension "
           "nested without a gap in\n     * the next inner one is merged into it. */\n");
    tj_gen_emit_counts(t, dims, n, isuffix);
}

void tj_gen_emit_offset(text_t *t, const dim_t *dims, int n, const char *var)
{
    const char *ind = "            ";

    if (n == 0) {
        tj_text_printf(t, "%sconst long long off = 0;", ind);
        return;
    }
    if (n == 1) {
        tj_text_printf(t, "%sconst long long off = (long long)%s * STRIDE_%d;", ind, var,
                       dims[0].index);
        return;
    }
    tj_text_printf(t, "%sindex_t q = %s;\n", ind, var);
    tj_text_printf(t, "%slong long off = (long long)(q %% COUNT_%d) * STRIDE_%d;\n", ind,
                   dims[0].index, dims[0].index);
    for (int d = 1; d < n; d++) {
        int i = dims[d].index;
        tj_text_printf(t, "%sq /= COUNT_%d;\n", ind, dims[d - 1].index);
        if (d < n - 1)
            tj_text_printf(t, "%soff += (long long)(q %% COUNT_%d) * STRIDE_%d;\n", ind, i, i);
        else
            tj_text_printf(t, "%soff += (long long)q * STRIDE_%d;", ind, i);
    }
}
