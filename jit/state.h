/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernel generation layer's mutable state in one structure, a sub-structure per module. */
#ifndef TJ_JIT_STATE_H
#define TJ_JIT_STATE_H

#include <nvrtc.h>
#include <pthread.h>
#include <stdint.h>

#include "typejit.h"
#include "util/common.h"

/* Name in nvrtc.c, and the symbol the library exports. */
#define TJ_NVRTC_SYMBOLS(_X)                                                                       \
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
    _X(nvrtcGetProgramLog)

/* NVRTC's entry points (tj_jit_state.nvrtc.nv). */
typedef struct {
#define TJ_NVRTC_FIELD(_name) __typeof__(&_name) _name;
    TJ_NVRTC_SYMBOLS(TJ_NVRTC_FIELD)
#undef TJ_NVRTC_FIELD
} tj_nvrtc_table_t;

#define TJ_NVRTC_MAX_ARCHS    64
#define TJ_NVRTC_MAX_FAILURES 64

typedef struct {
    /* NVRTC (nvrtc.c): its entry points, filled once by tj_nvrtc_load and only read after it,
     * the library dlopen returned, its version, supported archs and GNU build-id. */
    struct {
        tj_nvrtc_table_t nv;
        pthread_once_t load_once;
        tj_status_t load_status;
        void *libnvrtc;
        int version_major, version_minor;
        int archs[TJ_NVRTC_MAX_ARCHS];
        int narchs;
        char build_id[2 * 64 + 1];
        /* Hashes of the program logs already written, so a failure repeated on every call is
         * logged once. */
        pthread_mutex_t failure_lock;
        uint64_t failures[TJ_NVRTC_MAX_FAILURES];
        int nfailures;
        /* TYPEJIT_ARCH once checked: empty when unset or ignored. */
        pthread_once_t arch_once;
        char arch_setting[32];
    } nvrtc;
    /* The hash of every template (template.c), computed once. */
    struct {
        pthread_once_t hash_once;
        uint64_t hash;
    } template;
} tj_jit_state_t;

extern TJ_LOCAL tj_jit_state_t tj_jit_state;

#endif /* TJ_JIT_STATE_H */
