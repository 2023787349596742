/* SPDX-License-Identifier: BSD-3-Clause */
/* Command-line options of the `typejit` commands: `--name VALUE` and `--name=VALUE` alike, and
 * the values several commands take (numbers, targets, the cache folder). */
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

/* Whether argv[0..argc) asks for help (--help or -h). */
bool tj_opt_help(int argc, char **argv);

/* A whole decimal number in [min, max] for option @p opt, or false after saying what is wrong. */
bool tj_opt_number(const char *cmd, const char *opt, const char *text, long min, long max,
                   long *out);

/* A target this NVRTC can compile for, or false after one line that says why not (a malformed
 * name, or an arch this NVRTC dropped or never had). Without NVRTC only the form is checked. */
bool tj_opt_target(const char *cmd, const char *arch);

/* Split a comma-separated list of targets (--arch), each checked by tj_opt_target, into at most
 * @p max; their number, or -1 after a message. */
int tj_opt_targets(const char *cmd, const char *list, char (*archs)[32], int max);

/* The cache folder a command works on: @p given (--cache-dir), else TYPEJIT_CACHE_DIR's. */
const char *tj_opt_cache_dir(const char *given);

#endif /* TJ_TOOLS_OPTIONS_H */
