/* SPDX-License-Identifier: BSD-3-Clause */
/* `typejit inspect`: what typejit makes of one type. */
#ifndef TJ_TOOLS_INSPECT_H
#define TJ_TOOLS_INSPECT_H

/* The command, argv[0] == "inspect"; MPI is initialised. Returns the exit status: 0, 1 (the
 * type does not parse, or no kernel), 2 (usage). */
int tj_inspect_run(int argc, char **argv);

#endif /* TJ_TOOLS_INSPECT_H */
