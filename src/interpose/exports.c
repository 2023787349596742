/* SPDX-License-Identifier: BSD-3-Clause */
/* The exported MPI entry points of the C wrappers: one trampoline per entry of TJ_WRAPPERS.
 *
 * The library owns its exports (the symbols are hidden by default and an MPI's header may or
 * may not mark its functions visible). Each MPI_Name jumps to typejit's wrapper
 * (TJ_WRAPPER(MPI_Name)) or, once typejit has passed every call through
 * (src/interpose/passthrough.c), to the system MPI's PMPI_Name. A jump leaves every argument
 * register and the stack as the caller set them, so the MPI receives its own handles even when
 * typejit was compiled with handles of another size (an int-handle build in front of a
 * pointer-handle MPI would cut them in C). While sends wait in the send queue, each entry point
 * hands them on first (wrappers.h), its argument registers kept around that call. */
#include <stddef.h>

#include "calls/send_queue.h"
#include "calls/state.h"
#include "interpose/passthrough.h"
#include "interpose/state.h"
#include "interpose/wrappers.h"

/* The trampolines read the flag of passthrough.c at the state's own address. */
_Static_assert(offsetof(tj_interpose_state_t, passthrough.all) == 0,
               "tj_interpose_state.passthrough.all is the state's first byte");

#define STR(_x)  #_x
#define XSTR(_x) STR(_x)
/* The send queue's length (tj_send_queue_empty), as the assembler names it. */
#define QUEUE_LENGTH "tj_calls_state+" XSTR(TJ_CALLS_QUEUE_LENGTH_AT)

#if defined(__x86_64__)
/* The argument registers kept around the call of the send queue (no MPI function takes floating
 * point arguments); 7 slots keep the stack 16-byte aligned at the call. */
#define SAVE_ARGS                                                                                  \
    "\tpush %rdi\n\tpush %rsi\n\tpush %rdx\n\tpush %rcx\n\tpush %r8\n\tpush %r9\n\tsub $8, %rsp\n"
#define RESTORE_ARGS                                                                               \
    "\tadd $8, %rsp\n\tpop %r9\n\tpop %r8\n\tpop %rcx\n\tpop %rdx\n\tpop %rsi\n\tpop %rdi\n"
#define QUEUE_CALL(_name)                                                                          \
    SAVE_ARGS "\tmovl $" XSTR(TJ_BLOCKING_OF(_name)) ", %edi\n"                                    \
                                                     "\tcall tj_send_queue_on_call\n" RESTORE_ARGS
/* endbr64 is a no-op on processors without indirect branch tracking. */
#define TRAMPOLINE(_name)                                                                          \
    __asm__(".text\n"                                                                              \
            ".globl " #_name "\n"                                                                  \
            ".type " #_name ", @function\n"                                                        \
            ".p2align 4\n" #_name ":\n"                                                            \
            "\tendbr64\n"                                                                          \
            "\tcmpb $0, tj_interpose_state(%rip)\n"                                                \
            "\tjne 1f\n"                                                                           \
            "\tcmpl $0, " QUEUE_LENGTH "(%rip)\n"                                                  \
            "\tjne 2f\n"                                                                           \
            "\tjmp " XSTR(TJ_WRAPPER(_name)) "\n"                                                  \
                                             "1:\tjmp *P" #_name "@GOTPCREL(%rip)\n"               \
                                             "2:\n" QUEUE_CALL(_name) "\tjmp " XSTR(TJ_WRAPPER(    \
                                                 _name)) "\n"                                      \
                                                         ".size " #_name ", .-" #_name "\n");
/* A call typejit does not wrap: the send queue first when it is not empty, then the system
 * MPI's function. The hidden tj_flush_MPI_X marks it for the symbol test. */
#define FLUSHED(_name)                                                                             \
    __asm__(".text\n"                                                                              \
            ".globl " #_name "\n"                                                                  \
            ".type " #_name ", @function\n"                                                        \
            ".globl tj_flush_" #_name "\n"                                                         \
            ".hidden tj_flush_" #_name "\n"                                                        \
            ".p2align 4\n" #_name ":\n"                                                            \
            "tj_flush_" #_name ":\n"                                                               \
            "\tendbr64\n"                                                                          \
            "\tcmpl $0, " QUEUE_LENGTH "(%rip)\n"                                                  \
            "\tje 1f\n" QUEUE_CALL(_name) "1:\tjmp *P" #_name "@GOTPCREL(%rip)\n"                  \
                                          ".size " #_name ", .-" #_name "\n");
#elif defined(__aarch64__)
/* x16 is the intra-procedure-call scratch register, free at a function's entry; x0-x7 (the
 * argument registers), the frame pointer and the link register are kept around the call. */
#define QUEUE_CALL(_name)                                                                          \
    "\tstp x0, x1, [sp, #-80]!\n\tstp x2, x3, [sp, #16]\n\tstp x4, x5, [sp, #32]\n"                \
    "\tstp x6, x7, [sp, #48]\n\tstp x29, x30, [sp, #64]\n"                                         \
    "\tmov w0, #" XSTR(TJ_BLOCKING_OF(                                                             \
        _name)) "\n"                                                                               \
                "\tbl tj_send_queue_on_call\n"                                                     \
                "\tldp x29, x30, [sp, #64]\n\tldp x6, x7, [sp, #48]\n\tldp x4, x5, [sp, #32]\n"    \
                "\tldp x2, x3, [sp, #16]\n\tldp x0, x1, [sp], #80\n"
#define TRAMPOLINE(_name)                                                                          \
    __asm__(".text\n"                                                                              \
            ".globl " #_name "\n"                                                                  \
            ".type " #_name ", %function\n"                                                        \
            ".p2align 2\n" #_name ":\n"                                                            \
            "\tadrp x16, tj_interpose_state\n"                                                     \
            "\tldrb w16, [x16, :lo12:tj_interpose_state]\n"                                        \
            "\tcbnz w16, 1f\n"                                                                     \
            "\tadrp x16, " QUEUE_LENGTH "\n"                                                       \
            "\tldr w16, [x16, :lo12:" QUEUE_LENGTH "]\n"                                           \
            "\tcbnz w16, 2f\n"                                                                     \
            "\tb " XSTR(TJ_WRAPPER(_name)) "\n"                                                    \
                                           "1:\tadrp x16, :got:P" #_name "\n"                      \
                                           "\tldr x16, [x16, :got_lo12:P" #_name "]\n"             \
                                           "\tbr x16\n"                                            \
                                           "2:\n" QUEUE_CALL(_name) "\tb " XSTR(TJ_WRAPPER(        \
                                               _name)) "\n"                                        \
                                                       ".size " #_name ", .-" #_name "\n");
#define FLUSHED(_name)                                                                             \
    __asm__(".text\n"                                                                              \
            ".globl " #_name "\n"                                                                  \
            ".type " #_name ", %function\n"                                                        \
            ".globl tj_flush_" #_name "\n"                                                         \
            ".hidden tj_flush_" #_name "\n"                                                        \
            ".p2align 2\n" #_name ":\n"                                                            \
            "tj_flush_" #_name ":\n"                                                               \
            "\tadrp x16, " QUEUE_LENGTH "\n"                                                       \
            "\tldr w16, [x16, :lo12:" QUEUE_LENGTH "]\n"                                           \
            "\tcbz w16, 1f\n" QUEUE_CALL(_name) "1:\tadrp x16, :got:P" #_name "\n"                 \
                                                "\tldr x16, [x16, :got_lo12:P" #_name "]\n"        \
                                                "\tbr x16\n"                                       \
                                                ".size " #_name ", .-" #_name "\n");
#else
#error "typejit's exported entry points are written for x86_64 and aarch64 only"
#endif

TJ_ALL_WRAPPERS(TRAMPOLINE)
TJ_FLUSHED_CALLS(FLUSHED)
