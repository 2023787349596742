/* Command-line options of the `typejit` commands: `--name VALUE` and `--name=VALUE` alike. */
#ifndef TJ_TOOLS_OPTIONS_H
#define TJ_TOOLS_OPTIONS_H

#include <stdbool.h>

/* Whether argv[*i] is the option @p name that takes a value, written `--name VALUE` (then *i
 * moves past VALUE) or `--name=VALUE`. When it is, *value is the value, or NULL after
 * `typejit CMD: --name needs a value` on stderr. */
bool tj_opt_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                  const char **value);

/* Whether argv[i] is the option @p name that takes no value; `--name=...` is refused with
 * `typejit CMD: --name takes no value` (and *bad set), so that a typo is not read as a file or a
 * type. */
bool tj_opt_flag(const char *cmd, char **argv, int i, const char *name, bool *bad);

#endif /* TJ_TOOLS_OPTIONS_H */
