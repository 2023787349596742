/* SPDX-License-Identifier: BSD-3-Clause */
/* Probing a datatype's typemap through PMPI_Pack (see probe.h). Offsets below 2^20 take three
 * passes of one byte each: pass d fills typed byte i with byte d of i. */
#include "type/layout_builder.h"
#include "type/probe.h"

#include <stdlib.h>
#include <string.h>

tj_status_t tj_probe_layout(MPI_Datatype type, int64_t true_lb, int64_t true_extent, int64_t extent,
                            int64_t size, tj_layout_t **out)
{
    unsigned char *typed = NULL, *packed = NULL;
    uint32_t *from = NULL;
    tj_layout_builder_t b;
    tj_layout_t *l = NULL;
    int passes = 0;
    tj_status_t st = TJ_OK;

    if (size <= 0 || true_extent <= 0 || size > TJ_PROBE_MAX || true_extent > TJ_PROBE_MAX)
        return TJ_ERR_UNSUPPORTED;
    for (int64_t span = true_extent - 1; span > 0; span >>= 8)
        passes++;
    typed = malloc((size_t)true_extent);
    packed = malloc((size_t)size);
    from = calloc((size_t)size, sizeof(*from));
    if (typed == NULL || packed == NULL || from == NULL) {
        st = TJ_ERR_NOMEM;
        goto out_free;
    }
    for (int d = 0; d < passes; d++) {
        int pos = 0;
        for (int64_t i = 0; i < true_extent; i++)
            typed[i] = (unsigned char)(i >> (8 * d));
        /* The buffer argument is the typed buffer less the true lower bound. */
        if (PMPI_Pack(typed - true_lb, 1, type, packed, (int)size, &pos, MPI_COMM_SELF) !=
                MPI_SUCCESS ||
            pos != size) {
            st = TJ_ERR_MPI;
            goto out_free;
        }
        for (int64_t j = 0; j < size; j++)
            from[j] |= (uint32_t)packed[j] << (8 * d);
    }
    /* Runs of packed bytes that come from consecutive typed bytes. */
    tj_layout_builder_init(&b);
    for (int64_t j = 0; j < size;) {
        int64_t k = j + 1;
        while (k < size && from[k] == from[k - 1] + 1)
            k++;
        tj_layout_builder_add_run(&b, true_lb + (int64_t)from[j], k - j);
        j = k;
    }
    if ((st = tj_layout_builder_end(&b, &l)) != TJ_OK) {
        if (st == TJ_ERR_NOT_STRIDED)
            st = TJ_ERR_UNSUPPORTED;
        goto out_free;
    }
    if ((st = tj_layout_finish(&l, extent, size)) != TJ_OK) {
        tj_layout_release(l);
        goto out_free;
    }
    l->probed = true;
    *out = l;
out_free:
    free(typed);
    free(packed);
    free(from);
    return st;
}
