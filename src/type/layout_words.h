/* SPDX-License-Identifier: BSD-3-Clause */
/* The words of a layout's parts: a parts kernel of a baked layout moves each part in the widest
 * word its own bytes allow, and a long run whose typed and packed bytes agree modulo a wider word
 * in that word with edges, as a block's kernels do; the word of the kernel a launch takes. */
#ifndef TJ_TYPE_LAYOUT_WORDS_H
#define TJ_TYPE_LAYOUT_WORDS_H

#include "type/layout.h"

/* Consecutive packed bytes of one part that a parts kernel moves in words of one size: a whole
 * part, or the head, middle or tail of a long run. */
typedef struct {
    int64_t part;
    int64_t at;  /* its first byte, from the part's first packed byte */
    int64_t len; /* a multiple of word */
    int word;
} tj_layout_segment_t;

/* Most segments one part is cut into: a middle, and a head and a tail of at most 4 each. */
#define TJ_LAYOUT_PART_SEGMENTS 9

/* A kernel moves the parts in words of their own when that takes at most (GAIN - 1) / GAIN of
 * the units of the word they all share: below, its choice of word per unit and the sectors that
 * words of several sizes share between requests cost more than the units saved (the parts
 * kernels of bench/kernel-quality; bench/RESULTS.md). */
#define TJ_LAYOUT_WORDS_GAIN 4

/* The segments of every part of one frame element of the finished baked layout @p l, in packed
 * order, for a kernel whose buffers (the typed one at the layout's start) are aligned to @p cap
 * (1 to 16), for launches of one object (@p one: the extent and the object's size do not narrow
 * its words) or of any number. Part p's word is the largest of 16, 8, 4, 2, 1, at most @p cap,
 * dividing its displacement, its packed offset and length, its shape's word and step between
 * repetitions, every frame stride, the packed bytes of a frame element and, for several objects,
 * the extent and the object's size: every byte of the part in every frame element and object
 * lies there at that word on both sides. A run of at least TJ_BLOCK_EDGE_RUN_WORDS words of the
 * largest of 16, 8, 4, 2, 1 dividing its displacement minus its packed offset and those frame
 * and object steps (its agreement) moves its middle in the agreement (at most @p cap) and its
 * head and tail in narrower aligned pieces, as templates/edges.cu cuts a run. Where that saves
 * fewer units than TJ_LAYOUT_WORDS_GAIN asks, every part is one segment in the word they share.
 * Writes at most @p max segments to @p out; returns how many there are. */
int64_t tj_layout_segments(const tj_layout_t *l, int cap, bool one, tj_layout_segment_t *out,
                           int64_t max);

/* The word of the parts kernel of a launch of @p count objects of the finished layout @p l whose
 * frame element 0 of object 0 is at @p typed_at and whose packed bytes begin at @p packed_at, and
 * in *@p one whether it is the kernel of one object. A baked layout's: the widest word its
 * segments take at the alignment both addresses allow (so that two alignments whose kernels are
 * the same share it), of one object only when count is 1 and that kernel differs; a device
 * table's: its W narrowed by both addresses (never of one object). */
int tj_layout_launch_word(const tj_layout_t *l, int64_t count, uintptr_t typed_at,
                          uintptr_t packed_at, bool *one);

/* The parts kernels of @p l launched on buffers aligned to 16 bytes (device allocations are) at
 * packed position 0: words[0] for several objects, then words[1] with one[1] for one object when
 * that kernel differs. Returns 1 or 2, how many. */
int tj_layout_launch_words_aligned(const tj_layout_t *l, int words[2], bool one[2]);

/* Whether (@p word, @p one) names a parts kernel of @p l that some launch takes
 * (tj_layout_launch_word). */
bool tj_layout_kernel_word(const tj_layout_t *l, int word, bool one);

/* The packed units (words of every size) of one object that the parts kernel (@p word, @p one)
 * of @p l moves: its size over W for a device table. */
int64_t tj_layout_kernel_units(const tj_layout_t *l, int word, bool one);

#endif /* TJ_TYPE_LAYOUT_WORDS_H */
