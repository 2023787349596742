/* SPDX-License-Identifier: BSD-3-Clause */
/* Allocation failures on demand, for the tests of typejit's out-of-memory paths: preloaded after
 * libtypejit.so, it stands in front of malloc, calloc, realloc, aligned_alloc, posix_memalign
 * and free. A test arms it with failmalloc_arm(N): from then on, the N-th allocation that
 * libtypejit.so's own code makes fails (returns NULL), and every allocation of typejit's code is
 * counted until it is freed (failmalloc_live), so that a test can tell a leak. Only calls made
 * directly from libtypejit.so count, recognised by their return address; everything else (the
 * MPI, the driver, the test) allocates as usual. Test code only. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t align, size_t size);
void __libc_free(void *p);

#define EXPORT __attribute__((visibility("default")))

EXPORT void failmalloc_arm(long nth);
EXPORT bool failmalloc_disarm(void);
EXPORT long failmalloc_live(void);
#define SLOTS (1 << 16) /* live allocations tracked at once */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile bool armed;
static uintptr_t text_lo, text_hi; /* libtypejit.so's executable segment */
static long countdown;             /* allocations of typejit's until the one that fails */
static bool fired;
static void *live[SLOTS];
static long nlive;

/* The executable segment of the object whose base is @p data. */
static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    if ((uintptr_t)info->dlpi_addr != (uintptr_t)data)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            text_lo = info->dlpi_addr + ph->p_vaddr;
            text_hi = text_lo + ph->p_memsz;
        }
    }
    return 1;
}

static bool from_typejit(const void *caller)
{
    return (uintptr_t)caller >= text_lo && (uintptr_t)caller < text_hi;
}

static size_t slot_of(const void *p)
{
    return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> 48) & (SLOTS - 1);
}

static void remember(void *p)
{
    size_t i = slot_of(p);
    while (live[i] != NULL)
        i = (i + 1) & (SLOTS - 1);
    live[i] = p;
    nlive++;
}

static void forget(void *p)
{
    size_t i = slot_of(p);
    while (live[i] != NULL && live[i] != p)
        i = (i + 1) & (SLOTS - 1);
    if (live[i] == NULL)
        return;
    /* Re-insert the rest of the cluster, so that lookups still find them. */
    live[i] = NULL;
    nlive--;
    for (size_t j = (i + 1) & (SLOTS - 1); live[j] != NULL; j = (j + 1) & (SLOTS - 1)) {
        void *q = live[j];
        live[j] = NULL;
        nlive--;
        remember(q);
    }
}

/* Whether this allocation of @p caller must fail; otherwise @p p (once made) is tracked. */
static bool must_fail(const void *caller)
{
    bool fail = false;
    if (!armed || !from_typejit(caller))
        return false;
    pthread_mutex_lock(&lock);
    if (countdown > 0 && --countdown == 0)
        fail = fired = true;
    pthread_mutex_unlock(&lock);
    return fail;
}

static void *track(const void *caller, void *p)
{
    if (p != NULL && armed && from_typejit(caller) && nlive < SLOTS / 2) {
        pthread_mutex_lock(&lock);
        remember(p);
        pthread_mutex_unlock(&lock);
    }
    return p;
}

static void untrack(void *p)
{
    if (p != NULL && armed) {
        pthread_mutex_lock(&lock);
        forget(p);
        pthread_mutex_unlock(&lock);
    }
}

EXPORT void *malloc(size_t size)
{
    const void *caller = __builtin_return_address(0);
    return must_fail(caller) ? NULL : track(caller, __libc_malloc(size));
}

EXPORT void *calloc(size_t n, size_t size)
{
    const void *caller = __builtin_return_address(0);
    return must_fail(caller) ? NULL : track(caller, __libc_calloc(n, size));
}

EXPORT void *realloc(void *p, size_t size)
{
    const void *caller = __builtin_return_address(0);
    void *q;
    if (must_fail(caller))
        return NULL;
    untrack(p);
    q = __libc_realloc(p, size);
    if (q == NULL && p != NULL && size != 0) {
        track(caller, p); /* still allocated */
        return NULL;
    }
    return track(caller, q);
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
    const void *caller = __builtin_return_address(0);
    return must_fail(caller) ? NULL : track(caller, __libc_memalign(align, size));
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    const void *caller = __builtin_return_address(0);
    void *p;
    if (must_fail(caller))
        return ENOMEM;
    if ((p = __libc_memalign(align, size)) == NULL)
        return ENOMEM;
    *out = track(caller, p);
    return 0;
}

EXPORT void free(void *p)
{
    untrack(p);
    __libc_free(p);
}

/* From now on the @p nth allocation of libtypejit.so's code fails (0: none does), and its
 * allocations are tracked; what was tracked before is forgotten. */
EXPORT void failmalloc_arm(long nth)
{
    void *sym;
    Dl_info info;

    if (text_hi == 0 && (sym = dlsym(RTLD_DEFAULT, "tj_version")) != NULL &&
        dladdr(sym, &info) != 0)
        dl_iterate_phdr(find_text, info.dli_fbase);
    pthread_mutex_lock(&lock);
    memset(live, 0, sizeof live);
    nlive = 0;
    countdown = nth;
    fired = false;
    armed = text_hi != 0;
    pthread_mutex_unlock(&lock);
}

/* Stops failing and tracking; returns whether the armed failure happened. */
EXPORT bool failmalloc_disarm(void)
{
    bool was;
    pthread_mutex_lock(&lock);
    armed = false;
    was = fired;
    pthread_mutex_unlock(&lock);
    return was;
}

/* Allocations of typejit's code made since the arm and not freed. */
EXPORT long failmalloc_live(void)
{
    long n;
    pthread_mutex_lock(&lock);
    n = nlive;
    pthread_mutex_unlock(&lock);
    return n;
}
