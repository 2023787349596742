/* SPDX-License-Identifier: BSD-3-Clause */
/* `typejit warm`: fill the kernel cache ahead of a job. */
#ifndef TJ_TOOLS_WARM_H
#define TJ_TOOLS_WARM_H

/* The command, argv[0] == "warm"; MPI is initialised (type descriptions are built with its
 * constructors). Returns the exit status: 0, 1 (a kernel failed or a line did not parse), 2
 * (usage). */
int tj_warm_run(int argc, char **argv);

#endif /* TJ_TOOLS_WARM_H */
