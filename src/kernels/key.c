/* Kernel names: disk key text, memory-table key and manifest lines. */
#include "kernels/key.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit/nvrtc.h"
#include "util/common.h"
#include "typejit.h"

static const char *dir_name(tj_dir_t dir)
{
    return dir == TJ_DIR_PACK ? "pack" : "unpack";
}

/* A growing text; NULL after an allocation failed. */
typedef struct {
    char *buf;
    size_t len, cap;
} text_t;

static void text_printf(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void text_printf(text_t *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (t->buf == NULL && t->cap != 0)
        return;
    for (;;) {
        size_t room = t->cap - t->len;
        va_start(ap, fmt);
        n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            free(t->buf);
            t->buf = NULL;
            t->cap = 1;
            return;
        }
        if (t->buf != NULL && (size_t)n < room) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap : 1024;
        while (cap < t->len + (size_t)n + 1)
            cap *= 2;
        char *grown = realloc(t->buf, cap);
        if (grown == NULL) {
            free(t->buf);
            t->buf = NULL;
            t->cap = 1;
            return;
        }
        t->buf = grown;
        t->cap = cap;
    }
}

char *tj_key_text(const tj_kernel_spec_t *spec, const char *source)
{
    text_t t = {0};
    char line[TJ_KEY_LINE_MAX];
    int major, minor, n;

    if (tj_nvrtc_version(&major, &minor) != TJ_OK)
        return NULL;
    /* What NVRTC turns the source into depends on NVRTC itself, its options and the target;
     * everything else (the generator, the templates, the thread-block size the launch gives,
     * which the source bakes in) is in the source. */
    text_printf(&t, "typejit kernel 2\nnvrtc=%d.%d build=%s\noptions=%s\ntarget=%s\nfunction=%s\n",
                major, minor, tj_nvrtc_build_id(), tj_nvrtc_options(), spec->target,
                tj_kernel_name(spec));
    n = tj_key_manifest_line(spec, line, sizeof(line));
    if (n > 0 && (size_t)n < sizeof(line))
        text_printf(&t, "manifest=%s\n", line);
    text_printf(&t, "\n%s", source);
    return t.buf;
}

void tj_key_toolchain(char *buf, size_t len)
{
    int major = 0, minor = 0;
    tj_nvrtc_version(&major, &minor);
    snprintf(buf, len, "nvrtc-%d.%d-%.12s", major, minor, tj_nvrtc_build_id());
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
        /* "TARGET DIR W=N BLOCK" or "TARGET DIR W=N fused BLOCK | BLOCK ...", without the target
         * (the folder says it). */
        const char *rest = memchr(manifest, ' ', mlen), *fused;
        int blocks = 1;
        if (rest == NULL) {
            snprintf(buf, len, "%.*s", (int)mlen, manifest);
            return;
        }
        rest++;
        mlen -= (size_t)(rest - manifest);
        {
            /* "DIR W=N parts [serial] table=..." : "parts pack W=8 serial, table=baked, 3 shapes"
             */
            const char *parts = strstr(rest, " parts ");
            if (parts != NULL && (size_t)(parts - rest) < mlen) {
                const char *table = parts + 7;
                int shapes = 0;
                bool serial = strncmp(table, "serial ", 7) == 0;
                for (const char *q = table; (q = strstr(q, " | ")) != NULL &&
                                            (size_t)(q - rest) < mlen && strncmp(q, " | parts=", 9);
                     q += 3)
                    shapes++;
                snprintf(buf, len, "parts %.*s%s, %s, %d shape%s", (int)(parts - rest), rest,
                         serial ? " serial" : "",
                         strncmp(table + (serial ? 7 : 0), "table=baked", 11) == 0 ? "baked table"
                                                                                   : "device table",
                         shapes, shapes == 1 ? "" : "s");
                return;
            }
        }
        fused = strstr(rest, " fused ");
        if (fused == NULL || (size_t)(fused - rest) > mlen) {
            snprintf(buf, len, "%.*s", (int)mlen, rest);
            return;
        }
        for (const char *q = fused; (q = strstr(q, " | ")) != NULL && (size_t)(q - rest) < mlen;
             q += 3)
            blocks++;
        snprintf(buf, len, "fused %.*s of %d blocks", (int)(fused - rest), rest, blocks);
        return;
    }
    if (function != NULL && flen > 11 && strncmp(function, "tj_generic_", 11) == 0) {
        snprintf(buf, len, "generic %.*s", (int)(flen - 11), function + 11);
        return;
    }
    snprintf(buf, len, "%.*s", (int)first, key);
}

/* The W of @p spec's manifest line: a fused kernel's widest block word, else its word. */
static int line_word(const tj_kernel_spec_t *spec)
{
    int w = spec->word;

    if (spec->kind == TJ_KERNEL_FUSED && spec->words != NULL) {
        w = 1;
        for (int i = 0; i < spec->nblocks; i++)
            w = TJ_MAX(w, spec->words[i]);
    }
    return w;
}

tj_hash_t tj_key_memo(const tj_kernel_spec_t *spec)
{
    typedef struct {
        int32_t ndims, word;
        int64_t extent, counts[TJ_BLOCK_MAX_DIMS], strides[TJ_BLOCK_MAX_DIMS];
    } rec_t;
    struct {
        char target[TJ_TARGET_MAX];
        int32_t kind, dir, word, edge, n, pad;
        rec_t blocks[TJ_FUSED_MAX];
    } rec;
    int n = spec->nblocks < 0 ? 0 : spec->nblocks > TJ_FUSED_MAX ? TJ_FUSED_MAX : spec->nblocks;

    if (spec->kind == TJ_KERNEL_SOURCE) {
        /* Its identity is its text: the target, the function and the source, hashed. */
        tj_hash_t h = tj_hash_bytes(spec->source, strlen(spec->source));
        char head[TJ_TARGET_MAX + TJ_KERNEL_NAME_MAX + 2 + 2 * sizeof(h)];
        size_t len = 0;
        memset(head, 0, sizeof(head));
        snprintf(head, TJ_TARGET_MAX, "%s", spec->target);
        len += TJ_TARGET_MAX;
        snprintf(head + len, TJ_KERNEL_NAME_MAX, "%s", spec->name);
        len += TJ_KERNEL_NAME_MAX;
        memcpy(head + len, &h, sizeof(h));
        return tj_hash_bytes(head, len + sizeof(h));
    }
    if (spec->kind == TJ_KERNEL_PARTS) {
        /* Its identity is the layout's kernel hash (frame, shapes, element sizes, a baked
         * table), with the word, direction, serial launch and target. */
        struct {
            char target[TJ_TARGET_MAX];
            int32_t kind, dir, word, serial;
            uint64_t hash[2];
        } r;
        memset(&r, 0, sizeof(r));
        snprintf(r.target, sizeof(r.target), "%s", spec->target);
        r.kind = (int32_t)spec->kind;
        r.dir = (int32_t)spec->dir;
        r.word = spec->word;
        r.serial = spec->serial;
        r.hash[0] = spec->layout->hash[0];
        r.hash[1] = spec->layout->hash[1];
        return tj_hash_bytes(&r, sizeof(r));
    }
    memset(&rec, 0, sizeof(rec));
    snprintf(rec.target, sizeof(rec.target), "%s", spec->target);
    rec.kind = (int32_t)spec->kind;
    rec.dir = (int32_t)spec->dir;
    rec.word = line_word(spec);
    rec.edge = spec->edge;
    rec.n = n;
    /* The start is left out: kernels are built for their blocks moved to start 0. */
    for (int i = 0; i < n; i++) {
        const tj_block_t *b = &spec->blocks[i];
        rec.blocks[i].ndims = b->ndims;
        rec.blocks[i].word = tj_kernel_block_word(spec, i);
        rec.blocks[i].extent = b->extent;
        for (int d = 0; d < b->ndims && d < TJ_BLOCK_MAX_DIMS; d++) {
            rec.blocks[i].counts[d] = b->counts[d];
            rec.blocks[i].strides[d] = b->strides[d];
        }
    }
    return tj_hash_bytes(&rec, (size_t)((char *)&rec.blocks[n] - (char *)&rec));
}

int tj_key_manifest_line(const tj_kernel_spec_t *spec, char *buf, size_t len)
{
    text_t t = {0};
    char text[1024];
    int n;

    if (spec->kind == TJ_KERNEL_GENERIC || spec->kind == TJ_KERNEL_SOURCE)
        return -1;
    if (spec->kind == TJ_KERNEL_PARTS) {
        char *lay;
        int m = tj_layout_kernel_format(spec->layout, NULL, 0);
        if (m < 0 || (lay = malloc((size_t)m + 1)) == NULL)
            return -1;
        tj_layout_kernel_format(spec->layout, lay, (size_t)m + 1);
        n = snprintf(buf, len, "%s %s W=%d parts%s %s", spec->target, dir_name(spec->dir),
                     spec->word, spec->serial ? " serial" : "", lay);
        free(lay);
        return n;
    }
    text_printf(&t, "%s %s W=%d%s", spec->target, dir_name(spec->dir), line_word(spec),
                spec->kind == TJ_KERNEL_FUSED ? " fused" : "");
    if (spec->edge != 0)
        text_printf(&t, " edge=%d", spec->edge);
    for (int i = 0; i < spec->nblocks; i++) {
        tj_block_t b = tj_block_at_zero(&spec->blocks[i]);
        tj_block_format(&b, text, sizeof(text));
        text_printf(&t, "%s", i == 0 ? " " : " | ");
        /* A fused block moved with a narrower word than the line's says so. */
        if (tj_kernel_block_word(spec, i) != line_word(spec))
            text_printf(&t, "W=%d ", tj_kernel_block_word(spec, i));
        text_printf(&t, "%s", text);
    }
    if (t.buf == NULL)
        return -1;
    n = snprintf(buf, len, "%s", t.buf);
    free(t.buf);
    return n;
}

tj_status_t tj_key_manifest_parse(const char *line, tj_key_line_t *parsed)
{
    char tgt[TJ_TARGET_MAX], d[16], text[1024];
    const char *p;
    int w, used = 0;

    if (sscanf(line, "%31s %15s W=%d %n", tgt, d, &w, &used) != 3 || used == 0)
        return TJ_ERR_PARSE;
    if (strcmp(d, "pack") != 0 && strcmp(d, "unpack") != 0)
        return TJ_ERR_PARSE;
    if (w != 1 && w != 2 && w != 4 && w != 8 && w != 16)
        return TJ_ERR_PARSE;
    memset(parsed, 0, sizeof(*parsed));
    p = line + used;
    if (strncmp(p, "parts ", 6) == 0) {
        p += 6;
        parsed->kind = TJ_KERNEL_PARTS;
        if (strncmp(p, "serial ", 7) == 0) {
            if (strcmp(d, "unpack") != 0)
                return TJ_ERR_PARSE;
            parsed->serial = true;
            p += 7;
        }
        if (tj_layout_kernel_parse(p, w, &parsed->layout) != TJ_OK)
            return TJ_ERR_PARSE;
        if (parsed->layout->word % w != 0) {
            tj_key_line_release(parsed);
            return TJ_ERR_PARSE;
        }
        parsed->word = w;
        parsed->dir = strcmp(d, "pack") == 0 ? TJ_DIR_PACK : TJ_DIR_UNPACK;
        snprintf(parsed->target, sizeof(parsed->target), "%s", tgt);
        return TJ_OK;
    }
    parsed->kind = TJ_KERNEL_SINGLE;
    if (strncmp(p, "fused ", 6) == 0) {
        parsed->kind = TJ_KERNEL_FUSED;
        p += 6;
    } else if (strncmp(p, "edge=", 5) == 0) {
        int e = 0;
        if (sscanf(p, "edge=%d %n", &e, &used) != 1 || used == 0 ||
            (e != 1 && e != 2 && e != 4 && e != 8) || e >= w)
            return TJ_ERR_PARSE;
        parsed->edge = e;
        p += used;
    }
    /* One block, or a fused kernel's blocks separated by " | ", each after its word when that
     * is not the line's. */
    for (;;) {
        const char *end;
        size_t n;
        tj_block_t *b = &parsed->blocks[parsed->nblocks];
        int bw = w;
        if (parsed->nblocks == TJ_FUSED_MAX)
            return TJ_ERR_PARSE;
        if (parsed->kind == TJ_KERNEL_FUSED && strncmp(p, "W=", 2) == 0) {
            used = 0;
            if (sscanf(p, "W=%d %n", &bw, &used) != 1 || used == 0 ||
                (bw != 1 && bw != 2 && bw != 4 && bw != 8) || bw >= w)
                return TJ_ERR_PARSE;
            p += used;
        }
        end = strstr(p, " | ");
        n = end != NULL ? (size_t)(end - p) : strlen(p);
        if (n >= sizeof(text))
            return TJ_ERR_PARSE;
        memcpy(text, p, n);
        text[n] = '\0';
        if (tj_block_parse(text, b) != TJ_OK ||
            (parsed->edge != 0 ? b->word % parsed->edge != 0 || b->edges_word % w != 0
                               : b->word % bw != 0))
            return TJ_ERR_PARSE;
        parsed->words[parsed->nblocks++] = bw;
        if (end == NULL)
            break;
        if (parsed->kind != TJ_KERNEL_FUSED)
            return TJ_ERR_PARSE;
        p = end + 3;
    }
    parsed->word = w;
    parsed->dir = strcmp(d, "pack") == 0 ? TJ_DIR_PACK : TJ_DIR_UNPACK;
    snprintf(parsed->target, sizeof(parsed->target), "%s", tgt);
    return TJ_OK;
}

tj_kernel_spec_t tj_key_line_spec(const tj_key_line_t *parsed)
{
    tj_kernel_spec_t s = {.kind = parsed->kind,
                          .blocks = parsed->kind == TJ_KERNEL_PARTS ? NULL : parsed->blocks,
                          .nblocks = parsed->nblocks,
                          .word = parsed->word,
                          .edge = parsed->edge,
                          .words = parsed->kind == TJ_KERNEL_FUSED ? parsed->words : NULL,
                          .dir = parsed->dir,
                          .target = parsed->target,
                          .layout = parsed->layout,
                          .serial = parsed->serial};
    return s;
}

void tj_key_line_release(tj_key_line_t *parsed)
{
    tj_layout_release(parsed->layout);
    parsed->layout = NULL;
}
