/* SPDX-License-Identifier: BSD-3-Clause */
/* The machine code of representative JIT kernels, two with edges: NVRTC's PTX for compute_90
 * moves W-byte words with single global loads and stores (v4 for W = 16), holds no division or
 * remainder instruction, and ptxas for sm_90 reports no stack frame and no spills. Prints the
 * register counts. Exit 77 without NVRTC or ptxas. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "jit/gen.h"
#include "jit/nvrtc.h"

#ifndef TJ_PTXAS
#define TJ_PTXAS ""
#endif

typedef struct {
    const char *label;
    const char *block;
    int word;
    const char *load, *store; /* the PTX of the word's global load and store */
    int edge;                 /* a kernel with edges of this word (0: none) */
} case_t;

static const case_t cases[] = {
    {"2-D pitch 512, 64-byte runs", "start=0 extent=262144 counts=64,512 strides=1,512", 16,
     "ld.global.nc.v4.u32", "st.global.v4.u32", 0},
    {"3-D face of 64^3 doubles", "start=0 extent=2097152 counts=8,64,64 strides=1,512,32768", 8,
     "ld.global.nc.u64", "st.global.u64", 0},
    {"3-D box of floats", "start=4 extent=262144 counts=128,32,16 strides=1,512,16384", 4,
     "ld.global.nc.u32", "st.global.u32", 0},
    {"1-byte runs", "start=0 extent=3000 counts=1,1000 strides=1,3", 1, "ld.global.nc.u8",
     "st.global.u8", 0},
    {"16 dimensions, negative and 2^32 strides",
     "start=-25769803776 extent=1099511627776 counts=16,2,2,2,2,2,2,2,2,2,2,2,2,2,2,3 "
     "strides=1,-32,64,-128,256,-512,1024,-2048,4096,-8192,16384,-32768,65536,-131072,262144,"
     "4294967296",
     16, "ld.global.nc.v4.u32", "st.global.v4.u32", 0},
    {"2^31 words per object (64-bit word index)",
     "start=0 extent=34359738368 counts=1048576,16384 strides=1,2097152", 8, "ld.global.nc.u64",
     "st.global.u64", 0},
    {"edges: rows of 1001 floats padded by 16 bytes",
     "start=0 extent=257280 counts=4004,64 strides=1,4020", 16, "ld.global.nc.v4.u32",
     "st.global.v4.u32", 4},
    {"edges: one run of 4099 bytes", "start=0 extent=4099 counts=4099 strides=1", 16,
     "ld.global.nc.v4.u32", "st.global.v4.u32", 1},
};

/* The PTX of one entry: from ".entry NAME(" to the next entry or the end. Malloc'd. */
static char *entry_text(const char *ptx, const char *name)
{
    char head[96];
    const char *start, *end;
    char *text;

    snprintf(head, sizeof(head), ".entry %s(", name);
    start = strstr(ptx, head);
    if (start == NULL)
        return NULL;
    end = strstr(start + 1, ".entry ");
    if (end == NULL)
        end = start + strlen(start);
    text = malloc((size_t)(end - start) + 1);
    REQUIRE(text != NULL);
    memcpy(text, start, (size_t)(end - start));
    text[end - start] = '\0';
    return text;
}

/* True when one line of `text` contains `what`; the opcode is followed by a tab or space. */
static bool has_instruction(const char *text, const char *what)
{
    size_t n = strlen(what);
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
        if (p[n] == ' ' || p[n] == '\t')
            return true;
    return false;
}

/* Runs ptxas -v on the PTX; checks every function's frame and spills, prints registers. */
static void check_ptxas(const char *ptx, const char *label)
{
    char path[] = "/tmp/tj_ptx_XXXXXX", cmd[512], line[512], function[128] = "?";
    int fd = mkstemp(path), functions = 0;
    FILE *f, *p;

    REQUIRE(fd >= 0);
    f = fdopen(fd, "w");
    REQUIRE(f != NULL && fputs(ptx, f) >= 0 && fclose(f) == 0);
    snprintf(cmd, sizeof(cmd), "'%s' -arch=sm_90 -v -o /dev/null '%s' 2>&1", TJ_PTXAS, path);
    p = popen(cmd, "r");
    REQUIRE(p != NULL);
    while (fgets(line, sizeof(line), p) != NULL) {
        int stack, stores, loads, regs;
        const char *s;
        if ((s = strstr(line, "Function properties for ")) != NULL) {
            snprintf(function, sizeof(function), "%s", s + strlen("Function properties for "));
            function[strcspn(function, "\n")] = '\0';
        } else if (sscanf(line,
                          " %d bytes stack frame, %d bytes spill stores, %d bytes spill loads",
                          &stack, &stores, &loads) == 3) {
            functions++;
            if (stack != 0 || stores != 0 || loads != 0) {
                fprintf(stderr, "%s: %s has %d bytes stack, %d spill stores, %d spill loads\n",
                        label, function, stack, stores, loads);
                check_failures++;
            }
        } else if ((s = strstr(line, "Used ")) != NULL && sscanf(s, "Used %d registers", &regs)) {
            printf("  %-45s %-10s %3d registers\n", label, function, regs);
        } else if (strstr(line, "error") != NULL) {
            fprintf(stderr, "ptxas: %s", line);
            check_failures++;
        }
    }
    CHECK(pclose(p) == 0);
    CHECK(functions > 0);
    unlink(path);
}

static void check_case(const case_t *c)
{
    tj_block_t block;
    char *pack = NULL, *unpack = NULL, *source, *ptx = NULL;
    size_t len;

    REQUIRE(tj_block_parse(c->block, &block) == TJ_OK);
    REQUIRE(tj_gen_edges_source(&block, c->word, c->edge, TJ_DIR_PACK, "tj_pack", &pack) == TJ_OK);
    REQUIRE(tj_gen_edges_source(&block, c->word, c->edge, TJ_DIR_UNPACK, "tj_unpack", &unpack) ==
            TJ_OK);
    source = malloc(strlen(pack) + strlen(unpack) + 2);
    REQUIRE(source != NULL);
    sprintf(source, "%s\n%s", pack, unpack);
    REQUIRE(tj_nvrtc_compile(source, "ptx.cu", "compute_90", (void **)&ptx, &len) == TJ_OK);

    for (int dir = 0; dir < 2; dir++) {
        char *text = entry_text(ptx, dir ? "tj_unpack" : "tj_pack");
        REQUIRE(text != NULL);
        /* One load (through the read-only path: the source is const __restrict__) and one
         * store of W bytes, whichever side is the typed one. */
        if (!has_instruction(text, c->load) || !has_instruction(text, c->store)) {
            fprintf(stderr, "%s %s: expected %s and %s of %d-byte words\n", c->label,
                    dir ? "unpack" : "pack", c->load, c->store, c->word);
            check_failures++;
        }
        if (strstr(text, "div.") != NULL || strstr(text, "rem.") != NULL) {
            fprintf(stderr, "%s %s: division or remainder in the PTX\n", c->label,
                    dir ? "unpack" : "pack");
            check_failures++;
        }
        free(text);
    }
    check_ptxas(ptx, c->label);
    free(ptx);
    free(source);
    free(pack);
    free(unpack);
}

int main(void)
{
    char *ptx = NULL;
    size_t len;

    if (tj_nvrtc_load() != TJ_OK) {
        printf("SKIP: NVRTC is not available\n");
        return 77;
    }
    if (TJ_PTXAS[0] == '\0' || access(TJ_PTXAS, X_OK) != 0) {
        printf("SKIP: ptxas not found\n");
        return 77;
    }
    printf("registers per thread on sm_90:\n");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        check_case(&cases[i]);

    /* The generic kernels divide by multiply-high (their divisors are run-time values); only
     * report them. */
    for (int word = 1; word <= 16; word *= 2) {
        char *src, what[32];
        REQUIRE(tj_gen_generic_source(word, &src) == TJ_OK);
        REQUIRE(tj_nvrtc_compile(src, "generic.cu", "compute_90", (void **)&ptx, &len) == TJ_OK);
        snprintf(what, sizeof(what), "generic kernels W=%d", word);
        check_ptxas(ptx, what);
        free(ptx);
        free(src);
    }
    CHECK_DONE();
}
