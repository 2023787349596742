/* SPDX-License-Identifier: BSD-3-Clause */
/* Child processes for the tests of the test driver and the runtime stand-in: a fault, an exit or
 * an environment that must be only the child's. */
#ifndef TJ_TESTS_FAKECUDA_CHILD_H
#define TJ_TESTS_FAKECUDA_CHILD_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* fork, the output flushed first so that the child does not write it again. */
static inline pid_t child_fork(void)
{
    pid_t pid;
    fflush(NULL);
    pid = fork();
    REQUIRE(pid >= 0);
    return pid;
}

/* The wait status of child @p pid. */
static inline int child_wait(pid_t pid)
{
    int status;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    return status;
}

static inline bool child_succeeded(int status)
{
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Whether host code reading @p p (writing it: @p store) faults. */
static inline bool child_touch_faults(const void *p, bool store)
{
    int status;
    pid_t pid = child_fork();
    if (pid == 0) {
        if (store)
            ((volatile unsigned char *)(uintptr_t)p)[0] = 7;
        else
            (void)((volatile const unsigned char *)p)[0];
        _exit(0);
    }
    status = child_wait(pid);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

/* Runs the program @p path again as `argv0 MODE FD` and writes @p len bytes of @p data to the pipe
 * it reads as FD; its wait status. */
static inline int child_run_piped(const char *path, const char *argv0, const char *mode,
                                  const void *data, size_t len)
{
    int fds[2];
    char arg[16];
    pid_t pid;

    REQUIRE(pipe(fds) == 0);
    snprintf(arg, sizeof arg, "%d", fds[0]);
    pid = child_fork();
    if (pid == 0) {
        close(fds[1]);
        execl(path, argv0, mode, arg, (char *)NULL);
        _exit(127);
    }
    close(fds[0]);
    REQUIRE(write(fds[1], data, len) == (ssize_t)len);
    close(fds[1]);
    return child_wait(pid);
}

#endif /* TJ_TESTS_FAKECUDA_CHILD_H */
