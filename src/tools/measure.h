/* SPDX-License-Identifier: BSD-3-Clause */
/* `typejit measure`: time what the method model needs on this machine and write the system
 * table. */
#ifndef TJ_TOOLS_MEASURE_H
#define TJ_TOOLS_MEASURE_H

/* The command, argv[0] == "measure"; MPI is initialised. Returns the exit status: 0, 1 (no
 * device, or nothing could be written; every rank returns the same), 2 (usage). */
int tj_measure_run(int argc, char **argv);

#endif /* TJ_TOOLS_MEASURE_H */
