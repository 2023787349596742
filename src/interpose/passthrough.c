/* SPDX-License-Identifier: BSD-3-Clause */
/* Passing every call through (see passthrough.h). */
#include "interpose/passthrough.h"

#include <dlfcn.h>
#include <mpi.h>

#include "interpose/fortran_binding.h"
#include "interpose/state.h"

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

void tj_passthrough_start(void)
{
    if (__atomic_load_n(&tj_interpose_state.passthrough.all, __ATOMIC_ACQUIRE))
        return;
    fortran_slots();
    __atomic_store_n(&tj_interpose_state.passthrough.all, 1, __ATOMIC_RELEASE);
}
