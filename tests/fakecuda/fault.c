/* SPDX-License-Identifier: BSD-3-Clause */
/* Faults inside emulated device work: the handler jumps back to the guard that ran it, and
 * passes every other fault on to whatever handler was there before. */
#include <setjmp.h>
#include <signal.h>
#include <string.h>

#include "fakecuda.h"

static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE};
static struct sigaction previous[sizeof fault_signals / sizeof fault_signals[0]];

static _Thread_local sigjmp_buf *guard;
static _Thread_local volatile int caught;

static void handler(int sig, siginfo_t *info, void *uc)
{
    size_t i = 0;

    if (guard != NULL) {
        sigjmp_buf *jump = guard;
        guard = NULL;
        caught = sig;
        siglongjmp(*jump, 1);
    }
    while (fault_signals[i] != sig)
        i++;
    if (previous[i].sa_flags & SA_SIGINFO) {
        previous[i].sa_sigaction(sig, info, uc);
    } else if (previous[i].sa_handler != SIG_DFL && previous[i].sa_handler != SIG_IGN) {
        previous[i].sa_handler(sig);
    } else {
        /* A host fault outside device work, e.g. the host reading device memory: die of it as
         * the process would without this handler. A synchronous fault repeats on return. */
        signal(sig, SIG_DFL);
        if (info->si_code <= 0)
            raise(sig);
    }
}

void fc_fault_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fault_signals / sizeof fault_signals[0]; i++)
        sigaction(fault_signals[i], &sa, &previous[i]);
}

int fc_fault_guard(void (*fn)(void *), void *arg)
{
    sigjmp_buf jump;

    caught = 0;
    /* savesigs: the handler runs with its signal blocked, and the jump must unblock it. */
    if (sigsetjmp(jump, 1) == 0) {
        guard = &jump;
        fn(arg);
        guard = NULL;
        return 0;
    }
    return caught;
}
