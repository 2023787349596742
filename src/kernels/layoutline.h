/* SPDX-License-Identifier: BSD-3-Clause */
/* The manifest text of a layout: what a parts kernel depends on, written into its manifest line
 * and its disk key, and read back by `typejit warm`. */
#ifndef TJ_KERNELS_LAYOUTLINE_H
#define TJ_KERNELS_LAYOUTLINE_H

#include <stddef.h>

#include "type/layout.h"

/* What a kernel of the finished layout @p l depends on, as one line (the manifest's): "table=baked
 * extent=E" or "table=device pre=4 disp=8", then "frame=C:S,..." (or "frame=-"), then each shape
 * after " | " ("runs", or the block as tj_block_format writes it), then for a baked table
 * " | parts=DISP:LEN:SHAPE,...". Returns the length needed, as snprintf; -1 when out of memory. */
int tj_layoutline_format(const tj_layout_t *l, char *buf, size_t len);

/* The layout a line of tj_layoutline_format names, finished, with @p word (the kernel's) as its
 * word when its table is not baked. TJ_ERR_PARSE for anything malformed, TJ_ERR_NOMEM. */
tj_status_t tj_layoutline_parse(const char *text, int word, tj_layout_t **out);

#endif /* TJ_KERNELS_LAYOUTLINE_H */
