/* SPDX-License-Identifier: BSD-3-Clause */
/* The manifest text of a layout (see layoutline.h). */
#include "kernels/layoutline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit/text.h"

int tj_layoutline_format(const tj_layout_t *l, char *buf, size_t len)
{
    text_t t = {0};
    char block[1024];

    if (l->baked)
        tj_text_printf(&t, "table=baked extent=%lld", (long long)l->extent);
    else
        tj_text_printf(&t, "table=device pre=%d disp=%d", l->pre_bytes, l->disp_bytes);
    tj_text_printf(&t, " frame=%s", l->nframe ? "" : "-");
    for (int d = 0; d < l->nframe; d++)
        tj_text_printf(&t, "%s%lld:%lld", d ? "," : "", (long long)l->fcounts[d],
                       (long long)l->fstrides[d]);
    for (int s = 0; s < l->nshapes; s++) {
        if (tj_layout_is_run(&l->shapes[s])) {
            tj_text_printf(&t, " | runs");
            continue;
        }
        tj_block_format(&l->shapes[s], block, sizeof(block));
        tj_text_printf(&t, " | %s", block);
    }
    if (l->baked) {
        tj_text_printf(&t, " | parts=");
        for (int64_t p = 0; p < l->nparts; p++)
            tj_text_printf(&t, "%s%lld:%lld:%d", p ? "," : "", (long long)l->disp[p],
                           (long long)(l->pre[p + 1] - l->pre[p]),
                           l->shape != NULL ? l->shape[p] : 0);
    }
    return tj_text_finish(&t, buf, len);
}

/* The next " | "-separated segment of *p, NUL-terminated in place; NULL at the end. */
static char *segment(char **p)
{
    char *s = *p, *end;

    if (s == NULL)
        return NULL;
    end = strstr(s, " | ");
    if (end != NULL) {
        *end = '\0';
        *p = end + 3;
    } else {
        *p = NULL;
    }
    return s;
}

static bool parse_i64(const char **s, int64_t *v)
{
    char *end;
    long long x = strtoll(*s, &end, 10);
    if (end == *s)
        return false;
    *v = x;
    *s = end;
    return true;
}

/* What a line names, parsed into room of its own. */
typedef struct {
    tj_layout_parts_t p;
    int64_t fcounts[TJ_LAYOUT_MAX_FRAME], fstrides[TJ_LAYOUT_MAX_FRAME];
    tj_block_t shapes[TJ_LAYOUT_MAX_SHAPES];
    int64_t disp[TJ_LAYOUT_BAKED_MAX], len[TJ_LAYOUT_BAKED_MAX];
    uint8_t shape[TJ_LAYOUT_BAKED_MAX];
} line_t;

/* The header: the table, then the frame. */
static bool parse_head(const char *seg, line_t *x)
{
    int64_t pre_bytes = 8, disp_bytes = 8;
    const char *q;

    if (strncmp(seg, "table=baked extent=", 19) == 0) {
        x->p.baked = true;
        q = seg + 19;
        if (!parse_i64(&q, &x->p.extent))
            return false;
    } else if (strncmp(seg, "table=device pre=", 17) == 0) {
        q = seg + 17;
        if (!parse_i64(&q, &pre_bytes) || strncmp(q, " disp=", 6) != 0)
            return false;
        q += 6;
        if (!parse_i64(&q, &disp_bytes) || (pre_bytes != 4 && pre_bytes != 8) ||
            (disp_bytes != 4 && disp_bytes != 8))
            return false;
        x->p.pre_bytes = (int)pre_bytes;
        x->p.disp_bytes = (int)disp_bytes;
    } else {
        return false;
    }
    if (strncmp(q, " frame=", 7) != 0)
        return false;
    q += 7;
    if (*q == '-') {
        q++;
    } else {
        while (*q != '\0') {
            int64_t c, s;
            if (x->p.nframe == TJ_LAYOUT_MAX_FRAME || !parse_i64(&q, &c) || *q++ != ':' ||
                !parse_i64(&q, &s) || c < 1)
                return false;
            x->fcounts[x->p.nframe] = c;
            x->fstrides[x->p.nframe++] = s;
            if (*q != ',')
                break;
            q++;
        }
    }
    return *q == '\0';
}

/* A baked table's parts, "DISP:LEN:SHAPE,...". */
static bool parse_parts(const char *q, line_t *x)
{
    while (*q != '\0') {
        int64_t d, len, s;
        if (x->p.nparts == TJ_LAYOUT_BAKED_MAX || !parse_i64(&q, &d) || *q++ != ':' ||
            !parse_i64(&q, &len) || *q++ != ':' || !parse_i64(&q, &s) || s < 0 || s >= x->p.nshapes)
            return false;
        x->disp[x->p.nparts] = d;
        x->len[x->p.nparts] = len;
        x->shape[x->p.nparts++] = (uint8_t)s;
        if (*q != ',')
            break;
        q++;
    }
    return *q == '\0' && x->p.nparts > 0;
}

tj_status_t tj_layoutline_parse(const char *text, int word, tj_layout_t **out)
{
    char *copy = strdup(text), *rest = copy, *seg;
    line_t *x = calloc(1, sizeof(*x));
    tj_status_t status = TJ_ERR_PARSE;

    if (copy == NULL || x == NULL) {
        status = TJ_ERR_NOMEM;
        goto out;
    }
    x->p.fcounts = x->fcounts;
    x->p.fstrides = x->fstrides;
    x->p.shapes = x->shapes;
    x->p.disp = x->disp;
    x->p.len = x->len;
    x->p.shape = x->shape;
    x->p.word = word;
    if ((seg = segment(&rest)) == NULL || !parse_head(seg, x))
        goto out;
    /* The shapes, then a baked table. */
    while ((seg = segment(&rest)) != NULL) {
        if (strncmp(seg, "parts=", 6) == 0) {
            if (!x->p.baked || rest != NULL || !parse_parts(seg + 6, x))
                goto out;
            continue;
        }
        if (x->p.nshapes == TJ_LAYOUT_MAX_SHAPES)
            goto out;
        if (strcmp(seg, "runs") == 0) {
            static const int64_t one = 1;
            tj_block_make(0, 1, 1, &one, &one, &x->shapes[x->p.nshapes++]);
        } else if (tj_block_parse(seg, &x->shapes[x->p.nshapes]) != TJ_OK) {
            goto out;
        } else {
            x->p.nshapes++;
        }
    }
    status = tj_layout_assemble(&x->p, out);
    if (status == TJ_ERR_INVALID)
        status = TJ_ERR_PARSE;
out:
    free(x);
    free(copy);
    return status;
}
