/* SPDX-License-Identifier: BSD-3-Clause */
/* Kernels: the source from the NVRTC shim's trailer is compiled for the host against
 * tests/emu/tj_emu.h (cached on disk by its hash), launched with the driver's checks and run
 * over its whole grid when the queue reaches it (grid.c: shuffled, on several host threads),
 * with faults turned into sticky errors and typejit's pack and unpack kernels held to writing
 * each byte of their output exactly once (track.c).
 *
 * FAKECUDA_CXXFLAGS adds options to the host compile (e.g. "-fsanitize=address,undefined
 * -fno-sanitize-recover=all", with the sanitizer runtime preloaded): then an undefined
 * behaviour is the sanitizer's report, not a trap, and with -fsanitize=address the stores are
 * not counted (AddressSanitizer owns the instrumentation the count uses). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fakecuda.h"
#include "files.h"

#ifndef FAKECUDA_CXX
#error "build with -DFAKECUDA_CXX=<host C++ compiler>"
#endif
#ifndef FAKECUDA_EMU_DIR
#error "build with -DFAKECUDA_EMU_DIR=<directory of tj_emu.h>"
#endif
#ifndef FAKECUDA_DEFAULT_CACHE
#error "build with -DFAKECUDA_DEFAULT_CACHE=<kernel cache directory>"
#endif

extern char **environ;

/* -fsanitize=alignment with a trap makes a misaligned W-byte access fault (SIGILL) as it would
 * on the device, where x86 would silently allow it. */
static const char *const cxx_flags[] = {
    "-std=c++17",           "-O1", "-fPIC",          "-shared", "-fno-strict-aliasing",
    "-fsanitize=alignment", "-w",  "-Wl,--as-needed"};
/* Unless FAKECUDA_CXXFLAGS brings a sanitizer runtime of its own. */
static const char *const trap_flags[] = {"-fsanitize-undefined-trap-on-error"};
/* Every store calls the hook of tests/emu/tj_emu.h (the count of track.c). The unit defines the
 * hooks itself and binds its calls to them (-Bsymbolic): in a process with the AddressSanitizer
 * runtime loaded (typejit's sanitized build), the runtime's functions of the same names would
 * take them, and no store would be counted. */
static const char *const track_flags[] = {"-DTJ_EMU_TRACK_STORES",
                                          "-Wl,-Bsymbolic",
                                          "-fsanitize=kernel-address",
                                          "-fsanitize-recover=kernel-address",
                                          "--param=asan-instrumentation-with-call-threshold=0",
                                          "--param=asan-stack=0",
                                          "--param=asan-globals=0"};
/* What write_unit adds around the source: part of the cache key. */
#define UNIT_FORMAT "fakecuda unit 3: block entries, store hook"

#define MAX_USER_FLAGS 32

/* The options of every host compile of this process: cxx_flags, then the trap or the user's
 * FAKECUDA_CXXFLAGS, then the tracking ones unless the user's take AddressSanitizer. */
static struct {
    const char *argv[64];
    int argc;
    bool tracked;
    char *user; /* the split copy of FAKECUDA_CXXFLAGS */
} flags;
static pthread_once_t flags_once = PTHREAD_ONCE_INIT;

static void add_flags(const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        flags.argv[flags.argc++] = list[i];
}

static void flags_init(void)
{
    const char *user = getenv("FAKECUDA_CXXFLAGS");
    char *save = NULL;

    add_flags(cxx_flags, sizeof cxx_flags / sizeof cxx_flags[0]);
    flags.tracked = true;
    if (user == NULL || *user == '\0' || (flags.user = strdup(user)) == NULL) {
        add_flags(trap_flags, 1);
    } else {
        int n = 0;
        for (char *f = strtok_r(flags.user, " \t", &save); f != NULL && n < MAX_USER_FLAGS;
             f = strtok_r(NULL, " \t", &save), n++) {
            flags.argv[flags.argc++] = f;
            if (strstr(f, "-fsanitize=") == f && strstr(f, "address") != NULL)
                flags.tracked = false;
        }
    }
    if (flags.tracked)
        add_flags(track_flags, sizeof track_flags / sizeof track_flags[0]);
}

#define MAX_KERNEL_PARAM_BYTES 32764 /* Volta and newer since CUDA 12.1 */

/* The cache key covers everything that changes the shared object: source, flags, tj_emu.h, the
 * unit's format. */
static uint64_t source_hash(const char *source, size_t len)
{
    uint64_t h = FC_FNV1A_START;
    char path[4096];
    FILE *f;

    h = fc_fnv1a(h, source, len);
    for (int i = 0; i < flags.argc; i++)
        h = fc_fnv1a(h, flags.argv[i], strlen(flags.argv[i]) + 1);
    h = fc_fnv1a(h, FAKECUDA_CXX, strlen(FAKECUDA_CXX));
    h = fc_fnv1a(h, UNIT_FORMAT, strlen(UNIT_FORMAT));
    snprintf(path, sizeof path, "%s/tj_emu.h", FAKECUDA_EMU_DIR);
    if ((f = fopen(path, "rb")) != NULL) {
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0)
            h = fc_fnv1a(h, buf, n);
        fclose(f);
    }
    return h;
}

char *fc_strip_comments(const char *source, size_t len)
{
    char *out = malloc(len + 1);
    size_t i = 0;
    char quote = 0;

    if (out == NULL)
        return NULL;
    memcpy(out, source, len);
    out[len] = '\0';
    while (i < len) {
        if (quote) {
            if (out[i] == '\\' && i + 1 < len)
                i++;
            else if (out[i] == quote)
                quote = 0;
            i++;
        } else if (out[i] == '"' || out[i] == '\'') {
            quote = out[i++];
        } else if (out[i] == '/' && i + 1 < len && out[i + 1] == '/') {
            while (i < len && out[i] != '\n')
                out[i++] = ' ';
        } else if (out[i] == '/' && i + 1 < len && out[i + 1] == '*') {
            out[i++] = ' ';
            out[i++] = ' ';
            while (i < len && !(out[i] == '*' && i + 1 < len && out[i + 1] == '/')) {
                if (out[i] != '\n')
                    out[i] = ' ';
                i++;
            }
            if (i < len) {
                out[i] = out[i + 1] = ' ';
                i += 2;
            }
        } else {
            i++;
        }
    }
    return out;
}

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Every `extern "C" __global__ void NAME(` as NUL-separated names, ending with an empty one. */
static char *find_kernels(const char *source, size_t len)
{
    char *text = fc_strip_comments(source, len);
    char *names = calloc(1, len + 2);
    size_t n = 0;

    if (text == NULL || names == NULL) {
        free(text);
        free(names);
        return NULL;
    }
    for (const char *p = strstr(text, "extern"); p != NULL; p = strstr(p + 1, "extern")) {
        const char *q = p + 6, *name;
        if (p > text && ident_char(p[-1]))
            continue;
        q = skip_space(q);
        if (strncmp(q, "\"C\"", 3) != 0)
            continue;
        q = skip_space(q + 3);
        if (strncmp(q, "__global__", 10) != 0 || ident_char(q[10]))
            continue;
        q = skip_space(q + 10);
        if (strncmp(q, "void", 4) != 0 || ident_char(q[4]))
            continue;
        name = q = skip_space(q + 4);
        while (ident_char(*q))
            q++;
        if (q == name || *skip_space(q) != '(')
            continue;
        memcpy(names + n, name, (size_t)(q - name));
        n += (size_t)(q - name) + 1;
    }
    free(text);
    return names;
}

/* Runs the compiler, without the libraries preloaded into the test (a sanitized typejit would
 * take the compiler down); its output goes to @p log_path. */
static int run_compiler(const char *src, const char *out, const char *log_path)
{
    char *argv[80], **env;
    int argc = 0, status = -1, n = 0, kept = 0;
    posix_spawn_file_actions_t fa;
    pid_t pid;

    while (environ[n] != NULL)
        n++;
    if ((env = calloc((size_t)n + 1, sizeof(*env))) == NULL)
        return -1;
    for (int i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
            env[kept++] = environ[i];

    argv[argc++] = (char *)FAKECUDA_CXX;
    for (int i = 0; i < flags.argc; i++)
        argv[argc++] = (char *)flags.argv[i];
    argv[argc++] = (char *)"-I";
    argv[argc++] = (char *)FAKECUDA_EMU_DIR;
    argv[argc++] = (char *)"-o";
    argv[argc++] = (char *)out;
    argv[argc++] = (char *)src;
    argv[argc] = NULL;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (posix_spawn(&pid, FAKECUDA_CXX, &fa, NULL, argv, env) == 0)
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Writes the translation unit: the kernels' source and, for each kernel, the entry that runs
 * threads of one block with its arguments read as the driver reads kernelParams, and the entry
 * that reports their layout. */
static int write_unit(const char *path, const char *source, size_t len, const char *names)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fputs("#include \"tj_emu.h\"\n#line 1 \"fakecuda-kernel.cu\"\n", f);
    fwrite(source, 1, len, f);
    fputs("\n\n", f);
    for (const char *name = names; *name != '\0'; name += strlen(name) + 1)
        fprintf(f,
                "extern \"C\" void fakecuda_block_%s(const unsigned *fc_grid, const unsigned "
                "*fc_block, const unsigned *fc_at, const unsigned *fc_order, unsigned fc_n, void "
                "**fc_params)\n{\n    tj_emu_block_invoke(%s, fc_grid, fc_block, fc_at, "
                "fc_order, fc_n, fc_params);\n}\n"
                "extern \"C\" unsigned fakecuda_argsize_%s(tj_emu_size_t *fc_sizes, tj_emu_size_t "
                "*fc_aligns, unsigned fc_max)\n{\n    return tj_emu_arg_layout(%s, fc_sizes, "
                "fc_aligns, fc_max);\n}\n",
                name, name, name, name);
    return fclose(f) == 0 ? 0 : -1;
}

CUresult fc_kernel_build(const char *source, size_t len, void **dl, char **names_out, bool *tracked)
{
    const char *dir = getenv("FAKECUDA_KERNEL_CACHE");
    char so_path[4096], tmp_so[4200], src_path[4200], log_path[4200];
    uint64_t h;
    char *names = find_kernels(source, len);
    void *handle;

    pthread_once(&flags_once, flags_init);
    h = source_hash(source, len);
    if (names == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (dir == NULL || *dir == '\0')
        dir = FAKECUDA_DEFAULT_CACHE;
    snprintf(so_path, sizeof so_path, "%s/%016llx.so", dir, (unsigned long long)h);
    if (access(so_path, R_OK) == 0) {
        fc_stats.kernel_cache_hits++;
    } else {
        /* Several processes may build the same kernel at once: each writes its own files and
         * the rename publishes a complete object. */
        snprintf(src_path, sizeof src_path, "%s/%016llx.%ld.cpp", dir, (unsigned long long)h,
                 (long)getpid());
        snprintf(tmp_so, sizeof tmp_so, "%s/%016llx.%ld.tmp", dir, (unsigned long long)h,
                 (long)getpid());
        snprintf(log_path, sizeof log_path, "%s/%016llx.%ld.log", dir, (unsigned long long)h,
                 (long)getpid());
        if (fc_mkdirs(dir) != 0 || write_unit(src_path, source, len, names) != 0 ||
            run_compiler(src_path, tmp_so, log_path) != 0 || rename(tmp_so, so_path) != 0) {
            /* The harness itself is broken here, not the caller: say so even without
             * FAKECUDA_LOG, and keep the files. */
            fc_log("host compile of a kernel failed; see %s and %s", src_path, log_path);
            unlink(tmp_so);
            free(names);
            return CUDA_ERROR_INVALID_IMAGE;
        }
        unlink(src_path);
        unlink(log_path);
        fc_stats.kernel_compiles++;
    }
    handle = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        fc_log("cannot load %s: %s", so_path, dlerror());
        free(names);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    *dl = handle;
    *names_out = names;
    *tracked = flags.tracked;
    return CUDA_SUCCESS;
}

static bool dims_ok(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz)
{
    return gx >= 1 && gy >= 1 && gz >= 1 && gx <= 2147483647u && gy <= 65535 && gz <= 65535 &&
           bx >= 1 && by >= 1 && bz >= 1 && bx <= 1024 && by <= 1024 && bz <= 64 &&
           (unsigned long long)bx * by * bz <= 1024;
}

/* Copies the arguments now: the launch is queued, and the caller may reuse kernelParams as soon
 * as cuLaunchKernel returns. */
static CUresult capture_args(struct CUfunc_st *f, void **kernelParams, fc_op_t *op)
{
    size_t sizes[FC_MAX_PARAMS], aligns[FC_MAX_PARAMS], offsets[FC_MAX_PARAMS], total = 0;
    unsigned n = f->argsize(sizes, aligns, FC_MAX_PARAMS);
    unsigned char *buf;

    if (n > FC_MAX_PARAMS || (n > 0 && kernelParams == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < n; i++) {
        total = (total + aligns[i] - 1) / aligns[i] * aligns[i];
        offsets[i] = total;
        total += sizes[i];
    }
    if (total > MAX_KERNEL_PARAM_BYTES)
        return CUDA_ERROR_INVALID_VALUE;
    buf = aligned_alloc(64, (total + 63) / 64 * 64 + 64);
    if (buf == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (unsigned i = 0; i < n; i++) {
        if (kernelParams[i] == NULL) {
            free(buf);
            return CUDA_ERROR_INVALID_VALUE;
        }
        memcpy(buf + offsets[i], kernelParams[i], sizes[i]);
        op->u.kernel.params[i] = buf + offsets[i];
    }
    op->u.kernel.args = buf;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX,
                                          unsigned int gridDimY, unsigned int gridDimZ,
                                          unsigned int blockDimX, unsigned int blockDimY,
                                          unsigned int blockDimZ, unsigned int sharedMemBytes,
                                          CUstream hStream, void **kernelParams, void **extra)
{
    struct CUctx_st *ctx = NULL;
    struct CUstream_st *s = NULL;
    struct CUfunc_st *func = NULL;
    fc_op_t *op = NULL;
    FC_BEGIN(cuLaunchKernel, true);
    if ((rc = fc_ctx_current(&ctx)) || (rc = fc_func_get(ctx, f, &func)) ||
        (rc = fc_stream_get(ctx, hStream, &s)))
        ;
    else if (!dims_ok(gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ) ||
             sharedMemBytes > 48 * 1024)
        rc = CUDA_ERROR_INVALID_VALUE;
    /* The `extra` buffer form is not emulated: refused, never guessed. */
    else if (extra != NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((op = calloc(1, sizeof *op)) == NULL)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else if ((rc = capture_args(func, kernelParams, op)) != CUDA_SUCCESS)
        free(op);
    else {
        op->kind = FC_OP_KERNEL;
        op->u.kernel.func = func;
        op->u.kernel.grid[0] = gridDimX;
        op->u.kernel.grid[1] = gridDimY;
        op->u.kernel.grid[2] = gridDimZ;
        op->u.kernel.block[0] = blockDimX;
        op->u.kernel.block[1] = blockDimY;
        op->u.kernel.block[2] = blockDimZ;
        fc_stream_enqueue(s, op);
    }
    FC_END();
}

/* Only what the kernel's context may access is accessible while it runs (fc_mem_access: its own
 * device memory, and pool and VMM memory its device was granted), so a pointer into anything else
 * faults as it would on the device. A broken rule of track.c is
 * said on stderr and ends the context as an exception on the device would. */
void fc_kernel_execute(fc_op_t *op)
{
    struct CUfunc_st *func = op->u.kernel.func;
    struct CUctx_st *ctx = func->mod->ctx;
    unsigned long long launch = 0;
    char why[512] = "";
    bool known, kept = true;
    int sig = 0;

    fc_mem_open(ctx, op->seq);
    known = fc_track_begin(op, why, sizeof why);
    if (known) {
        fc_trace_begin();
        sig = fc_grid_run(op, &launch);
        if (sig == 0)
            fc_trace_end(op, launch);
        kept = fc_track_end(sig == 0, why, sizeof why);
    }
    /* A write just outside an allocation, short of its guard page: a fault all the same (on a
     * GPU it would corrupt whatever lies there, or fault). */
    if (known && sig == 0 && !fc_mem_slack_intact()) {
        sig = SIGSEGV;
        if (fc_config.log)
            fc_log("kernel wrote outside its allocations: illegal address");
    }
    fc_mem_close();
    if (!known || !kept) {
        fc_violation("kernel %s (launch %llu, grid %ux%ux%u, block %ux%ux%u) %s: a pack or "
                     "unpack kernel must write each byte of its output exactly once",
                     func->name, launch, op->u.kernel.grid[0], op->u.kernel.grid[1],
                     op->u.kernel.grid[2], op->u.kernel.block[0], op->u.kernel.block[1],
                     op->u.kernel.block[2], why);
        fc_ctx_poison(ctx, CUDA_ERROR_LAUNCH_FAILED);
        return;
    }
    if (sig == 0) {
        fc_stats.launches++;
        return;
    }
    fc_stats.kernel_faults++;
    /* A fault is the kernel's or its caller's to explain: say which launch, and how to replay
     * its thread order. */
    fc_log("kernel %s faulted (%s) in launch %llu (FAKECUDA_SEED=%llu replays this process's "
           "thread orders)",
           func->name, sig == SIGILL || sig == SIGTRAP ? "misaligned address" : "illegal address",
           launch, fc_grid_seed());
    /* The alignment sanitizer's trap is the only trap in kernel code. */
    fc_ctx_poison(ctx, sig == SIGILL || sig == SIGTRAP ? CUDA_ERROR_MISALIGNED_ADDRESS
                                                       : CUDA_ERROR_ILLEGAL_ADDRESS);
}
