/* SPDX-License-Identifier: BSD-3-Clause */
/* Modules: CUBIN and PTX images are checked as the driver checks them (architecture, toolkit and
 * PTX ISA version), and their kernels come from the source the NVRTC shim appended. */
#include <ctype.h>
#include <dlfcn.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"
#include "trailer.h"

#ifndef EM_CUDA
#define EM_CUDA 190
#endif

static struct CUmod_st *modules; /* every module ever loaded, unloaded ones included */

/* The newest PTX ISA each driver version accepts (the PTX ISA release notes). */
static int max_ptx_isa(int driver)
{
    static const struct {
        int driver, isa; /* isa: major * 10 + minor */
    } table[] = {{12000, 80}, {12010, 81}, {12020, 82}, {12030, 83}, {12040, 84},
                 {12050, 85}, {12060, 85}, {12080, 87}, {12090, 88}, {13000, 90}};
    int isa = 0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].driver <= driver)
            isa = table[i].isa;
    return isa;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* Where the ELF ends: the furthest of its header tables, sections and segments. The driver gets
 * no size with the image, so this is also where the shim's trailer starts. */
static size_t elf_end(const unsigned char *image)
{
    Elf64_Ehdr eh;
    uint64_t end;

    memcpy(&eh, image, sizeof eh);
    end = max_u64(sizeof eh, eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize);
    end = max_u64(end, eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize);
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, image + eh.e_shoff + (uint64_t)i * eh.e_shentsize, sizeof sh);
        if (sh.sh_type != SHT_NOBITS)
            end = max_u64(end, sh.sh_offset + sh.sh_size);
    }
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, image + eh.e_phoff + (uint64_t)i * eh.e_phentsize, sizeof ph);
        end = max_u64(end, ph.p_offset + ph.p_filesz);
    }
    return (size_t)end;
}

/* The toolkit that built a CUBIN, major * 10 + minor, from its .note.nv.cuinfo note (desc: u16
 * note version 2, u16 SM, u16 toolkit version, e.g. 130 for 13.0); 0 if it has none. */
static int cubin_toolkit(const unsigned char *image)
{
    Elf64_Ehdr eh;
    Elf64_Shdr strtab;

    memcpy(&eh, image, sizeof eh);
    if (eh.e_shstrndx >= eh.e_shnum)
        return 0;
    memcpy(&strtab, image + eh.e_shoff + (uint64_t)eh.e_shstrndx * eh.e_shentsize, sizeof strtab);
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        const unsigned char *desc;
        uint32_t namesz, descsz;
        uint16_t version, toolkit;

        memcpy(&sh, image + eh.e_shoff + (uint64_t)i * eh.e_shentsize, sizeof sh);
        if (sh.sh_type != SHT_NOTE ||
            strcmp((const char *)image + strtab.sh_offset + sh.sh_name, ".note.nv.cuinfo") != 0 ||
            sh.sh_size < 12)
            continue;
        memcpy(&namesz, image + sh.sh_offset, 4);
        memcpy(&descsz, image + sh.sh_offset + 4, 4);
        desc = image + sh.sh_offset + 12 + ((namesz + 3) & ~3u);
        if (descsz < 6 || desc + 6 > image + sh.sh_offset + sh.sh_size)
            return 0;
        memcpy(&version, desc, 2);
        memcpy(&toolkit, desc + 4, 2);
        return version == 2 ? toolkit : 0;
    }
    return 0;
}

/* A CUBIN loads on a device of the same SM major and no older minor, built by a toolkit whose
 * major version the driver supports. The SM is bits 8-15 of e_flags from ELF ABI version 8
 * (CUDA 13 cubins: sm_80 is 0x6005004), bits 0-7 before. */
static CUresult check_cubin(const unsigned char *image, int device_sm, size_t *end)
{
    Elf64_Ehdr eh;
    int sm, toolkit;

    memcpy(&eh, image, sizeof eh);
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_CUDA ||
        eh.e_shentsize != sizeof(Elf64_Shdr))
        return CUDA_ERROR_INVALID_IMAGE;
    sm =
        eh.e_ident[EI_ABIVERSION] >= 8 ? (int)((eh.e_flags >> 8) & 0xff) : (int)(eh.e_flags & 0xff);
    if (sm / 10 != device_sm / 10 || sm % 10 > device_sm % 10)
        return CUDA_ERROR_NO_BINARY_FOR_GPU;
    toolkit = cubin_toolkit(image);
    /* Assumption: a CUBIN from a newer major toolkit is refused as no binary for the GPU. */
    if (toolkit / 10 > FAKECUDA_VERSION / 1000)
        return CUDA_ERROR_NO_BINARY_FOR_GPU;
    *end = elf_end(image);
    return CUDA_SUCCESS;
}

/* Skips white space and comments before the PTX's first directive. */
static const char *skip_blank(const char *p)
{
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (p[0] == '/' && p[1] == '/') {
            while (*p != '\0' && *p != '\n')
                p++;
        } else if (p[0] == '/' && p[1] == '*') {
            const char *close = strstr(p + 2, "*/");
            if (close == NULL)
                return p + strlen(p);
            p = close + 2;
        } else {
            return p;
        }
    }
}

/* PTX: `.version X.Y` no newer than the driver's ISA, `.target sm_XX` no newer than the device
 * (PTX is compiled forward), an arch-specific `sm_XXa` only on that exact SM. */
static CUresult check_ptx(const char *text, int device_sm, size_t *end)
{
    const char *p = skip_blank(text), *target;
    int major, minor, sm, n = 0;
    char suffix = '\0';

    if (strncmp(p, ".version", 8) != 0 || sscanf(p + 8, " %d.%d", &major, &minor) != 2)
        return CUDA_ERROR_INVALID_IMAGE;
    if (major * 10 + minor > max_ptx_isa(FAKECUDA_VERSION))
        return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    target = strstr(p, ".target");
    if (target == NULL || sscanf(target + 7, " sm_%d%n", &sm, &n) != 1)
        return CUDA_ERROR_INVALID_PTX;
    if (isalpha((unsigned char)target[7 + n]))
        suffix = target[7 + n];
    if (sm > device_sm || (suffix == 'a' && sm != device_sm))
        return CUDA_ERROR_NO_BINARY_FOR_GPU;
    *end = strlen(text) + 1;
    return CUDA_SUCCESS;
}

static CUresult load(struct CUctx_st *ctx, const void *image, struct CUmod_st **out)
{
    const unsigned char *bytes = image;
    int device_sm = fc_config.sm[ctx->device];
    size_t end = 0;
    fc_trailer_t trailer;
    struct CUmod_st *mod;
    char *names = NULL;
    void *dl = NULL;
    bool tracked = false;
    fc_set_hook_fn set_hook = NULL;
    fc_set_trace_hooks_fn set_trace = NULL;
    CUresult rc;

    if (image == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (memcmp(bytes, ELFMAG, SELFMAG) == 0)
        rc = check_cubin(bytes, device_sm, &end);
    else if (strncmp(skip_blank(image), ".version", 8) == 0)
        rc = check_ptx(image, device_sm, &end);
    else
        rc = CUDA_ERROR_INVALID_IMAGE;
    if (rc != CUDA_SUCCESS)
        return rc;
    /* Without the shim's source the kernels cannot run on the host: a limit of the double, not
     * something a driver would say, so it says NOT_SUPPORTED. */
    if (!fc_trailer_read(bytes + end, &trailer))
        return CUDA_ERROR_NOT_SUPPORTED;
    /* A CUBIN without a toolkit note: the NVRTC that made it says which toolkit it was. */
    if (bytes[0] == ELFMAG0 && cubin_toolkit(bytes) == 0 &&
        (int)trailer.nvrtc_major > FAKECUDA_VERSION / 1000)
        return CUDA_ERROR_NO_BINARY_FOR_GPU;
    rc = fc_kernel_build((const char *)bytes + end + sizeof trailer, (size_t)trailer.source_len,
                         &dl, &names, &tracked);
    if (rc != CUDA_SUCCESS)
        return rc;
    mod = calloc(1, sizeof *mod);
    if (mod == NULL) {
        free(names);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    mod->magic = FC_MAGIC_MODULE;
    mod->ctx = ctx;
    mod->dl = dl;
    /* Built with the store hooks: every store of its kernels reaches track.c. */
    *(void **)&set_hook = dlsym(dl, "fakecuda_set_store_hook");
    if (tracked && set_hook != NULL) {
        set_hook(fc_track_store);
        mod->tracked = true;
    }
    *(void **)&set_trace = dlsym(dl, "fakecuda_set_trace_hooks");
    if (tracked && set_trace != NULL && fc_trace_enabled())
        set_trace(fc_trace_load, fc_trace_thread);
    for (const char *name = names; *name != '\0'; name += strlen(name) + 1) {
        struct CUfunc_st *f = calloc(1, sizeof *f);
        char sym[300];
        if (f == NULL || strlen(name) >= sizeof f->name) {
            free(f);
            continue;
        }
        f->magic = FC_MAGIC_FUNC;
        f->mod = mod;
        strcpy(f->name, name);
        snprintf(sym, sizeof sym, "fakecuda_block_%s", name);
        *(void **)&f->block = dlsym(dl, sym);
        snprintf(sym, sizeof sym, "fakecuda_argsize_%s", name);
        *(void **)&f->argsize = dlsym(dl, sym);
        if (f->block == NULL || f->argsize == NULL) {
            free(f);
            continue;
        }
        fc_track_describe(name, (const char *)bytes + end + sizeof trailer,
                          (size_t)trailer.source_len, &f->info);
        f->next = mod->funcs;
        mod->funcs = f;
    }
    free(names);
    mod->next = modules;
    modules = mod;
    fc_stats.modules_loaded++;
    *out = mod;
    return CUDA_SUCCESS;
}

static CUresult module_get(struct CUctx_st *ctx, CUmodule handle, struct CUmod_st **mod)
{
    for (struct CUmod_st *m = modules; m != NULL; m = m->next)
        if (m == handle) {
            if (m->dead || m->ctx != ctx)
                return CUDA_ERROR_INVALID_HANDLE;
            *mod = m;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_HANDLE;
}

void fc_module_release_ctx(struct CUctx_st *ctx)
{
    for (struct CUmod_st *m = modules; m != NULL; m = m->next)
        if (m->ctx == ctx && !m->dead) {
            m->dead = true;
            dlclose(m->dl);
        }
}

CUresult fc_func_get(struct CUctx_st *ctx, CUfunction handle, struct CUfunc_st **func)
{
    for (struct CUmod_st *m = modules; m != NULL; m = m->next)
        for (struct CUfunc_st *f = m->funcs; f != NULL; f = f->next)
            if (f == handle) {
                if (m->dead || m->ctx != ctx)
                    return CUDA_ERROR_INVALID_HANDLE;
                *func = f;
                return CUDA_SUCCESS;
            }
    return CUDA_ERROR_INVALID_HANDLE;
}

FC_EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
    struct CUctx_st *ctx = NULL;
    FC_BEGIN(cuModuleLoadData, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if (module == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        rc = load(ctx, image, module);
    FC_END();
}

/* JIT options change nothing the emulation does, so they are ignored. */
FC_EXPORT CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image,
                                              unsigned int numOptions, CUjit_option *options,
                                              void **optionValues)
{
    struct CUctx_st *ctx = NULL;
    FC_BEGIN(cuModuleLoadDataEx, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if (module == NULL || (numOptions > 0 && (options == NULL || optionValues == NULL)))
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        rc = load(ctx, image, module);
    FC_END();
}

/* Synchronous: the context's queued work finishes first (it may use the module's kernels). */
FC_EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
    struct CUctx_st *ctx = NULL;
    struct CUmod_st *m = NULL;
    FC_BEGIN(cuModuleUnload, true);
    if ((rc = fc_ctx_current(&ctx)) == CUDA_SUCCESS &&
        (rc = module_get(ctx, hmod, &m)) == CUDA_SUCCESS &&
        (rc = fc_ctx_run_all(ctx)) == CUDA_SUCCESS) {
        m->dead = true;
        dlclose(m->dl);
    }
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    struct CUctx_st *ctx = NULL;
    struct CUmod_st *m = NULL;
    FC_BEGIN(cuModuleGetFunction, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS || (rc = module_get(ctx, hmod, &m)))
        ;
    else if (hfunc == NULL || name == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else {
        rc = CUDA_ERROR_NOT_FOUND;
        for (struct CUfunc_st *f = m->funcs; f != NULL; f = f->next)
            if (strcmp(f->name, name) == 0) {
                *hfunc = f;
                rc = CUDA_SUCCESS;
            }
    }
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib,
                                              CUfunction hfunc)
{
    struct CUctx_st *ctx = NULL;
    struct CUfunc_st *f = NULL;
    FC_BEGIN(cuFuncGetAttribute, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS || (rc = fc_func_get(ctx, hfunc, &f)))
        ;
    else if (pi == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else {
        int sm = fc_config.sm[ctx->device];
        switch (attrib) {
        case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
            *pi = 1024;
            break;
        case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
            *pi = 0;
            break;
        case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
            *pi = 0;
            break;
        case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
            *pi = 0;
            break;
        case CU_FUNC_ATTRIBUTE_NUM_REGS:
            *pi = 32;
            break;
        case CU_FUNC_ATTRIBUTE_PTX_VERSION:
            *pi = sm;
            break;
        case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
            *pi = sm;
            break;
        case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
            *pi = 48 * 1024;
            break;
        default:
            rc = CUDA_ERROR_INVALID_VALUE;
            break;
        }
    }
    FC_END();
}
