/* Virtual memory management (CUDA Driver API, Virtual Memory Management): address reservations. */
#include "fakecuda.h"

bool fc_vmm_reserved(uintptr_t p, uintptr_t *base, size_t *size)
{
    (void)p;
    (void)base;
    (void)size;
    return false;
}

unsigned long long fc_vmm_handle_types(const fc_alloc_t *a)
{
    (void)a;
    return 0;
}

unsigned long long fc_vmm_block_id(const fc_alloc_t *a)
{
    return a->id;
}
