/* SPDX-License-Identifier: BSD-3-Clause */
/* The entry of every exported call: the global lock, FAKECUDA_FAIL failure injection, logging. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"

#define MAX_RULES 32

/* FUNCTION:N[+][=CODE]: the N-th call of FUNCTION fails (with '+', every later one too).
 * FUNCTION%P[=CODE]: each call fails with probability P percent (P may have decimals), drawn from
 * FAKECUDA_SEED (the seed of the thread orders, said with every broken rule), the function and
 * the call's number, so that a seed replays the same failures. */
typedef struct {
    char name[64];
    unsigned long nth;
    bool onwards;
    double percent; /* > 0: a probability rule */
    CUresult code;  /* 0: the function's default */
} rule_t;

static rule_t rules[MAX_RULES];
static int nrules;

/* Recursive because a synchronising call runs queued work that may need the same state. */
static pthread_mutex_t big_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static fc_site_t *sites; /* every site called so far, under count_lock */

void fc_lock(void)
{
    pthread_mutex_lock(&big_lock);
}

void fc_unlock(void)
{
    pthread_mutex_unlock(&big_lock);
}

void fc_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fakecuda: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* A failure the real function could plausibly return when no code is given. */
static CUresult default_code(const char *name)
{
    if (strcmp(name, "cuLaunchKernel") == 0)
        return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    if (strncmp(name, "cuMemAlloc", 10) == 0 || strcmp(name, "cuMemHostAlloc") == 0 ||
        strcmp(name, "cuMemHostRegister_v2") == 0 || strcmp(name, "cuMemCreate") == 0 ||
        strcmp(name, "cuMemMap") == 0 || strcmp(name, "cuMemAddressReserve") == 0 ||
        strcmp(name, "cuMemPoolCreate") == 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (strncmp(name, "cuIpcOpenMemHandle", 18) == 0)
        return CUDA_ERROR_MAP_FAILED;
    if (strncmp(name, "cuModuleLoad", 12) == 0)
        return CUDA_ERROR_INVALID_IMAGE;
    if (strncmp(name, "cuModuleGetFunction", 19) == 0)
        return CUDA_ERROR_NOT_FOUND;
    if (strncmp(name, "cuCtx", 5) == 0 || strncmp(name, "cuDevicePrimaryCtx", 18) == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    return CUDA_ERROR_UNKNOWN;
}

/* Errors after which a real context is unusable until it is destroyed or reset. */
static bool is_sticky(CUresult code)
{
    switch (code) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
        return true;
    default:
        return false;
    }
}

void fc_inject_parse(const char *spec)
{
    bool chance = false;

    nrules = 0;
    while (spec != NULL && *spec != '\0' && nrules < MAX_RULES) {
        const char *end = strchr(spec, ',');
        size_t len = end ? (size_t)(end - spec) : strlen(spec);
        char item[128];
        rule_t r = {0};
        char *colon, *rest;

        if (len > 0 && len < sizeof item) {
            memcpy(item, spec, len);
            item[len] = '\0';
            colon = strchr(item, '%');
            if (colon != NULL && (size_t)(colon - item) < sizeof r.name) {
                memcpy(r.name, item, (size_t)(colon - item));
                r.percent = strtod(colon + 1, &rest);
                if (*rest == '=')
                    r.code = (CUresult)strtol(rest + 1, &rest, 0);
                if (r.percent > 0 && r.percent <= 100 && *rest == '\0') {
                    /* Said once: the seed replays the failures. */
                    if (nrules == 0 || !chance)
                        fc_log("FAKECUDA_FAIL draws its failures from FAKECUDA_SEED=%llu",
                               fc_grid_seed());
                    chance = true;
                    rules[nrules++] = r;
                } else
                    fc_log("ignoring malformed FAKECUDA_FAIL item '%s'", item);
                spec = end ? end + 1 : NULL;
                continue;
            }
            colon = strchr(item, ':');
            if (colon != NULL && (size_t)(colon - item) < sizeof r.name) {
                memcpy(r.name, item, (size_t)(colon - item));
                r.nth = strtoul(colon + 1, &rest, 10);
                if (*rest == '+') {
                    r.onwards = true;
                    rest++;
                }
                if (*rest == '=')
                    r.code = (CUresult)strtol(rest + 1, &rest, 0);
                if (r.nth > 0 && *rest == '\0')
                    rules[nrules++] = r;
                else
                    fc_log("ignoring malformed FAKECUDA_FAIL item '%s'", item);
            } else {
                fc_log("ignoring malformed FAKECUDA_FAIL item '%s'", item);
            }
        }
        spec = end ? end + 1 : NULL;
    }
}

/* A number in [0, 1) for call @p n of @p name under this process's seed. */
static double draw(const char *name, unsigned long n)
{
    uint64_t z = fc_grid_seed() ^ (n * 0x9E3779B97F4A7C15ull);
    for (const char *c = name; *c != '\0'; c++)
        z = (z ^ (unsigned char)*c) * 0x100000001b3ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / (double)(1ull << 53);
}

long long fc_site_calls(const char *name)
{
    long long calls = 0;

    pthread_mutex_lock(&count_lock);
    for (const fc_site_t *at = sites; at != NULL; at = at->next)
        if (strcmp(name, "*") == 0)
            calls += (long long)at->calls;
        else if (strcmp(at->name, name) == 0)
            calls = (long long)at->calls;
    pthread_mutex_unlock(&count_lock);
    return calls;
}

CUresult fc_enter(fc_site_t *site, bool needs_init)
{
    unsigned long n;
    CUresult code = CUDA_SUCCESS;

    pthread_mutex_lock(&count_lock);
    n = ++site->calls;
    if (n == 1) {
        site->next = sites;
        sites = site;
    }
    pthread_mutex_unlock(&count_lock);
    if (needs_init && !fc_initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    for (int i = 0; i < nrules && code == CUDA_SUCCESS; i++)
        if (strcmp(rules[i].name, site->name) == 0 &&
            (rules[i].percent > 0 ? draw(site->name, n) * 100 < rules[i].percent
                                  : n == rules[i].nth || (rules[i].onwards && n > rules[i].nth)))
            code = rules[i].code ? rules[i].code : default_code(site->name);
    if (code != CUDA_SUCCESS && is_sticky(code)) {
        fc_lock();
        if (fc_ctx_top() != NULL)
            fc_ctx_poison(fc_ctx_top(), code);
        fc_unlock();
    }
    return code;
}

CUresult fc_leave(const fc_site_t *site, CUresult rc)
{
    if (fc_config.log)
        fc_log("%s -> %d", site->name, (int)rc);
    return rc;
}
