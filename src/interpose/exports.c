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

/* The ELF directives around an exported function @p _name (FUNCTION_TYPE and FUNCTION_ALIGN are
 * the architecture's spelling). */
#define FUNCTION_BEGIN(_name)                                                                      \
    ".text\n"                                                                                      \
    ".globl " #_name "\n"                                                                          \
    ".type " #_name ", " FUNCTION_TYPE "\n"                                                        \
    ".p2align " FUNCTION_ALIGN "\n" #_name ":\n"
#define FUNCTION_END(_name) ".size " #_name ", .-" #_name "\n"
/* The hidden tj_flush_MPI_X at the entry of a call typejit does not wrap marks it for the symbol
 * test. */
#define FLUSH_MARK(_name)                                                                          \
    ".globl tj_flush_" #_name "\n"                                                                 \
    ".hidden tj_flush_" #_name "\n"                                                                \
    "tj_flush_" #_name ":\n"

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
#define FUNCTION_TYPE  "@function"
#define FUNCTION_ALIGN "4"
/* endbr64 is a no-op on processors without indirect branch tracking. */
#define TRAMPOLINE_BODY(_name)                                                                     \
    "\tendbr64\n"                                                                                  \
    "\tcmpb $0, tj_interpose_state(%rip)\n"                                                        \
    "\tjne 1f\n"                                                                                   \
    "\tcmpl $0, " QUEUE_LENGTH "(%rip)\n"                                                          \
    "\tjne 2f\n"                                                                                   \
    "\tjmp " XSTR(TJ_WRAPPER(_name)) "\n"                                                          \
                                     "1:\tjmp *P" #_name "@GOTPCREL(%rip)\n"                       \
                                     "2:\n" QUEUE_CALL(_name) "\tjmp " XSTR(                       \
                                         TJ_WRAPPER(_name)) "\n"
#define FLUSHED_BODY(_name)                                                                        \
    "\tendbr64\n"                                                                                  \
    "\tcmpl $0, " QUEUE_LENGTH "(%rip)\n"                                                          \
    "\tje 1f\n" QUEUE_CALL(_name) "1:\tjmp *P" #_name "@GOTPCREL(%rip)\n"
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
#define FUNCTION_TYPE  "%function"
#define FUNCTION_ALIGN "2"
#define TRAMPOLINE_BODY(_name)                                                                     \
    "\tadrp x16, tj_interpose_state\n"                                                             \
    "\tldrb w16, [x16, :lo12:tj_interpose_state]\n"                                                \
    "\tcbnz w16, 1f\n"                                                                             \
    "\tadrp x16, " QUEUE_LENGTH "\n"                                                               \
    "\tldr w16, [x16, :lo12:" QUEUE_LENGTH "]\n"                                                   \
    "\tcbnz w16, 2f\n"                                                                             \
    "\tb " XSTR(TJ_WRAPPER(_name)) "\n"                                                            \
                                   "1:\tadrp x16, :got:P" #_name "\n"                              \
                                   "\tldr x16, [x16, :got_lo12:P" #_name "]\n"                     \
                                   "\tbr x16\n"                                                    \
                                   "2:\n" QUEUE_CALL(_name) "\tb " XSTR(TJ_WRAPPER(_name)) "\n"
#define FLUSHED_BODY(_name)                                                                        \
    "\tadrp x16, " QUEUE_LENGTH "\n"                                                               \
    "\tldr w16, [x16, :lo12:" QUEUE_LENGTH "]\n"                                                   \
    "\tcbz w16, 1f\n" QUEUE_CALL(_name) "1:\tadrp x16, :got:P" #_name "\n"                         \
                                        "\tldr x16, [x16, :got_lo12:P" #_name "]\n"                \
                                        "\tbr x16\n"
#else
#error "typejit's exported entry points are written for x86_64 and aarch64 only"
#endif

/* Each wrapper's entry point: to typejit's wrapper, the send queue first when it is not empty,
 * or to the system MPI once typejit passes every call through. */
#define TRAMPOLINE(_name) __asm__(FUNCTION_BEGIN(_name) TRAMPOLINE_BODY(_name) FUNCTION_END(_name));
/* A call typejit does not wrap: the send queue first when it is not empty, then the system
 * MPI's function. */
#define FLUSHED(_name)                                                                             \
    __asm__(FUNCTION_BEGIN(_name) FLUSH_MARK(_name) FLUSHED_BODY(_name) FUNCTION_END(_name));

TJ_ALL_WRAPPERS(TRAMPOLINE)
TJ_FLUSHED_CALLS(FLUSHED)
