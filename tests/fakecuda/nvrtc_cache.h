/* SPDX-License-Identifier: BSD-3-Clause */
/* The NVRTC shim's result cache: what a successful nvrtcCompileProgram produced (PTX, CUBIN and
 * program log, each with the status its getter returned), kept in one file per compile under
 * FAKECUDA_NVRTC_CACHE and keyed by everything the real NVRTC sees (its version, the program's
 * name, options and source). Test runs compile the same kernels again and again (every test
 * starts typejit with an empty kernel cache, and .ci/run repeats the tests on five MPIs): a hit
 * replays the real compiler's output byte for byte instead of running it again.
 *
 * Files are written under a temporary name and renamed, so concurrent processes only ever see
 * whole files; a file that does not parse, or whose stored key differs from the one asked for (a
 * hash collision), is a miss. */
#ifndef TJ_TESTS_FAKECUDA_NVRTC_CACHE_H
#define TJ_TESTS_FAKECUDA_NVRTC_CACHE_H

#include <nvrtc.h>
#include <stdbool.h>
#include <stddef.h>

/* One getter's answer: its status, and on success its bytes. */
typedef struct {
    nvrtcResult rc;
    size_t size;
    char *data;
} fc_nvrtc_output_t;

/* A compile's outputs, as the real getters gave them. */
typedef struct {
    fc_nvrtc_output_t ptx, cubin, log;
} fc_nvrtc_result_t;

/* The key of one compile: every input of the real nvrtcCompileProgram as one byte string
 * (malloc'ed, NULL without memory). */
char *fc_nvrtc_key(int major, int minor, const char *name, int num_options,
                   const char *const *options, const char *source, size_t source_len,
                   size_t *key_len);

/* The stored result of @p key in @p dir into @p out; false on a miss (then @p out is empty). */
bool fc_nvrtc_cache_load(const char *dir, const char *key, size_t key_len, fc_nvrtc_result_t *out);

/* Stores @p result under @p key in @p dir; failures leave the cache as it was. */
void fc_nvrtc_cache_store(const char *dir, const char *key, size_t key_len,
                          const fc_nvrtc_result_t *result);

void fc_nvrtc_result_free(fc_nvrtc_result_t *result);

#endif /* TJ_TESTS_FAKECUDA_NVRTC_CACHE_H */
