/* SPDX-License-Identifier: BSD-3-Clause */
/* Construction and printing of IR chains. */
#include "type/ir.h"

#include <stdio.h>
#include <string.h>

#include "util/common.h"

void tj_ir_init_dense(tj_ir_t *ir, int64_t offset, int64_t extent)
{
    memset(&ir->node[0], 0, sizeof(ir->node[0]));
    ir->n = 1;
    ir->node[0].kind = TJ_IR_DENSE;
    ir->node[0].offset = offset;
    ir->node[0].extent = extent;
}

tj_status_t tj_ir_push_stream(tj_ir_t *ir, int64_t offset, int64_t count, int64_t stride)
{
    if (ir->n >= TJ_IR_MAX_NODES)
        return TJ_ERR_NOT_STRIDED;
    memmove(&ir->node[1], &ir->node[0], (size_t)ir->n * sizeof(ir->node[0]));
    memset(&ir->node[0], 0, sizeof(ir->node[0]));
    ir->node[0].kind = TJ_IR_STREAM;
    ir->node[0].offset = offset;
    ir->node[0].count = count;
    ir->node[0].stride = stride;
    ir->n++;
    return TJ_OK;
}

int64_t tj_ir_size(const tj_ir_t *ir)
{
    int64_t size = 1;
    for (int i = 0; i < ir->n; i++) {
        int64_t f = ir->node[i].kind == TJ_IR_DENSE ? ir->node[i].extent : ir->node[i].count;
        if (!tj_mul64(size, f, &size))
            return -1;
    }
    return size;
}

int tj_ir_format(const tj_ir_t *ir, char *buf, size_t len)
{
    int total = 0;
    for (int i = 0; i < ir->n; i++) {
        const tj_ir_node_t *nd = &ir->node[i];
        size_t used = (size_t)total;
        char *at = used < len ? buf + used : NULL;
        size_t room = used < len ? len - used : 0;
        int n;

        if (nd->kind == TJ_IR_STREAM)
            n = snprintf(at, room, "%sstream{off=%lld,count=%lld,stride=%lld}", i ? " > " : "",
                         (long long)nd->offset, (long long)nd->count, (long long)nd->stride);
        else
            n = snprintf(at, room, "%sdense{off=%lld,extent=%lld}", i ? " > " : "",
                         (long long)nd->offset, (long long)nd->extent);
        if (n < 0)
            return n;
        total += n;
    }
    if (ir->n == 0 && len > 0)
        buf[0] = '\0';
    return total;
}
