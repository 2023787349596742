/* Command-line options of the `typejit` commands: `--name VALUE` and `--name=VALUE` alike, as
 * getopt_long reads them. */
#include "options.h"

#include <stdio.h>
#include <string.h>

bool tj_opt_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                  const char **value)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);

    if (strncmp(arg, name, n) != 0 || (arg[n] != '\0' && arg[n] != '='))
        return false;
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return true;
    }
    if (*i + 1 >= argc) {
        fprintf(stderr, "typejit %s: %s needs a value\n", cmd, name);
        *value = NULL;
        return true;
    }
    *value = argv[++*i];
    return true;
}

bool tj_opt_flag(const char *cmd, char **argv, int i, const char *name, bool *bad)
{
    size_t n = strlen(name);

    if (strncmp(argv[i], name, n) != 0)
        return false;
    if (argv[i][n] == '\0')
        return true;
    if (argv[i][n] != '=')
        return false;
    fprintf(stderr, "typejit %s: %s takes no value\n", cmd, name);
    *bad = true;
    return true;
}
