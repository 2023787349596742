/* SPDX-License-Identifier: BSD-3-Clause */
/* The generated kernels, compiled for the host with g++ against tests/emu/tj_emu.h and run over
 * their whole grid, against the system MPI's PMPI_Pack / PMPI_Unpack on random strided types:
 * pack and unpack, counts 1 to 4, packed positions other than zero, poisoned buffers, W of the
 * block and sometimes a narrower one, sometimes a grid smaller than the launch geometry (the
 * grid-stride loops must cover the rest). A subset also runs the generic kernels. Hand-made
 * extreme blocks no MPI constructor reaches directly (16 dimensions, overlapping dimensions,
 * negative extents) are checked against the type engine's CPU packer, itself checked against
 * the system MPI by test_oracle.
 *
 *   test_emu [--seed N] [--types N] [--batch N] [--cxxflag FLAG]... [--keep] [--verbose]
 *
 * --types counts strided types; --cxxflag adds a flag to the kernels' compile (a sanitizer, in a
 * sanitizer build whose runtime is already loaded). Kernels are compiled --batch cases to one
 * shared object, and the next batch compiles while the previous one runs. Unpacking runs only where
 * the `count` objects are disjoint: a parallel unpack into an overlapping layout has no defined
 * result, and the runtime sends those types to the system MPI. */
#include <dlfcn.h>
#include <mpi.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "jit/gen.h"
#include "randtype.h"
#include "region.h"
#include "sysmpi.h"
#include "type/cpu.h"
#include "type/translate.h"

#ifndef TJ_EMU_CXX
#define TJ_EMU_CXX ""
#endif
#ifndef TJ_EMU_INCLUDE
#define TJ_EMU_INCLUDE ""
#endif

#define MAX_BATCH 1000
/* MPICH 4.0.2 packs some newly made types short once about 500 datatypes are alive
 * (docs/mpis.md); a batch holds its cases' types until it has run, and two batches are alive. */
#define MPICH40_BATCH 40

extern char **environ;

typedef void (*emu_fn_t)(const unsigned *grid, const unsigned *block, void *dst, const void *src,
                         long long count);
typedef void (*emu_generic_fn_t)(int pack, const unsigned *grid, const unsigned *block, void *dst,
                                 const void *src, long long count, const void *params);

typedef struct {
    MPI_Datatype type; /* MPI_DATATYPE_NULL: a hand-made block, checked against the CPU packer */
    tj_block_t block;
    char *desc;
    int word, edge, count, pos; /* edge: a kernel with edges of that many bytes (0: none) */
    bool unpack;                /* the count objects are disjoint */
    bool generic;               /* also run the generic kernels */
    bool shrink;                /* run on a smaller grid than tj_gen_launch gives */
    uint64_t salt;
} case_t;

typedef struct {
    case_t cases[MAX_BATCH];
    int n, id;
    char src_path[512], so_path[512];
    pid_t compiler;
} batch_t;

#define MAX_CXXFLAGS 8

static char *cxxflags[MAX_CXXFLAGS];
static int ncxxflags;

/* Starts the host compiler on @p src, into the shared object @p so; its process. */
static pid_t compile_shared(char *src, char *so)
{
    char *argv[16 + MAX_CXXFLAGS] = {TJ_EMU_CXX, "-std=c++17", "-O1",
                                     "-shared",  "-fPIC",      "-fno-strict-aliasing",
                                     "-w",       "-I",         TJ_EMU_INCLUDE};
    int argc = 9;
    pid_t pid;

    for (int i = 0; i < ncxxflags; i++)
        argv[argc++] = cxxflags[i];
    argv[argc++] = "-o";
    argv[argc++] = so;
    argv[argc++] = src;
    argv[argc] = NULL;
    REQUIRE(posix_spawn(&pid, TJ_EMU_CXX, NULL, NULL, argv, environ) == 0);
    return pid;
}
static char workdir[256];
static bool verbose, keep;
static int mismatches;
static long packs, unpacks, generic_runs, shrunk;
static long short_packs; /* MPICH 4.0.2 packed fewer bytes than the type holds: not compared */

static void fill_pattern(unsigned char *p, size_t n, uint64_t salt)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)((i * 131 + salt * 7 + (i >> 8)) & 0xff);
}

static void report(const char *what, const case_t *c, int64_t where)
{
    char text[1024];
    tj_block_format(&c->block, text, sizeof(text));
    if (mismatches++ < 10)
        fprintf(stderr,
                "MISMATCH %s: type %s\n  block %s W=%d edge=%d count=%d position=%d%s: first "
                "difference at %lld\n",
                what, c->desc, text, c->word, c->edge, c->count, c->pos,
                c->shrink ? " (small grid)" : "", (long long)where);
}

/* Footprint of `count` objects: the union of the block's and the system MPI's, 16-aligned so
 * that the buffer argument is aligned for every W. */
static void footprint(const case_t *c, int64_t *lo, int64_t *hi)
{
    int64_t reach = (int64_t)(c->count - 1) * c->block.extent;
    *lo = c->block.lo + (reach < 0 ? reach : 0);
    *hi = c->block.hi + (reach > 0 ? reach : 0);
    if (c->type != MPI_DATATYPE_NULL) {
        MPI_Aint tlb, text, lb, ext;
        MPI_Type_get_true_extent(c->type, &tlb, &text);
        MPI_Type_get_extent(c->type, &lb, &ext);
        int64_t mreach = (int64_t)(c->count - 1) * ext;
        int64_t l2 = tlb + (mreach < 0 ? mreach : 0), h2 = tlb + text + (mreach > 0 ? mreach : 0);
        *lo = *lo < l2 ? *lo : l2;
        *hi = *hi > h2 ? *hi : h2;
    }
    *lo -= ((*lo % 16) + 16) % 16;
}

/* The reference: the system MPI for MPI types, the CPU packer for hand-made blocks. Both
 * return the position after the packed bytes. */
static int64_t oracle_pack(const case_t *c, const void *typed, unsigned char *out, int outsize)
{
    int pos = c->pos;
    if (c->type == MPI_DATATYPE_NULL) {
        tj_cpu_pack(&c->block, typed, c->count, out + pos);
        return pos + c->count * c->block.size;
    }
    REQUIRE(PMPI_Pack(typed, c->count, c->type, out, outsize, &pos, MPI_COMM_SELF) == MPI_SUCCESS);
    return pos;
}

static int64_t oracle_unpack(const case_t *c, const unsigned char *in, int insize, void *typed)
{
    int pos = c->pos;
    if (c->type == MPI_DATATYPE_NULL) {
        tj_cpu_unpack(&c->block, in + pos, c->count, typed);
        return pos + c->count * c->block.size;
    }
    REQUIRE(PMPI_Unpack(in, insize, &pos, typed, c->count, c->type, MPI_COMM_SELF) == MPI_SUCCESS);
    return pos;
}

static void shrink_grid(tj_launch_t *l)
{
    for (int d = 0; d < 3; d++)
        l->grid[d] = l->grid[d] > 2 ? l->grid[d] / 3 : 1;
}

/* A kernel under test: the JIT kernel of one direction, or the generic kernel. */
typedef struct {
    emu_fn_t jit;
    emu_generic_fn_t generic;
} kernel_t;

static void run_kernel(const case_t *c, const kernel_t *k, tj_dir_t dir, void *dst, const void *src)
{
    tj_launch_t l;
    if (k->generic) {
        /* The generic kernels have no edges: the launch's narrower word. */
        int word = c->edge != 0 ? c->edge : c->word;
        tj_generic_params_t params;
        tj_gen_generic_params(&c->block, word, &params);
        tj_gen_generic_launch(&c->block, word, c->count, &l);
        if (c->shrink)
            shrink_grid(&l);
        k->generic(dir == TJ_DIR_PACK, l.grid, l.block, dst, src, c->count, &params);
    } else {
        tj_gen_edges_launch(&c->block, c->word, c->edge, c->count, &l);
        if (c->shrink)
            shrink_grid(&l);
        k->jit(l.grid, l.block, dst, src, c->count);
    }
}

/* Packs with the kernel and with PMPI_Pack, compares the whole output buffers. */
static void check_pack(const case_t *c, const kernel_t *k, const char *what)
{
    int64_t size = c->block.size, lo, hi, where = 0, end;
    region_t src;
    int outsize;
    unsigned char *pattern, *p1, *p2;

    footprint(c, &lo, &hi);
    outsize = c->pos + (int)(c->count * size) + 32;
    pattern = malloc((size_t)outsize);
    p1 = malloc((size_t)outsize);
    p2 = aligned_alloc(16, ((size_t)outsize + 15) / 16 * 16);
    REQUIRE(pattern && p1 && p2);
    fill_pattern(pattern, (size_t)outsize, c->salt);

    region_open(&src, lo, hi);
    if (src.dense) {
        fill_pattern((unsigned char *)src.map, src.map_len, c->salt + 1);
    } else {
        /* Writes exactly the typemap, so only the pages it touches are materialised. */
        case_t at0 = *c;
        at0.pos = 0;
        oracle_unpack(&at0, pattern, outsize, src.origin);
    }
    memset(p1, POISON, (size_t)outsize);
    memset(p2, POISON, (size_t)outsize);
    end = oracle_pack(c, src.origin, p1, outsize);
    if (end < c->pos + c->count * size && c->type != MPI_DATATYPE_NULL &&
        sysmpi_version_has("MPICH Version: 4.0")) {
        /* MPICH's own error, no reference to compare with (docs/mpis.md). */
        short_packs++;
        goto out_close;
    }
    CHECK_EQ_INT(end, c->pos + c->count * size);
    run_kernel(c, k, TJ_DIR_PACK, p2 + c->pos, src.origin);
    if (memcmp(p1, p2, (size_t)outsize) != 0) {
        for (int i = 0; i < outsize; i++)
            if (p1[i] != p2[i]) {
                where = i;
                break;
            }
        report(what, c, where);
    }
out_close:
    region_close(&src);
    free(pattern);
    free(p1);
    free(p2);
}

/* Unpacks with the kernel and with PMPI_Unpack into poisoned regions, compares them. */
static void check_unpack(const case_t *c, const kernel_t *k, const char *what)
{
    int64_t size = c->block.size, lo, hi, where = 0;
    region_t a, b;
    int outsize;
    unsigned char *pattern;

    footprint(c, &lo, &hi);
    outsize = c->pos + (int)(c->count * size) + 32;
    pattern = aligned_alloc(16, ((size_t)outsize + 15) / 16 * 16);
    REQUIRE(pattern != NULL);
    fill_pattern(pattern, (size_t)outsize, c->salt);
    region_open(&a, lo, hi);
    region_open(&b, lo, hi);
    CHECK_EQ_INT(oracle_unpack(c, pattern, outsize, a.origin), c->pos + c->count * size);
    run_kernel(c, k, TJ_DIR_UNPACK, b.origin, pattern + c->pos);
    if (!region_equal(&a, &b, &where))
        report(what, c, where);
    region_close(&a);
    region_close(&b);
    free(pattern);
}

static void append(FILE *f, const char *text)
{
    REQUIRE(fputs(text, f) >= 0);
}

/* Writes the batch's source and starts g++ on it. */
static void batch_compile(batch_t *b)
{
    FILE *f;
    char *src;

    snprintf(b->src_path, sizeof(b->src_path), "%s/batch%d.cpp", workdir, b->id);
    snprintf(b->so_path, sizeof(b->so_path), "%s/batch%d.so", workdir, b->id);
    f = fopen(b->src_path, "w");
    REQUIRE(f != NULL);
    append(f, "#include \"tj_emu.h\"\n#include <cstdlib>\n#include <cstring>\n\n");
    /* The generic kernels of every word size, each in a namespace of its own. */
    for (int word = 1; word <= 16; word *= 2) {
        REQUIRE(tj_gen_generic_source(word, &src) == TJ_OK);
        fprintf(f,
                "namespace generic%d {\n#define tj_generic_pack tj_generic_pack_%d\n"
                "#define tj_generic_unpack tj_generic_unpack_%d\n",
                word, word, word);
        append(f, src);
        fprintf(f, "\n#undef tj_generic_pack\n#undef tj_generic_unpack\n"
                   "static_assert(sizeof(tj_generic_params_t) == 296, \"params layout\");\n}\n\n");
        free(src);
    }
    append(f, "extern \"C\" void emu_generic(int pack, const unsigned *g, const unsigned *b, "
              "void *dst, const void *src, long long count, const void *params)\n{\n"
              "    int word;\n    std::memcpy(&word, (const char *)params + 32, sizeof(word));\n"
              "    switch (word) {\n");
    for (int word = 1; word <= 16; word *= 2)
        fprintf(
            f,
            "    case %d: {\n        generic%d::tj_generic_params_t p;\n"
            "        std::memcpy(&p, params, sizeof(p));\n"
            "        if (pack)\n"
            "            tj_emu_launch(generic%d::tj_generic_pack_%d, g, b, dst, src, count, p);\n"
            "        else\n"
            "            tj_emu_launch(generic%d::tj_generic_unpack_%d, g, b, dst, src, count, "
            "p);\n"
            "        break;\n    }\n",
            word, word, word, word, word, word);
    append(f, "    default:\n        std::abort();\n    }\n}\n\n");
    for (int i = 0; i < b->n; i++) {
        const case_t *c = &b->cases[i];
        for (int dir = 0; dir < (c->unpack ? 2 : 1); dir++) {
            char name[32];
            snprintf(name, sizeof(name), "tj_%s%d", dir ? "u" : "p", i);
            REQUIRE(tj_gen_edges_source(&c->block, c->word, c->edge, (tj_dir_t)dir, name, &src) ==
                    TJ_OK);
            append(f, src);
            fprintf(f,
                    "extern \"C\" void emu_%s(const unsigned *g, const unsigned *b, void *dst, "
                    "const void *src, long long count)\n{\n"
                    "    tj_emu_launch(%s, g, b, dst, src, count);\n}\n\n",
                    name, name);
            free(src);
        }
    }
    REQUIRE(fclose(f) == 0);

    b->compiler = compile_shared(b->src_path, b->so_path);
}

/* Waits for the batch's compiler, runs every case, frees the batch. */
static void batch_run(batch_t *b)
{
    int wstatus;
    void *so;
    kernel_t generic = {NULL, NULL};

    REQUIRE(waitpid(b->compiler, &wstatus, 0) == b->compiler);
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
        fprintf(stderr, "g++ failed on %s\n", b->src_path);
        exit(1);
    }
    so = dlopen(b->so_path, RTLD_NOW | RTLD_LOCAL);
    if (so == NULL) {
        fprintf(stderr, "dlopen %s: %s\n", b->so_path, dlerror());
        exit(1);
    }
    *(void **)&generic.generic = dlsym(so, "emu_generic");
    REQUIRE(generic.generic != NULL);
    for (int i = 0; i < b->n; i++) {
        case_t *c = &b->cases[i];
        char sym[48];
        kernel_t pack = {NULL, NULL}, unpack = {NULL, NULL};

        if (verbose)
            printf("%s W=%d edge=%d count=%d pos=%d\n", c->desc, c->word, c->edge, c->count,
                   c->pos);
        snprintf(sym, sizeof(sym), "emu_tj_p%d", i);
        *(void **)&pack.jit = dlsym(so, sym);
        REQUIRE(pack.jit != NULL);
        check_pack(c, &pack, "pack");
        packs++;
        if (c->unpack) {
            snprintf(sym, sizeof(sym), "emu_tj_u%d", i);
            *(void **)&unpack.jit = dlsym(so, sym);
            REQUIRE(unpack.jit != NULL);
            check_unpack(c, &unpack, "unpack");
            unpacks++;
        }
        if (c->generic) {
            check_pack(c, &generic, "generic pack");
            if (c->unpack)
                check_unpack(c, &generic, "generic unpack");
            generic_runs++;
        }
        shrunk += c->shrink;
        if (c->type != MPI_DATATYPE_NULL)
            MPI_Type_free(&c->type);
        free(c->desc);
    }
    dlclose(so);
    if (!keep) {
        unlink(b->so_path);
        unlink(b->src_path);
    }
    b->n = 0;
}

/* Two batches: one filling, one compiling (or compiled and waiting to run). */
static batch_t batches[2];
static batch_t *filling = &batches[0], *pending;
static int next_id;

/* Starts compiling the filling batch, runs the pending one meanwhile, swaps them. */
static void flush(void)
{
    if (filling->n == 0)
        return;
    filling->id = next_id++;
    batch_compile(filling);
    if (pending != NULL)
        batch_run(pending);
    pending = filling;
    filling = filling == &batches[0] ? &batches[1] : &batches[0];
}

/* A packed position: a multiple of 16, plus sometimes the start's misalignment (so that every
 * run's typed and packed bytes may agree modulo a wide word: edges), sometimes any bytes. */
static int draw_position(const tj_block_t *block, rt_rng_t *rng)
{
    int pos = 16 * (int)rt_range(rng, 0, 2);
    switch (rt_range(rng, 0, 3)) {
    case 0:
        return pos + (int)(((block->start % 16) + 16) % 16);
    case 1:
        return pos + (int)rt_range(rng, 1, 15);
    default:
        return pos;
    }
}

/* Draws the per-case choices: count, position, the words the runtime launches with for them
 * (tj_block_words: the typed buffer is 16-aligned, object 0 at the block's start), grid. */
static void choose(case_t *c, rt_rng_t *rng, long *narrow)
{
    tj_words_t w;
    int plain;

    c->count = (int)rt_range(rng, 1, 4);
    c->pos = draw_position(&c->block, rng);
    w = tj_block_words(&c->block, c->count, (uintptr_t)c->block.start, (uintptr_t)c->pos);
    c->word = w.word;
    c->edge = w.edge;
    plain = w.edge != 0 ? w.edge : w.word;
    /* A narrower W without edges, as the runtime uses for the generic kernel. */
    if (rt_range(rng, 0, 3) == 0) {
        c->word = plain > 1 ? 1 << rt_range(rng, 0, __builtin_ctz((unsigned)plain) - 1) : 1;
        c->edge = 0;
        (*narrow)++;
    }
    c->unpack = tj_block_disjoint(&c->block, c->count);
    c->generic = rt_range(rng, 0, 7) == 0 &&
                 tj_gen_generic_usable(&c->block, c->edge != 0 ? c->edge : c->word);
    c->shrink = rt_range(rng, 0, 3) == 0;
    c->salt = rt_next(rng);
}

/* Blocks at the edges of the type engine, each with every W it allows. */
static const char *const extremes[] = {
    /* 16 dimensions, alternating negative strides, one beyond 2^32 */
    "start=-25769803776 extent=1099511627776 counts=16,2,2,2,2,2,2,2,2,2,2,2,2,2,2,3 "
    "strides=1,-32,64,-128,256,-512,1024,-2048,4096,-8192,16384,-32768,65536,-131072,262144,"
    "4294967296",
    /* strides beyond 2^31, negative outer stride */
    "start=17179869184 extent=16 counts=16,3,2 strides=1,-8589934592,6442450944",
    /* overlapping dimensions (pack only) */
    "start=0 extent=64 counts=64,4,4 strides=1,16,-8",
    /* negative start and extent */
    "start=-4096 extent=-8192 counts=32,8 strides=1,-512",
    /* 1-byte runs */
    "start=-1 extent=3001 counts=1,1000 strides=1,3",
    /* a transpose: the inner stride is larger than the outer one */
    "start=0 extent=8 counts=8,64,64 strides=1,512,8",
    /* eight mixed dimensions */
    "start=40 extent=200000 counts=4,3,2,5,2,3,2,2 strides=1,8,-40,100,-1000,2000,10000,-50000",
    /* a single word; many objects per thread block */
    "start=-16 extent=48 counts=16 strides=1",
};

/* Blocks whose runs are long and misaligned for a wide word, while every run's typed bytes
 * agree with their packed position modulo one (tj_block_words gives them edges): a run of 4099
 * bytes (W 1, edges 16/1); rows of 1001 floats padded by 16 bytes (4/16) at a start of 4; rows
 * of 1001 bytes 1017 apart (1/16) at an odd start; three dimensions (8/16); a negative stride
 * (8/16); one row of 4004 bytes whose objects are 4020 apart (4/16). Several objects get edges
 * where an object's packed bytes are a multiple of 16 (the second, fourth and fifth). */
static const char *const edge_blocks[] = {
    "start=0 extent=4099 counts=4099 strides=1",
    "start=4 extent=257280 counts=4004,64 strides=1,4020",
    "start=3 extent=5085 counts=1001,5 strides=1,1017",
    "start=8 extent=13008 counts=1000,3,2 strides=1,1016,3064",
    "start=2464 extent=4096 counts=600,4 strides=1,-616",
    "start=12 extent=4020 counts=4004 strides=1",
};

/* Kernels with edges whose runs are shorter than the launch would give edges to (and than one
 * window), forced: the generator's kernel is correct for any run. Runs of 5 bytes 21 apart
 * (edges 16/1), runs of 12 bytes 28 apart (16/4), runs of 24 bytes 40 apart (16/8). */
static const char *const short_edge_blocks[] = {
    "start=3 extent=163 counts=5,7 strides=1,21",
    "start=4 extent=140 counts=12,5 strides=1,28",
    "start=8 extent=136 counts=24,3 strides=1,40",
};

/* ---- fused kernels ----------------------------------------------------------------------------
 * Sets of 2 to 8 random strided types (some used by two members), each member `count` objects in
 * its own region of one typed buffer at an offset that is often not 16-aligned, its packed bytes
 * after the previous member's (sometimes with a gap): one fused kernel per set and direction,
 * each member moved with the word of its own launch (tj_block_words; sometimes a narrower one),
 * members of one type but other words in shapes of their own, against PMPI_Pack / PMPI_Unpack
 * of each member; sometimes every member on a smaller grid than tj_gen_fused_launch gives. */

#define FUSED_SETS    24
#define FUSED_MEMBERS 8

typedef void (*emu_fused_fn_t)(const unsigned *grid, const unsigned *block, void *dst,
                               const void *src, const void *args);

typedef struct {
    int n, nshapes;
    bool unpack, shrink;
    case_t m[FUSED_MEMBERS];
    int shape[FUSED_MEMBERS];
    bool owner[FUSED_MEMBERS]; /* frees the member's type */
    tj_block_t blocks[FUSED_MEMBERS];
    int words[FUSED_MEMBERS]; /* each shape's */
    tj_fused_member_t members[FUSED_MEMBERS];
    int64_t typed_len, packed_len;
    uint64_t salt;
} fset_t;

static long fused_packs, fused_unpacks;

static void fused_draw(fset_t *f, rt_rng_t *rng, const rt_options_t *opt)
{
    char desc[8192];
    int64_t cursor = 0, pcur = 0;

    memset(f, 0, sizeof(*f));
    f->n = (int)rt_range(rng, 2, FUSED_MEMBERS);
    f->unpack = true;
    for (int i = 0; i < f->n; i++) {
        case_t *c = &f->m[i];
        if (i > 0 && rt_range(rng, 0, 3) == 0) { /* the previous member's type again */
            c->type = f->m[i - 1].type;
            c->block = f->m[i - 1].block;
            c->desc = f->m[i - 1].desc;
        } else {
            for (;;) {
                c->type = rt_draw_type(rng, opt, desc, sizeof(desc));
                if (tj_translate_block(c->type, &c->block, NULL) == TJ_OK)
                    break;
                MPI_Type_free(&c->type);
            }
            c->desc = strdup(desc);
            REQUIRE(c->desc != NULL);
            f->owner[i] = true;
        }
        c->count = (int)rt_range(rng, 1, 3);
        f->unpack = f->unpack && tj_block_disjoint(&c->block, c->count);
    }
    for (int i = 0; i < f->n; i++) {
        case_t *c = &f->m[i];
        tj_block_t b = c->block;
        tj_words_t w;
        int64_t lo, hi, base;
        int s = 0;
        footprint(c, &lo, &hi);
        base = (cursor - lo + 15) / 16 * 16 + (rt_range(rng, 0, 1) ? rt_range(rng, 0, 15) : 0);
        cursor = base + hi + 16;
        pcur += rt_range(rng, 0, 2) == 0 ? rt_range(rng, 1, 9) : 0;
        c->pos = (int)pcur;
        /* The typed buffer is 16-aligned: object 0 at base + start. */
        w = tj_block_words(&c->block, c->count, (uintptr_t)(base + c->block.start),
                           (uintptr_t)pcur);
        c->word = w.edge != 0 ? w.edge : w.word;
        if (c->word > 1 && rt_range(rng, 0, 3) == 0)
            c->word = 1 << rt_range(rng, 0, __builtin_ctz((unsigned)c->word) - 1);
        b.lo -= b.start;
        b.hi -= b.start;
        b.start = 0;
        while (s < f->nshapes && !(tj_block_equal(&f->blocks[s], &b) && f->words[s] == c->word))
            s++;
        if (s == f->nshapes) {
            f->blocks[s] = b;
            f->words[s] = c->word;
            f->nshapes++;
        }
        f->shape[i] = s;
        f->members[i].shape = s;
        f->members[i].typed = base + c->block.start;
        f->members[i].packed = pcur;
        f->members[i].count = c->count;
        c->salt = (uint64_t)base; /* the member's object 0 pointer, from the typed buffer */
        pcur += c->count * c->block.size;
    }
    f->typed_len = (cursor + 15) / 16 * 16;
    f->packed_len = (pcur + 32 + 15) / 16 * 16;
    f->shrink = rt_range(rng, 0, 2) == 0;
    f->salt = rt_next(rng);
}

static void fused_run(const fset_t *f, emu_fused_fn_t fn, void *dst, const void *src)
{
    tj_fused_args_t args;
    tj_launch_t l;
    REQUIRE(tj_gen_fused_launch(f->blocks, f->words, f->nshapes, f->members, f->n, &args, &l) ==
            TJ_OK);
    if (f->shrink) {
        unsigned first = 0;
        for (int i = 0; i < f->n; i++) {
            /* gx is the kernel's constant for the block; the rows of objects may shrink. */
            args.m[i].gy = args.m[i].gy > 1 ? args.m[i].gy / 2 : 1;
            args.m[i].first = first;
            first += args.m[i].gx * args.m[i].gy;
        }
        l.grid[0] = first;
    }
    fn(l.grid, l.block, dst, src, &args);
}

/* The @p n bytes a fused kernel gave (@p got) against the system MPI's (@p want): the first
 * difference reported with the set's members. */
static void fused_compare(const fset_t *f, const char *what, const unsigned char *got,
                          const unsigned char *want, size_t n)
{
    size_t where = 0;
    while (where < n && got[where] == want[where])
        where++;
    if (where < n && mismatches++ < 10) {
        fprintf(stderr, "MISMATCH fused %s%s, first difference at %zu; members:\n", what,
                f->shrink ? " (small grid)" : "", where);
        for (int i = 0; i < f->n; i++)
            fprintf(stderr, "  %s count=%d typed=%lld packed=%d W=%d\n", f->m[i].desc,
                    f->m[i].count, (long long)f->members[i].typed, f->m[i].pos, f->m[i].word);
    }
}

static void fused_check(const fset_t *f, emu_fused_fn_t pack, emu_fused_fn_t unpack)
{
    size_t tl = (size_t)f->typed_len, pl = (size_t)f->packed_len;
    unsigned char *typed = aligned_alloc(16, tl), *t2 = aligned_alloc(16, tl);
    unsigned char *p1 = aligned_alloc(16, pl), *p2 = aligned_alloc(16, pl);

    REQUIRE(typed && t2 && p1 && p2);
    fill_pattern(typed, tl, f->salt);
    memset(p1, POISON, pl);
    memset(p2, POISON, pl);
    for (int i = 0; i < f->n; i++) {
        int pos = f->m[i].pos;
        int64_t end = f->m[i].pos + f->m[i].count * f->m[i].block.size;
        CHECK(PMPI_Pack(typed + f->m[i].salt, f->m[i].count, f->m[i].type, p1, (int)pl, &pos,
                        MPI_COMM_SELF) == MPI_SUCCESS);
        if (pos < end && sysmpi_version_has("MPICH Version: 4.0")) {
            short_packs++; /* as in check_pack: no reference for this set */
            goto out_free;
        }
        CHECK_EQ_INT(pos, end);
    }
    fused_run(f, pack, p2, typed);
    fused_packs++;
    fused_compare(f, "pack", p2, p1, pl);
    if (f->unpack) {
        fill_pattern(p1, pl, f->salt + 1);
        memset(typed, POISON, tl);
        memset(t2, POISON, tl);
        for (int i = 0; i < f->n; i++) {
            int pos = f->m[i].pos;
            CHECK(PMPI_Unpack(p1, (int)pl, &pos, typed + f->m[i].salt, f->m[i].count, f->m[i].type,
                              MPI_COMM_SELF) == MPI_SUCCESS);
        }
        fused_run(f, unpack, t2, p1);
        fused_unpacks++;
        fused_compare(f, "unpack", t2, typed, tl);
    }
out_free:
    free(typed);
    free(t2);
    free(p1);
    free(p2);
}

static void fused_sets(rt_rng_t *rng)
{
    static fset_t sets[FUSED_SETS];
    rt_options_t opt = {.max_depth = 3, .max_size = 1 << 12, .max_span = 1 << 16};
    char src_path[600], so_path[600], name[32];
    int wstatus;
    pid_t pid;
    FILE *fp;
    void *so;

    snprintf(src_path, sizeof(src_path), "%s/fused.cpp", workdir);
    snprintf(so_path, sizeof(so_path), "%s/fused.so", workdir);
    fp = fopen(src_path, "w");
    REQUIRE(fp != NULL);
    append(fp, "#include \"tj_emu.h\"\n#include <cstring>\n\n");
    for (int k = 0; k < FUSED_SETS; k++) {
        fused_draw(&sets[k], rng, &opt);
        for (int dir = 0; dir < 2; dir++) {
            char *src;
            snprintf(name, sizeof(name), "tj_f%s%d", dir ? "u" : "p", k);
            REQUIRE(tj_gen_fused_source(sets[k].blocks, sets[k].words, sets[k].nshapes,
                                        (tj_dir_t)dir, name, &src) == TJ_OK);
            append(fp, src);
            fprintf(fp,
                    "extern \"C\" void emu_%s(const unsigned *g, const unsigned *b, void *dst, "
                    "const void *src, const void *args)\n{\n"
                    "    tj_fused_args_t a;\n    std::memcpy(&a, args, sizeof(a));\n"
                    "    tj_emu_launch(%s, g, b, dst, src, a);\n}\n\n",
                    name, name);
            free(src);
        }
    }
    append(fp, "static_assert(sizeof(tj_fused_args_t) == 40 * 32 + 8, \"fused args layout\");\n");
    REQUIRE(fclose(fp) == 0);
    pid = compile_shared(src_path, so_path);
    REQUIRE(waitpid(pid, &wstatus, 0) == pid);
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
        fprintf(stderr, "g++ failed on %s\n", src_path);
        exit(1);
    }
    so = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(so != NULL);
    for (int k = 0; k < FUSED_SETS; k++) {
        emu_fused_fn_t p, u;
        snprintf(name, sizeof(name), "emu_tj_fp%d", k);
        *(void **)&p = dlsym(so, name);
        snprintf(name, sizeof(name), "emu_tj_fu%d", k);
        *(void **)&u = dlsym(so, name);
        REQUIRE(p != NULL && u != NULL);
        fused_check(&sets[k], p, u);
        for (int i = 0; i < sets[k].n; i++)
            if (sets[k].owner[i]) {
                MPI_Type_free(&sets[k].m[i].type);
                free(sets[k].m[i].desc);
            }
    }
    dlclose(so);
    if (!keep) {
        unlink(src_path);
        unlink(so_path);
    }
}

/* The next case of the filling batch (flushed first when it holds @p batch_size): the hand-made
 * @p block described by @p desc, its choices drawn (choose) for the caller to adjust. */
static case_t *handmade_case(const char *desc, const tj_block_t *block, rt_rng_t *rng,
                             int batch_size)
{
    case_t *c;
    long ignored = 0;

    if (filling->n == batch_size)
        flush();
    c = &filling->cases[filling->n++];
    c->type = MPI_DATATYPE_NULL;
    c->block = *block;
    c->desc = strdup(desc);
    REQUIRE(c->desc != NULL);
    choose(c, rng, &ignored);
    return c;
}

int main(int argc, char **argv)
{
    uint64_t seed = 1;
    long types = 2000, strided = 0, drawn = 0, narrow = 0, handmade = 0, edged = 0;
    int batch_size = 250;
    rt_options_t opt = {
        .max_depth = 4, .max_size = 1 << 20, .max_span = (int64_t)1 << 34, .huge_percent = 5};
    rt_rng_t rng;
    char desc[8192];

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--types") == 0 && i + 1 < argc)
            types = strtol(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
            batch_size = atoi(argv[++i]);
        else if (strcmp(argv[i], "--cxxflag") == 0 && i + 1 < argc && ncxxflags < MAX_CXXFLAGS)
            cxxflags[ncxxflags++] = argv[++i];
        else if (strcmp(argv[i], "--keep") == 0)
            keep = true;
        else if (strcmp(argv[i], "--verbose") == 0)
            verbose = true;
        else {
            fprintf(stderr,
                    "usage: %s [--seed N] [--types N] [--batch N] [--cxxflag FLAG]... [--keep] "
                    "[--verbose]\n",
                    argv[0]);
            return 2;
        }
    }
    if (batch_size < 1 || batch_size > MAX_BATCH)
        batch_size = 250;
    if (batch_size > MPICH40_BATCH && sysmpi_version_has("MPICH Version: 4.0")) {
        batch_size = MPICH40_BATCH;
        printf("MPICH 4.0: batches of %d types (more live datatypes make it pack some new types "
               "short)\n",
               batch_size);
    }
    if (TJ_EMU_CXX[0] == '\0' || access(TJ_EMU_CXX, X_OK) != 0) {
        printf("SKIP: no host C++ compiler for the emulation\n");
        return 77;
    }
    MPI_Init(&argc, &argv);
    snprintf(workdir, sizeof(workdir), "%s/tj_emu_XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    REQUIRE(mkdtemp(workdir) != NULL);
    rt_seed(&rng, seed);

    for (size_t e = 0; e < sizeof(extremes) / sizeof(extremes[0]); e++) {
        tj_block_t block;
        REQUIRE(tj_block_parse(extremes[e], &block) == TJ_OK);
        for (int w = 1; w <= block.word; w *= 2) {
            case_t *c = handmade_case(extremes[e], &block, &rng, batch_size);
            c->pos = w * (int)rt_range(&rng, 1, 3);
            c->edge = 0;
            /* At most what the start and the extent allow this launch. */
            tj_words_t lw =
                tj_block_words(&block, c->count, (uintptr_t)block.start, (uintptr_t)c->pos);
            c->word = lw.edge != 0 ? lw.edge : lw.word;
            c->word = c->word < w ? c->word : w;
            c->generic = tj_gen_generic_usable(&block, c->word);
            narrow += c->word < block.word;
            handmade++;
        }
    }
    /* Kernels with edges: runs long enough, at positions that agree with the start modulo 16
     * (and at any, for the words a misaligned position leaves). */
    for (size_t e = 0; e < sizeof(edge_blocks) / sizeof(edge_blocks[0]); e++) {
        tj_block_t block;
        REQUIRE(tj_block_parse(edge_blocks[e], &block) == TJ_OK);
        for (int i = 0; i < 6; i++) {
            tj_words_t w;
            case_t *c = handmade_case(edge_blocks[e], &block, &rng, batch_size);
            c->count = i % 3 + 1;
            c->pos = (int)(((block.start % 16) + 16) % 16) + 16 * (i / 3) +
                     (i == 5 ? (int)rt_range(&rng, 1, 15) : 0);
            w = tj_block_words(&block, c->count, (uintptr_t)block.start, (uintptr_t)c->pos);
            c->word = w.word;
            c->edge = w.edge;
            c->unpack = tj_block_disjoint(&block, c->count);
            edged += c->edge != 0;
            handmade++;
        }
    }
    for (size_t e = 0; e < sizeof(short_edge_blocks) / sizeof(short_edge_blocks[0]); e++) {
        tj_block_t block;
        REQUIRE(tj_block_parse(short_edge_blocks[e], &block) == TJ_OK);
        REQUIRE(block.edges_word == 16 && block.word < 16);
        for (int i = 0; i < 3; i++) {
            case_t *c = handmade_case(short_edge_blocks[e], &block, &rng, batch_size);
            c->count = i + 1; /* each extent is 16 past a multiple of the size */
            c->pos = (int)(((block.start % 16) + 16) % 16) + 16 * i;
            c->word = 16;
            c->edge = block.word;
            c->unpack = tj_block_disjoint(&block, c->count);
            c->generic = false;
            edged++;
            handmade++;
        }
    }
    while (strided < types) {
        MPI_Datatype type = rt_draw_type(&rng, &opt, desc, sizeof(desc));
        case_t *c;
        drawn++;
        c = &filling->cases[filling->n];
        if (tj_translate_block(type, &c->block, NULL) != TJ_OK) {
            MPI_Type_free(&type);
            continue;
        }
        strided++;
        c->type = type;
        c->desc = strdup(desc);
        REQUIRE(c->desc != NULL);
        choose(c, &rng, &narrow);
        if (++filling->n == batch_size)
            flush();
    }
    flush();
    if (pending != NULL)
        batch_run(pending);
    fused_sets(&rng);
    if (!keep)
        rmdir(workdir);

    printf("seed %llu: %ld types drawn, %ld strided, %ld hand-made blocks (%ld with a narrower W, "
           "%ld with edges); %ld packs, %ld unpacks, %ld generic, %ld on a small grid; %d "
           "mismatches\n",
           (unsigned long long)seed, drawn, strided, handmade, narrow, edged, packs, unpacks,
           generic_runs, shrunk, mismatches);
    printf("fused: %d sets, %ld packs, %ld unpacks\n", FUSED_SETS, fused_packs, fused_unpacks);
    if (short_packs > 0)
        printf("MPICH 4.0: %ld packs skipped: its MPI_Pack packed fewer bytes than the type holds "
               "(docs/mpis.md)\n",
               short_packs);
    CHECK(mismatches == 0);
    CHECK(edged >= 20); /* the hand-made blocks of edge_blocks run with edges */
    CHECK(fused_unpacks > 0);
    CHECK(unpacks * 4 >= packs); /* most random layouts are disjoint: unpack is really tested */
    MPI_Finalize();
    CHECK_DONE();
}
