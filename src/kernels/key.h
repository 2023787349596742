/* SPDX-License-Identifier: BSD-3-Clause */
/* How kernels are named on disk: the key text of the disk cache, the line the manifest of the
 * cache records for a kernel and how it reads back, and what a key names in words. (The key of
 * this process's memory table is each kind's: kernels/kind.h.) */
#ifndef TJ_KERNELS_KEY_H
#define TJ_KERNELS_KEY_H

#include <stddef.h>

#include "cache/manifest.h"
#include "kernels/spec.h"

/* Room for the longest manifest line (the manifest's own limit) and its NUL. */
#define TJ_KEY_LINE_MAX (TJ_STORE_LINE_MAX + 1)

/* The disk cache key of @p spec compiled from @p source, its exact text (tj_kernel_source):
 * header lines "name=value" (the NVRTC version and build, its options, the target, the kernel
 * function, and "manifest=LINE" for a kernel the manifest records: trimming drops that line
 * with the entry), a blank line, then the source. Everything that changes the binary is in it;
 * the generator and the library version only through the source they produce, so a library
 * whose kernels read the same keeps its cache. malloc'd text; NULL when out of memory or
 * without NVRTC. */
char *tj_key_text(const tj_kernel_spec_t *spec, const char *source);

/* What a disk key names, in one line (`typejit cache list`): the manifest's words without the
 * target, "pack W=8 start=0 extent=...", "fused unpack W=8 of 3 blocks", "generic pack"; for a
 * key of another form, its first line. */
void tj_key_describe(const char *key, char *buf, size_t len);

/* The toolchain level of the disk layout (cache/entry.h): readable, and different for every NVRTC
 * build, "nvrtc-13.0-65be0db342ad". */
void tj_key_toolchain(char *buf, size_t len);

/* The manifest line of @p spec: "TARGET DIRECTION W=WORD [edge=EDGE] BLOCK" for one block (with
 * edges of EDGE bytes), "TARGET DIRECTION W=WORD fused [W=W1 ]BLOCK | [W=W2 ]BLOCK | ..." for a
 * fused kernel (its blocks in order, WORD the widest of their words, each narrower one written
 * before its block), each BLOCK moved to start 0 as tj_block_format writes it, "TARGET
 * DIRECTION W=WORD parts [serial] LAYOUT" for a parts kernel (tj_layoutline_format). Returns
 * the length needed, as snprintf; -1 for the kernels the manifest does not record (the generic
 * kernels; those that swap or reduce each word). */
int tj_key_manifest_line(const tj_kernel_spec_t *spec, char *buf, size_t len);

/* Parse a manifest line (for `typejit warm`): TJ_ERR_PARSE for anything malformed. A parts
 * kernel's line holds its layout (tj_layoutline_format): released by tj_key_line_release. */
tj_status_t tj_key_manifest_parse(const char *line, tj_spec_line_t *parsed);

/* Release what a parsed line holds. */
void tj_key_line_release(tj_spec_line_t *parsed);

/* The spec of a parsed line (pointing into it). */
tj_kernel_spec_t tj_key_line_spec(const tj_spec_line_t *parsed);

#endif /* TJ_KERNELS_KEY_H */
