/* SPDX-License-Identifier: BSD-3-Clause */
/* Every generated kernel compiles with NVRTC: random strided types and hand-made extreme blocks,
 * both directions, several word sizes, for sm_90 and sm_75, plus the generic kernels, target
 * selection and the failure path. Exit 77 when NVRTC is absent.
 *
 *   test_nvrtc [--seed N] [--types N]
 *
 * Many kernels (distinct names) go into one source per NVRTC call: a call costs tens of
 * milliseconds however small the source. A kernel whose source differs from one compiled before
 * only in its numbers' values is left out (new_form). */
#include <ctype.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "check.h"
#include "jit/gen.h"
#include "jit/nvrtc.h"
#include "randtype.h"
#include "type/translate.h"
#include "options.h"

#define BATCH_KERNELS 120

typedef struct {
    char *text;
    size_t len, cap;
    int kernels;
    char names[BATCH_KERNELS][48];
} batch_t;

static const char *const targets[] = {"sm_90", "sm_75"};
static long compiled_kernels, compiles, repeats;

/* The forms compiled so far: a kernel's source with its name left out and each number reduced to
 * its width (up to 9 digits, or more, which may need a 64-bit literal). Kernels of one form are
 * the same program to NVRTC but for their constants, and random types give many of them (400
 * types: 1008 kernels of 242 forms): each form is compiled once, so every form the generator makes
 * of the types is still compiled, for a quarter of the NVRTC time. */
#define MAX_FORMS 8192
static uint64_t forms[MAX_FORMS];
static int nforms;

static bool new_form(const char *src, const char *name)
{
    size_t n = strlen(src), name_len = strlen(name), k = 0;
    char *text = malloc(2 * n + 1);
    uint64_t h;

    REQUIRE(text != NULL);
    for (const char *c = src; *c != '\0'; c++) {
        if (strncmp(c, name, name_len) == 0) {
            text[k++] = '@';
            c += name_len - 1;
        } else if (isdigit((unsigned char)*c)) {
            size_t digits = strspn(c, "0123456789");
            text[k++] = '#';
            text[k++] = digits > 9 ? 'L' : 'S';
            c += digits - 1;
        } else {
            text[k++] = *c;
        }
    }
    h = XXH3_64bits(text, k);
    free(text);
    for (int i = 0; i < nforms; i++)
        if (forms[i] == h) {
            repeats++;
            return false;
        }
    REQUIRE(nforms < MAX_FORMS);
    forms[nforms++] = h;
    return true;
}

static void batch_add(batch_t *b, const char *name, const char *src)
{
    size_t n = strlen(src);
    if (b->len + n + 2 > b->cap) {
        b->cap = (b->len + n + 2) * 2;
        b->text = realloc(b->text, b->cap);
        REQUIRE(b->text != NULL);
    }
    memcpy(b->text + b->len, src, n);
    b->len += n;
    b->text[b->len++] = '\n';
    b->text[b->len] = '\0';
    snprintf(b->names[b->kernels++], sizeof(b->names[0]), "%s", name);
}

/* Compiles the batch for every target; checks the images and, for the first batch, that the PTX
 * holds an entry for each kernel. */
static void batch_flush(batch_t *b)
{
    static bool ptx_checked;
    void *image;
    size_t len;

    if (b->kernels == 0)
        return;
    for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++) {
        tj_status_t st = tj_nvrtc_compile(b->text, "batch.cu", targets[t], &image, &len);
        CHECK_EQ_INT(st, TJ_OK);
        compiles++;
        if (st != TJ_OK) {
            fprintf(stderr, "batch of %d kernels failed for %s; first kernel %s\n", b->kernels,
                    targets[t], b->names[0]);
            continue;
        }
        CHECK(len > 4 && memcmp(image, "\177ELF", 4) == 0);
        free(image);
    }
    if (!ptx_checked) {
        ptx_checked = true;
        REQUIRE(tj_nvrtc_compile(b->text, "batch.cu", "compute_90", &image, &len) == TJ_OK);
        CHECK(((char *)image)[len - 1] == '\0');
        for (int k = 0; k < b->kernels; k++) {
            char entry[64];
            snprintf(entry, sizeof(entry), ".entry %s(", b->names[k]);
            CHECK(strstr(image, entry) != NULL);
        }
        free(image);
    }
    compiled_kernels += b->kernels;
    b->len = 0;
    b->text[0] = '\0';
    b->kernels = 0;
}

/* Adds the pack and unpack kernels of `block` for W = block->word and one narrower W, and the
 * kernel with edges of W = edges_word when that is wider (runs of more than one byte). */
static void add_block(batch_t *b, const tj_block_t *block, int id, uint64_t r)
{
    int words[3] = {block->word, 1 << (r % 5), block->edges_word};
    for (int w = 0; w < 3; w++) {
        int edge = w == 2 ? block->word : 0;
        if ((w < 2 && words[w] > block->word) || (w == 1 && words[1] == words[0]) ||
            (w == 2 && (words[2] == words[0] || tj_block_run(block) < 2)))
            continue;
        for (int dir = 0; dir < 2; dir++) {
            char name[48], *src = NULL;
            snprintf(name, sizeof(name), "tj_%s_%d_w%d%s", dir ? "unpack" : "pack", id, words[w],
                     edge ? "e" : "");
            CHECK_EQ_INT(tj_gen_edges_source(block, words[w], edge, (tj_dir_t)dir, name, &src),
                         TJ_OK);
            if (src == NULL)
                continue;
            if (!new_form(src, name)) {
                free(src);
                continue;
            }
            if (b->kernels == BATCH_KERNELS)
                batch_flush(b);
            batch_add(b, name, src);
            free(src);
        }
    }
}

/* Blocks at the edges of what the type engine produces. */
static int add_extremes(batch_t *b, int id)
{
    static const char *const texts[] = {
        /* 16 dimensions, alternating negative strides, a stride beyond 2^32 */
        "start=-25769803776 extent=1099511627776 counts=16,2,2,2,2,2,2,2,2,2,2,2,2,2,2,3 "
        "strides=1,-32,64,-128,256,-512,1024,-2048,4096,-8192,16384,-32768,65536,-131072,262144,"
        "21474836480",
        /* strides beyond 2^31, negative outer stride, W = 16 */
        "start=17179869184 extent=16 counts=16,3,1000 strides=1,-8589934592,6442450944",
        /* overlapping dimensions */
        "start=0 extent=64 counts=64,4,4 strides=1,16,-8",
        /* 1-byte runs */
        "start=-1 extent=3001 counts=1,1000 strides=1,3",
        /* objects with more than 2^30 words: 64-bit word indices */
        "start=0 extent=34359738368 counts=1048576,16384 strides=1,2097152",
        /* contiguous */
        "start=0 extent=4096 counts=4096 strides=1",
        /* a single byte, far away */
        "start=-1125899906842624 extent=35184372088832 counts=1 strides=1",
        /* a transpose: inner stride larger than the outer one */
        "start=0 extent=8 counts=8,512,512 strides=1,4096,8",
        /* 2-D pitch, 64-byte runs */
        "start=0 extent=262144 counts=64,512 strides=1,512",
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        tj_block_t block;
        REQUIRE(tj_block_parse(texts[i], &block) == TJ_OK);
        for (int w = 1; w <= block.word; w *= 2)
            add_block(b, &block, id++, (uint64_t)__builtin_ctz((unsigned)w));
    }
    return id;
}

static void check_targets(void)
{
    char target[32], tiny[4];
    int major = 0, minor = 0;
    const char *id = tj_nvrtc_build_id();

    CHECK_EQ_INT(tj_nvrtc_version(&major, &minor), TJ_OK);
    CHECK(major >= 11);
    printf("nvrtc %d.%d build-id %s options \"%s\"\n", major, minor, id, tj_nvrtc_options());
    CHECK(strlen(id) > 0);
    CHECK(strcmp(id, "unknown") == 0 || strspn(id, "0123456789abcdef") == strlen(id));
    CHECK(strlen(tj_nvrtc_options()) > 0);

    CHECK_EQ_INT(tj_nvrtc_target(90, target, sizeof(target)), TJ_OK);
    CHECK(strcmp(target, "sm_90") == 0);
    CHECK_EQ_INT(tj_nvrtc_target(75, target, sizeof(target)), TJ_OK);
    CHECK(strcmp(target, "sm_75") == 0);
    CHECK_EQ_INT(tj_nvrtc_target(200, target, sizeof(target)), TJ_OK);
    CHECK(strncmp(target, "compute_", 8) == 0);
    printf("a future sm_200 gets %s\n", target);
    CHECK_EQ_INT(tj_nvrtc_target(90, tiny, sizeof(tiny)), TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_nvrtc_target(10, target, sizeof(target)), TJ_ERR_UNSUPPORTED);
}

static void check_failure(void)
{
    void *image = (void *)0x1;
    size_t len = 7;
    const char *broken = "extern \"C\" __global__ void broken(void) { this is not c++; }\n";

    fprintf(stderr, "an nvrtc failure log is expected below:\n");
    CHECK_EQ_INT(tj_nvrtc_compile(broken, "broken.cu", "sm_90", &image, &len), TJ_ERR_JIT);
    CHECK(image == (void *)0x1 && len == 7);
    CHECK_EQ_INT(tj_nvrtc_compile(broken, "broken.cu", "sm90", &image, &len), TJ_ERR_INVALID);
    CHECK_EQ_INT(tj_nvrtc_compile(broken, "broken.cu", "compute_", &image, &len), TJ_ERR_INVALID);
}

static void check_generic(void)
{
    for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++) {
        for (int word = 1; word <= 16; word *= 2) {
            void *image = NULL;
            char *src = NULL;
            size_t len = 0;
            CHECK_EQ_INT(tj_gen_generic_source(word, &src), TJ_OK);
            CHECK_EQ_INT(tj_nvrtc_compile(src, "generic.cu", targets[t], &image, &len), TJ_OK);
            free(image);
            free(src);
        }
    }
}

int main(int argc, char **argv)
{
    uint64_t seed = 1;
    long types = 400, strided = 0;
    rt_options_t opt = {
        .max_depth = 4, .max_size = 1 << 20, .max_span = (int64_t)1 << 34, .huge_percent = 5};
    rt_rng_t rng;
    batch_t batch = {0};
    char desc[8192];
    int id = 0;

    options_read(
        argc, argv,
        (const opt_t[]){{"--seed", OPT_U64, &seed}, {"--types", OPT_LONG, &types}, {NULL}});
    if (tj_nvrtc_load() != TJ_OK) {
        printf("SKIP: NVRTC is not available\n");
        return 77;
    }
    MPI_Init(&argc, &argv);
    check_targets();
    check_failure();
    check_generic();

    id = add_extremes(&batch, id);
    rt_seed(&rng, seed);
    for (long t = 0; t < types; t++) {
        MPI_Datatype type = rt_draw_type(&rng, &opt, desc, sizeof(desc));
        tj_block_t block;
        if (tj_translate_block(type, &block, NULL) == TJ_OK) {
            strided++;
            add_block(&batch, &block, id++, rt_next(&rng));
        }
        MPI_Type_free(&type);
    }
    batch_flush(&batch);
    free(batch.text);
    printf("seed %llu: %ld types, %ld strided; %ld kernels compiled in %ld nvrtc calls, %ld more "
           "of a form already compiled left out\n",
           (unsigned long long)seed, types, strided, compiled_kernels, compiles, repeats);
    MPI_Finalize();
    CHECK_DONE();
}
