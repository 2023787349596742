/* SPDX-License-Identifier: BSD-3-Clause */
/* The trailer the NVRTC shim appends to every PTX and CUBIN image: the CUDA source the image was
 * compiled from, which the fake driver compiles for the host to run the image's kernels. */
#ifndef TJ_TESTS_FAKECUDA_TRAILER_H
#define TJ_TESTS_FAKECUDA_TRAILER_H

#include <stdint.h>
#include <string.h>

/* Layout, right after the image's last byte (a CUBIN's end as its ELF headers give it, a PTX's
 * terminating NUL), all integers little-endian and unaligned:
 *
 *   char     magic[16]     FC_TRAILER_MAGIC, no NUL
 *   uint32_t nvrtc_major   nvrtcVersion() of the real NVRTC that compiled the image
 *   uint32_t nvrtc_minor
 *   uint64_t source_len    bytes of source that follow
 *   char     source[source_len]  the program's source as given to nvrtcCreateProgram, no NUL */
#define FC_TRAILER_MAGIC     "FAKECUDA-SOURCE1"
#define FC_TRAILER_MAGIC_LEN 16

typedef struct {
    char magic[FC_TRAILER_MAGIC_LEN];
    uint32_t nvrtc_major, nvrtc_minor;
    uint64_t source_len;
} fc_trailer_t;

_Static_assert(sizeof(fc_trailer_t) == 32, "the trailer header is 32 bytes with no padding");

/* Reads the trailer at @p p; 1 if there is one. */
static inline int fc_trailer_read(const void *p, fc_trailer_t *out)
{
    memcpy(out, p, sizeof *out);
    return memcmp(out->magic, FC_TRAILER_MAGIC, FC_TRAILER_MAGIC_LEN) == 0;
}

#endif /* TJ_TESTS_FAKECUDA_TRAILER_H */
