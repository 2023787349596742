/* SPDX-License-Identifier: BSD-3-Clause */
/* Driver start-up: cuInit reads the FAKECUDA_* settings once; version, error strings, counters,
 * and the exit status of a process in which emulated device work broke a rule. */
#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "fakecuda.h"

fc_config_t fc_config = {1, {90, 90, 90, 90, 90, 90, 90, 90}, false, 4, false, 0, false};
bool fc_initialized;
fc_stats_t fc_stats;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static CUresult init_status = CUDA_ERROR_NOT_INITIALIZED;

/* FAKECUDA_SM: one compute capability per device, e.g. "90,86"; the last one repeats. */
static void parse_sm(const char *spec)
{
    int n = 0, last = 90;
    while (spec != NULL && *spec != '\0' && n < FC_MAX_DEVICES) {
        char *end;
        long sm = strtol(spec, &end, 10);
        if (end == spec || sm < 30 || sm > 999) {
            fc_log("ignoring malformed FAKECUDA_SM '%s'", spec);
            break;
        }
        fc_config.sm[n++] = last = (int)sm;
        spec = *end == ',' ? end + 1 : NULL;
    }
    for (; n < FC_MAX_DEVICES; n++)
        fc_config.sm[n] = last;
}

/* A process whose emulated work broke a rule must fail, even when the application recovered
 * from the sticky error (typejit stages through host memory after one). */
static void exit_check(void)
{
    long long n;
    fc_lock();
    n = fc_stats.write_violations;
    fc_unlock();
    if (n == 0)
        return;
    fc_log("%lld kernel launch(es) broke the rules of the device (see above); exiting with "
           "status %d",
           n, FC_VIOLATION_EXIT);
    fflush(NULL);
    _exit(FC_VIOLATION_EXIT);
}

void fc_violation(const char *fmt, ...)
{
    va_list ap;
    fc_stats.write_violations++;
    va_start(ap, fmt);
    fputs("fakecuda: ", stderr);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (FAKECUDA_SEED=%llu replays this process's thread orders)\n", fc_grid_seed());
    va_end(ap);
}

static void init_once_fn(void)
{
    const char *devices = getenv("FAKECUDA_DEVICES");
    const char *log = getenv("FAKECUDA_LOG");
    const char *threads = getenv("FAKECUDA_THREADS");
    const char *pageable = getenv("FAKECUDA_PAGEABLE");
    const char *arena = getenv("FAKECUDA_ARENA_GIB");
    const char *stream_thread = getenv("FAKECUDA_STREAM_THREAD");

    fc_config.log = log != NULL && strcmp(log, "1") == 0;
    if (devices != NULL) {
        char *end;
        long n = strtol(devices, &end, 10);
        if (end != devices && *end == '\0' && n >= 0 && n <= FC_MAX_DEVICES)
            fc_config.ndevices = (int)n;
        else
            fc_log("ignoring malformed FAKECUDA_DEVICES '%s' (0 to %d)", devices, FC_MAX_DEVICES);
    }
    if (threads != NULL) {
        char *end;
        long n = strtol(threads, &end, 10);
        if (end != threads && *end == '\0' && n >= 1 && n <= 64)
            fc_config.threads = (int)n;
        else
            fc_log("ignoring malformed FAKECUDA_THREADS '%s' (1 to 64)", threads);
    }
    if (arena != NULL) {
        char *end;
        long n = strtol(arena, &end, 10);
        if (end != arena && *end == '\0' && n >= 1 && n <= 1024)
            fc_config.arena = (size_t)n << 30;
        else
            fc_log("ignoring malformed FAKECUDA_ARENA_GIB '%s' (1 to 1024)", arena);
    }
    if (pageable != NULL && strcmp(pageable, "0") != 0 && strcmp(pageable, "1") != 0)
        fc_log("ignoring malformed FAKECUDA_PAGEABLE '%s' (0 or 1)", pageable);
    else
        fc_config.pageable = pageable != NULL && strcmp(pageable, "1") == 0;
    if (stream_thread != NULL && strcmp(stream_thread, "0") != 0 && strcmp(stream_thread, "1") != 0)
        fc_log("ignoring malformed FAKECUDA_STREAM_THREAD '%s' (0 or 1)", stream_thread);
    else
        fc_config.stream_thread = stream_thread != NULL && strcmp(stream_thread, "1") == 0;
    parse_sm(getenv("FAKECUDA_SM"));
    fc_inject_parse(getenv("FAKECUDA_FAIL"));
    atexit(exit_check);
    if (fc_config.ndevices == 0) {
        init_status = CUDA_ERROR_NO_DEVICE;
        return;
    }
    fc_fault_install();
    if (fc_config.stream_thread)
        fc_stream_thread_start();
    init_status = CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuInit(unsigned int Flags)
{
    FC_BEGIN(cuInit, false);
    if (Flags != 0) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        pthread_once(&init_once, init_once_fn);
        rc = init_status;
        fc_initialized = rc == CUDA_SUCCESS;
    }
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
    FC_BEGIN(cuDriverGetVersion, false);
    rc = FC_OUT(driverVersion, FAKECUDA_VERSION);
    FC_END();
}

typedef struct {
    CUresult code;
    const char *name;
    char text[64]; /* "illegal address" from CUDA_ERROR_ILLEGAL_ADDRESS */
} fc_error_t;

#define FC_ERROR_ENTRY(_code) {_code, #_code, ""},
static fc_error_t errors[] = {FC_ERRORS(FC_ERROR_ENTRY)};
#undef FC_ERROR_ENTRY

static pthread_once_t errors_once = PTHREAD_ONCE_INIT;

static void errors_once_fn(void)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
        const char *p = errors[i].name + (strncmp(errors[i].name, "CUDA_ERROR_", 11) == 0 ? 11 : 5);
        size_t n = 0;
        for (; *p != '\0' && n + 1 < sizeof errors[i].text; p++)
            errors[i].text[n++] = *p == '_' ? ' ' : (char)tolower((unsigned char)*p);
        errors[i].text[n] = '\0';
    }
    errors[0].text[0] = '\0';
    strcpy(errors[0].text, "no error");
}

/* Unknown codes: CUDA_ERROR_INVALID_VALUE and *pStr = NULL, as cuda.h documents. */
static CUresult error_lookup(CUresult error, bool name, const char **pStr)
{
    if (pStr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_once(&errors_once, errors_once_fn);
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == error) {
            *pStr = name ? errors[i].name : errors[i].text;
            return CUDA_SUCCESS;
        }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

FC_EXPORT CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
    FC_BEGIN(cuGetErrorString, false);
    rc = error_lookup(error, false, pStr);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
    FC_BEGIN(cuGetErrorName, false);
    rc = error_lookup(error, true, pStr);
    FC_END();
}

FC_EXPORT long long fakecuda_stats(const char *name)
{
    static const struct {
        const char *name;
        long long *value;
    } counters[] = {
        {"launches", &fc_stats.launches},
        {"kernel_compiles", &fc_stats.kernel_compiles},
        {"kernel_cache_hits", &fc_stats.kernel_cache_hits},
        {"modules_loaded", &fc_stats.modules_loaded},
        {"kernel_faults", &fc_stats.kernel_faults},
        {"host_faults", &fc_stats.host_faults},
        {"copies", &fc_stats.copies},
        {"syncs", &fc_stats.syncs},
        {"launches_tracked", &fc_stats.launches_tracked},
        {"write_violations", &fc_stats.write_violations},
        {"blocks_on_pool", &fc_stats.blocks_on_pool},
    };
    long long value = -1;

    /* "calls:cuPointerGetAttributes": how often that entry point was called; "calls:*": how
     * often any was. */
    if (name != NULL && strncmp(name, "calls:", 6) == 0)
        return fc_site_calls(name + 6);
    fc_lock();
    for (size_t i = 0; name != NULL && i < sizeof counters / sizeof counters[0]; i++)
        if (strcmp(name, counters[i].name) == 0)
            value = *counters[i].value;
    fc_unlock();
    return value;
}
