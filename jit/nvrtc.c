/* SPDX-License-Identifier: BSD-3-Clause */
/* NVRTC behind a table of function pointers filled by dlsym, so that the preloaded library starts
 * where NVRTC is absent. Every NVRTC call goes through NVRTC_CHECK. */
#include "jit/nvrtc.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "gpu/cuda.h"
#include "jit/state.h"
#include "util/config.h"
#include "util/log.h"

/* This module's part of the layer's state. */
static __typeof__(tj_jit_state.nvrtc) *const nvrtc_state = &tj_jit_state.nvrtc;

/* Every compile uses these options, and the cache key includes them. */
#define TJ_NVRTC_OPTIONS "-std=c++17"

static tj_status_t nvrtc_check(nvrtcResult rc, const char *call, const char *file, int line)
{
    const char *msg = NULL;
    if (rc == NVRTC_SUCCESS)
        return TJ_OK;
    if (nvrtc_state->nv.nvrtcGetErrorString != NULL)
        msg = nvrtc_state->nv.nvrtcGetErrorString(rc);
    tj_log_write(TJ_LOG_WARN, file, line, "nvrtc call %s failed: %s (%d) at %s:%d", call,
                 msg ? msg : "unknown error", (int)rc, file, line);
    return TJ_ERR_JIT;
}

/* Every NVRTC call: log the call, the error string, file and line; map to TJ_ERR_JIT. */
#define NVRTC_CHECK(_call) nvrtc_check(nvrtc_state->nv._call, #_call, __FILE__, __LINE__)

typedef struct {
    const void *addr; /* an address inside libnvrtc */
    bool found;
} phdr_query_t;

/* Reads the NT_GNU_BUILD_ID note of the object that holds query->addr. */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
    phdr_query_t *query = arg;
    uintptr_t addr = (uintptr_t)query->addr;
    bool inside = false;

    (void)size;
    for (int i = 0; i < info->dlpi_phnum && !inside; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        inside = ph->p_type == PT_LOAD && addr >= lo && addr < lo + ph->p_memsz;
    }
    if (!inside)
        return 0;
    query->found = true;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
        const char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *note = (const ElfW(Nhdr) *)(const void *)p;
            const char *name = p + sizeof(*note);
            const unsigned char *desc =
                (const unsigned char *)name + ((note->n_namesz + 3) & ~(ElfW(Word))3);
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
                memcmp(name, "GNU", 4) == 0 && note->n_descsz > 0 && note->n_descsz <= 64 &&
                (const char *)desc + note->n_descsz <= end) {
                for (ElfW(Word) b = 0; b < note->n_descsz; b++)
                    snprintf(nvrtc_state->build_id + 2 * b, 3, "%02x", desc[b]);
                return 1;
            }
            p = (const char *)desc + ((note->n_descsz + 3) & ~(ElfW(Word))3);
        }
    }
    return 1;
}

/* The NVRTC matching the driver's CUDA major version comes first: a driver cannot load the
 * output of a newer NVRTC (tj_target_loadable says so when only a newer one is found). */
static void *open_library(void)
{
    char own[32];
    const char *names[] = {own, "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
    const char *dirs[] = {getenv("CUDA_HOME"), "/usr/local/cuda"};
    int driver = tj_gpu_driver_version();
    char path[4096];
    void *lib;

    snprintf(own, sizeof(own), "libnvrtc.so.%d", driver > 0 ? driver / 1000 : 13);

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if ((lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL)) != NULL)
            return lib;
    tj_log_debug("nvrtc not on the library path: %s", dlerror());
    for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
        if (dirs[d] == NULL || dirs[d][0] == '\0')
            continue;
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            int n = snprintf(path, sizeof(path), "%s/lib64/%s", dirs[d], names[i]);
            if (n < 0 || (size_t)n >= sizeof(path))
                continue;
            if ((lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)) != NULL)
                return lib;
        }
    }
    return NULL;
}

static void load_library(void)
{
    phdr_query_t query = {NULL, false};
    void *lib = open_library();

    if (lib == NULL) {
        tj_log_debug("no nvrtc library found; kernels cannot be compiled");
        return;
    }
#define TJ_NVRTC_LOAD(_name)                                                                       \
    *(void **)&nvrtc_state->nv._name = dlsym(lib, #_name);                                         \
    if (nvrtc_state->nv._name == NULL) {                                                           \
        tj_log_warn_job("nvrtc library lacks %s; kernels cannot be compiled", #_name);             \
        goto fail_symbols;                                                                         \
    }
    TJ_NVRTC_SYMBOLS(TJ_NVRTC_LOAD)
#undef TJ_NVRTC_LOAD
    if (NVRTC_CHECK(nvrtcVersion(&nvrtc_state->version_major, &nvrtc_state->version_minor)) !=
            TJ_OK ||
        NVRTC_CHECK(nvrtcGetNumSupportedArchs(&nvrtc_state->narchs)) != TJ_OK)
        goto fail_symbols;
    if (nvrtc_state->narchs < 1 || nvrtc_state->narchs > TJ_NVRTC_MAX_ARCHS) {
        tj_log_warn_job("nvrtc reports %d supported archs; kernels cannot be compiled",
                        nvrtc_state->narchs);
        goto fail_symbols;
    }
    if (NVRTC_CHECK(nvrtcGetSupportedArchs(nvrtc_state->archs)) != TJ_OK)
        goto fail_symbols;
    query.addr = *(void **)&nvrtc_state->nv.nvrtcVersion;
    dl_iterate_phdr(find_build_id, &query);
    nvrtc_state->libnvrtc = lib;
    nvrtc_state->load_status = TJ_OK;
    tj_log_debug("nvrtc %d.%d loaded, build-id %s", nvrtc_state->version_major,
                 nvrtc_state->version_minor, nvrtc_state->build_id);
    return;

fail_symbols:
    memset(&nvrtc_state->nv, 0, sizeof(nvrtc_state->nv));
    dlclose(lib);
}

tj_status_t tj_nvrtc_load(void)
{
    pthread_once(&nvrtc_state->load_once, load_library);
    return nvrtc_state->load_status;
}

tj_status_t tj_nvrtc_version(int *major, int *minor)
{
    tj_status_t status = tj_nvrtc_load();
    if (status != TJ_OK)
        return status;
    *major = nvrtc_state->version_major;
    *minor = nvrtc_state->version_minor;
    return TJ_OK;
}

const char *tj_nvrtc_build_id(void)
{
    tj_nvrtc_load();
    return nvrtc_state->build_id;
}

const char *tj_nvrtc_options(void)
{
    return TJ_NVRTC_OPTIONS;
}

/* The highest arch NVRTC supports not above @p sm (-1 when there is none), and whether @p sm
 * itself is one. */
static int best_arch(int sm, bool *exact)
{
    int best = -1;

    *exact = false;
    /* The list is not promised to be sorted. */
    for (int i = 0; i < nvrtc_state->narchs; i++) {
        if (nvrtc_state->archs[i] == sm)
            *exact = true;
        if (nvrtc_state->archs[i] <= sm && nvrtc_state->archs[i] > best)
            best = nvrtc_state->archs[i];
    }
    return best;
}

tj_status_t tj_nvrtc_check_target(const char *target, char *why, size_t len)
{
    tj_status_t status = tj_nvrtc_load();
    const char *digits = strchr(target, '_');
    bool exact;
    int sm, best;

    if (status != TJ_OK)
        return status;
    sm = digits != NULL ? atoi(digits + 1) : 0;
    best = best_arch(sm, &exact);
    if (best < 0) {
        snprintf(why, len,
                 "%s is older than every arch NVRTC %d.%d compiles for (this NVRTC dropped it); "
                 "use a newer target or an older CUDA toolkit",
                 target, nvrtc_state->version_major, nvrtc_state->version_minor);
        return TJ_ERR_UNSUPPORTED;
    }
    if (!exact) {
        snprintf(why, len, "%s is not an arch NVRTC %d.%d knows (the closest below is compute_%d)",
                 target, nvrtc_state->version_major, nvrtc_state->version_minor, best);
        return TJ_ERR_UNSUPPORTED;
    }
    return TJ_OK;
}

static void check_arch_setting(void)
{
    const char *arch = tj_config()->arch;
    char why[256];

    snprintf(nvrtc_state->arch_setting, sizeof(nvrtc_state->arch_setting), "%s", arch);
    if (arch[0] == '\0' || tj_nvrtc_check_target(arch, why, sizeof(why)) != TJ_ERR_UNSUPPORTED)
        return;
    /* What tj_target_of_device does without the setting: each device's own arch, or sm_90 where
     * there is none (TYPEJIT_JIT=always, the typejit command). */
    if (tj_gpu_available())
        tj_log_warn_job("ignoring TYPEJIT_ARCH=%s: %s; using each device's own arch", arch, why);
    else
        tj_log_warn_job("ignoring TYPEJIT_ARCH=%s: %s; using sm_90, the target without a cuda "
                        "device",
                        arch, why);
    nvrtc_state->arch_setting[0] = '\0';
}

const char *tj_nvrtc_arch_setting(void)
{
    pthread_once(&nvrtc_state->arch_once, check_arch_setting);
    return nvrtc_state->arch_setting;
}

tj_status_t tj_nvrtc_target(int sm, char *target, size_t len)
{
    tj_status_t status = tj_nvrtc_load();
    int best, n;
    bool exact;

    if (status != TJ_OK)
        return status;
    best = best_arch(sm, &exact);
    if (best < 0) {
        tj_log_warn_job("device arch sm_%d is older than every arch nvrtc %d.%d supports (lowest "
                        "sm_%d); its buffers go to the system mpi",
                        sm, nvrtc_state->version_major, nvrtc_state->version_minor,
                        nvrtc_state->archs[0]);
        return TJ_ERR_UNSUPPORTED;
    }
    n = snprintf(target, len, exact ? "sm_%d" : "compute_%d", best);
    if (n < 0 || (size_t)n >= len) {
        tj_log_error("target buffer of %zu bytes too small for the target name", len);
        return TJ_ERR_INVALID;
    }
    return TJ_OK;
}

/* True the first time this log text is seen; the table forgets nothing until it is full. */
static bool first_failure(const char *log)
{
    uint64_t h = XXH3_64bits(log, strlen(log));
    bool first = true;

    pthread_mutex_lock(&nvrtc_state->failure_lock);
    for (int i = 0; i < nvrtc_state->nfailures && first; i++)
        first = nvrtc_state->failures[i] != h;
    if (first && nvrtc_state->nfailures < TJ_NVRTC_MAX_FAILURES)
        nvrtc_state->failures[nvrtc_state->nfailures++] = h;
    pthread_mutex_unlock(&nvrtc_state->failure_lock);
    return first;
}

/* Writes the program log of a failed compile. */
static void log_program(nvrtcProgram prog, const char *name, const char *target)
{
    size_t size = 0;
    char *log;

    if (NVRTC_CHECK(nvrtcGetProgramLogSize(prog, &size)) != TJ_OK || size == 0)
        return;
    if ((log = malloc(size + 1)) == NULL) {
        tj_log_error("out of memory reading the nvrtc log of %s", name);
        return;
    }
    if (NVRTC_CHECK(nvrtcGetProgramLog(prog, log)) == TJ_OK) {
        log[size] = '\0';
        if (first_failure(log))
            tj_log_warn_job("nvrtc could not compile %s for %s:\n%s", name, target, log);
    }
    free(log);
}

tj_status_t tj_nvrtc_compile(const char *source, const char *name, const char *target, void **image,
                             size_t *len)
{
    char arch_option[64], options[] = TJ_NVRTC_OPTIONS, *save = NULL;
    const char *argv[16];
    int argc = 0;
    nvrtcProgram prog = NULL;
    tj_status_t status;
    size_t size = 0;
    bool cubin;
    char *out = NULL;

    if ((status = tj_nvrtc_load()) != TJ_OK)
        return status;
    if (source == NULL || name == NULL || target == NULL || !tj_config_arch_valid(target)) {
        tj_log_error("nvrtc compile of %s: invalid target \"%s\"", name ? name : "(null)",
                     target ? target : "(null)");
        return TJ_ERR_INVALID;
    }
    cubin = target[0] == 's';
    for (char *tok = strtok_r(options, " ", &save); tok && argc < 15;
         tok = strtok_r(NULL, " ", &save))
        argv[argc++] = tok;
    snprintf(arch_option, sizeof(arch_option), "--gpu-architecture=%s", target);
    argv[argc++] = arch_option;

    if ((status = NVRTC_CHECK(nvrtcCreateProgram(&prog, source, name, 0, NULL, NULL))) != TJ_OK)
        return status;
    if ((status = NVRTC_CHECK(nvrtcCompileProgram(prog, argc, argv))) != TJ_OK) {
        log_program(prog, name, target);
        goto destroy_program;
    }
    status = cubin ? NVRTC_CHECK(nvrtcGetCUBINSize(prog, &size))
                   : NVRTC_CHECK(nvrtcGetPTXSize(prog, &size));
    if (status != TJ_OK)
        goto destroy_program;
    if (size == 0 || (out = malloc(size)) == NULL) {
        tj_log_error("cannot hold the %zu-byte image of %s", size, name);
        status = size == 0 ? TJ_ERR_JIT : TJ_ERR_NOMEM;
        goto destroy_program;
    }
    status = cubin ? NVRTC_CHECK(nvrtcGetCUBIN(prog, out)) : NVRTC_CHECK(nvrtcGetPTX(prog, out));
    if (status != TJ_OK)
        goto free_image;
    *image = out;
    *len = size;
    out = NULL;

free_image:
    free(out);
destroy_program:
    NVRTC_CHECK(nvrtcDestroyProgram(&prog));
    return status;
}
