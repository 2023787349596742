/* SPDX-License-Identifier: BSD-3-Clause */
/* `typejit settings`: every TYPEJIT_* setting, its default and the values it takes, from the
 * library's own table. */
#ifndef TJ_TOOLS_SETTINGS_H
#define TJ_TOOLS_SETTINGS_H

/* The command, argv[0] == "settings"; no MPI. Returns the exit status: 0, or 2 (usage). */
int tj_settings_run(int argc, char **argv);

#endif /* TJ_TOOLS_SETTINGS_H */
