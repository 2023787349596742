/* SPDX-License-Identifier: BSD-3-Clause */
/* The exported MPI entry points of the C wrappers: one trampoline per entry of TJ_WRAPPERS.
 *
 * The library owns its exports (the symbols are hidden by default and an MPI's header may or
 * may not mark its functions visible). Each MPI_Name jumps to typejit's wrapper
 * (TJ_WRAPPER(MPI_Name)) or, once typejit has passed every call through
 * (src/interpose/passthrough.c), to the system MPI's PMPI_Name. A jump leaves every argument
 * register and the stack as the caller set them, so the MPI receives its own handles even when
 * typejit was compiled with handles of another size (an int-handle build in front of a
 * pointer-handle MPI would cut them in C). */
#include "interpose/passthrough.h"
#include "interpose/wrappers.h"

#define STR(_x)  #_x
#define XSTR(_x) STR(_x)

#if defined(__x86_64__)
/* endbr64 is a no-op on processors without indirect branch tracking. */
#define TRAMPOLINE(_name)                                                                          \
    __asm__(".text\n"                                                                              \
            ".globl " #_name "\n"                                                                  \
            ".type " #_name ", @function\n"                                                        \
            ".p2align 4\n" #_name ":\n"                                                            \
            "\tendbr64\n"                                                                          \
            "\tcmpb $0, tj_passthrough_all(%rip)\n"                                                \
            "\tjne 1f\n"                                                                           \
            "\tjmp " XSTR(TJ_WRAPPER(_name)) "\n"                                                  \
                                             "1:\tjmp *P" #_name "@GOTPCREL(%rip)\n"               \
                                             ".size " #_name ", .-" #_name "\n");
#elif defined(__aarch64__)
/* x16 is the intra-procedure-call scratch register, free at a function's entry. */
#define TRAMPOLINE(_name)                                                                          \
    __asm__(".text\n"                                                                              \
            ".globl " #_name "\n"                                                                  \
            ".type " #_name ", %function\n"                                                        \
            ".p2align 2\n" #_name ":\n"                                                            \
            "\tadrp x16, tj_passthrough_all\n"                                                     \
            "\tldrb w16, [x16, :lo12:tj_passthrough_all]\n"                                        \
            "\tcbnz w16, 1f\n"                                                                     \
            "\tb " XSTR(TJ_WRAPPER(_name)) "\n"                                                    \
                                           "1:\tadrp x16, :got:P" #_name "\n"                      \
                                           "\tldr x16, [x16, :got_lo12:P" #_name "]\n"             \
                                           "\tbr x16\n"                                            \
                                           ".size " #_name ", .-" #_name "\n");
#else
#error "typejit's exported entry points are written for x86_64 and aarch64 only"
#endif

TJ_ALL_WRAPPERS(TRAMPOLINE)
