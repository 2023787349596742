/* SPDX-License-Identifier: BSD-3-Clause */
/* The launch path (see launch.h). */
#include "kernels/launch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/compiler.h"
#include "kernels/parttable.h"
#include "kernels/prepare.h"
#include "kernels/lookup.h"
#include "kernels/state.h"
#include "kernels/target.h"
#include "type/layout_words.h"
#include "util/common.h"
#include "util/config.h"
#include "util/log.h"
#include "util/stats.h"

/* The index of a launch's words among a plan's variants (type/table.h): 0-4 a word of 1 to 16
 * bytes alone, 5-14 a word of 2 to 16 with an edge word below it. */
static int variant_of(tj_words_t w)
{
    int wl = __builtin_ctz((unsigned)w.word), el;

    if (w.edge == 0)
        return wl;
    el = __builtin_ctz((unsigned)w.edge);
    return 5 + wl * (wl - 1) / 2 + el;
}

/* The plan's kernels are for the compile target numbered @p key (kernels/target.h): the first
 * launch to keep one sets it; a launch on a device of another target keeps nothing there. */
static bool plan_for(tj_type_plan_t *plan, int key)
{
    int had = 0;

    if (key == 0)
        return false;
    if (atomic_load_explicit(&plan->target, memory_order_acquire) == key)
        return true;
    /* The kernels of another target, or of an earlier epoch, are dropped first. */
    for (int d = 0; d < 2; d++)
        for (int v = 0; v < TJ_PLAN_VARIANTS; v++) {
            atomic_store_explicit(&plan->kernel[d][v], NULL, memory_order_relaxed);
            atomic_store_explicit(&plan->missed[d][v], 0, memory_order_relaxed);
        }
    had = atomic_load(&plan->target);
    return atomic_compare_exchange_strong(&plan->target, &had, key) || had == key;
}

/* A JIT kernel the kernel lookup gave for variant @p v, kept on the plan for the next launch. */
static void plan_keep(const tj_launch_desc_t *d, int v, tj_kernel_t *k)
{
    if (d->plan != NULL && plan_for(d->plan, tj_target_index(d->device)))
        atomic_store_explicit(&d->plan->kernel[d->dir][v], k, memory_order_release);
}

/* The plan's kernel of variant @p v, if it has one for this launch's target. */
static tj_kernel_t *planned(const tj_launch_desc_t *d, int v)
{
    int key;

    if (d->plan == NULL || d->op.kind != TJ_OP_MOVE || d->policy != TJ_LAUNCH_AS_SET ||
        (key = tj_target_index(d->device)) == 0 ||
        atomic_load_explicit(&d->plan->target, memory_order_acquire) != key)
        return NULL;
    return atomic_load_explicit(&d->plan->kernel[d->dir][v], memory_order_acquire);
}

/* Whether the plan asked the background compiler for variant @p v and no compile has ended
 * since: the launch then runs the generic kernel without asking again. */
static bool asked_already(const tj_launch_desc_t *d, int v)
{
    return d->plan != NULL &&
           atomic_load_explicit(&d->plan->missed[d->dir][v], memory_order_relaxed) ==
               tj_compiler_finished() + 1;
}

static void asked(const tj_launch_desc_t *d, int v)
{
    if (d->plan != NULL)
        atomic_store_explicit(&d->plan->missed[d->dir][v], tj_compiler_finished() + 1,
                              memory_order_relaxed);
}

/* The kernel of @p spec as @p policy says: TJ_ERR_NOT_FOUND when the launch is to run the
 * generic kernel instead (TYPEJIT_JIT=off, or the kernel asked of the background compiler). */
static tj_status_t kernel_as(const tj_kernel_spec_t *spec, tj_launch_policy_t policy,
                             tj_kernel_t **k)
{
    const tj_config_t *cfg = tj_config();
    tj_status_t st;

    if (policy == TJ_LAUNCH_AS_SET && cfg->jit == TJ_JIT_OFF)
        return TJ_ERR_NOT_FOUND;
    if (policy == TJ_LAUNCH_COMPILE || cfg->jit_sync)
        return tj_lookup_kernel(spec, TJ_LOOKUP_COMPILE, k, NULL);
    if ((st = tj_lookup_kernel(spec, TJ_LOOKUP_CACHED, k, NULL)) != TJ_ERR_NOT_FOUND)
        return st;
    if (spec->layout != NULL)
        tj_compiler_request_parts(spec->layout, spec->word, spec->one_object, spec->dir,
                                  spec->serial, spec->target);
    else
        tj_compiler_request(&spec->blocks[0], (tj_words_t){spec->word, spec->edge}, spec->dir,
                            spec->target);
    return st;
}

/* The kernel's function in the current context, the geometry and arguments of @p work. */
static tj_status_t ready(tj_kernel_t *k, const tj_kind_work_t *work, tj_launch_ready_t *r)
{
    tj_kernel_spec_t spec = tj_kernel_spec(k);
    tj_status_t st;

    if ((st = tj_kernel_function(k, &r->fn)) != TJ_OK)
        return st;
    return tj_kind_of(spec.kind)->geometry(&spec, work, &r->args);
}

/* Between @p at (the typed side's first byte: object 0's, or frame element 0's) and the packed
 * side, in the launch's direction. */
static void pointers(const tj_launch_desc_t *d, tj_devptr_t at, tj_launch_ready_t *r)
{
    r->args.dst = d->dir == TJ_DIR_PACK ? d->packed : at;
    r->args.src = d->dir == TJ_DIR_PACK ? at : d->packed;
}

/* The steady launch of a strided block: the kernel its plan kept for these words, its
 * function in this context and its geometry for the count. False when the plan has none. */
static bool prepare_planned(const tj_launch_desc_t *d, tj_launch_ready_t *r)
{
    tj_devptr_t at = d->typed + (tj_devptr_t)d->block->start; /* object 0's first byte */
    tj_words_t words = tj_block_words(d->block, d->count, (uintptr_t)at, (uintptr_t)d->packed);
    tj_kernel_t *k = planned(d, variant_of(words));

    if (k == NULL || tj_kernel_function(k, &r->fn) != TJ_OK)
        return false;
    pointers(d, at, r);
    tj_gen_geometry_launch(&k->geo, d->count, &r->args.geo);
    r->args.count = d->count;
    r->args.argv[0] = &r->args.dst;
    r->args.argv[1] = &r->args.src;
    r->args.argv[2] = &r->args.count;
    r->jit = true;
    r->edges = words.edge != 0;
    r->serial = r->fused = false;
    r->shapes = 0;
    return true;
}

/* One strided block: its kernel for the launch's words, or the generic kernel (the layout as
 * run-time arguments) while that is not there. */
static tj_status_t prepare_block(const tj_launch_desc_t *d, const char *target,
                                 tj_launch_ready_t *r)
{
    tj_block_t b = tj_block_at_zero(d->block);
    tj_devptr_t at = d->typed + (tj_devptr_t)d->block->start; /* object 0's first byte */
    tj_words_t words = d->op.kind == TJ_OP_MOVE
                           ? tj_block_words(&b, d->count, (uintptr_t)at, (uintptr_t)d->packed)
                           : (tj_words_t){d->op_size, 0};
    tj_kernel_spec_t spec = tj_spec_words(&b, words, d->dir, target);
    tj_kind_work_t work = {.block = &b, .count = d->count};
    int v = variant_of(words);
    tj_kernel_t *k;
    tj_status_t st = TJ_ERR_NOT_FOUND;

    spec.op = d->op;
    pointers(d, at, r);
    if ((d->op.kind != TJ_OP_MOVE || !asked_already(d, v)) &&
        (st = kernel_as(&spec, d->policy, &k)) == TJ_OK) {
        if (d->op.kind == TJ_OP_MOVE)
            plan_keep(d, v, k);
        r->jit = true;
        r->edges = words.edge != 0;
        return ready(k, &work, r);
    }
    if (st == TJ_ERR_NOT_FOUND && d->op.kind == TJ_OP_MOVE && tj_config()->jit != TJ_JIT_OFF)
        asked(d, v);
    if (st != TJ_ERR_NOT_FOUND || d->op.kind != TJ_OP_MOVE)
        return st;
    /* The generic kernel has no edges: the plain word of the launch. Its geometry first: a block
     * of 2^31 words per object or more is staged meanwhile. */
    spec = tj_spec_generic(words.edge != 0 ? words.edge : words.word, d->dir, target);
    if ((st = tj_kind_of(spec.kind)->geometry(&spec, &work, &r->args)) != TJ_OK)
        return st;
    if (tj_config()->jit != TJ_JIT_OFF)
        tj_stats_inc(TJ_STAT_packs_generic_while_compiling);
    if ((st = tj_lookup_kernel(&spec, TJ_LOOKUP_COMPILE, &k, NULL)) != TJ_OK)
        return st;
    return ready(k, &work, r);
}

/* A layout: its parts kernel, or, while that is not there, the parts kernel of the layout's runs
 * (one compiled image per word serves every layout); a layout of too many runs for that compiles
 * its own kernel now. A table not baked into the source is put on the device. */
static tj_status_t prepare_layout(const tj_launch_desc_t *d, const char *target,
                                  tj_launch_ready_t *r)
{
    tj_layout_t *l = d->layout, *runs;
    tj_devptr_t at = d->typed + (tj_devptr_t)l->start; /* frame element 0 of object 0 */
    bool one;
    int word = tj_layout_launch_word(l, d->count, (uintptr_t)at, (uintptr_t)d->packed, &one);
    tj_kernel_spec_t spec = tj_spec_parts(l, word, one, d->dir, d->serial, target);
    tj_kind_work_t work = {.count = d->count};
    tj_kernel_t *k;
    tj_status_t st;

    pointers(d, at, r);
    r->serial = d->serial;
    if ((st = kernel_as(&spec, d->policy, &k)) != TJ_OK && st != TJ_ERR_NOT_FOUND)
        return st;
    r->jit = st == TJ_OK;
    if (st == TJ_ERR_NOT_FOUND) {
        if (tj_config()->jit != TJ_JIT_OFF)
            tj_stats_inc(TJ_STAT_packs_generic_while_compiling);
        if (tj_parttable_runs(l, &runs) == TJ_OK) {
            l = runs;
            word = tj_layout_launch_word(l, d->count, (uintptr_t)at, (uintptr_t)d->packed, &one);
        }
        spec = tj_spec_parts(l, word, one, d->dir, d->serial, target);
        if ((st = tj_lookup_kernel(&spec, TJ_LOOKUP_COMPILE, &k, NULL)) != TJ_OK)
            return st;
    }
    if ((st = tj_kernel_function(k, &r->fn)) != TJ_OK ||
        (!l->baked && (st = tj_parttable_get(l, &work.table)) != TJ_OK))
        return st;
    return tj_kind_of(spec.kind)->geometry(&spec, &work, &r->args);
}

/* Fused launches made before, kept per thread: a persistent set started again, or a collective
 * called again with the same types and buffers, takes its kernel and arguments from here. A
 * launch is named by its members' records (their serials, never reused), offsets and counts,
 * the two base addresses modulo 16 (which decide the words), its direction and its target's
 * number (which names the kernels' epoch). */
#define FUSED_KEPT 8
typedef struct {
    int key; /* the target's number; 0: unused */
    int n;
    tj_dir_t dir;
    unsigned typed_lo, packed_lo;
    struct {
        uint64_t serial;
        int64_t typed, packed, count;
    } m[TJ_FUSED_MAX];
    tj_kernel_t *kernel;
    tj_fused_args_t args;
    tj_launch_t geo;
    int shapes;
} fused_kept_t;

typedef struct tj_fused_cache {
    fused_kept_t kept[FUSED_KEPT];
    int next;
} fused_cache_t;

static void fused_key_init(void)
{
    pthread_key_create(&tj_kernels_state.launch.fused_key, free);
}

/* Whether @p e names launch @p d. */
static bool fused_same(const fused_kept_t *e, const tj_launch_desc_t *d, int key)
{
    if (e->key != key || e->n != d->nmembers || e->dir != d->dir ||
        e->typed_lo != (unsigned)(d->typed & 15) || e->packed_lo != (unsigned)(d->packed & 15))
        return false;
    for (int i = 0; i < d->nmembers; i++) {
        const tj_launch_member_t *mb = &d->members[i];
        if (mb->serial == 0 || e->m[i].serial != mb->serial || e->m[i].typed != mb->typed ||
            e->m[i].packed != mb->packed || e->m[i].count != mb->count)
            return false;
    }
    return true;
}

static bool fused_planned(const tj_launch_desc_t *d, tj_launch_ready_t *r)
{
    fused_cache_t *c = tj_kernels_thread.launch.fused_cache;
    int key;

    if (c == NULL || (key = tj_target_index(d->device)) == 0)
        return false;
    for (int i = 0; i < FUSED_KEPT; i++) {
        fused_kept_t *e = &c->kept[i];
        if (!fused_same(e, d, key) || tj_kernel_function(e->kernel, &r->fn) != TJ_OK)
            continue;
        r->args.by.fused = e->args;
        r->args.geo = e->geo;
        r->args.argv[0] = &r->args.dst;
        r->args.argv[1] = &r->args.src;
        r->args.argv[2] = &r->args.by.fused;
        pointers(d, d->typed, r);
        r->jit = r->fused = true;
        r->edges = r->serial = false;
        r->shapes = e->shapes;
        return true;
    }
    return false;
}

static void fused_keep(const tj_launch_desc_t *d, tj_kernel_t *k, const tj_launch_ready_t *r)
{
    fused_cache_t *c = tj_kernels_thread.launch.fused_cache;
    fused_kept_t *e;
    int key = tj_target_index(d->device);

    for (int i = 0; i < d->nmembers; i++)
        if (d->members[i].serial == 0)
            return;
    if (key == 0)
        return;
    if (c == NULL) {
        pthread_once(&tj_kernels_state.launch.fused_once, fused_key_init);
        if ((c = calloc(1, sizeof(*c))) == NULL)
            return;
        pthread_setspecific(tj_kernels_state.launch.fused_key, c);
        tj_kernels_thread.launch.fused_cache = c;
    }
    e = &c->kept[c->next];
    c->next = (c->next + 1) % FUSED_KEPT;
    e->key = key;
    e->n = d->nmembers;
    e->dir = d->dir;
    e->typed_lo = (unsigned)(d->typed & 15);
    e->packed_lo = (unsigned)(d->packed & 15);
    for (int i = 0; i < d->nmembers; i++) {
        e->m[i].serial = d->members[i].serial;
        e->m[i].typed = d->members[i].typed;
        e->m[i].packed = d->members[i].packed;
        e->m[i].count = d->members[i].count;
    }
    e->kernel = k;
    e->args = r->args.by.fused;
    e->geo = r->args.geo;
    e->shapes = r->shapes;
}

/* A fused set: the members' blocks become the kernel's shapes, each moved with the widest word
 * its member's addresses allow (a fused kernel has no edges); members with equal blocks and
 * words share a shape. */
static tj_status_t prepare_fused(const tj_launch_desc_t *d, const char *target,
                                 tj_launch_ready_t *r)
{
    tj_block_t blocks[TJ_FUSED_MAX];
    tj_fused_member_t members[TJ_FUSED_MAX];
    int words[TJ_FUSED_MAX], nshapes = 0;
    tj_kind_work_t work = {.members = members, .nmembers = d->nmembers};
    tj_kernel_spec_t spec;
    tj_kernel_t *k;
    tj_status_t st;

    if (d->nmembers < 1 || d->nmembers > TJ_FUSED_MAX)
        return TJ_ERR_INVALID;
    for (int m = 0; m < d->nmembers; m++) {
        const tj_launch_member_t *mb = &d->members[m];
        tj_block_t b = tj_block_at_zero(mb->block);
        int64_t shift;
        tj_words_t w;
        int s = 0, word;

        if (!tj_add64(mb->typed, mb->block->start, &shift))
            return TJ_ERR_INVALID;
        w = tj_block_words(mb->block, mb->count, (uintptr_t)d->typed + (uintptr_t)shift,
                           (uintptr_t)d->packed + (uintptr_t)mb->packed);
        word = w.edge != 0 ? w.edge : w.word;
        while (s < nshapes && !(tj_block_equal(&blocks[s], &b) && words[s] == word))
            s++;
        if (s == nshapes) {
            words[nshapes] = word;
            blocks[nshapes++] = b;
        }
        members[m] = (tj_fused_member_t){s, shift, mb->packed, mb->count};
    }
    spec = tj_spec_fused(blocks, words, nshapes, d->dir, target);
    r->jit = true;
    r->fused = true;
    r->shapes = nshapes;
    pointers(d, d->typed, r);
    if ((st = tj_lookup_kernel(&spec, TJ_LOOKUP_COMPILE, &k, NULL)) != TJ_OK ||
        (st = ready(k, &work, r)) != TJ_OK)
        return st;
    fused_keep(d, k, r);
    return TJ_OK;
}

tj_status_t tj_launch_prepare(const tj_launch_desc_t *d, tj_launch_ready_t *r)
{
    char target[TJ_TARGET_MAX];
    tj_status_t st;

    /* A kernel the plan kept was launched before: the first launch's work and the driver's
     * check are behind it. */
    if (d->plan != NULL && d->block != NULL && d->layout == NULL && d->members == NULL &&
        prepare_planned(d, r))
        return TJ_OK;
    if (d->members != NULL && d->block == NULL && d->layout == NULL && d->nmembers >= 1 &&
        d->nmembers <= TJ_FUSED_MAX && d->op.kind == TJ_OP_MOVE && fused_planned(d, r))
        return TJ_OK;
    memset(r, 0, sizeof(*r));
    /* The first launch: the kernels of the types committed before the process met the GPU are
     * asked for now (kernels/prepare.h); later launches pay one load. */
    if (!atomic_load_explicit(&tj_kernels_state.launch.launched, memory_order_relaxed) &&
        !atomic_exchange(&tj_kernels_state.launch.launched, true))
        tj_prepare_launching();
    if ((d->block != NULL) + (d->layout != NULL) + (d->members != NULL) != 1 ||
        (d->op.kind != TJ_OP_MOVE && (d->block == NULL || d->policy != TJ_LAUNCH_COMPILE)))
        return TJ_ERR_INVALID;
    if ((st = tj_launch_possible()) != TJ_OK)
        return st;
    if ((st = tj_target_of_device(d->device, target, sizeof(target))) != TJ_OK)
        return st;
    if (d->block != NULL)
        return prepare_block(d, target, r);
    if (d->layout != NULL)
        return prepare_layout(d, target, r);
    return prepare_fused(d, target, r);
}

tj_status_t tj_launch_go(tj_launch_ready_t *r)
{
    tj_status_t st = tj_gpu_launch(r->fn, r->args.geo.grid, r->args.geo.block, r->args.argv);

    if (st != TJ_OK)
        return st;
    tj_stats_inc(TJ_STAT_kernel_launches);
    if (r->jit && r->edges)
        tj_stats_inc(TJ_STAT_edge_launches);
    if (r->serial)
        tj_stats_inc(TJ_STAT_unpacks_serial);
    if (r->fused)
        tj_stats_inc(TJ_STAT_fused_launches);
    return TJ_OK;
}

tj_status_t tj_launch_run(const tj_launch_desc_t *d)
{
    tj_launch_ready_t r;
    tj_status_t st;

    if ((st = tj_launch_prepare(d, &r)) != TJ_OK || (st = tj_launch_go(&r)) != TJ_OK)
        return st;
    if (!d->wait)
        return TJ_OK;
    return d->batch == NULL ? tj_gpu_sync() : tj_batch_defer_wait(d->batch);
}
