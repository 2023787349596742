/* SPDX-License-Identifier: BSD-3-Clause */
/* Several threads use one CUDA context through the driver layer (src/gpu/) while the
 * application resets it again and again: each use reads typejit's record of the context (the
 * instance it saw, the stream it made there), and the first use after a reset renews it. Built
 * with ThreadSanitizer together with the files of src/gpu/ (tests/gpu.cmake,
 * tests/gpu_race.cmake), so that a read of the record that is not ordered with its renewal is
 * reported and fails the test. Runs on the test driver, which resets its contexts at once; the
 * calls that meet a reset may fail (the application pulled the context from under them), and
 * that is not what is checked. Exits 77 without a device.
 *
 *   test_gpu_race [ROUNDS] */
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "gpu/cuda.h"
#include "util/log.h"

#define USERS 3

static tj_gpu_ctx_t ctx;
static long rounds = 2000;
static atomic_bool stop;
static atomic_long entered;     /* scopes entered */
static atomic_uint generations; /* the most instances of the context a thread saw */

static void *user(void *arg)
{
    (void)arg;
    for (long i = 0; i < rounds && !atomic_load(&stop); i++) {
        tj_gpu_scope_t scope;
        unsigned gen, seen;
        if (tj_gpu_enter(ctx, &scope) != TJ_OK)
            continue;
        atomic_fetch_add(&entered, 1);
        gen = tj_gpu_generation();
        seen = atomic_load(&generations);
        while (gen > seen && !atomic_compare_exchange_weak(&generations, &seen, gen))
            ;
        (void)tj_gpu_sync();
        tj_gpu_leave(&scope);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    CUresult (*reset)(CUdevice);
    void *libcuda;
    pthread_t users[USERS];
    struct timespec pause = {0, 200 * 1000};

    if (argc > 1)
        rounds = atol(argv[1]);
    /* Resets make calls fail; those messages are not what this test is about. */
    tj_log_set_level(TJ_LOG_OFF);
    if (tj_gpu_init() != TJ_OK || tj_gpu_use(0) != TJ_OK) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    ctx = tj_gpu_current();
    libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(libcuda != NULL);
    *(void **)&reset = dlsym(libcuda, "cuDevicePrimaryCtxReset_v2");
    REQUIRE(reset != NULL);
    for (int i = 0; i < USERS; i++)
        REQUIRE(pthread_create(&users[i], NULL, user, NULL) == 0);
    for (long i = 0; i < rounds / 10; i++) {
        reset(0);
        nanosleep(&pause, NULL);
    }
    atomic_store(&stop, true);
    for (int i = 0; i < USERS; i++)
        pthread_join(users[i], NULL);
    printf("%d threads, %ld rounds, %ld resets: %ld scopes entered, %u instances of the context "
           "seen, no data race reported\n",
           USERS, rounds, rounds / 10, atomic_load(&entered), atomic_load(&generations));
    /* The scenario happened: the threads worked in the context across its resets. */
    CHECK(atomic_load(&entered) > rounds);
    CHECK(atomic_load(&generations) > 2);
    CHECK_DONE();
}
