/* How kernels are named: the key text of the disk cache, the key of this process's memory
 * table, and the line the manifest of the cache records for a kernel. */
#ifndef TJ_KERNELS_KEY_H
#define TJ_KERNELS_KEY_H

#include <stddef.h>

#include "cache/hash.h"
#include "cache/manifest.h"
#include "kernels/kernel.h"

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

/* The memory table's key of @p spec: the same identity as the key text (what else that text
 * holds is fixed for the process), hashed from packed records so that a hit formats no text. */
tj_hash_t tj_key_memo(const tj_kernel_spec_t *spec);

/* The manifest line of @p spec: "TARGET DIRECTION W=WORD [edge=EDGE] BLOCK" for one block (with
 * edges of EDGE bytes), "TARGET DIRECTION W=WORD fused [W=W1 ]BLOCK | [W=W2 ]BLOCK | ..." for a
 * fused kernel (its blocks in order, WORD the widest of their words, each narrower one written
 * before its block), each BLOCK moved to start 0 as tj_block_format writes it, "TARGET
 * DIRECTION W=WORD parts [serial] LAYOUT" for a parts kernel (tj_layout_kernel_format). Returns
 * the length needed, as snprintf; -1 for the generic kernels, which the manifest does not
 * record. */
int tj_key_manifest_line(const tj_kernel_spec_t *spec, char *buf, size_t len);

/* A manifest line parsed: the spec it names, with room for its blocks. */
typedef struct {
    tj_kernel_kind_t kind;
    tj_block_t blocks[TJ_FUSED_MAX];
    int words[TJ_FUSED_MAX]; /* FUSED: each block's word */
    int nblocks;
    int word, edge;
    tj_dir_t dir;
    char target[TJ_TARGET_MAX];
    tj_layout_t *layout; /* PARTS: the layout the line names (tj_key_line_release) */
    bool serial;
} tj_key_line_t;

/* Parse a manifest line (for `typejit warm`): TJ_ERR_PARSE for anything malformed. A parts
 * kernel's line holds its layout (tj_layout_kernel_format): released by tj_key_line_release. */
tj_status_t tj_key_manifest_parse(const char *line, tj_key_line_t *parsed);

/* Release what a parsed line holds. */
void tj_key_line_release(tj_key_line_t *parsed);

/* The spec of a parsed line (pointing into it). */
tj_kernel_spec_t tj_key_line_spec(const tj_key_line_t *parsed);

#endif /* TJ_KERNELS_KEY_H */
