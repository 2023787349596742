/* SPDX-License-Identifier: BSD-3-Clause */
/* Layouts: the typemap of one object of a datatype that is not one strided block (an irregular
 * indexed type, a struct of differently shaped members, a named type with a hole, a darray, a
 * subarray of more than 16 dimensions), as a frame of strided dimensions over a list of parts,
 * each part some repetitions of one of a few strided shapes. The packed order is the typemap's:
 * frame elements in turn (frame dimension 0 fastest), the parts of one element in order, the
 * repetitions of one part in order, and each repetition as its shape's block packs it. */
#ifndef TJ_TYPE_LAYOUT_H
#define TJ_TYPE_LAYOUT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "type/block.h"
#include "type/ir.h"

/* Frame dimensions a layout may have (after those, the type is left to the system MPI). */
#define TJ_LAYOUT_MAX_FRAME 32
/* Distinct shapes of one layout; the parts of any further shape become runs. */
#define TJ_LAYOUT_MAX_SHAPES 16
/* Layouts of at most this many parts have their part table baked into the kernel's source;
 * larger ones read it from a table in device memory. */
#define TJ_LAYOUT_BAKED_MAX 256
/* Most parts a layout may have (16 bytes each on the host and at most as much on the device). */
#define TJ_LAYOUT_MAX_PARTS ((int64_t)1 << 22)
/* The parts of a layout, shared by every layout made from it by adding frame dimensions. */
typedef struct tj_layout_store tj_layout_store_t;

/* The device state a layer above keeps with a layout (src/kernels/parttable.c defines it). */
typedef struct tj_layout_device tj_layout_device_t;

typedef struct tj_layout {
    atomic_int refs;
    /* Byte offset of frame element 0 of object 0 from the buffer argument; a kernel is built
     * for the layout at 0 and launched at the buffer plus the start (its word divides it). */
    int64_t start;
    int64_t extent; /* MPI extent: the step between objects */
    int64_t size;   /* packed bytes of one object */
    /* Frame dimension d has fcounts[d] elements fstrides[d] bytes apart; dimension 0 fastest. */
    int nframe;
    int64_t *fcounts, *fstrides;
    /* Shapes, each a block at start 0 whose extent is the step between its repetitions. The
     * run shape (one byte, extent one: tj_layout_is_run) stands for contiguous runs, whatever
     * their length. */
    int nshapes;
    tj_block_t *shapes;
    /* Part p: its first repetition at byte disp[p] from the frame element, its packed bytes
     * [pre[p], pre[p + 1]) within the frame element, of shape shape[p] (shape 0 when shape is
     * NULL). Owned by the store. */
    int64_t nparts;
    const int64_t *disp, *pre;
    const uint8_t *shape;
    tj_layout_store_t *store;
    /* Set by tj_layout_finish. */
    bool finished;
    int word;         /* W: divides the start, the extent, every stride, offset and length */
    /* A baked layout's parts kernels (type/layout_words.h): for launches of several objects [0]
     * and of one [1], and for each alignment both buffers allow (log2 of 1 to 16), the word of
     * the kernel the launch takes and the packed units of one object it moves; per alignment,
     * whether the kernel of one object differs from that of several. */
    int8_t kword[2][5];
    int64_t kunits[2][5];
    bool kone[5];
    int disp_bytes;   /* 4 or 8: the element size of the displacements in a device table */
    int pre_bytes;    /* 4 or 8: the element size of the packed offsets in a device table */
    bool baked;       /* the part table goes into the kernel's source */
    bool probed;      /* learnt from the system MPI's packing (type/probe.h) */
    uint64_t hash[2]; /* of what a kernel's source depends on: frame, shapes, element sizes,
                         and a baked table with the extent */
    /* The fields above, from start, are copied at once by a clone (tj_layout_own); those below
     * are each layout's own. Computed on first use (tj_layout_disjoint): -1 unknown, 0 no, 1
     * yes. */
    atomic_int disjoint_parts;
    int64_t elo, ehi; /* the bytes one frame element touches, when disjoint_parts is 1 */
    /* What the kernel layer keeps with the layout (its part tables in device memory): a slot
     * this layer declares and never looks into, used through tj_layout_device* only. */
    _Atomic(tj_layout_device_t *) device;
} tj_layout_t;

/* True for the run shape. */
static inline bool tj_layout_is_run(const tj_block_t *shape)
{
    return shape->ndims == 1 && shape->counts[0] == 1 && shape->extent == 1;
}

/* Another reference to @p l (NULL is ignored); returns it. */
tj_layout_t *tj_layout_hold(const tj_layout_t *l);

/* Drop a reference (NULL is ignored); the last one frees the layout, its device tables first. */
void tj_layout_release(tj_layout_t *l);

/* The hooks through which a layout's device slot is kept by the layer that fills it, registered
 * once, before the first slot is filled: as a datatype engine's backend slot in its type, the
 * type layer calls them and knows nothing else of what the slot holds. */
typedef struct {
    /* The layout's last reference went and its slot is filled: detach the slot
     * (tj_layout_device_detach) and free what it held; the layout is freed after it returns. */
    void (*release)(tj_layout_t *l);
} tj_layout_hooks_t;

void tj_layout_set_hooks(const tj_layout_hooks_t *hooks);

/* What the slot of @p l holds, or NULL. */
tj_layout_device_t *tj_layout_device(const tj_layout_t *l);

/* Fill the empty slot of @p l with @p device: true; false when another thread filled it first.
 * *@p kept is what the slot holds after the call. */
bool tj_layout_device_attach(tj_layout_t *l, tj_layout_device_t *device, tj_layout_device_t **kept);

/* Empty the slot of @p l; returns what it held (NULL when it was empty). */
tj_layout_device_t *tj_layout_device_detach(tj_layout_t *l);

/* Wrap @p *l in a stream: @p count copies @p stride bytes apart at @p offset, as a new outermost
 * frame dimension. *l is replaced by a layout of its own when it is shared. TJ_ERR_NOT_STRIDED
 * when the frame is full. */
tj_status_t tj_layout_stream(tj_layout_t **l, int64_t offset, int64_t count, int64_t stride);

/* Finish @p *l for a type of MPI extent @p extent and size @p size: its word, device table
 * element sizes and hash. TJ_ERR_NOT_STRIDED when its size disagrees (a translation bug; the
 * type stays with the system MPI). *l is replaced by a layout of its own when it is shared. */
tj_status_t tj_layout_finish(tj_layout_t **l, int64_t extent, int64_t size);

/* The strided block a finished layout equals (one part whose frame, repetitions and shape make
 * at most 16 dimensions): true with *block set, else false. */
bool tj_layout_as_block(const tj_layout_t *l, tj_block_t *block);

/* What a kernel of the finished layout @p l depends on: @p l itself when its table is baked into
 * the source, else a copy of it without its parts (a kernel outlives its type, and a table
 * kernel serves every layout of its frame and shapes). A reference the caller releases. */
tj_status_t tj_layout_signature(const tj_layout_t *l, tj_layout_t **out);

/* The strided chain a layout of one part equals (simplified, its offset on the outermost node),
 * finished or not: true with *ir set, else false (several parts, or a chain too long). */
bool tj_layout_as_chain(const tj_layout_t *l, tj_ir_t *ir);

/* Frame elements of one object (the product of the frame counts). */
int64_t tj_layout_elements(const tj_layout_t *l);

/* Byte offset of frame element @p e (0 <= e < tj_layout_elements) from frame element 0. */
int64_t tj_layout_frame_offset(const tj_layout_t *l, int64_t e);

/* Whether @p count objects of the finished layout address no byte twice (a parallel unpack
 * cannot race). Conservative: parts whose footprints interleave count as overlapping. */
bool tj_layout_disjoint(tj_layout_t *l, int64_t count);

/* What a finished layout is made of, as a parts kernel's manifest line names it
 * (src/kernels/layoutline.c): its frame, its shapes (blocks at start 0; the run shape for runs),
 * and either its baked table (the parts, with the MPI extent) or, for a table in device memory,
 * the kernel's word and the element sizes of the table, without the parts. */
typedef struct {
    int nframe;
    const int64_t *fcounts, *fstrides;
    int nshapes;
    const tj_block_t *shapes;
    bool baked;
    int64_t extent;                  /* baked: the step between objects */
    int64_t nparts;                  /* baked: 1 to TJ_LAYOUT_BAKED_MAX parts; else 0 */
    const int64_t *disp, *len;       /* baked: each part's first byte and its packed bytes */
    const uint8_t *shape;            /* baked: each part's shape */
    int word, pre_bytes, disp_bytes; /* a device table's: W (1 to 16), 4 or 8, 4 or 8 */
} tj_layout_parts_t;

/* The finished layout @p p describes; TJ_ERR_INVALID when it is not one (a shape out of range or
 * not at start 0, a part of no bytes or not whole repetitions of its shape, sizes out of range,
 * a baked table that finishing would not bake), TJ_ERR_NOMEM. */
tj_status_t tj_layout_assemble(const tj_layout_parts_t *p, tj_layout_t **out);

/* One-line text: "parts=N shapes=S frame=C1xC2 table=baked|device W=8 size=... extent=...".
 * Returns the length needed, as snprintf. */
int tj_layout_format(const tj_layout_t *l, char *buf, size_t len);

#endif /* TJ_TYPE_LAYOUT_H */
