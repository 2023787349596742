/* SPDX-License-Identifier: BSD-3-Clause */
/* libnvrtc.so.13 for tests with the fake driver: forwards to the real NVRTC and appends the
 * program's source to every PTX and CUBIN (trailer.h), so the fake driver can run its kernels.
 *
 * Knobs for tests (environment, read once):
 *   FAKECUDA_NVRTC_REFUSE=1      every nvrtcCompileProgram fails (NVRTC_ERROR_COMPILATION, with a
 *                                program log that says why): a run that must compile nothing
 *                                shows each attempt as a failed compile;
 *   FAKECUDA_NVRTC_DELAY_MS=N    every compile takes N ms longer (a slow compile);
 *   FAKECUDA_NVRTC_CACHE=DIR     successful compiles are kept in DIR and replayed when the same
 *                                program is compiled again (nvrtc_cache.h): the refusal, the delay
 *                                and the count of compiles in progress still apply.
 * And a check: a process that starts to exit while a compile runs inside NVRTC (whose own
 * destructors then run under it, which a real NVRTC does not survive) is stopped with a message
 * on stderr and exit status 3. */
#include <dlfcn.h>
#include <errno.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nvrtc_cache.h"
#include "trailer.h"

#ifndef FAKECUDA_REAL_NVRTC
#error "build with -DFAKECUDA_REAL_NVRTC=<absolute path of the real libnvrtc.so.13>"
#endif

#define SHIM_EXPORT __attribute__((visibility("default")))

/* The real functions, looked up by the names this file exports. */
#define SHIM_FUNCTIONS(_X)                                                                         \
    _X(nvrtcGetErrorString)                                                                        \
    _X(nvrtcVersion)                                                                               \
    _X(nvrtcGetNumSupportedArchs)                                                                  \
    _X(nvrtcGetSupportedArchs)                                                                     \
    _X(nvrtcCreateProgram)                                                                         \
    _X(nvrtcDestroyProgram)                                                                        \
    _X(nvrtcCompileProgram)                                                                        \
    _X(nvrtcGetPTXSize)                                                                            \
    _X(nvrtcGetPTX)                                                                                \
    _X(nvrtcGetCUBINSize)                                                                          \
    _X(nvrtcGetCUBIN)                                                                              \
    _X(nvrtcGetProgramLogSize)                                                                     \
    _X(nvrtcGetProgramLog)                                                                         \
    _X(nvrtcAddNameExpression)                                                                     \
    _X(nvrtcGetLoweredName)

static struct {
#define SHIM_FIELD(_name) __typeof__(&_name) _name;
    SHIM_FUNCTIONS(SHIM_FIELD)
#undef SHIM_FIELD
} real;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static bool loaded;
static bool refuse;
static long delay_ms;
static const char *cache_dir; /* FAKECUDA_NVRTC_CACHE, NULL without */
static atomic_int compiling;  /* nvrtcCompileProgram calls in progress */

static const char refuse_log[] = "the test double refuses every compile (FAKECUDA_NVRTC_REFUSE=1)";

/* How many compiles run now, for tests that must catch one in progress. */
SHIM_EXPORT int fakecuda_nvrtc_compiling(void);
SHIM_EXPORT int fakecuda_nvrtc_compiling(void)
{
    return atomic_load(&compiling);
}

/* Run at exit before the real NVRTC's own destructors (it is registered after they are, when
 * the real library has been loaded): a compile still running then would run on torn-down
 * state. */
static void exit_check(void)
{
    int n = atomic_load(&compiling);
    if (n > 0) {
        fprintf(stderr,
                "fakecuda nvrtc: the process is exiting while %d compile(s) run inside NVRTC\n", n);
        fflush(stderr);
        _exit(3);
    }
}

static void load(void)
{
    const char *env;
    void *lib = dlopen(FAKECUDA_REAL_NVRTC, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL)
        return;
    loaded = true;
#define SHIM_LOOKUP(_name)                                                                         \
    *(void **)&real._name = dlsym(lib, #_name);                                                    \
    loaded = loaded && real._name != NULL;
    SHIM_FUNCTIONS(SHIM_LOOKUP)
#undef SHIM_LOOKUP
    env = getenv("FAKECUDA_NVRTC_REFUSE");
    refuse = env != NULL && strcmp(env, "1") == 0;
    env = getenv("FAKECUDA_NVRTC_DELAY_MS");
    delay_ms = env != NULL ? strtol(env, NULL, 10) : 0;
    env = getenv("FAKECUDA_NVRTC_CACHE");
    cache_dir = env != NULL && *env != '\0' ? env : NULL;
    atexit(exit_check);
}

static bool ready(void)
{
    pthread_once(&load_once, load);
    return loaded;
}

/* Each live program's source, for the trailer, and what the cache needs of it. */
typedef struct program {
    nvrtcProgram prog;
    char *source;
    size_t len;
    char *name;                /* as given to nvrtcCreateProgram, "" for none */
    bool cacheable;            /* no headers, no name expressions: the key covers every input */
    fc_nvrtc_result_t *replay; /* the cached outputs the getters serve; NULL when compiled */
    struct program *next;
} program_t;

static pthread_mutex_t programs_lock = PTHREAD_MUTEX_INITIALIZER;
static program_t *programs;

static program_t *find(nvrtcProgram prog)
{
    program_t *p;
    for (p = programs; p != NULL && p->prog != prog; p = p->next)
        ;
    return p;
}

SHIM_EXPORT const char *nvrtcGetErrorString(nvrtcResult result)
{
    return ready() ? real.nvrtcGetErrorString(result) : "the NVRTC shim found no real libnvrtc";
}

SHIM_EXPORT nvrtcResult nvrtcVersion(int *major, int *minor)
{
    return ready() ? real.nvrtcVersion(major, minor) : NVRTC_ERROR_INTERNAL_ERROR;
}

SHIM_EXPORT nvrtcResult nvrtcGetNumSupportedArchs(int *numArchs)
{
    return ready() ? real.nvrtcGetNumSupportedArchs(numArchs) : NVRTC_ERROR_INTERNAL_ERROR;
}

SHIM_EXPORT nvrtcResult nvrtcGetSupportedArchs(int *supportedArchs)
{
    return ready() ? real.nvrtcGetSupportedArchs(supportedArchs) : NVRTC_ERROR_INTERNAL_ERROR;
}

/* Header sources are not carried in the trailer: only the main source is compiled for the host,
 * so a program that includes named headers cannot be emulated. */
SHIM_EXPORT nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name,
                                           int numHeaders, const char *const *headers,
                                           const char *const *includeNames)
{
    nvrtcResult rc;
    program_t *p;

    if (!ready())
        return NVRTC_ERROR_INTERNAL_ERROR;
    rc = real.nvrtcCreateProgram(prog, src, name, numHeaders, headers, includeNames);
    if (rc != NVRTC_SUCCESS)
        return rc;
    p = calloc(1, sizeof *p);
    if (p == NULL || (p->source = strdup(src)) == NULL ||
        (p->name = strdup(name != NULL ? name : "")) == NULL) {
        if (p != NULL)
            free(p->source);
        free(p);
        real.nvrtcDestroyProgram(prog);
        return NVRTC_ERROR_OUT_OF_MEMORY;
    }
    p->prog = *prog;
    p->len = strlen(src);
    p->cacheable = numHeaders == 0;
    pthread_mutex_lock(&programs_lock);
    p->next = programs;
    programs = p;
    pthread_mutex_unlock(&programs_lock);
    return rc;
}

SHIM_EXPORT nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog)
{
    if (!ready())
        return NVRTC_ERROR_INTERNAL_ERROR;
    if (prog != NULL) {
        pthread_mutex_lock(&programs_lock);
        for (program_t **pp = &programs; *pp != NULL; pp = &(*pp)->next)
            if ((*pp)->prog == *prog) {
                program_t *victim = *pp;
                *pp = victim->next;
                free(victim->source);
                free(victim->name);
                if (victim->replay != NULL)
                    fc_nvrtc_result_free(victim->replay);
                free(victim->replay);
                free(victim);
                break;
            }
        pthread_mutex_unlock(&programs_lock);
    }
    return real.nvrtcDestroyProgram(prog);
}

/* The cache key of @p prog's compile with these options; NULL when it cannot be cached. */
static char *program_key(nvrtcProgram prog, int numOptions, const char *const *options,
                         size_t *key_len)
{
    int major = 0, minor = 0;
    char *key = NULL;

    if (real.nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
        return NULL;
    pthread_mutex_lock(&programs_lock);
    program_t *p = find(prog);
    if (p != NULL && p->cacheable)
        key = fc_nvrtc_key(major, minor, p->name, numOptions, options, p->source, p->len, key_len);
    pthread_mutex_unlock(&programs_lock);
    return key;
}

/* One getter's answer from the real NVRTC, bytes included. */
static bool collect_output(nvrtcProgram prog, fc_nvrtc_output_t *out,
                           nvrtcResult (*get_size)(nvrtcProgram, size_t *),
                           nvrtcResult (*get)(nvrtcProgram, char *))
{
    out->rc = get_size(prog, &out->size);
    if (out->rc != NVRTC_SUCCESS) {
        out->size = 0;
        return true;
    }
    if (out->size == 0)
        return true;
    if ((out->data = malloc(out->size)) == NULL)
        return false;
    out->rc = get(prog, out->data);
    return out->rc == NVRTC_SUCCESS;
}

/* The compile through FAKECUDA_NVRTC_CACHE: a stored result is attached to the program for the
 * getters to serve; else the real compile, whose success is stored. */
static nvrtcResult compile_cached(nvrtcProgram prog, int numOptions, const char *const *options)
{
    size_t key_len = 0;
    char *key = program_key(prog, numOptions, options, &key_len);
    fc_nvrtc_result_t *hit;
    nvrtcResult rc;

    if (key == NULL)
        return real.nvrtcCompileProgram(prog, numOptions, options);
    if ((hit = calloc(1, sizeof *hit)) != NULL &&
        fc_nvrtc_cache_load(cache_dir, key, key_len, hit)) {
        pthread_mutex_lock(&programs_lock);
        program_t *p = find(prog);
        if (p != NULL && p->replay == NULL) {
            p->replay = hit;
            hit = NULL;
        }
        pthread_mutex_unlock(&programs_lock);
        if (hit == NULL) {
            free(key);
            return NVRTC_SUCCESS;
        }
        fc_nvrtc_result_free(hit);
    }
    free(hit);
    rc = real.nvrtcCompileProgram(prog, numOptions, options);
    if (rc == NVRTC_SUCCESS) {
        fc_nvrtc_result_t made = {0};
        if (collect_output(prog, &made.ptx, real.nvrtcGetPTXSize, real.nvrtcGetPTX) &&
            collect_output(prog, &made.cubin, real.nvrtcGetCUBINSize, real.nvrtcGetCUBIN) &&
            collect_output(prog, &made.log, real.nvrtcGetProgramLogSize, real.nvrtcGetProgramLog))
            fc_nvrtc_cache_store(cache_dir, key, key_len, &made);
        fc_nvrtc_result_free(&made);
    }
    free(key);
    return rc;
}

SHIM_EXPORT nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions,
                                            const char *const *options)
{
    nvrtcResult rc;

    if (!ready())
        return NVRTC_ERROR_INTERNAL_ERROR;
    atomic_fetch_add(&compiling, 1);
    if (delay_ms > 0) {
        struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
    if (refuse)
        rc = NVRTC_ERROR_COMPILATION;
    else if (cache_dir != NULL)
        rc = compile_cached(prog, numOptions, options);
    else
        rc = real.nvrtcCompileProgram(prog, numOptions, options);
    atomic_fetch_sub(&compiling, 1);
    return rc;
}

static size_t trailer_size(nvrtcProgram prog)
{
    size_t n = 0;
    pthread_mutex_lock(&programs_lock);
    program_t *p = find(prog);
    if (p != NULL)
        n = sizeof(fc_trailer_t) + p->len;
    pthread_mutex_unlock(&programs_lock);
    return n;
}

static void write_trailer(nvrtcProgram prog, char *out)
{
    fc_trailer_t t;
    int major = 0, minor = 0;

    real.nvrtcVersion(&major, &minor);
    memcpy(t.magic, FC_TRAILER_MAGIC, FC_TRAILER_MAGIC_LEN);
    t.nvrtc_major = (uint32_t)major;
    t.nvrtc_minor = (uint32_t)minor;
    pthread_mutex_lock(&programs_lock);
    program_t *p = find(prog);
    if (p != NULL) {
        t.source_len = p->len;
        memcpy(out, &t, sizeof t);
        memcpy(out + sizeof t, p->source, p->len);
    }
    pthread_mutex_unlock(&programs_lock);
}

/* The outputs a getter asks for. */
typedef enum { OUT_PTX, OUT_CUBIN, OUT_LOG } output_kind_t;

/* Copies the replayed @p kind of @p prog into @p out (the bytes themselves stay the program's,
 * valid until it is destroyed); false when the program was really compiled. */
static bool replayed(nvrtcProgram prog, output_kind_t kind, fc_nvrtc_output_t *out)
{
    bool found = false;
    pthread_mutex_lock(&programs_lock);
    program_t *p = find(prog);
    if (p != NULL && p->replay != NULL) {
        *out = kind == OUT_PTX     ? p->replay->ptx
               : kind == OUT_CUBIN ? p->replay->cubin
                                   : p->replay->log;
        found = true;
    }
    pthread_mutex_unlock(&programs_lock);
    return found;
}

/* The real NVRTC's getters of each output (after ready()). */
static nvrtcResult real_size(nvrtcProgram prog, output_kind_t kind, size_t *ret)
{
    return kind == OUT_PTX     ? real.nvrtcGetPTXSize(prog, ret)
           : kind == OUT_CUBIN ? real.nvrtcGetCUBINSize(prog, ret)
                               : real.nvrtcGetProgramLogSize(prog, ret);
}

static nvrtcResult real_bytes(nvrtcProgram prog, output_kind_t kind, char *dst)
{
    return kind == OUT_PTX     ? real.nvrtcGetPTX(prog, dst)
           : kind == OUT_CUBIN ? real.nvrtcGetCUBIN(prog, dst)
                               : real.nvrtcGetProgramLog(prog, dst);
}

/* An output's size (the image's plus the trailer's, so callers copy and cache both). */
static nvrtcResult output_size(nvrtcProgram prog, size_t *ret, output_kind_t kind)
{
    fc_nvrtc_output_t out;
    nvrtcResult rc;

    if (!ready())
        return NVRTC_ERROR_INTERNAL_ERROR;
    if (kind == OUT_LOG && refuse) { /* every program's compile was refused */
        *ret = sizeof(refuse_log);
        return NVRTC_SUCCESS;
    }
    if (replayed(prog, kind, &out)) {
        rc = out.rc;
        if (rc == NVRTC_SUCCESS && ret != NULL)
            *ret = out.size;
    } else {
        rc = real_size(prog, kind, ret);
    }
    if (rc == NVRTC_SUCCESS && ret != NULL && kind != OUT_LOG)
        *ret += trailer_size(prog);
    return rc;
}

/* An output's bytes (and after an image's, the trailer). */
static nvrtcResult output(nvrtcProgram prog, char *dst, output_kind_t kind)
{
    fc_nvrtc_output_t out;
    size_t size = 0;
    nvrtcResult rc;

    if (!ready())
        return NVRTC_ERROR_INTERNAL_ERROR;
    if (kind == OUT_LOG && refuse) {
        memcpy(dst, refuse_log, sizeof(refuse_log));
        return NVRTC_SUCCESS;
    }
    if (replayed(prog, kind, &out)) {
        if (out.rc != NVRTC_SUCCESS || dst == NULL)
            return out.rc == NVRTC_SUCCESS ? NVRTC_ERROR_INVALID_INPUT : out.rc;
        if (out.size > 0)
            memcpy(dst, out.data, out.size);
        size = out.size;
    } else if ((rc = real_bytes(prog, kind, dst)) != NVRTC_SUCCESS || dst == NULL ||
               (kind != OUT_LOG && (rc = real_size(prog, kind, &size)) != NVRTC_SUCCESS)) {
        return rc;
    }
    if (kind != OUT_LOG)
        write_trailer(prog, dst + size);
    return NVRTC_SUCCESS;
}

/* The two getters of each output: its size and its bytes. */
#define OUTPUT_GETTERS(_size_name, _name, _kind)                                                   \
    SHIM_EXPORT nvrtcResult _size_name(nvrtcProgram prog, size_t *size)                            \
    {                                                                                              \
        return output_size(prog, size, _kind);                                                     \
    }                                                                                              \
    SHIM_EXPORT nvrtcResult _name(nvrtcProgram prog, char *dst)                                    \
    {                                                                                              \
        return output(prog, dst, _kind);                                                           \
    }

OUTPUT_GETTERS(nvrtcGetPTXSize, nvrtcGetPTX, OUT_PTX)
OUTPUT_GETTERS(nvrtcGetCUBINSize, nvrtcGetCUBIN, OUT_CUBIN)
OUTPUT_GETTERS(nvrtcGetProgramLogSize, nvrtcGetProgramLog, OUT_LOG)

SHIM_EXPORT nvrtcResult nvrtcAddNameExpression(nvrtcProgram prog, const char *const name_expression)
{
    if (ready()) { /* lowered names come from a real compile only */
        pthread_mutex_lock(&programs_lock);
        program_t *p = find(prog);
        if (p != NULL)
            p->cacheable = false;
        pthread_mutex_unlock(&programs_lock);
    }
    return ready() ? real.nvrtcAddNameExpression(prog, name_expression)
                   : NVRTC_ERROR_INTERNAL_ERROR;
}

SHIM_EXPORT nvrtcResult nvrtcGetLoweredName(nvrtcProgram prog, const char *const name_expression,
                                            const char **lowered_name)
{
    return ready() ? real.nvrtcGetLoweredName(prog, name_expression, lowered_name)
                   : NVRTC_ERROR_INTERNAL_ERROR;
}
