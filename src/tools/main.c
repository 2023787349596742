/* SPDX-License-Identifier: BSD-3-Clause */
/* The `typejit` command: one subcommand a file (warm.c, inspect.c, cache.c, measure.c,
 * settings.c); this one reads the command line, sets up what each needs (MPI or not) and says
 * the version. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "cache.h"
#include "inspect.h"
#include "kernels/lookup.h"
#include "measure.h"
#include "options.h"
#include "settings.h"
#include "typejit.h"
#include "util/config.h"
#include "warm.h"

static const char *usage_main =
    "usage: typejit COMMAND [OPTIONS]\n"
    "\n"
    "commands:\n"
    "  warm      compile the kernels of type descriptions or of the cache's manifest\n"
    "  inspect   show the IR, canonical block, word, cache key and kernel source of a type\n"
    "  cache     stats | list | verify | clear | trim the kernel cache (no MPI needed)\n"
    "  measure   time this machine for the send methods' model (mpirun -np 2 typejit measure)\n"
    "  settings  list every TYPEJIT_* setting, its default and its values\n"
    "  version   print the typejit version\n"
    "\n"
    "`typejit COMMAND --help` describes each command.\n";

static const char *usage_version = "usage: typejit version\n"
                                   "\n"
                                   "Print the typejit version.\n";

int main(int argc, char **argv)
{
    int rc;

    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(usage_main, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    /* Settings warnings are collected while the library parses them; a tool says them now. */
    (void)tj_config();
    tj_config_flush_warnings(-1);
    if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) {
        if (tj_opt_help(argc - 1, argv + 1)) {
            fputs(usage_version, stdout);
            return 0;
        }
        if (argc > 2) {
            fprintf(stderr, "typejit version: unexpected %s\n%s", argv[2], usage_version);
            return 2;
        }
        printf("typejit %s\n", tj_version());
        return 0;
    }
    if (strcmp(argv[1], "settings") == 0)
        return tj_settings_run(argc - 1, argv + 1);
    if (strcmp(argv[1], "warm") && strcmp(argv[1], "inspect") && strcmp(argv[1], "cache") &&
        strcmp(argv[1], "measure")) {
        fprintf(stderr, "typejit: unknown command %s\n%s", argv[1], usage_main);
        return 2;
    }
    /* Cache maintenance touches files only: no MPI, so that it runs anywhere, fast, and cannot
     * fail for want of a launcher. */
    if (strcmp(argv[1], "cache") == 0) {
        rc = tj_cache_run(argc - 1, argv + 1);
        tj_lookup_finalize();
        return rc;
    }
    /* Type descriptions are built with MPI's constructors, and measure times the MPI: a
     * singleton MPI, no launcher needed. */
    PMPI_Init(NULL, NULL);
    if (strcmp(argv[1], "warm") == 0)
        rc = tj_warm_run(argc - 1, argv + 1);
    else if (strcmp(argv[1], "inspect") == 0)
        rc = tj_inspect_run(argc - 1, argv + 1);
    else
        rc = tj_measure_run(argc - 1, argv + 1);
    tj_lookup_finalize();
    PMPI_Finalize();
    return rc;
}
