/* SPDX-License-Identifier: BSD-3-Clause */
/* Stepping aside (see aside.h). */
#include "interpose/aside.h"

#include <dlfcn.h>
#include <mpi.h>

#include "interpose/fortran_binding.h"

unsigned char tj_stepped_aside;

/* The Fortran names' slots, gathered by the linker in the section tj_fortran (the standard ABI's
 * build has none: its C header has no Fortran types). */
static void fortran_slots(void)
{
#if !defined(MPI_ABI_VERSION)
    /* The linker's bounds of the section; hidden, so that it does not export them. */
    extern fortran_slot_t __start_tj_fortran[] __attribute__((visibility("hidden")));
    extern fortran_slot_t __stop_tj_fortran[] __attribute__((visibility("hidden")));
    for (fortran_slot_t *s = __start_tj_fortran; s < __stop_tj_fortran; s++) {
        void *next = dlsym(RTLD_NEXT, s->name);
        if (next != NULL)
            s->target = next;
    }
#endif
}

void tj_aside_step(void)
{
    if (__atomic_load_n(&tj_stepped_aside, __ATOMIC_ACQUIRE))
        return;
    fortran_slots();
    __atomic_store_n(&tj_stepped_aside, 1, __ATOMIC_RELEASE);
}
