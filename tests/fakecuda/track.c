/* SPDX-License-Identifier: BSD-3-Clause */
/* Exactly once: per launch of one of typejit's pack or unpack kernels, how often each byte of its
 * output is written. A GPU kernel whose threads map two ways onto one byte races, and one that
 * skips a byte leaves garbage; neither need show in a byte comparison (the racing writes may
 * agree, the garbage may match a poisoned buffer). The kernels are built with every store
 * reported (tests/emu/tj_emu.h); the rules:
 *   - a pack writes only its packed range(s) (a fused pack's members may each be in another
 *     allocation), each byte of them exactly once;
 *   - an unpack writes only the allocations its typed side is in (a fused unpack's members'),
 *     no byte twice, and exactly as many bytes as it reads;
 *   - the serial unpack of a layout that overlaps itself (tj_parts_unpack_serial) runs as one
 *     thread, which may write a byte again (the last write wins, in typemap order), and writes
 *     exactly as many bytes as it reads;
 *   - nothing else in device memory.
 * What a kernel must write comes from its name (tj_pack, tj_unpack, tj_fused_*, tj_generic_*,
 * tj_parts_*), its launch arguments and the constants of its source (word_t, WORDS,
 * OBJECT_BYTES: a kernel with edges, whose WORDS counts slots, and a parts kernel with a baked
 * layout say the bytes of one object; a generic kernel's arguments must agree with its word_t);
 * a pack or unpack
 * kernel whose source the double does not understand is refused, never run unchecked. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fakecuda.h"

#define MAX_WINDOWS FC_MAX_SHAPES
/* A shadow of up to this many bytes is kept between launches; larger ones are mapped each time. */
#define SMALL_SHADOW ((size_t)1 << 20)

/* Layouts of the arguments (templates/generic.cu and templates/fused.cu). */
#define GENERIC_SIZE  16
#define GENERIC_WORDS 24
#define GENERIC_WORD  32
#define FUSED_ENTRY   40
#define FUSED_TYPED   0
#define FUSED_PACKED  8
#define FUSED_COUNT   16
#define FUSED_SHAPE   36
#define FUSED_N       (FUSED_ENTRY * FC_MAX_SHAPES)
#define PARTS_OBYTES  24 /* tj_parts_args_t: table, parts, fbytes, obytes, extent */

typedef enum { V_NONE, V_TWICE, V_OUTSIDE } violation_t;

/* Bytes a launch may write: a packed range of a pack, an allocation of an unpack's typed side;
 * one bit each in the shadow, from word `bit0` of it. */
typedef struct {
    uintptr_t lo, hi;
    size_t bit0;
} window_t;

/* The launch being counted; launches run one at a time (under the driver's lock), and its host
 * threads see these fields set before they start. */
static struct {
    bool active, pack;
    bool serial;        /* overwrites are the kernel's semantics (one thread, in order) */
    const char *output; /* "packed output" or "typed output", for messages */
    uintptr_t dst;      /* the destination argument */
    window_t windows[MAX_WINDOWS];
    int nwindows;
    unsigned long long expected; /* bytes the kernel must write */
    _Atomic uint64_t *bits;
    size_t bits_len;
    bool mapped;
    atomic_ullong written;
    atomic_int violation;
    uintptr_t where;
} t;

static uint64_t *small_shadow;
static _Thread_local unsigned long long thread_written;

/* ---- what a kernel must write ---------------------------------------------------------------- */

static int word_of(const char *type)
{
    static const struct {
        const char *name;
        int bytes;
    } types[] = {{"uint4", 16},
                 {"unsigned long long", 8},
                 {"unsigned int", 4},
                 {"unsigned short", 2},
                 {"unsigned char", 1}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strncmp(type, types[i].name, strlen(types[i].name)) == 0 &&
            strncmp(type + strlen(types[i].name), " word_t;", 8) == 0)
            return types[i].bytes;
    return 0;
}

void fc_track_describe(const char *name, const char *source, size_t len, fc_kinfo_t *info)
{
    char *text;
    const char *p;

    memset(info, 0, sizeof *info);
    if (strcmp(name, "tj_pack") == 0 || strcmp(name, "tj_unpack") == 0)
        info->kind = FC_KIND_STRIDED;
    else if (strcmp(name, "tj_fused_pack") == 0 || strcmp(name, "tj_fused_unpack") == 0)
        info->kind = FC_KIND_FUSED;
    else if (strcmp(name, "tj_generic_pack") == 0 || strcmp(name, "tj_generic_unpack") == 0)
        info->kind = FC_KIND_GENERIC;
    else if (strcmp(name, "tj_parts_pack") == 0 || strcmp(name, "tj_parts_unpack") == 0 ||
             strcmp(name, "tj_parts_unpack_serial") == 0)
        info->kind = FC_KIND_PARTS;
    else
        return;
    info->pack = strstr(name, "unpack") == NULL;
    info->serial = strstr(name, "_serial") != NULL;
    if ((text = fc_strip_comments(source, len)) == NULL)
        return;
    /* `typedef <type> word_t;` once; `const index_t WORDS = <n>` once per block, in order (a
     * generic kernel's layout travels in its arguments). */
    for (p = strstr(text, "typedef "); p != NULL; p = strstr(p + 1, "typedef "))
        if ((info->word = word_of(p + 8)) != 0)
            break;
    if (info->kind == FC_KIND_GENERIC) {
        info->understood = info->word != 0;
        free(text);
        return;
    }
    if (info->kind == FC_KIND_PARTS) {
        /* A baked layout's object size is in its source; a table kernel's in its arguments. */
        if ((p = strstr(text, "const long long OBJECT_BYTES = ")) != NULL)
            info->obytes = strtoll(p + 31, NULL, 10);
        info->understood = info->word != 0 && (p == NULL || info->obytes > 0);
        free(text);
        return;
    }
    /* Each block's word: the last `typedef <type> word_t;` before its WORDS (a fused kernel's
     * blocks each have their own). */
    for (p = strstr(text, "const index_t WORDS = "); p != NULL && info->nshapes < FC_MAX_SHAPES;
         p = strstr(p + 1, "const index_t WORDS = ")) {
        int w = 0;
        for (const char *q = strstr(text, "typedef "); q != NULL && q < p;
             q = strstr(q + 1, "typedef "))
            w = word_of(q + 8) != 0 ? word_of(q + 8) : w;
        info->wordsz[info->nshapes] = w;
        info->words[info->nshapes++] = strtoll(p + 22, NULL, 10);
    }
    /* A kernel with edges counts slots, not words: its source says the object's bytes. */
    if (info->kind == FC_KIND_STRIDED &&
        (p = strstr(text, "const long long OBJECT_BYTES = ")) != NULL &&
        (info->obytes = strtoll(p + 31, NULL, 10)) <= 0)
        info->nshapes = 0;
    info->understood = info->word != 0 && info->nshapes >= 1 &&
                       (info->kind == FC_KIND_FUSED || info->nshapes == 1);
    for (int s = 0; s < info->nshapes; s++)
        info->understood = info->understood && info->words[s] > 0 && info->wordsz[s] > 0;
    free(text);
}

static long long arg_ll(const void *p, size_t off)
{
    long long v;
    memcpy(&v, (const char *)p + off, sizeof v);
    return v;
}

static int arg_int(const void *p, size_t off)
{
    int v;
    memcpy(&v, (const char *)p + off, sizeof v);
    return v;
}

/* Adds [lo, hi) as a window, or the allocation around @p at when @p hi is 0 (none there: its
 * stores fault, or reach memory the device cannot, which guard pages report). False when there
 * are too many. */
static bool add_window(uintptr_t lo, uintptr_t hi)
{
    if (hi == 0) {
        fc_alloc_t *a = fc_mem_find(lo);
        if (a == NULL)
            return true;
        lo = a->base;
        hi = a->base + a->size;
        for (int w = 0; w < t.nwindows; w++)
            if (t.windows[w].lo == lo)
                return true;
    }
    if (hi == lo)
        return true;
    if (t.nwindows == MAX_WINDOWS)
        return false;
    t.windows[t.nwindows].lo = lo;
    t.windows[t.nwindows].hi = hi;
    t.nwindows++;
    return true;
}

static bool add_output(uintptr_t at, unsigned long long bytes)
{
    return t.pack ? add_window(at, at + bytes) : add_window(at, 0);
}

static int by_lo(const void *a, const void *b)
{
    const window_t *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The bytes the launch must write and where; false when its arguments make no sense (an
 * overflowing size: the kernel faults or the launch is wrong anyway). */
static bool expect(const struct CUfunc_st *f, void *const *params)
{
    const fc_kinfo_t *k = &f->info;
    unsigned long long per, bytes;
    long long count;

    switch (k->kind) {
    case FC_KIND_STRIDED:
        count = arg_ll(params[2], 0);
        if (count < 0 ||
            (k->obytes > 0
                 ? (per = (unsigned long long)k->obytes, false)
                 : __builtin_mul_overflow((unsigned long long)k->words[0], k->wordsz[0], &per)) ||
            __builtin_mul_overflow(per, (unsigned long long)count, &t.expected))
            return false;
        return add_output(t.dst, t.expected);
    case FC_KIND_GENERIC: {
        /* Words of the kernel's own word_t per object; the packed size must agree. */
        unsigned words;
        memcpy(&words, (const char *)params[3] + GENERIC_WORDS, sizeof words);
        count = arg_ll(params[2], 0);
        per = (unsigned long long)words * (unsigned long long)k->word;
        if (count < 0 || arg_ll(params[3], GENERIC_SIZE) != (long long)per ||
            __builtin_mul_overflow(per, (unsigned long long)count, &t.expected))
            return false;
        return add_output(t.dst, t.expected);
    }
    case FC_KIND_PARTS: {
        long long obytes = k->obytes > 0 ? k->obytes : arg_ll(params[3], PARTS_OBYTES);
        count = arg_ll(params[2], 0);
        if (count < 0 || obytes <= 0 || obytes % k->word != 0 ||
            __builtin_mul_overflow((unsigned long long)obytes, (unsigned long long)count,
                                   &t.expected))
            return false;
        return add_output(t.dst, t.expected);
    }
    case FC_KIND_FUSED: {
        const void *args = params[2];
        int n = arg_int(args, FUSED_N);
        t.expected = 0;
        if (n < 1 || n > FC_MAX_SHAPES)
            return false;
        for (int m = 0; m < n; m++) {
            size_t e = FUSED_ENTRY * (size_t)m;
            long long off = arg_ll(args, e + (t.pack ? FUSED_PACKED : FUSED_TYPED));
            long long cnt = arg_ll(args, e + FUSED_COUNT);
            int shape = arg_int(args, e + FUSED_SHAPE);
            if (cnt < 0 || shape < 0 || shape >= k->nshapes ||
                __builtin_mul_overflow((unsigned long long)k->words[shape], k->wordsz[shape],
                                       &per) ||
                __builtin_mul_overflow(per, (unsigned long long)cnt, &bytes) ||
                __builtin_add_overflow(t.expected, bytes, &t.expected) ||
                !add_output(t.dst + (uintptr_t)off, bytes))
                return false;
        }
        return true;
    }
    default:
        return false;
    }
}

bool fc_track_begin(const fc_op_t *op, char *why, size_t len)
{
    const struct CUfunc_st *f = op->u.kernel.func;
    size_t words = 0;

    t.active = false;
    if (f->info.kind == FC_KIND_OTHER || !f->mod->tracked)
        return true;
    if (!f->info.understood) {
        snprintf(why, len,
                 "cannot tell from its source what kernel %s writes (no `typedef ... word_t;` "
                 "and `const index_t WORDS = N` per block): tests/fakecuda/track.c no longer "
                 "understands the generator's output",
                 f->name);
        return false;
    }
    if (f->info.serial &&
        (op->u.kernel.grid[0] * op->u.kernel.grid[1] * op->u.kernel.grid[2] != 1 ||
         op->u.kernel.block[0] * op->u.kernel.block[1] * op->u.kernel.block[2] != 1)) {
        snprintf(why, len, "is a serial unpack launched with more than one thread");
        return false;
    }
    if (f->info.kind == FC_KIND_GENERIC &&
        arg_int(op->u.kernel.params[3], GENERIC_WORD) != f->info.word) {
        /* The image moves words of its word_t whatever its arguments say. */
        snprintf(why, len, "was launched with the arguments of W = %d on its image of W = %d",
                 arg_int(op->u.kernel.params[3], GENERIC_WORD), f->info.word);
        return false;
    }
    memcpy(&t.dst, op->u.kernel.params[0], sizeof t.dst);
    t.pack = f->info.pack;
    t.serial = f->info.serial;
    t.output = t.pack ? "packed output" : "typed output";
    t.nwindows = 0;
    if (!expect(f, op->u.kernel.params))
        return true;
    qsort(t.windows, (size_t)t.nwindows, sizeof t.windows[0], by_lo);
    for (int w = 0; w < t.nwindows; w++) {
        /* Windows that overlap (two members' packed ranges): their common bytes are written
         * twice. */
        if (w > 0 && t.windows[w].lo < t.windows[w - 1].hi) {
            snprintf(why, len, "was given two members whose %s overlap", t.output);
            return false;
        }
        t.windows[w].bit0 = words;
        words += (t.windows[w].hi - t.windows[w].lo + 63) / 64;
    }
    t.bits_len = words * 8;
    t.mapped = t.bits_len > SMALL_SHADOW;
    if (t.mapped) {
        void *p = mmap(NULL, t.bits_len, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            return true; /* not counted: the double is out of address space */
        t.bits = p;
    } else {
        if (small_shadow == NULL && (small_shadow = malloc(SMALL_SHADOW)) == NULL)
            return true;
        memset(small_shadow, 0, t.bits_len);
        t.bits = (_Atomic uint64_t *)small_shadow;
    }
    atomic_store(&t.written, 0);
    atomic_store(&t.violation, V_NONE);
    t.where = 0;
    t.active = true;
    fc_stats.launches_tracked++;
    return true;
}

static void note(violation_t v, uintptr_t at)
{
    int none = V_NONE;
    if (atomic_compare_exchange_strong(&t.violation, &none, (int)v))
        t.where = at;
}

/* The window holding all of [a, a + n), or NULL. */
static const window_t *window_of(uintptr_t a, size_t n)
{
    int lo = 0, hi = t.nwindows - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (a < t.windows[mid].lo)
            hi = mid - 1;
        else if (a >= t.windows[mid].hi)
            lo = mid + 1;
        else
            return n <= t.windows[mid].hi - a ? &t.windows[mid] : NULL;
    }
    return NULL;
}

void fc_track_store(const void *address, size_t n)
{
    uintptr_t a = (uintptr_t)address;
    const window_t *w;
    size_t off;

    fc_trace_access(address, n, true);
    if (!t.active || n == 0)
        return;
    if ((w = window_of(a, n)) == NULL) {
        /* The kernel's own stack and the emulation's thread-local variables are host memory;
         * device memory outside the windows is another buffer, or a pack's bytes out of place. */
        if (fc_mem_in_arena(a))
            note(V_OUTSIDE, a);
        return;
    }
    thread_written += n;
    off = a - w->lo;
    for (size_t done = 0; done < n;) {
        size_t bit = (off + done) & 63, k = n - done < 64 - bit ? n - done : 64 - bit;
        uint64_t mask = (k == 64 ? ~(uint64_t)0 : (((uint64_t)1 << k) - 1)) << bit;
        uint64_t old = atomic_fetch_or_explicit(&t.bits[w->bit0 + ((off + done) >> 6)], mask,
                                                memory_order_relaxed);
        if ((old & mask) && !t.serial)
            note(V_TWICE,
                 w->lo + ((off + done) & ~(size_t)63) + (uintptr_t)__builtin_ctzll(old & mask));
        done += k;
    }
}

void fc_track_flush(void)
{
    if (thread_written != 0)
        atomic_fetch_add(&t.written, thread_written);
    thread_written = 0;
}

/* The first byte of a pack's windows left unwritten. */
static uintptr_t first_unwritten(void)
{
    for (int i = 0; i < t.nwindows; i++) {
        const window_t *w = &t.windows[i];
        for (uintptr_t a = w->lo; a < w->hi; a++) {
            size_t off = a - w->lo;
            if (!(atomic_load(&t.bits[w->bit0 + (off >> 6)]) & ((uint64_t)1 << (off & 63))))
                return a;
        }
    }
    return 0;
}

bool fc_track_end(bool complete, char *why, size_t len)
{
    bool ok = true;
    unsigned long long written = atomic_load(&t.written);

    if (!t.active)
        return true;
    t.active = false;
    switch ((violation_t)atomic_load(&t.violation)) {
    case V_TWICE:
        snprintf(why, len, "wrote byte %lld of its %s (from its destination pointer) twice",
                 (long long)(t.where - t.dst), t.output);
        ok = false;
        break;
    case V_OUTSIDE:
        snprintf(why, len,
                 "wrote device memory at byte %lld from its destination pointer, outside its %s "
                 "(%llu bytes)",
                 (long long)(t.where - t.dst), t.output, t.expected);
        ok = false;
        break;
    case V_NONE:
        if (complete && written != t.expected) {
            if (t.pack && written < t.expected)
                snprintf(why, len,
                         "left byte %lld of its %s unwritten (%llu of %llu bytes written)",
                         (long long)(first_unwritten() - t.dst), t.output, written, t.expected);
            else
                snprintf(why, len, "wrote %llu bytes of its %s, its input has %llu", written,
                         t.output, t.expected);
            ok = false;
        }
        break;
    }
    if (t.mapped)
        munmap((void *)t.bits, t.bits_len);
    t.bits = NULL;
    return ok;
}
