/* SPDX-License-Identifier: BSD-3-Clause */
/* What the modules of layouts share and nobody else sees: the parts a layout's store holds, a
 * new layout over a store, making a shared layout one's own, and the finishing steps of other
 * modules. */
#ifndef TJ_TYPE_LAYOUT_INTERNAL_H
#define TJ_TYPE_LAYOUT_INTERNAL_H

#include "type/layout.h"

struct tj_layout_store {
    atomic_int refs;
    int64_t n, cap;
    int64_t *disp, *pre; /* pre has cap + 1 entries */
    uint8_t *shape;      /* NULL once a finished layout has one shape */
    bool too_many;
};

/* Drop a reference to @p s (NULL is ignored); the last one frees its parts. */
void tj_layout_store_release(tj_layout_store_t *s);

/* @p *l, made the caller's own: a clone sharing its store when it is shared. */
tj_status_t tj_layout_own(tj_layout_t **l);

/* Keep the part table of the finished layout @p l out of its kernel's source (read from device
 * memory), its hash made anew. */
void tj_layout_unbake(tj_layout_t *l);

/* Fill the words of the parts kernels of the layout @p l being finished (l->kword, l->kunits,
 * l->kone: type/layout_words.h); nothing for a device table. */
void tj_layout_words_finish(tj_layout_t *l);

#endif /* TJ_TYPE_LAYOUT_INTERNAL_H */
