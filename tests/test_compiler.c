/* SPDX-License-Identifier: BSD-3-Clause */
/* The background compiler (src/kernels/compiler.c), one scenario per run:
 *
 *   test_compiler volume   more distinct kernels than its queue and its table of pending keys
 *                          hold, requested as a commit requests them (the target left to the
 *                          worker): each request is served exactly once. A past bug was a
 *                          worker that forgot another key than its request had added, so that
 *                          the table overflowed after about 320 requests. Run with
 *                          TYPEJIT_JIT=always, TYPEJIT_CACHE=off and the test double's NVRTC
 *                          refusing every compile (FAKECUDA_NVRTC_REFUSE=1): each request is then
 *                          a fast failed compile, counted by jit_failures and remembered.
 *   test_compiler lock     a kernel whose compile lock another live process holds: the drain and
 *                          the stop of MPI_Finalize give up waiting for that process (it would
 *                          take 30 s) and compile nothing. TYPEJIT_JIT=always, TYPEJIT_ARCH=sm_90,
 *                          TYPEJIT_CACHE_DIR an empty folder.
 *   test_compiler signals  every worker thread runs with the signals an application handles
 *                          blocked, so that they are delivered to the application's threads.
 *   test_compiler exit     the process exits without MPI_Finalize while a compile runs inside
 *                          NVRTC (FAKECUDA_NVRTC_DELAY_MS makes it a slow one): the test double's
 *                          NVRTC stops the process with status 3 if any compile is still
 *                          running when the exit handlers reach it. */
#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache/lock.h"
#include "cache/store.h"
#include "check.h"
#include "jit/nvrtc.h"
#include "kernels/compiler.h"
#include "kernels/key.h"
#include "kernels/lookup.h"
#include "util/clock.h"
#include "util/stats.h"

#define KERNELS 500 /* distinct kernels: more than the queue (256) and pending keys (320) */
#define BATCH   100 /* requests at a time: fewer than the queue holds, so none is dropped */

/* Kernel i: a 2-D block of 8-byte runs, its own count of rows. */
static void block_of(int i, tj_block_t *b)
{
    int64_t counts[2] = {8, 2 + i}, strides[2] = {1, 24};
    REQUIRE(tj_block_make(0, 24 * (2 + i), 2, counts, strides, b) == TJ_OK);
}

/* Wait until the requests of kernels @p first to @p end - 1 are neither queued nor being
 * compiled. A request once ended stays so (none is made again meanwhile), so the kernels are
 * waited for one after the other. */
static void wait_done(int first, int end)
{
    int waited = 0;

    for (int i = first; i < end;) {
        tj_block_t b;
        block_of(i, &b);
        if (tj_compiler_state(&b, (tj_words_t){b.word, 0}, TJ_DIR_PACK) == TJ_COMPILE_IDLE) {
            i++;
            continue;
        }
        /* A bound only against a hang: the refused compiles take microseconds each. */
        REQUIRE(waited++ < 120 * 1000);
        tj_clock_sleep_ms(1);
    }
}

static void request_all(void)
{
    for (int first = 0; first < KERNELS; first += BATCH) {
        for (int i = first; i < first + BATCH; i++) {
            tj_block_t b;
            block_of(i, &b);
            tj_compiler_request(&b, (tj_words_t){b.word, 0}, TJ_DIR_PACK, NULL);
        }
        wait_done(first, first + BATCH);
    }
}

static void volume(void)
{
    request_all();
    CHECK_EQ_INT(tj_stats_get(TJ_STAT_jit_failures), KERNELS);
    /* Failures are remembered by the kernel table: the same requests compile nothing again. */
    request_all();
    CHECK_EQ_INT(tj_stats_get(TJ_STAT_jit_failures), KERNELS);
}

/* A child process that holds the compile lock of kernel 0's pack kernel for sm_90 in the cache
 * of TYPEJIT_CACHE_DIR until it is killed. */
static pid_t hold_lock(void)
{
    tj_block_t b;
    tj_kernel_spec_t spec;
    char toolchain[64], *source, *key, c;
    int p[2];
    pid_t pid;

    block_of(0, &b);
    spec = tj_spec_single(&b, b.word, TJ_DIR_PACK, "sm_90");
    REQUIRE(tj_nvrtc_load() == TJ_OK);
    REQUIRE(tj_kernel_source(&spec, &source) == TJ_OK);
    REQUIRE((key = tj_key_text(&spec, source)) != NULL);
    tj_key_toolchain(toolchain, sizeof(toolchain));
    REQUIRE(pipe(p) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        tj_store_t *s = NULL;
        tj_store_lock_t *l = NULL;
        if (tj_store_open(getenv("TYPEJIT_CACHE_DIR"), TJ_STORE_RW, &s) != TJ_OK ||
            tj_store_lock(s, toolchain, "sm_90", key, &l) != TJ_OK || write(p[1], "L", 1) != 1)
            _exit(3);
        for (;;)
            pause();
    }
    close(p[1]);
    REQUIRE(read(p[0], &c, 1) == 1 && c == 'L');
    close(p[0]);
    free(key);
    free(source);
    return pid;
}

static void lock(void)
{
    pid_t holder = hold_lock();
    tj_block_t b;
    tj_kernel_spec_t spec;
    tj_kernel_t *k;
    int status = 0;

    block_of(0, &b);
    tj_compiler_request(&b, (tj_words_t){b.word, 0}, TJ_DIR_PACK, NULL);
    for (int i = 0; i < 60 * 1000 && tj_compiler_state(&b, (tj_words_t){b.word, 0}, TJ_DIR_PACK) !=
                                         TJ_COMPILE_RUNNING;
         i++)
        tj_clock_sleep_ms(1);
    /* As MPI_Finalize with TYPEJIT_JIT_DRAIN=1: the worker waits for the other process at most
     * that long, then gives up without compiling, while the other process still holds the
     * lock. */
    tj_compiler_drain(1);
    tj_compiler_finalize();
    spec = tj_spec_single(&b, b.word, TJ_DIR_PACK, "sm_90");
    CHECK_EQ_INT(tj_stats_get(TJ_STAT_jit_compiles), 0);
    CHECK_EQ_INT(tj_lookup_kernel(&spec, TJ_LOOKUP_MEMORY, &k, NULL), TJ_ERR_NOT_FOUND);
    CHECK(kill(holder, 0) == 0); /* still holding it: the worker did not outwait it */
    kill(holder, SIGKILL);
    REQUIRE(waitpid(holder, &status, 0) == holder);
}

/* The blocked signals of thread @p tid of this process, from /proc. */
static uint64_t blocked_of(const char *tid)
{
    char path[384], line[256];
    unsigned long long mask = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
    REQUIRE((f = fopen(path, "r")) != NULL);
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "SigBlk: %llx", &mask) == 1)
            break;
    fclose(f);
    return mask;
}

static void signals(void)
{
    static const int handled[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGUSR1, SIGUSR2,
                                  SIGPIPE, SIGALRM, SIGTERM, SIGCHLD, SIGWINCH};
    char self[32];
    int workers = 0;
    struct dirent *e;
    DIR *d;
    tj_block_t b;

    block_of(0, &b);
    tj_compiler_request(&b, (tj_words_t){b.word, 0}, TJ_DIR_PACK, NULL);
    wait_done(0, 1); /* the worker lives on, waiting for work, until tj_compiler_finalize */
    snprintf(self, sizeof(self), "%d", (int)getpid());
    REQUIRE((d = opendir("/proc/self/task")) != NULL);
    while ((e = readdir(d)) != NULL) {
        uint64_t mask;
        if (e->d_name[0] == '.' || strcmp(e->d_name, self) == 0)
            continue;
        workers++;
        mask = blocked_of(e->d_name);
        for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
            if (!(mask & (1ULL << (handled[i] - 1)))) {
                fprintf(stderr, "thread %s: signal %d not blocked (SigBlk %016llx)\n", e->d_name,
                        handled[i], (unsigned long long)mask);
                check_failures++;
            }
    }
    closedir(d);
    CHECK(workers >= 1);
    tj_compiler_finalize();
}

static void exit_while_compiling(void)
{
    int (*compiling)(void);
    tj_block_t b;

    for (int i = 0; i < 4; i++) {
        block_of(i, &b);
        tj_compiler_request(&b, (tj_words_t){b.word, 0}, TJ_DIR_PACK, NULL);
    }
    /* The shim is loaded (privately) by the first worker: wait for it, then for a compile
     * inside it. */
    for (int i = 0; i < 60 * 1000; i++) {
        void *shim = dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_NOLOAD);
        compiling = NULL;
        if (shim != NULL) {
            *(void **)&compiling = dlsym(shim, "fakecuda_nvrtc_compiling");
            dlclose(shim);
        }
        if (compiling != NULL && compiling() > 0)
            break;
        tj_clock_sleep_ms(1);
    }
    REQUIRE(compiling != NULL && compiling() > 0);
    printf("ok: exiting with a compile running\n");
    fflush(stdout);
    exit(0); /* no tj_compiler_finalize: what a program that skips MPI_Finalize does */
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "volume";

    if (strcmp(mode, "volume") == 0)
        volume();
    else if (strcmp(mode, "lock") == 0)
        lock();
    else if (strcmp(mode, "signals") == 0)
        signals();
    else if (strcmp(mode, "exit") == 0)
        exit_while_compiling();
    else
        REQUIRE(!"usage: test_compiler volume|lock|signals|exit");
    tj_compiler_finalize();
    tj_lookup_finalize();
    CHECK_DONE();
}
