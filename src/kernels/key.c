/* SPDX-License-Identifier: BSD-3-Clause */
/* Kernel names: disk key text, memory-table key and manifest lines. */
#include "kernels/key.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit/nvrtc.h"
#include "kernels/kernel.h"
#include "kernels/kind.h"
#include "typejit.h"

char *tj_key_text(const tj_kernel_spec_t *spec, const char *source)
{
    char *text = NULL, line[TJ_KEY_LINE_MAX];
    size_t size = 0;
    int major, minor, n;
    FILE *f;

    if (tj_nvrtc_version(&major, &minor) != TJ_OK || (f = open_memstream(&text, &size)) == NULL)
        return NULL;
    /* What NVRTC turns the source into depends on NVRTC itself, its options and the target;
     * everything else (the generator, the templates, the thread-block size the launch gives,
     * which the source bakes in) is in the source. */
    fprintf(f, "typejit kernel 2\nnvrtc=%d.%d build=%s\noptions=%s\ntarget=%s\nfunction=%s\n",
            major, minor, tj_nvrtc_build_id(), tj_nvrtc_options(), spec->target,
            tj_kernel_name(spec));
    n = tj_key_manifest_line(spec, line, sizeof(line));
    if (n > 0 && (size_t)n < sizeof(line))
        fprintf(f, "manifest=%s\n", line);
    fprintf(f, "\n%s", source);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

void tj_key_toolchain(char *buf, size_t len)
{
    int major = 0, minor = 0;
    tj_nvrtc_version(&major, &minor);
    snprintf(buf, len, "nvrtc-%d.%d-%.12s", major, minor, tj_nvrtc_build_id());
}

/* The kind whose manifest lines carry @p tag first (after "W=WORD "), else the kind whose lines
 * carry none. */
static const tj_kind_t *kind_of_line(const char *rest, size_t len, size_t *tag_len)
{
    const tj_kind_t *untagged = NULL;

    *tag_len = 0;
    for (int i = 0; i < TJ_KERNEL_KINDS; i++) {
        const tj_kind_t *k = tj_kind_of((tj_kernel_kind_t)i);
        size_t n;
        if (k->parse == NULL)
            continue; /* the manifest has no lines of it */
        if (k->tag == NULL) {
            untagged = k;
            continue;
        }
        n = strlen(k->tag);
        if (n < len && strncmp(rest, k->tag, n) == 0 && rest[n] == ' ') {
            *tag_len = n + 1;
            return k;
        }
    }
    return untagged;
}

void tj_key_describe(const char *key, char *buf, size_t len)
{
    const char *manifest = NULL, *function = NULL;
    size_t mlen = 0, flen = 0, first = strcspn(key, "\n");

    if (strncmp(key, "typejit kernel 2\n", 17) != 0) {
        snprintf(buf, len, "%.*s", (int)first, key);
        return;
    }
    /* The header lines, up to the blank line before the source. */
    for (const char *p = key; *p != '\0' && *p != '\n';) {
        size_t n = strcspn(p, "\n");
        if (strncmp(p, "manifest=", 9) == 0)
            manifest = p + 9, mlen = n - 9;
        else if (strncmp(p, "function=", 9) == 0)
            function = p + 9, flen = n - 9;
        p += n + (p[n] == '\n');
    }
    if (manifest != NULL) {
        /* "TARGET DIR W=N [TAG ]REST", described without the target (the folder says it). */
        const char *rest = memchr(manifest, ' ', mlen), *w, *tail;
        const tj_kind_t *kind;
        size_t hlen, tag;
        if (rest == NULL ||
            (w = memchr(rest + 1, ' ', mlen - (size_t)(rest + 1 - manifest))) == NULL ||
            (tail = memchr(w + 1, ' ', mlen - (size_t)(w + 1 - manifest))) == NULL) {
            snprintf(buf, len, "%.*s", (int)(rest ? mlen - (size_t)(rest + 1 - manifest) : mlen),
                     rest ? rest + 1 : manifest);
            return;
        }
        rest++;
        hlen = (size_t)(tail - rest);
        tail++;
        kind = kind_of_line(tail, mlen - (size_t)(tail - manifest), &tag);
        if (kind != NULL && kind->describe_key(rest, hlen, tail + tag,
                                               mlen - (size_t)(tail + tag - manifest), buf, len))
            return;
        snprintf(buf, len, "%.*s", (int)(mlen - (size_t)(rest - manifest)), rest);
        return;
    }
    for (int i = 0; function != NULL && i < TJ_KERNEL_KINDS; i++)
        if (tj_kind_of((tj_kernel_kind_t)i)->describe_key(function, flen, NULL, 0, buf, len))
            return;
    snprintf(buf, len, "%.*s", (int)first, key);
}

int tj_key_manifest_line(const tj_kernel_spec_t *spec, char *buf, size_t len)
{
    const tj_kind_t *kind = tj_kind_of(spec->kind);
    return kind->line != NULL ? kind->line(spec, buf, len) : -1;
}

tj_status_t tj_key_manifest_parse(const char *line, tj_spec_line_t *parsed)
{
    char tgt[TJ_TARGET_MAX], d[16];
    const tj_kind_t *kind;
    size_t tag;
    int w, used = 0;
    tj_status_t st;

    if (sscanf(line, "%31s %15s W=%d %n", tgt, d, &w, &used) != 3 || used == 0)
        return TJ_ERR_PARSE;
    if (strcmp(d, "pack") != 0 && strcmp(d, "unpack") != 0)
        return TJ_ERR_PARSE;
    if (w != 1 && w != 2 && w != 4 && w != 8 && w != 16)
        return TJ_ERR_PARSE;
    memset(parsed, 0, sizeof(*parsed));
    parsed->word = w;
    parsed->dir = strcmp(d, "pack") == 0 ? TJ_DIR_PACK : TJ_DIR_UNPACK;
    snprintf(parsed->target, sizeof(parsed->target), "%s", tgt);
    if ((kind = kind_of_line(line + used, strlen(line + used), &tag)) == NULL)
        return TJ_ERR_PARSE;
    if ((st = kind->parse(line + used + tag, parsed)) != TJ_OK)
        tj_key_line_release(parsed);
    return st;
}

tj_kernel_spec_t tj_key_line_spec(const tj_spec_line_t *parsed)
{
    tj_kernel_spec_t s = {.kind = parsed->kind,
                          .blocks = parsed->nblocks > 0 ? parsed->blocks : NULL,
                          .nblocks = parsed->nblocks,
                          .word = parsed->word,
                          .edge = parsed->edge,
                          .words = parsed->words_given ? parsed->words : NULL,
                          .dir = parsed->dir,
                          .target = parsed->target,
                          .layout = parsed->layout,
                          .serial = parsed->serial,
                          .one_object = parsed->one_object};
    return s;
}

void tj_key_line_release(tj_spec_line_t *parsed)
{
    tj_layout_release(parsed->layout);
    parsed->layout = NULL;
}
