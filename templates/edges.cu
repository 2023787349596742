/* SPDX-License-Identifier: BSD-3-Clause */
            /* Slot j of run `run` of object k, in a kernel with edges (templates/edges.cu: the
             * statements jit/gen_strided.c puts where a kernel of templates/strided.cu moves a
             * word). The launch chose W so that every run's typed bytes agree with their packed
             * position modulo W (tj_block_words). The slot is the j-th W-aligned window of the
             * packed buffer that the run meets: a window inside the run is one W-byte word on both
             * sides; of a window the run covers only in part (its head, its tail), the run's bytes
             * [x, end) of the window are moved in aligned pieces of the edge word or wider, growing
             * from x to the next W boundary, shrinking from there to the end. */
            {
                typedef @REL@ rel_t;
                const long long at = k * OBJECT_BYTES + (long long)run * RUN; /* packed byte */
                const unsigned phase =
                    (unsigned)((unsigned long long)(packed + at) & (sizeof(word_t) - 1u));
                /* The window's first byte from the run's; rel_t holds every such offset. */
                const rel_t o = (rel_t)j * (rel_t)sizeof(word_t) - (rel_t)phase;
                @TO@;
                @FROM@;
                if (@FULL@) {
                    *(word_t *)to = *(const word_t *)from;
                } else if (o < (rel_t)RUN) {
                    unsigned x = o < 0 ? phase : 0u;
                    const unsigned end = (rel_t)RUN - o < (rel_t)sizeof(word_t)
                                             ? (unsigned)((rel_t)RUN - o)
                                             : (unsigned)sizeof(word_t);
@PIECES@
                }
            }
