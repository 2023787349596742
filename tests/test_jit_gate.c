/* SPDX-License-Identifier: BSD-3-Clause */
/* Under TYPEJIT_JIT=auto kernels are made only for a process that uses CUDA: a
 * program that commits strided types and moves host buffers only compiles nothing and never
 * loads NVRTC, with or without a CUDA driver; once it moves a device buffer, the kernels of the
 * types it committed before are made (in the background) and then used.
 *
 *   test_jit_gate [--device] [--no-driver]
 *
 * Run with libtypejit.so preloaded and TYPEJIT_JIT_THREADS, TYPEJIT_JIT_SYNC at their defaults.
 * Without options: commits and host packs, then checks that nothing was compiled, that no NVRTC
 * is mapped into the process, and that the types say kernels=later (a driver is there, unused)
 * or, with --no-driver, kernels=none. --device (needs a CUDA device: exit 77 without one): the
 * same, then one MPI_Pack from device memory, after which every type committed before must get
 * its kernels (kernels=jit, waited for without a time limit: the test's TIMEOUT bounds it) and
 * the next device packs must run them (no generic kernel), packing what the system MPI packs.
 * --no-driver is skipped (exit 77) where the loader finds a CUDA driver. */
#include <dlfcn.h>
#include <link.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "counters.h"
#include "cudrv.h"
#include "devbuf.h"
#include "options.h"

#define NTYPES 6

/* typejit's description of @p type (tj_type_describe). */
static void describe(MPI_Datatype type, char *text, size_t len)
{
    int (*fn)(const void *, char *, size_t) =
        (int (*)(const void *, char *, size_t))(uintptr_t)dlsym(RTLD_DEFAULT, "tj_type_describe");
    REQUIRE(fn != NULL); /* run with libtypejit.so preloaded */
    REQUIRE(fn(&type, text, len) == 0);
}

static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    return info->dlpi_name != NULL && strstr(info->dlpi_name, (const char *)arg) != NULL;
}

/* Whether a library whose path holds @p name is mapped into the process. */
static bool mapped(const char *name)
{
    return dl_iterate_phdr(find_lib, (void *)name) != 0;
}

int main(int argc, char **argv)
{
    bool device = false, no_driver = false;
    MPI_Datatype types[NTYPES];
    char text[1024], packed[1 << 16], typed[1 << 16];
    int pos;

    MPI_Init(&argc, &argv);
    options_read(argc, argv,
                 (const opt_t[]){{"--device", OPT_FLAG, &device},
                                 {"--no-driver", OPT_FLAG, &no_driver},
                                 {NULL}});
    if (no_driver) {
        /* The loader's search, as typejit makes it: NULL with no error when the file is there. */
        void *lib;
        (void)dlerror();
        lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (lib != NULL || dlerror() == NULL) {
            printf("SKIP: a CUDA driver is installed\n");
            MPI_Finalize();
            return 77;
        }
    }
    for (size_t i = 0; i < sizeof(typed); i++)
        typed[i] = (char)(i * 7 + 1);
    /* Strided types of distinct shapes: each would get its own kernels. */
    for (int t = 0; t < NTYPES; t++) {
        MPI_Type_vector(4 + t, 1 + t % 3, 8 + 2 * t, MPI_INT, &types[t]);
        MPI_Type_commit(&types[t]);
    }
    /* Host work only: packs, and a message to itself. */
    for (int t = 0; t < NTYPES; t++) {
        pos = 0;
        CHECK(MPI_Pack(typed, 2, types[t], packed, sizeof(packed), &pos, MPI_COMM_SELF) ==
              MPI_SUCCESS);
    }
    CHECK(MPI_Sendrecv(typed, 1, types[0], 0, 1, packed, 1, types[0], 0, 1, MPI_COMM_SELF,
                       MPI_STATUS_IGNORE) == MPI_SUCCESS);
    for (int t = 0; t < NTYPES; t++) {
        describe(types[t], text, sizeof(text));
        if (strstr(text, no_driver ? " kernels=none" : " kernels=later") == NULL) {
            fprintf(stderr, "type %d before any device buffer: %s\n", t, text);
            CHECK(!"kernels=later with a driver, kernels=none without one");
        }
    }
    CHECK_EQ_INT(tj_counter("jit_compiles"), 0);
    CHECK_EQ_INT(tj_counter("jit_failures"), 0);
    CHECK(!mapped("libnvrtc"));
    if (no_driver)
        CHECK(!mapped("libcuda"));

    if (device) {
        long generic, launches;
        buf_t dev;
        bool ready = false;

        if (!cudrv_open()) {
            MPI_Finalize();
            return 77;
        }
        dev = buf_alloc(K_DEVICE, sizeof(typed));
        buf_put(&dev, typed);
        /* The first device buffer: the kernels of every type committed so far are asked for. */
        pos = 0;
        CHECK(MPI_Pack(dev.ptr, 2, types[0], packed, sizeof(packed), &pos, MPI_COMM_SELF) ==
              MPI_SUCCESS);
        while (!ready) {
            ready = true;
            for (int t = 0; t < NTYPES && ready; t++) {
                describe(types[t], text, sizeof(text));
                ready = strstr(text, " kernels=jit") != NULL;
                if (strstr(text, " kernels=none") != NULL ||
                    strstr(text, "kernels=later") != NULL) {
                    fprintf(stderr, "type %d after the first device buffer: %s\n", t, text);
                    REQUIRE(!"its kernels are coming");
                }
            }
            if (!ready)
                usleep(1000);
        }
        generic = tj_counter("packs_generic_while_compiling");
        launches = tj_counter("kernel_launches");
        for (int t = 0; t < NTYPES; t++) {
            char want[1 << 16];
            int wpos = 0;
            pos = 0;
            CHECK(MPI_Pack(dev.ptr, 2, types[t], packed, sizeof(packed), &pos, MPI_COMM_SELF) ==
                  MPI_SUCCESS);
            CHECK(PMPI_Pack(typed, 2, types[t], want, sizeof(want), &wpos, MPI_COMM_SELF) ==
                  MPI_SUCCESS);
            CHECK(pos == wpos && memcmp(packed, want, (size_t)pos) == 0);
        }
        CHECK_EQ_INT(tj_counter("packs_generic_while_compiling"), generic);
        CHECK_EQ_INT(tj_counter("kernel_launches"), launches + NTYPES);
        CHECK(tj_counter("jit_compiles") >= 2 * NTYPES);
        buf_free(&dev);
    }
    for (int t = 0; t < NTYPES; t++)
        MPI_Type_free(&types[t]);
    MPI_Finalize();
    CHECK_DONE();
}
